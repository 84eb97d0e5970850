//! The agent's loop: ask the model, run the tools it calls (after the
//! person's approval for those that change files or run commands), give it
//! the results, and ask again, until it answers without tools, the step
//! limit, Stop, or the stuck detector (`stuck.rs`) ends the run with a
//! reason. The model is a trait ([`Model`]), so the loop is tested against
//! scripted steps; `model.rs` implements it over the streaming client.

mod model;
mod stuck;

#[cfg(test)]
mod tests;

use async_trait::async_trait;
use serde::{Deserialize, Serialize};

pub use model::LlmModel;
pub use stuck::{StuckDetector, StuckReason};

use super::tools::{Tool, ToolContext, ToolOutput, run_tool};
use crate::runtime::llm::{FinishReason, LlmError, TokenUsage, ToolCall};
use crate::server::config::AgentConfig;
use crate::server::llm::ChatMessage;

/// What the model is told when the person denies a step.
pub const DENIED: &str = "denied by the user";
/// The text of the message that carries the tools' images.
pub const TOOL_IMAGES: &str = "The images the tools above returned, in order.";
/// What the model is told when it answered neither with tools nor for good.
pub const NUDGE: &str =
    "Continue: call a tool for the next step, or answer without tools once the task is done.";

/// One answer of the model.
#[derive(Clone, Debug, PartialEq)]
pub struct ModelStep {
    pub text: String,
    pub tool_calls: Vec<ToolCall>,
    pub finish_reason: FinishReason,
    pub usage: Option<TokenUsage>,
}

/// Where the loop gets the model's answers.
#[async_trait]
pub trait Model: Send + Sync {
    /// The next answer to the conversation so far.
    async fn step(&self, messages: &[ChatMessage]) -> Result<ModelStep, LlmError>;
}

/// The person's decision on a step that waits for approval.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Approval {
    Approve,
    Deny,
}

/// What a step that waits for approval calls.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Subject {
    /// One of the built-in tools.
    Builtin(Tool),
    /// A tool from elsewhere (an MCP server), as its source describes it.
    Other { description: String },
}

/// Asks the person about a step; only consulted without auto-approval.
#[async_trait]
pub trait Approver: Send + Sync {
    async fn decide(&self, subject: Subject, call: &ToolCall) -> Approval;
}

/// Approves everything (`[agent] auto_approve`).
pub struct AutoApprove;

#[async_trait]
impl Approver for AutoApprove {
    async fn decide(&self, _subject: Subject, _call: &ToolCall) -> Approval {
        Approval::Approve
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AgentSettings {
    pub max_steps: u32,
    pub auto_approve: bool,
}

impl From<&AgentConfig> for AgentSettings {
    fn from(config: &AgentConfig) -> AgentSettings {
        AgentSettings {
            max_steps: config.max_steps.max(1),
            auto_approve: config.auto_approve,
        }
    }
}

/// How a run ended.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum AgentEnd {
    /// The model answered without tools.
    Done,
    StepLimit {
        max_steps: u32,
    },
    Stopped,
    Stuck {
        reason: StuckReason,
    },
    Failed {
        error: LlmError,
    },
}

impl std::fmt::Display for AgentEnd {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            AgentEnd::Done => f.write_str("Done."),
            AgentEnd::StepLimit { max_steps } => write!(
                f,
                "Stopped: the step limit of {max_steps} was reached (agent.max_steps)."
            ),
            AgentEnd::Stopped => f.write_str("Stopped by the user."),
            AgentEnd::Stuck { reason } => write!(f, "Stopped because the run was stuck: {reason}."),
            AgentEnd::Failed { error } => write!(f, "Stopped: {error}"),
        }
    }
}

/// What happens during a run, in order, for the chat's step cards.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum AgentEvent {
    /// The model answered step `step` (1-based) with this text and calls.
    Answered {
        step: u32,
        text: String,
        calls: Vec<ToolCall>,
    },
    /// A call waits for the person.
    AwaitingApproval { step: u32, call: ToolCall },
    /// A call starts to run (approved, or needing no approval).
    ToolStarted { step: u32, call_id: String },
    /// A call ran (or was denied: then `output` says so).
    ToolResult {
        step: u32,
        call_id: String,
        output: ToolOutput,
    },
    Finished {
        end: AgentEnd,
        steps: u32,
        usage: TokenUsage,
    },
}

/// The end of a run and the conversation it left.
#[derive(Clone, Debug, PartialEq)]
pub struct AgentOutcome {
    pub end: AgentEnd,
    /// The conversation given, followed by the run's messages.
    pub messages: Vec<ChatMessage>,
    pub steps: u32,
    pub usage: TokenUsage,
}

/// Everything a run uses. Stop is the tools' cancel token.
pub struct Agent<'a> {
    pub model: &'a dyn Model,
    pub tools: &'a ToolContext,
    pub approver: &'a dyn Approver,
    pub settings: AgentSettings,
}

struct Run<'a, F> {
    agent: &'a Agent<'a>,
    messages: Vec<ChatMessage>,
    step: u32,
    usage: TokenUsage,
    stuck: StuckDetector,
    on_event: F,
}

impl Agent<'_> {
    /// Runs until the run ends; `messages` is the conversation so far,
    /// ending with the person's request.
    pub async fn run(
        &self,
        messages: Vec<ChatMessage>,
        on_event: impl FnMut(AgentEvent) + Send,
    ) -> AgentOutcome {
        let mut run = Run {
            agent: self,
            messages,
            step: 0,
            usage: TokenUsage::default(),
            stuck: StuckDetector::new(),
            on_event,
        };
        let end = run.go().await;
        (run.on_event)(AgentEvent::Finished {
            end: end.clone(),
            steps: run.step,
            usage: run.usage,
        });
        AgentOutcome {
            end,
            messages: run.messages,
            steps: run.step,
            usage: run.usage,
        }
    }
}

impl<F: FnMut(AgentEvent) + Send> Run<'_, F> {
    async fn go(&mut self) -> AgentEnd {
        let cancel = self.agent.tools.cancel.clone();
        loop {
            if cancel.is_cancelled() {
                return AgentEnd::Stopped;
            }
            if self.step >= self.agent.settings.max_steps {
                return AgentEnd::StepLimit {
                    max_steps: self.agent.settings.max_steps,
                };
            }
            self.step += 1;
            let answer = tokio::select! {
                answer = self.agent.model.step(&self.messages) => answer,
                _ = cancel.cancelled() => return AgentEnd::Stopped,
            };
            let answer = match answer {
                Ok(answer) => answer,
                Err(LlmError::Cancelled) => return AgentEnd::Stopped,
                Err(error) => return AgentEnd::Failed { error },
            };
            if let Some(end) = self.take(answer).await {
                return end;
            }
        }
    }

    /// Handles one answer; `Some` ends the run.
    async fn take(&mut self, answer: ModelStep) -> Option<AgentEnd> {
        self.add_usage(answer.usage);
        (self.on_event)(AgentEvent::Answered {
            step: self.step,
            text: answer.text.clone(),
            calls: answer.tool_calls.clone(),
        });
        if answer.tool_calls.is_empty() {
            self.messages.push(ChatMessage::assistant(&answer.text));
            if answer.finish_reason != FinishReason::Length && !answer.text.trim().is_empty() {
                return Some(AgentEnd::Done);
            }
            let stuck = self.stuck.record_tool_less();
            self.messages.push(ChatMessage::user(NUDGE));
            return stuck.map(|reason| AgentEnd::Stuck { reason });
        }
        let calls = answer.tool_calls.clone();
        self.messages.push(ChatMessage::assistant_calls(
            &answer.text,
            answer.tool_calls,
        ));
        self.run_calls(&calls).await
    }

    async fn run_calls(&mut self, calls: &[ToolCall]) -> Option<AgentEnd> {
        let mut images = Vec::new();
        for (i, call) in calls.iter().enumerate() {
            let mut output = match self.perform(call).await {
                Some(output) => output,
                None => {
                    self.not_run(&calls[i..]);
                    return Some(AgentEnd::Stopped);
                }
            };
            self.messages
                .push(ChatMessage::tool(&call.id, &output.text));
            images.append(&mut output.images);
            let stuck = self.stuck.record_call(call, &output.text, output.ok);
            (self.on_event)(AgentEvent::ToolResult {
                step: self.step,
                call_id: call.id.clone(),
                output,
            });
            if let Some(reason) = stuck {
                self.not_run(&calls[i + 1..]);
                return Some(AgentEnd::Stuck { reason });
            }
        }
        // Tool messages carry text only: the images follow them.
        if !images.is_empty() {
            self.messages
                .push(ChatMessage::user_with_images(TOOL_IMAGES, images));
        }
        None
    }

    /// Asks for approval when needed, then runs the call; `None` when the
    /// run was stopped meanwhile.
    async fn perform(&mut self, call: &ToolCall) -> Option<ToolOutput> {
        let tools = self.agent.tools;
        let cancel = tools.cancel.clone();
        if tools.needs_approval(&call.name) && !self.agent.settings.auto_approve {
            let subject = match (Tool::from_name(&call.name), &tools.extra) {
                (Some(tool), _) => Subject::Builtin(tool),
                (None, Some(extra)) => Subject::Other {
                    description: extra.describe(&call.name, &call.arguments),
                },
                (None, None) => Subject::Other {
                    description: call.name.clone(),
                },
            };
            (self.on_event)(AgentEvent::AwaitingApproval {
                step: self.step,
                call: call.clone(),
            });
            let decision = tokio::select! {
                decision = self.agent.approver.decide(subject, call) => decision,
                _ = cancel.cancelled() => return None,
            };
            if decision == Approval::Deny {
                return Some(ToolOutput {
                    text: DENIED.to_owned(),
                    ok: false,
                    port: None,
                    images: Vec::new(),
                });
            }
        }
        if cancel.is_cancelled() {
            return None;
        }
        (self.on_event)(AgentEvent::ToolStarted {
            step: self.step,
            call_id: call.id.clone(),
        });
        Some(run_tool(self.agent.tools, &call.name, &call.arguments).await)
    }

    /// Answers calls the run ends before, so the conversation stays valid
    /// for the next request.
    fn not_run(&mut self, calls: &[ToolCall]) {
        for call in calls {
            self.messages
                .push(ChatMessage::tool(&call.id, "not run: the run ended first"));
        }
    }

    fn add_usage(&mut self, usage: Option<TokenUsage>) {
        if let Some(u) = usage {
            self.usage.prompt_tokens += u.prompt_tokens;
            self.usage.completion_tokens += u.completion_tokens;
            self.usage.total_tokens += u.total_tokens;
        }
    }
}
