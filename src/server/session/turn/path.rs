//! Where an answer goes as it streams. A sandbox project's answer is parsed
//! here and its actions run on the server; a WebContainer project's text is
//! relayed to the tab that parses and runs it; a plan is parsed here for the
//! session alone, its actions shown and never run. [`for_answer`] picks one
//! when the answer starts, so the turn itself never asks where it runs.

use crate::runtime::protocol::{Event, GivenAction, Parser};
use crate::runtime::session::{ActionRef, ActionStatus, SessionEvent};
use crate::server::llm::prompt::RuntimeDescription;
use crate::server::session::project::ProjectHandle;

/// One way an answer's text and actions reach the project.
pub trait AnswerPath: Send + Sync {
    /// Whether the model may give its actions as tool calls: only where the
    /// server parses the answer.
    fn takes_tools(&self) -> bool;

    /// A piece of the answer's text: parsed here, unless the path says
    /// otherwise.
    fn text(&self, project: &ProjectHandle, message_id: &str, parser: &mut Parser, text: &str) {
        let events: Vec<Event> = parser.push(text).collect();
        self.events(project, message_id, events);
    }

    /// Actions the model gave as tool calls, parsed as the tags they stand for.
    fn given(
        &self,
        project: &ProjectHandle,
        message_id: &str,
        parser: &mut Parser,
        actions: Vec<GivenAction>,
    ) {
        let events: Vec<Event> = parser.push_given(actions).collect();
        self.events(project, message_id, events);
    }

    /// The answer ended (`stopped`: the person stopped it): held-back text
    /// is shown, and an action still open is closed as truncated.
    fn end(&self, project: &ProjectHandle, message_id: &str, parser: Parser, _stopped: bool) {
        self.events(project, message_id, parser.finish());
    }

    /// The parser's events, wherever this path sends them.
    fn events(&self, project: &ProjectHandle, message_id: &str, events: Vec<Event>);
}

/// The path of an answer in a project described by `runtime`; `plan` for
/// an answer of Plan mode, whichever runtime the project has.
pub fn for_answer(runtime: RuntimeDescription, plan: bool) -> &'static dyn AnswerPath {
    if plan {
        &Planned
    } else if runtime == RuntimeDescription::Webcontainer {
        &BrowserRelay
    } else {
        &ServerRunner
    }
}

/// Parsed here; each event goes to the session, then to the runner, so the
/// state learns of an action before the runner reports on it.
pub struct ServerRunner;

impl AnswerPath for ServerRunner {
    fn takes_tools(&self) -> bool {
        true
    }

    fn events(&self, project: &ProjectHandle, message_id: &str, events: Vec<Event>) {
        for event in events {
            project.publish(protocol(message_id, event.clone()));
            project.runner.observe(message_id, &event);
        }
    }
}

/// Relayed to the browser tab that parses and runs the answer; the tab
/// reports back what its parser and runner made. The model answers in tags
/// there, so no tool calls.
pub struct BrowserRelay;

impl AnswerPath for BrowserRelay {
    fn takes_tools(&self) -> bool {
        false
    }

    fn text(&self, project: &ProjectHandle, message_id: &str, _parser: &mut Parser, text: &str) {
        project.browser.delta(message_id, text);
    }

    fn end(&self, project: &ProjectHandle, message_id: &str, parser: Parser, stopped: bool) {
        project.browser.end(message_id, stopped);
        ServerRunner.end(project, message_id, parser, stopped);
    }

    fn events(&self, project: &ProjectHandle, message_id: &str, events: Vec<Event>) {
        ServerRunner.events(project, message_id, events);
    }
}

/// A plan: parsed here for the session only, each action marked planned as
/// it opens. It keeps to tags, so the plan reads as the answer it would be.
pub struct Planned;

impl AnswerPath for Planned {
    fn takes_tools(&self) -> bool {
        false
    }

    fn events(&self, project: &ProjectHandle, message_id: &str, events: Vec<Event>) {
        for event in events {
            let opened = match &event {
                Event::ActionOpen { action_id, .. } => Some(action_id.clone()),
                _ => None,
            };
            project.publish(protocol(message_id, event));
            if let Some(action_id) = opened {
                project.publish(SessionEvent::ActionStatus {
                    action: ActionRef {
                        message_id: message_id.to_owned(),
                        action_id,
                    },
                    status: ActionStatus::Planned,
                });
            }
        }
    }
}

fn protocol(message_id: &str, event: Event) -> SessionEvent {
    SessionEvent::Protocol {
        message_id: message_id.to_owned(),
        event,
    }
}
