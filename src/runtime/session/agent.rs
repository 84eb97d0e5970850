//! Agent mode in the session: the conversation's mode, each tool call as a
//! step card, what a run has used, how it ended, and the person's decisions
//! on steps that wait for approval.

use serde::{Deserialize, Serialize};

use crate::runtime::llm::TokenUsage;

/// How the model works on the project: one answer with bolt actions
/// (`build`), a loop of tool calls (`agent`), or a discussion whose answer
/// runs nothing (`plan`).
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Default, Hash)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    #[default]
    Build,
    Agent,
    Plan,
}

impl Mode {
    pub fn label(self) -> &'static str {
        match self {
            Mode::Build => "Build",
            Mode::Agent => "Agent",
            Mode::Plan => "Plan",
        }
    }
}

/// Where a step stands.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum StepStatus {
    /// Called by the model, not run yet.
    Pending,
    /// Waits for the person's approval.
    Waiting,
    Running,
    Done,
    Failed,
    Denied,
    /// The run ended before it ran.
    NotRun,
}

impl StepStatus {
    /// The wire name (`not_run`), for attributes.
    pub fn name(self) -> &'static str {
        match self {
            StepStatus::Pending => "pending",
            StepStatus::Waiting => "waiting",
            StepStatus::Running => "running",
            StepStatus::Done => "done",
            StepStatus::Failed => "failed",
            StepStatus::Denied => "denied",
            StepStatus::NotRun => "not_run",
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            StepStatus::Pending => "pending",
            StepStatus::Waiting => "waiting for approval",
            StepStatus::Running => "running",
            StepStatus::Done => "done",
            StepStatus::Failed => "failed",
            StepStatus::Denied => "denied",
            StepStatus::NotRun => "not run",
        }
    }

    /// Not finished: it may still run.
    pub fn is_open(self) -> bool {
        matches!(
            self,
            StepStatus::Pending | StepStatus::Waiting | StepStatus::Running
        )
    }
}

/// One tool call of an agent run, as its card shows it.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct AgentStep {
    /// Unique in the session (the answer's id and the call's id); the
    /// approval route names it.
    pub id: String,
    /// The model request (1-based) that made the call.
    pub step: u32,
    pub tool: String,
    /// The arguments in a line ("src/App.jsx", "npm install").
    pub summary: String,
    pub status: StepStatus,
    /// While it waits: the diff of a file change or the command.
    #[serde(default)]
    pub preview: Option<String>,
    /// While it waits, for a file change: the whole file before and after
    /// (both at most [`StepChange::MAX_BYTES`]), for a diff editor.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub change: Option<StepChange>,
    /// While a command runs: the end of its output so far, as plain text
    /// (at most [`AgentStep::OUTPUT_TAIL`] bytes).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output: Option<String>,
    /// The tool's answer (what the model was given).
    #[serde(default)]
    pub result: Option<String>,
}

impl AgentStep {
    /// The most bytes of live command output a card keeps.
    pub const OUTPUT_TAIL: usize = 4096;

    /// Shows `output` (the end of what the running command printed) on the
    /// card. Only a step that runs has output (an auto-approved one may
    /// still say pending); output arriving after the step ended, or for one
    /// that waits or was denied, is ignored.
    pub fn show_output(&mut self, output: &str) {
        if matches!(self.status, StepStatus::Pending | StepStatus::Running) {
            self.output = Some(Self::output_tail(output).to_owned());
        }
    }

    /// The last [`Self::OUTPUT_TAIL`] bytes of `output`, starting at a
    /// character boundary.
    pub fn output_tail(output: &str) -> &str {
        tail(output, Self::OUTPUT_TAIL)
    }
}

/// A file change a step waits to make: the file's whole text before and
/// after it.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct StepChange {
    pub path: String,
    pub before: String,
    pub after: String,
}

impl StepChange {
    /// Larger files are shown as the unified diff only.
    pub const MAX_BYTES: usize = 256 * 1024;

    /// The change, unless either side is larger than [`Self::MAX_BYTES`].
    pub fn capped(path: &str, before: &str, after: &str) -> Option<StepChange> {
        (before.len() <= Self::MAX_BYTES && after.len() <= Self::MAX_BYTES).then(|| StepChange {
            path: path.to_owned(),
            before: before.to_owned(),
            after: after.to_owned(),
        })
    }
}

/// The last `max` bytes of `text`, starting at a character boundary.
fn tail(text: &str, max: usize) -> &str {
    if text.len() <= max {
        return text;
    }
    let mut cut = text.len() - max;
    while !text.is_char_boundary(cut) {
        cut += 1;
    }
    &text[cut..]
}

/// An answer made by the agent: its steps, what it used and how it ended.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
pub struct AgentRun {
    pub steps: Vec<AgentStep>,
    /// Model requests made so far.
    pub steps_used: u32,
    pub max_steps: u32,
    pub usage: TokenUsage,
    /// How the run ended, in a sentence ("Done.", "Stopped by the user.").
    pub end: Option<String>,
}

impl AgentRun {
    pub fn step(&self, id: &str) -> Option<&AgentStep> {
        self.steps.iter().find(|s| s.id == id)
    }

    pub fn step_mut(&mut self, id: &str) -> Option<&mut AgentStep> {
        self.steps.iter_mut().find(|s| s.id == id)
    }

    /// Steps still pending, waiting or running become "not run".
    pub fn close_open_steps(&mut self) {
        for step in &mut self.steps {
            if step.status.is_open() {
                step.status = StepStatus::NotRun;
            }
        }
    }
}

/// The person's answer to a step that waits for approval.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Decision {
    Approve,
    Deny,
    /// Approve, and approve this tool in this project from now on.
    Always,
}

#[cfg(test)]
mod tests;
