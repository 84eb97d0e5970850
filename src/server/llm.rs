//! The LLM layer: which provider to ask ([`settings`], [`provider`]), what
//! to tell it ([`prompt`]), streaming its answer ([`client`]), the scripted
//! provider ([`mock`]), the search for local servers ([`local_probe`]) and
//! `rivet ask` ([`ask`]).
//!
//! A chat session uses it like this:
//!
//! ```text
//! let llm = state.llm.resolve_for_chat().await?;            // or show the LlmError
//! let system = prompt::system_prompt(&PromptContext { .. });
//! let request = ChatRequest::new(system, history);
//! let outcome = client::chat(&llm, request, cancel.clone(), |event| {
//!     let _ = events.send(event);                           // e.g. a broadcast channel
//! })
//! .await;                                                   // outcome.text: the whole answer
//! ```
//!
//! The events ([`LlmEvent`]) and errors ([`LlmError`]) serialize for the
//! browser; API keys never leave this module except in the request headers,
//! and go only where `settings::key_may_go_to` allows.

pub mod ask;
pub mod budget;
pub mod client;
pub mod format_slips;
pub mod local_probe;
pub mod mock;
pub mod model_window;
pub mod models_list;
pub mod pricing;
pub mod prompt;
pub mod provider;
pub mod secret;
pub mod service;
pub mod settings;
pub mod settings_file;
pub mod splice;
pub mod upstream;

pub use crate::runtime::llm::{
    FinishReason, KeyUpdate, LlmError, LlmEvent, LlmSettingsUpdate, LocalOutcome, LocalServer,
    ModelList, NoAnswer, PublicLlmSettings, TokenUsage, ToolCall,
};
pub use client::{
    ChatMessage, ChatOptions, ChatOutcome, ChatRequest, ChatRole, Pace, chat, stream_chat,
};
pub use prompt::{ProjectFile, PromptContext, RuntimeDescription, UserEdit, system_prompt};
pub use service::LlmService;
pub use settings::ResolvedLlm;
