//! The loop's [`Model`] over the streaming client: each step is one request
//! with the tools' schemas, streamed through async-openai, tool-call deltas
//! assembled by index (`llm::client`).

use async_trait::async_trait;
use tokio_util::sync::CancellationToken;

use super::{Model, ModelStep};
use crate::runtime::llm::LlmError;
use crate::server::agent::tools::specs;
use crate::server::llm::client::{ChatRequest, chat};
use crate::server::llm::{ChatMessage, ResolvedLlm};

pub struct LlmModel {
    pub llm: ResolvedLlm,
    /// The system prompt of every step.
    pub system: String,
    /// Stops a streaming answer at once.
    pub cancel: CancellationToken,
}

#[async_trait]
impl Model for LlmModel {
    async fn step(&self, messages: &[ChatMessage]) -> Result<ModelStep, LlmError> {
        let mut request = ChatRequest::new(self.system.clone(), messages.to_vec());
        request.tools = specs();
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
