//! Follows one answer through the session's events, as `rivet chat`
//! prints it: the answer's prose as it streams, a status line per action,
//! each preview address; and says when the answer and its actions are done.

use std::collections::{BTreeMap, BTreeSet};

use crate::runtime::protocol::ActionKind;
use crate::runtime::session::{
    ActionEntry, ActionStatus, MessageStatus, SessionEvent, SessionState,
};

/// What to print.
#[derive(Clone, Debug, PartialEq)]
pub enum Output {
    /// More of the answer's prose.
    Text(String),
    /// A line of its own (an action's status, a preview address).
    Line(String),
}

/// How the answer ended.
#[derive(Clone, Debug, PartialEq)]
pub struct Outcome {
    /// The answer completed and no action failed.
    pub success: bool,
    /// Why not, for people.
    pub problems: Vec<String>,
}

pub struct Follower {
    state: SessionState,
    answer: String,
    /// How much of the answer's prose is printed (bytes).
    printed: usize,
    /// The last status printed per action (artifact id, action id).
    reported: BTreeMap<(String, String), ActionStatus>,
    previews: BTreeSet<String>,
}

impl Follower {
    /// Follows the answer `answer` (an assistant message id). Previews
    /// already open in `state` are not printed again.
    pub fn new(state: SessionState, answer: String) -> Follower {
        let previews = preview_urls(&state);
        Follower {
            state,
            answer,
            printed: 0,
            reported: BTreeMap::new(),
            previews,
        }
    }

    /// Folds `event` in; what it adds to the output.
    pub fn apply(&mut self, event: &SessionEvent) -> Vec<Output> {
        self.state.apply(event);
        let mut out = Vec::new();
        self.text(&mut out);
        self.actions(&mut out);
        for url in preview_urls(&self.state) {
            if self.previews.insert(url.clone()) {
                out.push(Output::Line(format!("preview {url}")));
            }
        }
        out
    }

    fn text(&mut self, out: &mut Vec<Output>) {
        let Some(message) = self.state.message(&self.answer) else {
            return;
        };
        let text = message.text();
        if let Some(new) = text.get(self.printed..).filter(|new| !new.is_empty()) {
            out.push(Output::Text(new.to_owned()));
            self.printed = text.len();
        }
    }

    fn actions(&mut self, out: &mut Vec<Output>) {
        let changed: Vec<_> = self
            .answer_actions()
            .into_iter()
            .filter(|(key, action)| {
                action.status != ActionStatus::Pending
                    && self.reported.get(key) != Some(&action.status)
            })
            .map(|(key, action)| (key, action.status.clone(), status_line(action)))
            .collect();
        for (key, status, line) in changed {
            out.push(Output::Line(line));
            self.reported.insert(key, status);
        }
    }

    fn answer_actions(&self) -> Vec<((String, String), &ActionEntry)> {
        self.state
            .artifacts
            .iter()
            .filter(|artifact| artifact.message_id == self.answer)
            .flat_map(|artifact| {
                artifact
                    .actions
                    .iter()
                    .map(move |action| ((artifact.id.to_string(), action.id.to_string()), action))
            })
            .collect()
    }

    /// `Some` once the answer has ended and none of its actions is pending
    /// or running (a dev server counts as done once it listens).
    pub fn outcome(&self) -> Option<Outcome> {
        let message = self.state.message(&self.answer)?;
        if !message.status.is_final() {
            return None;
        }
        let actions = self.answer_actions();
        if actions.iter().any(|(_, action)| action.status.is_active()) {
            return None;
        }
        let mut problems = Vec::new();
        match &message.status {
            MessageStatus::Complete | MessageStatus::Streaming => {}
            MessageStatus::Stopped => problems.push("the answer was stopped".to_owned()),
            MessageStatus::Interrupted { reason } => {
                problems.push(format!("the answer was interrupted: {reason}"));
            }
            MessageStatus::Failed { error } => problems.push(format!("the answer failed: {error}")),
            MessageStatus::Undone { .. } => problems.push("the answer was undone".to_owned()),
        }
        for (_, action) in actions {
            if matches!(
                action.status,
                ActionStatus::Failed { .. } | ActionStatus::Aborted
            ) {
                problems.push(status_line(action));
            }
        }
        Some(Outcome {
            success: problems.is_empty(),
            problems,
        })
    }
}

fn preview_urls(state: &SessionState) -> BTreeSet<String> {
    state
        .previews
        .iter()
        .filter_map(|p| p.url.clone())
        .collect()
}

/// `action complete: run npm install`, `action failed: write src/App.jsx (reason)`.
pub fn status_line(action: &ActionEntry) -> String {
    let status = match &action.status {
        ActionStatus::Pending => "pending",
        ActionStatus::Running => "running",
        ActionStatus::Complete => "complete",
        ActionStatus::Failed { .. } => "failed",
        ActionStatus::Aborted => "aborted",
        ActionStatus::Planned => "planned (not run)",
    };
    let command = || {
        action
            .content
            .trim()
            .lines()
            .next()
            .unwrap_or("")
            .to_owned()
    };
    let what = match &action.kind {
        ActionKind::File { file_path } => format!("write {file_path}"),
        ActionKind::Edit { file_path } => format!("edit {file_path}"),
        ActionKind::Shell => format!("run {}", command()),
        ActionKind::Build => format!("build {}", command()),
        ActionKind::Start => format!("start {}", command()),
        other => format!("{other:?}").to_lowercase(),
    };
    match &action.status {
        ActionStatus::Failed { reason } => {
            let reason = reason.lines().next().unwrap_or("").trim();
            format!("action {status}: {what} ({reason})")
        }
        _ => format!("action {status}: {what}"),
    }
}

#[cfg(test)]
mod tests;
