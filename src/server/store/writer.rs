//! One task per open project writes what the session publishes, in order,
//! and only then hands each event to the subscribers: what a browser has
//! seen is on disk. Writes queued meanwhile go in one transaction.
//!
//! The queue is bounded by what reaches it: output comes at most one event
//! of [`OUTPUT_EVENT_MAX`](super::OUTPUT_EVENT_MAX) bytes per window (the
//! session's output gate, `output.rs`); every other write is queued as it
//! comes and never dropped. Every [`OUTPUT_KEPT`] bytes of output written,
//! the project's stored output is compacted to its last [`OUTPUT_KEPT`].

use std::sync::Arc;

use tokio::sync::{mpsc, oneshot};

use super::messages::{self, MessageRow};
use super::output::{OUTPUT_KEPT, output_bytes};
use super::{Store, StoreError, events};
use crate::runtime::session::Envelope;

/// Writes taken in one transaction at most.
const BATCH: usize = 512;

enum Write {
    Event(Arc<Envelope>),
    Message(MessageRow),
    /// More text of a streaming answer.
    Append {
        message_id: String,
        text: String,
    },
    /// Answered once everything queued before it is written.
    Flush(oneshot::Sender<()>),
}

pub struct EventWriter {
    tx: mpsc::UnboundedSender<Write>,
}

impl EventWriter {
    /// Starts the writer of `project`; `deliver` receives each event after
    /// it is written (or after writing it failed, which is logged).
    pub fn spawn(
        store: Store,
        project: String,
        deliver: impl Fn(Arc<Envelope>) + Send + 'static,
    ) -> EventWriter {
        let (tx, rx) = mpsc::unbounded_channel();
        tokio::spawn(run(store, project, rx, deliver));
        EventWriter { tx }
    }

    pub fn event(&self, envelope: Arc<Envelope>) {
        if self.tx.send(Write::Event(envelope)).is_err() {
            tracing::error!("the session writer has stopped; an event was not stored");
        }
    }

    pub fn message(&self, message: MessageRow) {
        if self.tx.send(Write::Message(message)).is_err() {
            tracing::error!("the session writer has stopped; a message was not stored");
        }
    }

    /// Appends to a stored answer's text, in order with the events.
    pub fn append(&self, message_id: &str, text: &str) {
        let write = Write::Append {
            message_id: message_id.to_owned(),
            text: text.to_owned(),
        };
        if self.tx.send(write).is_err() {
            tracing::error!("the session writer has stopped; answer text was not stored");
        }
    }

    /// Waits until everything queued so far is written.
    pub async fn flush(&self) {
        let (done, wait) = oneshot::channel();
        if self.tx.send(Write::Flush(done)).is_ok() {
            let _ = wait.await;
        }
    }
}

async fn run(
    store: Store,
    project: String,
    mut rx: mpsc::UnboundedReceiver<Write>,
    deliver: impl Fn(Arc<Envelope>),
) {
    let mut batch = Vec::new();
    // The number of the last piece of answer text stored, once known.
    let mut piece = None;
    // Output written since the stored output was last compacted.
    let mut output = 0;
    while rx.recv_many(&mut batch, BATCH).await > 0 {
        if let Err(error) = write(&store, &project, &batch, &mut piece).await {
            // One bad write rolls the whole batch back; store the others.
            tracing::error!(project, %error, "storing a batch failed; storing it one by one");
            write_each(&store, &project, &batch, &mut piece).await;
        }
        output += batch_output(&batch);
        if output >= OUTPUT_KEPT {
            output = 0;
            compact(&store, &project).await;
        }
        for write in batch.drain(..) {
            match write {
                Write::Event(envelope) => deliver(envelope),
                Write::Message(_) | Write::Append { .. } => {}
                Write::Flush(done) => {
                    let _ = done.send(());
                }
            }
        }
    }
}

/// Keeps the last [`OUTPUT_KEPT`] bytes of the project's stored output.
async fn compact(store: &Store, project: &str) {
    if let Err(error) = store.compact_output(project).await {
        tracing::error!(project, %error, "compacting the stored output failed");
    }
}

/// The bytes of output the batch's events add to the terminal.
fn batch_output(batch: &[Write]) -> u64 {
    batch
        .iter()
        .map(|write| match write {
            Write::Event(envelope) => output_bytes(&envelope.event),
            _ => 0,
        })
        .sum()
}

async fn write_each(store: &Store, project: &str, batch: &[Write], piece: &mut Option<i64>) {
    for one in batch.chunks(1) {
        if let Err(error) = write(store, project, one, piece).await {
            tracing::error!(project, %error, "storing the session failed");
        }
    }
}

async fn write(
    store: &Store,
    project: &str,
    batch: &[Write],
    piece: &mut Option<i64>,
) -> Result<(), StoreError> {
    let mut tx = store.begin_write().await?;
    for write in batch {
        match write {
            Write::Event(envelope) => events::append(&mut tx, project, envelope).await?,
            Write::Message(message) => messages::upsert(&mut tx, project, message).await?,
            Write::Append { message_id, text } => {
                let last = match *piece {
                    Some(last) => last,
                    None => messages::last_piece(&mut tx, project).await?,
                };
                messages::append(&mut tx, project, last + 1, message_id, text).await?;
                *piece = Some(last + 1);
            }
            Write::Flush(_) => {}
        }
    }
    tx.commit().await?;
    Ok(())
}
