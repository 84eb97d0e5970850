//! The second copy of an answer's text, dropped once the answer's row holds
//! it. While an answer streams, its raw text rides on the rows of its
//! events (`events.piece`), so what a browser has seen can be parsed again
//! after a `kill -9`. Each time the answer's row is saved, the row holds
//! the text up to that moment, and the pieces before it are never read
//! again. Dropping them at the save would put a write of a few hundred
//! rows on every answer's end, in the transaction that tokens wait for (at
//! 1,000 streams ending together, p99 went from 0.27 s to 2 s: README,
//! "Load"); so the writer notes them and drops them when it has nothing
//! else to do.

use std::collections::{HashMap, VecDeque};

use super::{Open, Write};
use crate::runtime::session::MessageStatus;
use crate::server::store::{Store, StoreError, messages};

/// Answers noted at most; past it the oldest note is forgotten (its text
/// then stays on its events, read by nothing: space, not harm).
const NOTED_MAX: usize = 4096;

/// Answers whose text is dropped in one transaction.
const AT_ONCE: usize = 16;

/// The text of answer `message_id` that rode on the project's events
/// `from` (excluded) to `to`, now in the answer's row.
struct Folded {
    project: String,
    message_id: String,
    from: u64,
    to: u64,
}

/// The answers whose riding text can go, oldest first.
#[derive(Default)]
pub(super) struct Noted(VecDeque<Folded>);

impl Noted {
    /// Notes the answers whose rows `batch` saved again: the text that rode
    /// on their events since their last save (by this writer) is in them.
    /// A writer keeps the last save of each answer that still streams.
    pub fn note(&mut self, open: &mut HashMap<u64, Open>, batch: &[(u64, Write)]) {
        for (writer, write) in batch {
            let (Write::Message { row, after }, Some(state)) = (write, open.get_mut(writer)) else {
                continue;
            };
            let last = if row.status == MessageStatus::Streaming {
                state.saved.insert(row.id.clone(), *after)
            } else {
                state.saved.remove(&row.id)
            };
            if let Some(from) = last.filter(|from| from < after) {
                if self.0.len() == NOTED_MAX {
                    self.0.pop_front();
                }
                self.0.push_back(Folded {
                    project: state.project.clone(),
                    message_id: row.id.clone(),
                    from,
                    to: *after,
                });
            }
        }
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Drops the riding text of up to [`AT_ONCE`] noted answers, in one
    /// transaction. Each is dropped only if its row still holds the text
    /// up to the end of its range (a save that failed leaves it riding).
    pub async fn drop_some(&mut self, store: &Store) {
        let some: Vec<Folded> = self.0.drain(..self.0.len().min(AT_ONCE)).collect();
        if let Err(error) = drop_all(store, &some).await {
            tracing::warn!(%error, answers = some.len(), "dropping answers' text from their events failed; it stays");
        }
    }
}

async fn drop_all(store: &Store, folded: &[Folded]) -> Result<(), StoreError> {
    let mut tx = store.begin_write().await?;
    for one in folded {
        let range = (one.from, one.to);
        messages::forget_pieces(&mut tx, &one.project, &one.message_id, range).await?;
    }
    tx.commit().await?;
    Ok(())
}
