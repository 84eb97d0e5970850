//! The session's state and the reducer that folds events into it.

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};

use super::agent::{AgentRun, AgentStep, Mode};
use super::chat::{Chat, ChatId};
use super::event::{ActionStatus, Alert, FixAttempt, MessageStatus, Preview, SessionEvent};
use crate::runtime::action::ActionRef;
use crate::runtime::attachment::Carried;
use crate::runtime::build_result::BuildResult;
use crate::runtime::llm::{FinishReason, TokenUsage};
use crate::runtime::protocol::{ActionKind, Event, Id, Recovery};

/// The "Rivet" terminal keeps this much recent output for tabs that open later.
pub const TERMINAL_TAIL: usize = 64 * 1024;
/// Older alerts are dropped past this many.
pub const MAX_ALERTS: usize = 50;
/// Older build results are dropped past this many.
pub const MAX_BUILD_RESULTS: usize = 50;

#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    User,
    Assistant,
}

/// A piece of a message, in the order it arrived.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Part {
    /// Markdown prose.
    Text { text: String },
    /// An artifact, shown as a card listing its actions.
    Artifact { id: Id },
    /// A step of an agent run (its card, from [`Message::agent`]).
    Step { id: String },
}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct Message {
    pub id: String,
    pub role: Role,
    pub parts: Vec<Part>,
    pub status: MessageStatus,
    pub usage: Option<TokenUsage>,
    pub notice: Option<String>,
    pub finish_reason: Option<FinishReason>,
    /// Set on a user message Rivet sent to have a failure fixed.
    #[serde(default)]
    pub automatic: Option<FixAttempt>,
    /// Set on an answer made in agent mode.
    #[serde(default)]
    pub agent: Option<AgentRun>,
    /// How much of the context window the answer's request used.
    #[serde(default)]
    pub context: Option<super::context::ContextUse>,
    /// Set on the first answer asked with this summary of the conversation
    /// before it.
    #[serde(default)]
    pub context_summary: Option<super::context::ContextSummary>,
    /// Where the rules the answer's request carried came from.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rules: Vec<String>,
    /// The model that answered (an answer's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// An answer asked in Plan mode: its actions are shown, never run.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub plan: bool,
    /// What the answer cost in dollars, when its model's price is known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
    /// The chat the message belongs to.
    #[serde(default, skip_serializing_if = "ChatId::is_main")]
    pub chat: ChatId,
    /// A person's message: its images and the elements they selected.
    #[serde(default, skip_serializing_if = "Carried::is_empty")]
    pub attachments: Carried,
}

impl Message {
    pub fn user(id: impl Into<String>, text: impl Into<String>) -> Message {
        Message {
            id: id.into(),
            role: Role::User,
            parts: vec![Part::Text { text: text.into() }],
            status: MessageStatus::Complete,
            usage: None,
            notice: None,
            finish_reason: None,
            automatic: None,
            agent: None,
            context: None,
            context_summary: None,
            rules: Vec::new(),
            model: None,
            plan: false,
            cost_usd: None,
            chat: ChatId::main(),
            attachments: Carried::default(),
        }
    }

    pub fn assistant(id: impl Into<String>) -> Message {
        Message {
            id: id.into(),
            role: Role::Assistant,
            parts: Vec::new(),
            status: MessageStatus::Streaming,
            usage: None,
            notice: None,
            finish_reason: None,
            automatic: None,
            agent: None,
            context: None,
            context_summary: None,
            rules: Vec::new(),
            model: None,
            plan: false,
            cost_usd: None,
            chat: ChatId::main(),
            attachments: Carried::default(),
        }
    }

    /// The prose of the message, without its artifacts.
    pub fn text(&self) -> String {
        self.parts
            .iter()
            .filter_map(|part| match part {
                Part::Text { text } => Some(text.as_str()),
                Part::Artifact { .. } | Part::Step { .. } => None,
            })
            .collect()
    }
}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct Artifact {
    pub message_id: String,
    pub id: Id,
    pub title: String,
    pub closed: bool,
    pub actions: Vec<ActionEntry>,
}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct ActionEntry {
    pub id: Id,
    pub kind: ActionKind,
    /// The raw content so far while open; the final content once closed.
    pub content: String,
    pub closed: bool,
    pub truncated: bool,
    pub error: Option<String>,
    pub status: ActionStatus,
    /// How the action was recovered when the answer slipped out of the
    /// format.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recovery: Option<Recovery>,
    /// A query action's result.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<crate::runtime::database::QueryResult>,
}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
pub struct SessionState {
    pub messages: Vec<Message>,
    pub artifacts: Vec<Artifact>,
    /// Every file in the project, or (`files_cut`) those of the largest
    /// listing the runtime gives.
    pub files: BTreeSet<String>,
    /// The project has more files and folders than one listing holds, so
    /// `files` (and the file tree) shows only some of them.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub files_cut: bool,
    /// Files the latest answer wrote.
    pub changed_by_last_answer: BTreeSet<String>,
    /// The end of the "Rivet" terminal's output.
    pub terminal: String,
    pub alerts: Vec<Alert>,
    pub previews: Vec<Preview>,
    /// The run's failures, oldest first.
    #[serde(default)]
    pub build_results: Vec<BuildResult>,
    /// The conversation's mode; `None` until chosen (the configured
    /// default applies).
    #[serde(default)]
    pub mode: Option<Mode>,
    /// Tools that run without asking in this project.
    #[serde(default)]
    pub always_allowed: BTreeSet<String>,
    /// Automatic fixes for this project: on, off, or (`None`) as the
    /// global setting says.
    #[serde(default)]
    pub auto_fix: Option<bool>,
    /// The project's own budget in dollars; `None`: the server's default.
    #[serde(default)]
    pub budget_usd: Option<f64>,
    /// What requests beside the conversation cost (`SideCost`).
    #[serde(default)]
    pub side_usd: f64,
    /// The MCP servers whose tools the agent gets here; `None`: all of
    /// them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mcp_servers: Option<Vec<String>>,
    /// The chats opened beside the first one, oldest first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub chats: Vec<Chat>,
}

/// What an event changed, so a renderer can update only that.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Touched {
    Nothing,
    /// Everything (a snapshot).
    All,
    /// The message list gained a message (or the chats a chat).
    Messages,
    Message(String),
    Artifact {
        message_id: String,
        artifact_id: Id,
    },
    Files,
    /// The terminal gained this text.
    Terminal(String),
    Alerts,
    Previews,
}

impl SessionState {
    /// Dollars the project's answers cost, those of unknown price aside.
    pub fn spent_usd(&self) -> f64 {
        // A fold from 0.0: an empty `sum` of floats is -0.0.
        self.messages
            .iter()
            .filter_map(|m| m.cost_usd)
            .fold(self.side_usd, |spent, cost| spent + cost)
    }

    pub fn message(&self, id: &str) -> Option<&Message> {
        self.messages.iter().rev().find(|m| m.id == id)
    }

    fn message_mut(&mut self, id: &str) -> Option<&mut Message> {
        self.messages.iter_mut().rev().find(|m| m.id == id)
    }

    pub fn artifact(&self, message_id: &str, artifact_id: &str) -> Option<&Artifact> {
        self.artifacts
            .iter()
            .rev()
            .find(|a| a.message_id == message_id && &*a.id == artifact_id)
    }

    fn artifact_mut(&mut self, message_id: &str, artifact_id: &str) -> Option<&mut Artifact> {
        self.artifacts
            .iter_mut()
            .rev()
            .find(|a| a.message_id == message_id && &*a.id == artifact_id)
    }

    pub fn action(&self, action: &ActionRef) -> Option<(&Artifact, &ActionEntry)> {
        self.artifacts
            .iter()
            .rev()
            .filter(|a| a.message_id == action.message_id)
            .find_map(|a| {
                a.actions
                    .iter()
                    .find(|e| e.id == action.action_id)
                    .map(|e| (a, e))
            })
    }

    /// An answer is streaming or one of its actions is pending or running.
    pub fn is_busy(&self) -> bool {
        self.messages
            .iter()
            .any(|m| m.status == MessageStatus::Streaming)
            || self
                .artifacts
                .iter()
                .flat_map(|a| &a.actions)
                .any(|e| e.status.is_active())
    }

    /// Marks the alerts and build results up to these ids resolved `by`
    /// what fixed them; those resolved before keep what fixed them.
    fn resolve(&mut self, alerts_up_to: u64, results_up_to: u64, by: &str) {
        let open_alerts = self.alerts.iter_mut().filter(|a| a.id <= alerts_up_to);
        for alert in open_alerts.filter(|a| a.resolved.is_none()) {
            alert.resolved = Some(by.to_owned());
        }
        let open_results = self
            .build_results
            .iter_mut()
            .filter(|r| r.id <= results_up_to);
        for result in open_results.filter(|r| r.resolved.is_none()) {
            result.resolved = Some(by.to_owned());
        }
    }

    /// The last alert's id (0 without one): alerts after it belong to what
    /// runs next.
    pub fn last_alert_id(&self) -> u64 {
        self.alerts.last().map_or(0, |a| a.id)
    }

    /// The last build result's id (0 without one): results after it belong
    /// to what runs next.
    pub fn last_build_result_id(&self) -> u64 {
        self.build_results.last().map_or(0, |r| r.id)
    }

    /// Folds one event into the state and says what it changed.
    pub fn apply(&mut self, event: &SessionEvent) -> Touched {
        match event {
            SessionEvent::Snapshot { state } => {
                *self = (**state).clone();
                Touched::All
            }
            SessionEvent::MessageAdded { message } => {
                if message.role == Role::Assistant {
                    self.changed_by_last_answer.clear();
                }
                self.messages.push(message.clone());
                Touched::Messages
            }
            SessionEvent::Protocol { message_id, event } => self.apply_protocol(message_id, event),
            SessionEvent::Usage { message_id, usage } => {
                self.update_message(message_id, |m| m.usage = Some(*usage))
            }
            SessionEvent::Notice { message_id, notice } => {
                self.update_message(message_id, |m| m.notice.clone_from(notice))
            }
            SessionEvent::MessageResumed { message_id } => self.update_message(message_id, |m| {
                m.status = MessageStatus::Streaming;
                m.notice = None;
            }),
            SessionEvent::MessageFinished {
                message_id,
                status,
                finish_reason,
            } => self.update_message(message_id, |m| {
                m.status = status.clone();
                m.finish_reason = *finish_reason;
                m.notice = None;
                if let Some(run) = &mut m.agent {
                    run.close_open_steps();
                }
            }),
            SessionEvent::MessageStatusChanged { message_id, status } => {
                self.update_message(message_id, |m| m.status = status.clone())
            }
            SessionEvent::ActionStatus { action, status } => {
                self.update_referenced(action, |entry| entry.status = status.clone())
            }
            SessionEvent::QueryResult { action, result } => {
                self.update_referenced(action, |entry| entry.result = Some(result.clone()))
            }
            SessionEvent::FileWritten { path, by_model } => {
                self.files.insert(path.clone());
                if *by_model {
                    self.changed_by_last_answer.insert(path.clone());
                }
                Touched::Files
            }
            SessionEvent::FileRemoved { path } => {
                // Removing a folder removes what is under it.
                let prefix = format!("{path}/");
                self.files.retain(|f| f != path && !f.starts_with(&prefix));
                self.changed_by_last_answer
                    .retain(|f| f != path && !f.starts_with(&prefix));
                Touched::Files
            }
            SessionEvent::Terminal { text } => {
                self.terminal.push_str(text);
                trim_front(&mut self.terminal, TERMINAL_TAIL);
                Touched::Terminal(text.clone())
            }
            SessionEvent::Alert { alert } => {
                self.alerts.push(alert.clone());
                keep_last(&mut self.alerts, MAX_ALERTS);
                Touched::Alerts
            }
            SessionEvent::BuildResult { result } => {
                self.build_results.push((**result).clone());
                keep_last(&mut self.build_results, MAX_BUILD_RESULTS);
                Touched::Alerts
            }
            SessionEvent::FailuresResolved {
                alerts_up_to,
                results_up_to,
                by,
            } => {
                self.resolve(*alerts_up_to, *results_up_to, by);
                Touched::Alerts
            }
            SessionEvent::PreviewOpened { preview } => {
                self.previews.retain(|p| p.port != preview.port);
                self.previews.push(preview.clone());
                self.previews.sort_by_key(|p| p.port);
                Touched::Previews
            }
            SessionEvent::PreviewUrl { port, url } => {
                match self.previews.iter_mut().find(|p| p.port == *port) {
                    Some(preview) => {
                        preview.url.clone_from(url);
                        Touched::Previews
                    }
                    // The port closed meanwhile.
                    None => Touched::Nothing,
                }
            }
            SessionEvent::PreviewClosed { port } => {
                self.previews.retain(|p| p.port != *port);
                Touched::Previews
            }
            SessionEvent::ModeChanged { mode } => {
                self.mode = Some(*mode);
                Touched::Messages
            }
            SessionEvent::AlwaysAllowed { tool } => {
                self.always_allowed.insert(tool.clone());
                Touched::Messages
            }
            SessionEvent::AgentStarted {
                message_id,
                max_steps,
            } => self.update_message(message_id, |m| {
                m.agent = Some(AgentRun {
                    max_steps: *max_steps,
                    ..AgentRun::default()
                });
            }),
            SessionEvent::AgentStep { message_id, step } => {
                self.update_message(message_id, |m| upsert_step(m, step))
            }
            SessionEvent::AgentStepOutput {
                message_id,
                step_id,
                output,
            } => self.update_message(message_id, |m| {
                let step = m.agent.as_mut().and_then(|run| run.step_mut(step_id));
                if let Some(step) = step {
                    step.show_output(output);
                }
            }),
            SessionEvent::AgentProgress {
                message_id,
                steps_used,
                usage,
            } => self.update_message(message_id, |m| {
                let run = m.agent.get_or_insert_with(AgentRun::default);
                run.steps_used = *steps_used;
                run.usage = *usage;
            }),
            SessionEvent::AgentEnded { message_id, end } => self.update_message(message_id, |m| {
                let run = m.agent.get_or_insert_with(AgentRun::default);
                run.end = Some(end.clone());
                run.close_open_steps();
            }),
            SessionEvent::AutoFix { enabled } => {
                self.auto_fix = Some(*enabled);
                Touched::Alerts
            }
            SessionEvent::ContextSummary {
                upto_message_id,
                summary,
            } => self.update_message(upto_message_id, |m| {
                m.context_summary = Some(summary.clone());
            }),
            SessionEvent::ContextUsage { message_id, usage } => {
                self.update_message(message_id, |m| m.context = Some(*usage))
            }
            SessionEvent::RulesIncluded {
                message_id,
                sources,
            } => self.update_message(message_id, |m| m.rules.clone_from(sources)),
            SessionEvent::ChatOpened { chat } => {
                if !self.chats.iter().any(|c| c.id == chat.id) {
                    self.chats.push(chat.clone());
                }
                Touched::Messages
            }
            SessionEvent::AnswerModel { message_id, model } => {
                self.update_message(message_id, |m| m.model = Some(model.clone()))
            }
            SessionEvent::Cost {
                message_id,
                cost_usd,
            } => self.update_message(message_id, |m| m.cost_usd = Some(*cost_usd)),
            SessionEvent::BudgetSet { budget_usd } => {
                self.budget_usd = *budget_usd;
                Touched::Messages
            }
            SessionEvent::SideCost { cost_usd } => {
                self.side_usd += cost_usd;
                Touched::Messages
            }
            SessionEvent::McpServersSet { servers } => {
                self.mcp_servers.clone_from(servers);
                Touched::Messages
            }
        }
    }

    /// An agent step anywhere in the conversation, with its message's id.
    pub fn agent_step(&self, step_id: &str) -> Option<(&str, &AgentStep)> {
        self.messages.iter().rev().find_map(|m| {
            let step = m.agent.as_ref()?.step(step_id)?;
            Some((m.id.as_str(), step))
        })
    }

    /// Changes the action `action` names, in the latest of its message's
    /// artifacts that has it.
    fn update_referenced(
        &mut self,
        action: &ActionRef,
        change: impl Fn(&mut ActionEntry),
    ) -> Touched {
        let found = self
            .artifacts
            .iter_mut()
            .rev()
            .filter(|a| a.message_id == action.message_id)
            .find_map(|a| {
                let entry = a.actions.iter_mut().find(|e| e.id == action.action_id)?;
                change(entry);
                Some(a.id.clone())
            });
        match found {
            Some(artifact_id) => Touched::Artifact {
                message_id: action.message_id.clone(),
                artifact_id,
            },
            None => Touched::Nothing,
        }
    }

    fn update_message(&mut self, id: &str, change: impl FnOnce(&mut Message)) -> Touched {
        match self.message_mut(id) {
            Some(message) => {
                change(message);
                Touched::Message(id.to_owned())
            }
            None => Touched::Nothing,
        }
    }

    fn apply_protocol(&mut self, message_id: &str, event: &Event) -> Touched {
        match event {
            Event::Text { text } => self.update_message(message_id, |m| match m.parts.last_mut() {
                Some(Part::Text { text: last }) => last.push_str(text),
                _ => m.parts.push(Part::Text { text: text.clone() }),
            }),
            Event::ArtifactOpen { id, artifact } => {
                self.artifacts.push(Artifact {
                    message_id: message_id.to_owned(),
                    id: id.clone(),
                    title: artifact.title.clone(),
                    closed: false,
                    actions: Vec::new(),
                });
                self.update_message(message_id, |m| {
                    m.parts.push(Part::Artifact { id: id.clone() })
                })
            }
            Event::ActionOpen {
                artifact_id,
                action_id,
                action,
                recovery,
            } => self.update_artifact(message_id, artifact_id, |a| {
                a.actions.push(ActionEntry {
                    id: action_id.clone(),
                    kind: (**action).clone(),
                    content: String::new(),
                    closed: false,
                    truncated: false,
                    error: None,
                    status: ActionStatus::Pending,
                    recovery: *recovery,
                    result: None,
                });
            }),
            Event::ActionDelta {
                artifact_id,
                action_id,
                delta,
            } => self.update_action(message_id, artifact_id, action_id, |e| {
                e.content.push_str(delta)
            }),
            Event::ActionClose {
                artifact_id,
                action_id,
                action,
            } => self.update_action(message_id, artifact_id, action_id, |e| {
                e.kind = action.kind.clone();
                e.content.clone_from(&action.content);
                e.closed = true;
                e.truncated = action.truncated;
                e.error.clone_from(&action.error);
                e.recovery = action.recovery;
            }),
            Event::ArtifactClose { id } => {
                self.update_artifact(message_id, id, |a| a.closed = true)
            }
        }
    }

    fn update_artifact(
        &mut self,
        message_id: &str,
        artifact_id: &Id,
        change: impl FnOnce(&mut Artifact),
    ) -> Touched {
        match self.artifact_mut(message_id, artifact_id) {
            Some(artifact) => {
                change(artifact);
                Touched::Artifact {
                    message_id: message_id.to_owned(),
                    artifact_id: artifact_id.clone(),
                }
            }
            None => Touched::Nothing,
        }
    }

    fn update_action(
        &mut self,
        message_id: &str,
        artifact_id: &Id,
        action_id: &Id,
        change: impl FnOnce(&mut ActionEntry),
    ) -> Touched {
        self.update_artifact(message_id, artifact_id, |a| {
            if let Some(entry) = a.actions.iter_mut().find(|e| &e.id == action_id) {
                change(entry);
            }
        })
    }
}

/// Adds the step (and its place among the message's parts) or replaces it.
fn upsert_step(message: &mut Message, step: &AgentStep) {
    let run = message.agent.get_or_insert_with(AgentRun::default);
    match run.steps.iter_mut().find(|s| s.id == step.id) {
        Some(known) => *known = step.clone(),
        None => {
            run.steps.push(step.clone());
            message.parts.push(Part::Step {
                id: step.id.clone(),
            });
        }
    }
}

fn keep_last<T>(list: &mut Vec<T>, max: usize) {
    if list.len() > max {
        let excess = list.len() - max;
        list.drain(..excess);
    }
}

/// Drops the front of `s` so it is at most `max` bytes, cutting after a
/// newline when there is one near the cut, and always at a character boundary.
fn trim_front(s: &mut String, max: usize) {
    if s.len() <= max {
        return;
    }
    let mut cut = s.len() - max;
    while !s.is_char_boundary(cut) {
        cut += 1;
    }
    if let Some(newline) = s[cut..].find('\n').filter(|n| *n < 1024) {
        cut += newline + 1;
    }
    s.drain(..cut);
}
