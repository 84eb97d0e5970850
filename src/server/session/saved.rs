//! An answer's row in the store while it streams: each piece of text is
//! appended as it arrives, in order with the events it produces, and the
//! whole row is saved, final, before its end is published.

use super::hub::Session;
use crate::runtime::llm::{FinishReason, TokenUsage};
use crate::runtime::session::{MessageStatus, Role};
use crate::server::store::MessageRow;

pub struct SavedAnswer {
    row: MessageRow,
}

impl SavedAnswer {
    /// The row of an answer; `text` is what arrived before (when continuing).
    pub fn new(message_id: &str, asked: Option<String>, text: &str) -> SavedAnswer {
        SavedAnswer {
            row: MessageRow {
                id: message_id.to_owned(),
                role: Role::Assistant,
                text: text.to_owned(),
                asked,
                model: None,
                usage: None,
                cost_usd: None,
                finish_reason: None,
                status: MessageStatus::Streaming,
                attachments: Default::default(),
            },
        }
    }

    /// Saves the row as it is now.
    pub fn save(&mut self, session: &Session) {
        session.save_message(self.row.clone());
    }

    pub fn set_model(&mut self, model: &str) {
        if !model.is_empty() {
            self.row.model = Some(model.to_owned());
        }
    }

    /// More text arrived: queued for the store before the events it makes.
    pub fn delta(&self, session: &Session, text: &str) {
        session.append_text(&self.row.id, text);
    }

    pub fn usage(&mut self, usage: TokenUsage) {
        self.row.usage = Some(usage);
    }

    pub fn cost(&mut self, cost_usd: f64) {
        self.row.cost_usd = Some(cost_usd);
    }

    /// The final row; queued before the end is published, so it is stored
    /// before anyone hears of it.
    pub fn finish(
        mut self,
        session: &Session,
        text: &str,
        status: &MessageStatus,
        finish_reason: Option<FinishReason>,
    ) {
        text.clone_into(&mut self.row.text);
        self.row.status = status.clone();
        self.row.finish_reason = finish_reason;
        self.save(session);
    }
}
