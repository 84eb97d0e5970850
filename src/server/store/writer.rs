//! One task writes what every open project's session publishes, in order,
//! and only then hands each event to that project's subscribers: what a
//! browser has seen is on disk. Writes queued meanwhile, from every project,
//! go in one transaction, so many streaming answers share each commit
//! instead of queueing for SQLite's one write lock a token at a time.
//!
//! The queue is bounded with back-pressure: past [`QUEUE_LIMIT`] writes
//! waiting, producers that can wait (a streaming answer, before it reads
//! more of the provider's stream) wait in [`Room::wait`] until the writer
//! has caught up. Nothing is dropped: a producer that cannot wait still
//! queues. Output comes at most one event of
//! [`OUTPUT_EVENT_MAX`](super::OUTPUT_EVENT_MAX) bytes per window (the
//! session's output gate, `output.rs`). Every [`OUTPUT_KEPT`] bytes of a
//! project's output written, its stored output is compacted to its last
//! [`OUTPUT_KEPT`].

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use tokio::sync::{Notify, mpsc, oneshot};

mod folded;

use folded::Noted;

use super::messages::{self, MessageRow, Piece};
use super::output::{OUTPUT_KEPT, is_output, output_bytes};
use super::{Store, StoreError, events};
use crate::runtime::session::Envelope;

/// Writes taken in one transaction at most.
const BATCH: usize = 1024;

/// Writes waiting in the queue past which producers that can wait do
/// ([`Room::wait`]): one transaction's worth. A streaming answer that waits
/// takes in what arrived meanwhile as one piece of text (the LLM client),
/// so a writer that fell behind is sent fewer, larger events: at 1,000
/// streams, limits of 2,048 and 8,192 writes left tokens longer in the
/// queue and 256 left some answers waiting behind others (README, "Load").
pub const QUEUE_LIMIT: usize = BATCH;

type Deliver = Box<dyn Fn(Arc<Envelope>) + Send + Sync>;

/// How many writes wait in the queue, and the signal that it shrank.
#[derive(Default)]
struct Backlog {
    queued: AtomicUsize,
    drained: Notify,
}

/// A producer's view of the writer's queue: wait here before making more.
#[derive(Clone)]
pub struct Room(Arc<Backlog>);

impl Room {
    /// Returns once fewer than [`QUEUE_LIMIT`] writes wait.
    pub async fn wait(&self) {
        loop {
            let drained = self.0.drained.notified();
            tokio::pin!(drained);
            // Registered before the check, so a drain in between is not missed.
            drained.as_mut().enable();
            if self.queued() < QUEUE_LIMIT {
                return;
            }
            drained.await;
        }
    }

    /// Writes waiting now.
    pub fn queued(&self) -> usize {
        self.0.queued.load(Ordering::Acquire)
    }
}

enum Write {
    Event(Arc<Envelope>),
    /// A message's row; `after`: the last event published before it.
    Message {
        row: MessageRow,
        after: u64,
    },
    /// More text of a streaming answer, published after event `after`.
    /// It rides on the row of the event that follows it in the same
    /// transaction (one row a token); without one, it gets a row of its own.
    Append {
        message_id: String,
        text: String,
        after: u64,
    },
    /// Answered once everything queued before it is written.
    Flush(oneshot::Sender<()>),
}

/// What the shared task is asked: a writer opened or closed, or one of its
/// writes.
enum Job {
    Open {
        writer: u64,
        project: String,
        deliver: Deliver,
    },
    Write(u64, Write),
    Close(u64),
}

/// The store's one writing task, started with the first [`EventWriter`].
#[derive(Clone)]
pub(super) struct SharedWriter {
    tx: mpsc::UnboundedSender<Job>,
    next: Arc<AtomicU64>,
    backlog: Arc<Backlog>,
}

impl SharedWriter {
    pub(super) fn start(store: Store) -> SharedWriter {
        let (tx, rx) = mpsc::unbounded_channel();
        let backlog = Arc::new(Backlog::default());
        tokio::spawn(run(store, rx, Arc::clone(&backlog)));
        SharedWriter {
            tx,
            next: Arc::new(AtomicU64::new(0)),
            backlog,
        }
    }
}

/// A project's way into the store's writer. Dropping it closes the
/// project's place there once its queued writes are done.
pub struct EventWriter {
    id: u64,
    tx: mpsc::UnboundedSender<Job>,
    backlog: Arc<Backlog>,
}

impl EventWriter {
    /// The writer of `project`; `deliver` receives each event after it is
    /// written (or after writing it failed, which is logged).
    pub fn spawn(
        store: Store,
        project: String,
        deliver: impl Fn(Arc<Envelope>) + Send + Sync + 'static,
    ) -> EventWriter {
        let shared = store.shared_writer();
        let id = shared.next.fetch_add(1, Ordering::Relaxed);
        let deliver = Box::new(deliver);
        let open = Job::Open {
            writer: id,
            project,
            deliver,
        };
        if shared.tx.send(open).is_err() {
            tracing::error!("the store's writer has stopped; nothing more is stored");
        }
        EventWriter {
            id,
            tx: shared.tx,
            backlog: shared.backlog,
        }
    }

    fn send(&self, write: Write, what: &str) {
        self.backlog.queued.fetch_add(1, Ordering::AcqRel);
        if self.tx.send(Job::Write(self.id, write)).is_err() {
            self.backlog.queued.fetch_sub(1, Ordering::AcqRel);
            tracing::error!("the store's writer has stopped; {what} was not stored");
        }
    }

    /// Where producers wait while the writer is behind.
    pub fn room(&self) -> Room {
        Room(Arc::clone(&self.backlog))
    }

    pub fn event(&self, envelope: Arc<Envelope>) {
        self.send(Write::Event(envelope), "an event");
    }

    /// Saves a message's row, queued after event `after` was published.
    pub fn message(&self, message: MessageRow, after: u64) {
        let write = Write::Message {
            row: message,
            after,
        };
        self.send(write, "a message");
    }

    /// Appends to a stored answer's text, in order with the events: queued
    /// after event `after` was published.
    pub fn append(&self, message_id: &str, text: &str, after: u64) {
        let write = Write::Append {
            message_id: message_id.to_owned(),
            text: text.to_owned(),
            after,
        };
        self.send(write, "answer text");
    }

    /// Waits until everything queued so far is written.
    pub async fn flush(&self) {
        let (done, wait) = oneshot::channel();
        self.send(Write::Flush(done), "a flush");
        let _ = wait.await;
    }
}

impl Drop for EventWriter {
    fn drop(&mut self) {
        let _ = self.tx.send(Job::Close(self.id));
    }
}

/// One open writer, as the task keeps it.
struct Open {
    project: String,
    deliver: Deliver,
    /// The number of the last piece of answer text stored, once known.
    piece: Option<i64>,
    /// Output written since the project's stored output was last compacted.
    output: u64,
    /// The answers still streaming whose rows this writer saved, each with
    /// the last event published at its last save (`folded.rs`).
    saved: HashMap<String, u64>,
}

async fn run(store: Store, mut rx: mpsc::UnboundedReceiver<Job>, backlog: Arc<Backlog>) {
    let mut open: HashMap<u64, Open> = HashMap::new();
    let mut noted = Noted::default();
    let mut jobs = Vec::new();
    while rx.recv_many(&mut jobs, BATCH).await > 0 {
        let mut batch = Vec::new();
        let mut closed = Vec::new();
        for job in jobs.drain(..) {
            match job {
                Job::Open {
                    writer,
                    project,
                    deliver,
                } => {
                    let state = Open {
                        project,
                        deliver,
                        piece: None,
                        output: 0,
                        saved: HashMap::new(),
                    };
                    open.insert(writer, state);
                }
                Job::Write(writer, write) => batch.push((writer, write)),
                Job::Close(writer) => closed.push(writer),
            }
        }
        write_batch(&store, &mut open, &batch).await;
        compact_full(&store, &mut open, &batch).await;
        noted.note(&mut open, &batch);
        let written = batch.len();
        deliver(&open, batch);
        backlog.queued.fetch_sub(written, Ordering::AcqRel);
        backlog.drained.notify_waiters();
        for writer in closed {
            open.remove(&writer);
        }
        // Nothing else waits: drop some answers' second copy of their text.
        if rx.is_empty() && !noted.is_empty() {
            noted.drop_some(&store).await;
        }
    }
}

/// Writes the batch in one transaction; when that fails, one bad write has
/// rolled it all back, so each is then written alone.
async fn write_batch(store: &Store, open: &mut HashMap<u64, Open>, batch: &[(u64, Write)]) {
    if batch.is_empty() {
        return;
    }
    match write(store, open, batch).await {
        Ok(pieces) => keep_pieces(open, pieces),
        Err(error) => {
            tracing::error!(%error, "storing a batch failed; storing it one by one");
            for one in batch.chunks(1) {
                match write(store, open, one).await {
                    Ok(pieces) => keep_pieces(open, pieces),
                    Err(error) => {
                        let project = open.get(&one[0].0).map(|o| o.project.as_str());
                        tracing::error!(project, %error, "storing the session failed");
                    }
                }
            }
        }
    }
}

/// The piece numbers a committed transaction used, by writer.
fn keep_pieces(open: &mut HashMap<u64, Open>, pieces: HashMap<u64, i64>) {
    for (id, piece) in pieces {
        if let Some(state) = open.get_mut(&id) {
            state.piece = Some(piece);
        }
    }
}

/// Compacts the stored output of each project that has written
/// [`OUTPUT_KEPT`] bytes of it since the last time.
async fn compact_full(store: &Store, open: &mut HashMap<u64, Open>, batch: &[(u64, Write)]) {
    for (writer, write) in batch {
        let Write::Event(envelope) = write else {
            continue;
        };
        let Some(state) = open.get_mut(writer) else {
            continue;
        };
        state.output += output_bytes(&envelope.event);
        if state.output >= OUTPUT_KEPT {
            state.output = 0;
            if let Err(error) = store.compact_output(&state.project).await {
                let project = state.project.as_str();
                tracing::error!(project, %error, "compacting the stored output failed");
            }
        }
    }
}

/// Hands each written event to its project's subscribers, and answers the
/// flushes.
fn deliver(open: &HashMap<u64, Open>, batch: Vec<(u64, Write)>) {
    for (writer, write) in batch {
        match write {
            Write::Event(envelope) => {
                if let Some(state) = open.get(&writer) {
                    (state.deliver)(envelope);
                }
            }
            Write::Message { .. } | Write::Append { .. } => {}
            Write::Flush(done) => {
                let _ = done.send(());
            }
        }
    }
}

/// Writes `batch` in one transaction; returns the last piece number of
/// answer text each writer stored in `message_text` in it (kept once it has
/// committed). Events and pieces of text are gathered into multi-row
/// inserts, a piece riding on the row of its writer's next event when that
/// event is in the batch and is not output (which compaction deletes); a
/// message's row is written in its place, after the rows queued before it.
async fn write(
    store: &Store,
    open: &HashMap<u64, Open>,
    batch: &[(u64, Write)],
) -> Result<HashMap<u64, i64>, StoreError> {
    let mut numbers = HashMap::new();
    let mut pending: HashMap<u64, Pending<'_>> = HashMap::new();
    let mut rows = Rows::default();
    let mut tx = store.begin_write().await?;
    for (writer, write) in batch {
        let Some(state) = open.get(writer) else {
            continue;
        };
        let project = state.project.as_str();
        match write {
            Write::Event(envelope) => {
                // Output may be compacted away: no piece rides on it.
                let piece = if is_output(&envelope.event) {
                    None
                } else {
                    pending.remove(writer)
                };
                rows.events.push(events::EventRow {
                    project,
                    envelope,
                    piece: piece.map(|p| (p.message_id, p.text)),
                });
            }
            Write::Message { row, after } => {
                // A piece of this message's own text is in its row now (the
                // row's save deletes the message's stored pieces).
                if let Some(piece) = pending.remove(writer).filter(|p| p.message_id != row.id) {
                    let place = (state, *writer);
                    own_row(&mut tx, &mut rows, &mut numbers, place, piece).await?;
                }
                rows.write(&mut tx).await?;
                messages::upsert(&mut tx, project, row, Some(*after)).await?;
            }
            Write::Append {
                message_id,
                text,
                after,
            } => {
                let piece = Pending {
                    message_id,
                    text,
                    after: *after,
                };
                if let Some(earlier) = pending.insert(*writer, piece) {
                    let place = (state, *writer);
                    own_row(&mut tx, &mut rows, &mut numbers, place, earlier).await?;
                }
            }
            Write::Flush(_) => {}
        }
    }
    for (writer, piece) in pending {
        if let Some(state) = open.get(&writer) {
            own_row(&mut tx, &mut rows, &mut numbers, (state, writer), piece).await?;
        }
    }
    rows.write(&mut tx).await?;
    tx.commit().await?;
    Ok(numbers)
}

/// A piece of answer text waiting for its writer's next event.
struct Pending<'a> {
    message_id: &'a str,
    text: &'a str,
    after: u64,
}

/// Gives `piece` a `message_text` row of its own, numbered after its
/// project's last one.
async fn own_row<'a>(
    tx: &mut sqlx::Transaction<'_, sqlx::Sqlite>,
    rows: &mut Rows<'a>,
    numbers: &mut HashMap<u64, i64>,
    (state, writer): (&'a Open, u64),
    piece: Pending<'a>,
) -> Result<(), StoreError> {
    let project = state.project.as_str();
    let last = match numbers.get(&writer).copied().or(state.piece) {
        Some(last) => last,
        None => {
            // The count reads what is stored: the rows first.
            rows.write(tx).await?;
            messages::last_piece(tx, project).await?
        }
    };
    rows.pieces.push(Piece {
        project,
        seq: last + 1,
        message_id: piece.message_id,
        text: piece.text,
        after_event: piece.after,
    });
    numbers.insert(writer, last + 1);
    Ok(())
}

/// Rows waiting for their multi-row inserts.
#[derive(Default)]
struct Rows<'a> {
    events: Vec<events::EventRow<'a>>,
    pieces: Vec<Piece<'a>>,
}

impl Rows<'_> {
    async fn write(
        &mut self,
        tx: &mut sqlx::Transaction<'_, sqlx::Sqlite>,
    ) -> Result<(), StoreError> {
        events::append_many(tx, &self.events).await?;
        messages::append(tx, &self.pieces).await?;
        self.events.clear();
        self.pieces.clear();
        Ok(())
    }
}
