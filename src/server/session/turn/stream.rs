//! Where an answer's events go as they stream: text to the parser (or to
//! the browser, which parses a WebContainer project's answer itself), the
//! parser's events to the session and the runner, tool calls to the parser
//! as the actions they stand for, usage and notices to the session.

use crate::runtime::llm::LlmEvent;
use crate::runtime::protocol::{Event, GivenAction, Parser};
use crate::runtime::session::SessionEvent;
use crate::server::agent::as_actions;
use crate::server::session::project::ProjectHandle;
use crate::server::session::saved::SavedAnswer;

pub struct Stream<'a> {
    pub project: &'a ProjectHandle,
    pub message_id: &'a str,
    pub parser: &'a mut Parser,
    pub saved: &'a mut SavedAnswer,
    pub in_browser: bool,
    /// The actions the model gave as tool calls, in order.
    pub given: Vec<GivenAction>,
    /// The model's price, when known: each usage is costed.
    pub price: Option<crate::runtime::llm::Price>,
    /// The answer is a plan: its actions go to the session only.
    pub plan: bool,
}

impl Stream<'_> {
    /// Takes one event of the answer.
    pub fn take(&mut self, event: LlmEvent) {
        match event {
            LlmEvent::Delta { text } => {
                self.saved.delta(&self.project.session, &text);
                if self.in_browser {
                    self.project.browser.delta(self.message_id, &text);
                } else {
                    let events: Vec<Event> = self.parser.push(&text).collect();
                    self.forward(events);
                }
            }
            LlmEvent::ToolCalls { calls } => {
                let actions: Vec<GivenAction> =
                    calls.iter().map(as_actions::given_action).collect();
                self.given.extend(actions.iter().cloned());
                let events: Vec<Event> = self.parser.push_given(actions).collect();
                self.forward(events);
            }
            LlmEvent::Usage(usage) => {
                self.saved.usage(usage);
                self.publish(SessionEvent::Usage {
                    message_id: self.message_id.to_owned(),
                    usage,
                });
                if let Some(price) = self.price {
                    let cost_usd = price.cost(&usage);
                    self.saved.cost(cost_usd);
                    self.publish(SessionEvent::Cost {
                        message_id: self.message_id.to_owned(),
                        cost_usd,
                    });
                }
            }
            LlmEvent::Continuing { attempt } => self.notice(format!(
                "The answer reached the model's length limit; asking it to continue ({attempt} of 2)."
            )),
            LlmEvent::Retrying {
                attempt,
                delay_ms,
                reason,
            } => self.notice(format!(
                "{reason}; trying again in {:.1} s (retry {attempt}).",
                delay_ms as f64 / 1000.0
            )),
            LlmEvent::Finished { .. } | LlmEvent::Failed { .. } => {}
        }
    }

    /// A notice on the answer.
    pub fn notice(&self, notice: String) {
        self.publish(SessionEvent::Notice {
            message_id: self.message_id.to_owned(),
            notice: Some(notice),
        });
    }

    fn forward(&self, events: Vec<Event>) {
        forward(self.project, self.message_id, events, self.plan);
    }

    fn publish(&self, event: SessionEvent) {
        self.project.publish(event);
    }
}

/// The parser's events to the session and the runner: the state learns of
/// an action before the runner reports on it. A plan's actions go to the
/// session only (`plan`), marked planned as they open.
pub fn forward(project: &ProjectHandle, message_id: &str, events: Vec<Event>, plan: bool) {
    for event in events {
        project.publish(SessionEvent::Protocol {
            message_id: message_id.to_owned(),
            event: event.clone(),
        });
        if !plan {
            project.runner.observe(message_id, &event);
        } else if let Event::ActionOpen { action_id, .. } = &event {
            project.publish(SessionEvent::ActionStatus {
                action: crate::runtime::session::ActionRef {
                    message_id: message_id.to_owned(),
                    action_id: action_id.clone(),
                },
                status: crate::runtime::session::ActionStatus::Planned,
            });
        }
    }
}
