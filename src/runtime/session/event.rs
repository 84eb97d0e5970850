//! What a session tells its subscribers.

use serde::{Deserialize, Serialize};

use super::agent::{AgentStep, Mode};
use super::state::{Message, SessionState};
use crate::runtime::action::ActionRef;
use crate::runtime::build_result::BuildResult;
use crate::runtime::llm::{FinishReason, TokenUsage};
use crate::runtime::protocol;

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum MessageStatus {
    /// The answer is still arriving.
    Streaming,
    Complete,
    /// The person pressed stop; what arrived is kept.
    Stopped,
    /// The stream broke after some text arrived; what arrived is kept and the
    /// answer can be continued or retried.
    Interrupted {
        reason: String,
    },
    /// The request failed before any answer arrived.
    Failed {
        error: String,
    },
    /// The files were restored to an earlier answer: the message is kept
    /// but no longer counts; Redo gives it back the status it `was` in.
    Undone {
        was: Box<MessageStatus>,
    },
}

impl MessageStatus {
    pub fn is_final(&self) -> bool {
        !matches!(self, MessageStatus::Streaming)
    }
}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum ActionStatus {
    Pending,
    Running,
    Complete,
    Failed {
        reason: String,
    },
    Aborted,
    /// Shown, never run: the answer was a plan (Plan mode).
    Planned,
}

impl ActionStatus {
    /// Pending or running: the run is not over for this action.
    pub fn is_active(&self) -> bool {
        matches!(self, ActionStatus::Pending | ActionStatus::Running)
    }
}

/// Something that went wrong while running an answer's actions, shown in the
/// chat with the tail of the output.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct Alert {
    pub id: u64,
    pub title: String,
    /// The end of the failing command's output, or the error.
    pub detail: String,
    pub action: Option<ActionRef>,
    /// The build results the fix loop stopped on, when it is the fix
    /// loop's stop alert (which offers "Try again").
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub fix_results: Vec<u64>,
    /// Set once a later run fixed it: by what, in words.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resolved: Option<String>,
}

/// Marks a user message that Rivet sent by itself to have the model fix a
/// failure: which attempt it is, and the tokens the person's message has
/// cost so far (its answer and the attempts before this one).
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
pub struct FixAttempt {
    pub attempt: u32,
    pub max_attempts: u32,
    pub tokens_so_far: u32,
    /// What the attempt is about (older records: a failure).
    #[serde(default)]
    pub reason: FixReason,
}

impl FixAttempt {
    /// The line shown above the message.
    pub fn describe(&self) -> String {
        let what = match self.reason {
            FixReason::Failure => "automatic fix",
            FixReason::Format => "the answer had code but nothing to build; format reminder",
        };
        format!(
            "Sent by Rivet: {what}, attempt {} of {} ({} tokens used so far)",
            self.attempt, self.max_attempts, self.tokens_so_far
        )
    }
}

/// Why Rivet sent an automatic message.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum FixReason {
    /// Running the answer failed.
    #[default]
    Failure,
    /// The answer had code but no file or command: the model is reminded of
    /// the format.
    Format,
}

/// A server listening in the project, which the preview can show.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct Preview {
    pub port: u16,
    /// Where the browser loads it, an origin of its own; `None` until the
    /// preview is asked for (the dev server of a `start` gets one at once).
    #[serde(default)]
    pub url: Option<String>,
}

/// One event as it goes over the wire, numbered within its session.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct Envelope {
    pub seq: u64,
    #[serde(flatten)]
    pub event: SessionEvent,
}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum SessionEvent {
    /// The whole state: the first event of every subscription, and again
    /// whenever a subscriber fell too far behind to catch up event by event.
    Snapshot {
        state: Box<SessionState>,
    },
    MessageAdded {
        message: Message,
    },
    /// A parser event of an assistant message.
    Protocol {
        message_id: String,
        event: protocol::Event,
    },
    Usage {
        message_id: String,
        usage: TokenUsage,
    },
    /// A passing note on a message ("retrying in 2 s", "continuing the cut
    /// answer"); `None` clears it.
    Notice {
        message_id: String,
        notice: Option<String>,
    },
    /// An interrupted answer continues; its text follows.
    MessageResumed {
        message_id: String,
    },
    MessageFinished {
        message_id: String,
        status: MessageStatus,
        finish_reason: Option<FinishReason>,
    },
    /// A finished message was undone by a restore, or redone.
    MessageStatusChanged {
        message_id: String,
        status: MessageStatus,
    },
    ActionStatus {
        action: ActionRef,
        status: ActionStatus,
    },
    /// What a `supabase` query action returned: shown in its card.
    QueryResult {
        action: ActionRef,
        result: crate::runtime::database::QueryResult,
    },
    /// A file was written, by an action or by the person.
    FileWritten {
        path: String,
        by_model: bool,
    },
    FileRemoved {
        path: String,
    },
    /// Output for the "Rivet" terminal tab: commands, their output and exit
    /// codes, as terminal text.
    Terminal {
        text: String,
    },
    Alert {
        alert: Alert,
    },
    /// A failure of the run (see [`BuildResult`]).
    BuildResult {
        result: Box<BuildResult>,
    },
    /// A fix ran without failure: the alerts and build results up to these
    /// ids (those the fix was asked about, and what followed from them)
    /// are resolved.
    FailuresResolved {
        alerts_up_to: u64,
        results_up_to: u64,
        /// What fixed them ("fixed by automatic attempt 1").
        by: String,
    },
    /// A server listens on a port (with the preview's address when it has one).
    PreviewOpened {
        preview: Preview,
    },
    /// A listed port got an address for its preview, or (`None`) lost it
    /// to make room for another.
    PreviewUrl {
        port: u16,
        url: Option<String>,
    },
    PreviewClosed {
        port: u16,
    },
    /// The conversation's mode changed (the composer's switch, or a
    /// fallback to Build when the model takes no tools).
    ModeChanged {
        mode: Mode,
    },
    /// A tool no longer waits for approval in this project.
    AlwaysAllowed {
        tool: String,
    },
    /// An assistant message is an agent run of at most `max_steps` requests.
    AgentStarted {
        message_id: String,
        max_steps: u32,
    },
    /// A step card appears or changes (matched by its id).
    AgentStep {
        message_id: String,
        step: AgentStep,
    },
    /// The end of a running command's output so far, replacing what the
    /// step showed (published at most every quarter second while it runs).
    AgentStepOutput {
        message_id: String,
        step_id: String,
        output: String,
    },
    /// What the run has used so far.
    AgentProgress {
        message_id: String,
        steps_used: u32,
        usage: TokenUsage,
    },
    /// The run ended, said in a sentence; steps that never ran say so.
    AgentEnded {
        message_id: String,
        end: String,
    },
    /// The person switched automatic fixes on or off for this project.
    AutoFix {
        enabled: bool,
    },
    /// From the answer `upto_message_id` on, the older part of the
    /// conversation is sent to the model as this summary (which the model
    /// wrote).
    ContextSummary {
        upto_message_id: String,
        summary: super::context::ContextSummary,
    },
    /// How much of the context window the answer's request used.
    ContextUsage {
        message_id: String,
        usage: super::context::ContextUse,
    },
    /// The answer's request carried the user's rules, from these sources
    /// (rules files, then "settings").
    RulesIncluded {
        message_id: String,
        sources: Vec<String>,
    },
    /// The person opened another chat on the project.
    ChatOpened {
        chat: super::chat::Chat,
    },
    /// The model that answers.
    AnswerModel {
        message_id: String,
        model: String,
    },
    /// What the answer has cost so far, in dollars (its model's price is
    /// known).
    Cost {
        message_id: String,
        cost_usd: f64,
    },
    /// The project's own budget in dollars; `None`: the server's default
    /// (`[budget] project_usd`).
    BudgetSet {
        budget_usd: Option<f64>,
    },
    /// What a request beside the conversation cost (a draft's rewrite):
    /// it counts toward the project's spend.
    SideCost {
        cost_usd: f64,
    },
    /// The owner's MCP servers whose tools this project's agent gets;
    /// `None`: every configured server.
    McpServersSet {
        servers: Option<Vec<String>>,
    },
}

/// A file as the last answer found it and left it (the diff view).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FileChange {
    pub before: Option<String>,
    pub after: String,
}
