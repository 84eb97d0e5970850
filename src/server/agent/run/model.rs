//! The loop's [`Model`] over the streaming client: each step is one request
//! with the tools' schemas, streamed through async-openai, tool-call deltas
//! assembled by index (`llm::client`). The history is fitted to the
//! model's context window first (`llm::budget::steps`).

use async_trait::async_trait;
use tokio_util::sync::CancellationToken;

use super::{Model, ModelStep};
use crate::runtime::llm::LlmError;
use crate::server::llm::budget::fit::Window;
use crate::server::llm::budget::steps::fit_steps;
use crate::server::llm::budget::{PER_MESSAGE, estimate_text};
use crate::server::llm::client::{ChatRequest, ToolSpec, chat};
use crate::server::llm::{ChatMessage, ResolvedLlm};

pub struct LlmModel {
    pub llm: ResolvedLlm,
    /// The system prompt of every step.
    pub system: String,
    /// The model's context window; every step's request fits it.
    pub window: Window,
    /// Stops a streaming answer at once.
    pub cancel: CancellationToken,
    /// The tools offered (`ToolContext::specs`).
    pub tools: Vec<ToolSpec>,
}

#[async_trait]
impl Model for LlmModel {
    async fn step(&self, messages: &[ChatMessage]) -> Result<ModelStep, LlmError> {
        let mut request = ChatRequest::new(self.system.clone(), Vec::new());
        request.tools = self.tools.clone();
        let fixed = PER_MESSAGE + estimate_text(&self.system) + tools_tokens(&request.tools);
        request.messages = fit_steps(messages, self.window.prompt_limit().saturating_sub(fixed));
        let outcome = chat(&self.llm, request, self.cancel.clone(), |_| {}).await;
        let finish_reason = outcome.result?;
        Ok(ModelStep {
            text: outcome.text,
            tool_calls: outcome.tool_calls,
            finish_reason,
            usage: outcome.usage,
        })
    }
}

/// Estimated tokens of the tools' schemas, which the request carries too.
fn tools_tokens(tools: &[ToolSpec]) -> u32 {
    tools
        .iter()
        .map(|t| {
            let schema = t.parameters.to_string();
            estimate_text(&t.name) + estimate_text(&t.description) + estimate_text(&schema)
        })
        .fold(0, u32::saturating_add)
}
