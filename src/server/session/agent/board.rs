//! The run's step cards: each event of the loop becomes session events
//! (text, cards, files written, the terminal's lines), and the approver
//! shows a waiting card and waits for the person's decision.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use async_trait::async_trait;

use super::super::project::ProjectHandle;
use super::live::{self, LiveOutput};
use super::preview::{self, RESULT_CHARS};
use crate::runtime::llm::ToolCall;
use crate::runtime::protocol::Event;
use crate::runtime::runner::command_line;
use crate::runtime::session::{AgentStep, Decision, SessionEvent, StepStatus};
use crate::server::agent::run::{AgentEvent, Approval, Approver, DENIED, Subject};
use crate::server::agent::tools::{OutputSink, ToolOutput};

pub struct Board {
    project: Arc<ProjectHandle>,
    message_id: String,
    inner: Mutex<Inner>,
    /// The running command's output, on its card.
    live: LiveOutput,
    /// The running command's output reached the terminal as it came.
    streamed: Arc<AtomicBool>,
}

#[derive(Default)]
struct Inner {
    /// What the model said, over all steps.
    text: String,
    /// Each call with its card, in order.
    cards: Vec<(ToolCall, AgentStep)>,
}

impl Board {
    pub fn new(project: Arc<ProjectHandle>, message_id: &str) -> Board {
        let live = {
            // Weak: the tools (which keep the sink) outlive the run in the project.
            let (project, message_id) = (Arc::downgrade(&project), message_id.to_owned());
            LiveOutput::spawn(
                move |step_id, output| {
                    let Some(project) = project.upgrade() else {
                        return;
                    };
                    project.publish(SessionEvent::AgentStepOutput {
                        message_id: message_id.clone(),
                        step_id: step_id.to_owned(),
                        output,
                    });
                },
                live::PERIOD,
            )
        };
        Board {
            project,
            message_id: message_id.to_owned(),
            inner: Mutex::default(),
            live,
            streamed: Arc::default(),
        }
    }

    /// Where the tools send a running command's output: its card, and the
    /// Rivet terminal, as it arrives.
    pub fn output_sink(&self) -> OutputSink {
        let card = self.live.sink();
        // Weak: the tools (which keep the sink) outlive the run in the project.
        let project = Arc::downgrade(&self.project);
        let streamed = Arc::clone(&self.streamed);
        Arc::new(move |bytes: &[u8]| {
            card(bytes);
            if let Some(project) = project.upgrade() {
                streamed.store(true, Ordering::Relaxed);
                project.publish(SessionEvent::Terminal {
                    text: String::from_utf8_lossy(bytes).replace('\n', "\r\n"),
                });
            }
        })
    }

    fn inner(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub fn text(&self) -> String {
        self.inner().text.clone()
    }

    fn publish_step(&self, step: AgentStep) {
        self.project.publish(SessionEvent::AgentStep {
            message_id: self.message_id.clone(),
            step,
        });
    }

    /// Changes the latest card of `call_id` and publishes it.
    fn update(&self, call_id: &str, change: impl FnOnce(&mut AgentStep)) -> Option<AgentStep> {
        let step = {
            let mut inner = self.inner();
            let (_, step) = inner
                .cards
                .iter_mut()
                .rev()
                .find(|(c, _)| c.id == call_id)?;
            change(step);
            // The whole file is kept only while the person decides.
            if step.status != StepStatus::Waiting {
                step.change = None;
            }
            step.clone()
        };
        self.publish_step(step.clone());
        Some(step)
    }

    pub fn on_event(&self, event: AgentEvent) {
        match event {
            AgentEvent::Answered { step, text, calls } => self.answered(step, &text, calls),
            AgentEvent::ToolStarted { call_id, .. } => self.started(&call_id),
            AgentEvent::ToolResult {
                call_id, output, ..
            } => {
                self.live.end();
                self.result(&call_id, output);
            }
            // The approver shows the waiting card, with its preview.
            AgentEvent::AwaitingApproval { .. } | AgentEvent::Finished { .. } => {}
        }
    }

    /// A note of the IDE's in the answer's text (a tool server left out).
    pub fn note(&self, note: &str) {
        self.said(&format!("*{note}*"));
    }

    fn said(&self, text: &str) {
        let piece = {
            let mut inner = self.inner();
            let piece = if inner.text.is_empty() {
                text.to_owned()
            } else {
                format!("\n\n{text}")
            };
            inner.text.push_str(&piece);
            piece
        };
        self.project.session.append_text(&self.message_id, &piece);
        self.project.publish(SessionEvent::Protocol {
            message_id: self.message_id.clone(),
            event: Event::Text { text: piece },
        });
    }

    fn answered(&self, step: u32, text: &str, calls: Vec<ToolCall>) {
        if !text.trim().is_empty() {
            self.said(text);
        }
        for (index, call) in calls.into_iter().enumerate() {
            let card = AgentStep {
                id: format!("{}-{step}-{}", self.message_id, index + 1),
                step,
                tool: call.name.clone(),
                summary: preview::summary(&call),
                status: StepStatus::Pending,
                preview: None,
                change: None,
                output: None,
                result: None,
            };
            self.inner().cards.push((call, card.clone()));
            self.publish_step(card);
        }
    }

    /// The call runs: its card says so (an auto-approved one was pending),
    /// and a command's output goes to its card as it arrives.
    fn started(&self, call_id: &str) {
        let running = |step: &AgentStep| step.status == StepStatus::Running;
        let known = {
            let inner = self.inner();
            let found = inner.cards.iter().rev().find(|(c, _)| c.id == call_id);
            found.map(|(call, step)| (preview::command(call), step.clone()))
        };
        let Some((command, step)) = known else {
            return;
        };
        if !running(&step) {
            self.update(call_id, |step| step.status = StepStatus::Running);
        }
        if let Some(command) = command {
            self.streamed.store(false, Ordering::Relaxed);
            self.project.publish(SessionEvent::Terminal {
                text: command_line(&command),
            });
            self.live.start(&step.id);
        }
    }

    fn result(&self, call_id: &str, output: ToolOutput) {
        let status = if output.text == DENIED {
            StepStatus::Denied
        } else if output.ok {
            StepStatus::Done
        } else {
            StepStatus::Failed
        };
        let call = self
            .inner()
            .cards
            .iter()
            .rev()
            .find(|(c, _)| c.id == call_id)
            .map(|(c, _)| c.clone());
        self.update(call_id, |step| {
            step.status = status;
            step.result = Some(preview::cap(&output.text, RESULT_CHARS));
        });
        if let (Some(call), true) = (call, status != StepStatus::Denied) {
            self.effects(&call, &output);
        }
    }

    /// What a step that ran shows elsewhere: files in the tree and
    /// editor, commands in the Rivet terminal, servers in the preview.
    fn effects(&self, call: &ToolCall, output: &ToolOutput) {
        if let Some(path) = preview::written_file(call).filter(|_| output.ok) {
            self.project.publish(SessionEvent::FileWritten {
                path,
                by_model: true,
            });
        }
        // A command's line and output went to the terminal as it ran; one
        // that printed nothing as it ran (it could not start) shows its result.
        if preview::command(call).is_some() && !self.streamed.swap(false, Ordering::Relaxed) {
            let body = output.text.trim_end().replace('\n', "\r\n");
            self.project.publish(SessionEvent::Terminal {
                text: format!("{body}\r\n"),
            });
        }
        if let Some(port) = output.port
            && let Err(error) = self.project.runner.open_preview(port)
        {
            tracing::warn!(port, %error, "no preview for the agent's server");
        }
    }

    /// Shows the waiting card and waits for the person.
    async fn ask(&self, subject: Subject, call: &ToolCall) -> Decision {
        let preview = preview::approval_preview(&*self.project.runtime, subject, call).await;
        let step_id = {
            let inner = self.inner();
            let found = inner.cards.iter().rev().find(|(c, _)| c.id == call.id);
            found.map(|(_, step)| step.id.clone())
        };
        let Some(step_id) = step_id else {
            return Decision::Deny;
        };
        // Waiting before the card says so, so an answer is never early.
        let wait = self.project.agent.wait(&step_id);
        self.update(&call.id, |step| {
            step.status = StepStatus::Waiting;
            step.preview = Some(preview.text);
            step.change = preview.change;
        });
        wait.await.unwrap_or(Decision::Deny)
    }
}

/// Asks the person through the session, unless the tool is always allowed
/// in this project.
pub struct SessionApprover {
    pub board: Arc<Board>,
}

#[async_trait]
impl Approver for SessionApprover {
    async fn decide(&self, subject: Subject, call: &ToolCall) -> Approval {
        let allowed = self
            .board
            .project
            .session
            .read(|s| s.always_allowed.contains(&call.name));
        let decision = if allowed {
            Decision::Approve
        } else {
            self.board.ask(subject, call).await
        };
        if decision == Decision::Deny {
            return Approval::Deny;
        }
        self.board
            .update(&call.id, |step| step.status = StepStatus::Running);
        Approval::Approve
    }
}
