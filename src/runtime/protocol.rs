//! The bolt protocol: a streaming parser that turns a model's answer, given
//! as it arrives, into text and artifact/action events.
//!
//! The module is pure (no IO, no async, no UI) and depends only on `std` and
//! `serde`, so the server (persistence, headless runs) and the WASM client
//! (live UI) run the very same code. `docs/protocol.md` describes the grammar,
//! the content rules and the JSON form of the events.

#![forbid(unsafe_code)]

mod content;
mod event;
mod id;
mod parser;
mod recovery;
mod slip;
mod tag;

pub use content::{command_content, file_content, normalize_path};
pub use event::{
    Action, ActionKind, Artifact, Attributes, Event, SupabaseOperation, merge_adjacent,
};
pub use id::Id;
pub use parser::GivenAction;
pub use parser::{MAX_HELD_TAG, Parser};
pub use recovery::Recovery;
pub use slip::shell::starts_a_server;

#[cfg(test)]
mod proptests;
#[cfg(test)]
mod tests;
