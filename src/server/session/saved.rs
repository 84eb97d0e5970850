//! An answer's row in the store while it streams: saved at least every
//! [`SAVE_EVERY`], and once more, final, before its end is published.

use std::time::{Duration, Instant};

use super::hub::Session;
use crate::runtime::session::{MessageStatus, Role, Usage};
use crate::server::store::MessageRow;

/// How often a streaming answer's text is saved at the latest.
pub const SAVE_EVERY: Duration = Duration::from_millis(500);

pub struct SavedAnswer {
    row: MessageRow,
    saved_at: Instant,
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
                finish_reason: None,
                status: MessageStatus::Streaming,
            },
            saved_at: Instant::now(),
        }
    }

    /// Saves the row as it is now.
    pub fn save(&mut self, session: &Session) {
        session.save_message(self.row.clone());
        self.saved_at = Instant::now();
    }

    pub fn set_model(&mut self, model: &str) {
        if !model.is_empty() {
            self.row.model = Some(model.to_owned());
        }
    }

    /// More text arrived; saved when the last save is old enough.
    pub fn delta(&mut self, session: &Session, text: &str) {
        self.row.text.push_str(text);
        if self.saved_at.elapsed() >= SAVE_EVERY {
            self.save(session);
        }
    }

    pub fn usage(&mut self, usage: Usage) {
        self.row.usage = Some(usage);
    }

    /// The final row; queued before the end is published, so it is stored
    /// before anyone hears of it.
    pub fn finish(
        mut self,
        session: &Session,
        text: &str,
        status: &MessageStatus,
        finish_reason: Option<String>,
    ) {
        text.clone_into(&mut self.row.text);
        self.row.status = status.clone();
        self.row.finish_reason = finish_reason;
        self.save(session);
    }
}
