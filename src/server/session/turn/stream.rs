//! Where an answer's events go as they stream: text and tool calls to the
//! answer's path (`path.rs`), usage, cost and notices to the session.

use super::path::AnswerPath;
use crate::runtime::llm::LlmEvent;
use crate::runtime::protocol::{GivenAction, Parser};
use crate::runtime::session::SessionEvent;
use crate::server::agent::as_actions;
use crate::server::session::project::ProjectHandle;
use crate::server::session::saved::SavedAnswer;

pub struct Stream<'a> {
    pub project: &'a ProjectHandle,
    pub message_id: &'a str,
    pub parser: &'a mut Parser,
    pub saved: &'a mut SavedAnswer,
    pub path: &'a dyn AnswerPath,
    /// The actions the model gave as tool calls, in order.
    pub given: Vec<GivenAction>,
    /// The model's price, when known: each usage is costed.
    pub price: Option<crate::runtime::llm::Price>,
}

impl Stream<'_> {
    /// Takes one event of the answer.
    pub fn take(&mut self, event: LlmEvent) {
        match event {
            LlmEvent::Delta { text } => {
                self.saved.delta(&self.project.session, &text);
                self.path
                    .text(self.project, self.message_id, self.parser, &text);
            }
            LlmEvent::ToolCalls { calls } => {
                let actions: Vec<GivenAction> =
                    calls.iter().map(as_actions::given_action).collect();
                self.given.extend(actions.iter().cloned());
                self.path
                    .given(self.project, self.message_id, self.parser, actions);
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

    fn publish(&self, event: SessionEvent) {
        self.project.publish(event);
    }
}
