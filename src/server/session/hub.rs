//! One project's session, the publish/subscribe core: each event is folded
//! into the state, numbered, stored (a stored session) and only then sent
//! to the subscribers. (The open projects are `session::OpenProjects`.)
//!
//! A stored session holds the output of its processes back for a window
//! (the store's `OutputGate`): the terminal text published within
//! [`OUTPUT_WINDOW`] becomes one numbered event, applied, stored and sent
//! like any other, so a process that prints without end adds a few bounded
//! events a second. Any other event first releases the output published
//! before it, so the order holds.

use std::sync::{Arc, Mutex, MutexGuard, Weak};

use futures::Stream;
use tokio::sync::{broadcast, mpsc};

use crate::runtime::project::ProjectId;
use crate::runtime::session::{Envelope, SessionEvent, SessionState};
use crate::server::store::{EventWriter, MessageRow, OUTPUT_WINDOW, OutputGate, Room, Store};

/// Events a subscriber may fall behind by before it is resynchronised with a
/// snapshot. Token deltas are small, so this is a few seconds of streaming.
const BACKLOG: usize = 4096;

struct Inner {
    state: SessionState,
    seq: u64,
    /// Output of the current window, not yet an event.
    output: OutputGate,
}

/// What publishing needs, shared with the task that ends output windows.
struct Core {
    inner: Mutex<Inner>,
    tx: broadcast::Sender<Arc<Envelope>>,
    /// Stores each event before subscribers get it (absent in tests of the
    /// hub alone).
    writer: Option<EventWriter>,
}

pub struct Session {
    pub project: ProjectId,
    core: Arc<Core>,
    /// Opens an output window; `None`: output is published as it comes.
    windows: Option<mpsc::UnboundedSender<()>>,
}

impl Session {
    pub fn new(project: ProjectId, state: SessionState) -> Session {
        let (tx, _) = broadcast::channel(BACKLOG);
        Session {
            project,
            core: Arc::new(Core::new(state, 0, tx, None)),
            windows: None,
        }
    }

    /// A session whose events go to `store` first, numbered after `seq`
    /// (the last one stored), with its output gathered in windows.
    pub fn stored(project: ProjectId, state: SessionState, seq: u64, store: Store) -> Session {
        let (tx, _) = broadcast::channel(BACKLOG);
        let deliver = tx.clone();
        let writer = EventWriter::spawn(store, project.as_str().to_owned(), move |envelope| {
            // Sending fails only when nobody listens, which is fine.
            let _ = deliver.send(envelope);
        });
        let core = Arc::new(Core::new(state, seq, tx, Some(writer)));
        let (windows, opened) = mpsc::unbounded_channel();
        tokio::spawn(end_windows(Arc::downgrade(&core), opened));
        Session {
            project,
            core,
            windows: Some(windows),
        }
    }

    /// Saves a message's row, in order with the events published so far.
    pub fn save_message(&self, message: MessageRow) {
        let mut inner = self.core.lock();
        self.core.release(&mut inner);
        if let Some(writer) = &self.core.writer {
            writer.message(message, inner.seq);
        }
    }

    /// Appends to a streaming answer's stored text, in order with the events.
    pub fn append_text(&self, message_id: &str, text: &str) {
        let mut inner = self.core.lock();
        self.core.release(&mut inner);
        if let Some(writer) = &self.core.writer {
            writer.append(message_id, text, inner.seq);
        }
    }

    /// Where a producer that can wait (a streaming answer) waits while the
    /// store's writer is behind: back-pressure.
    pub fn room(&self) -> Option<Room> {
        self.core.writer.as_ref().map(EventWriter::room)
    }

    /// Waits until everything published so far is stored.
    pub async fn flush(&self) {
        self.core.release(&mut self.core.lock());
        if let Some(writer) = &self.core.writer {
            writer.flush().await;
        }
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.core.lock()
    }

    /// Applies `event` to the state and sends it to every subscriber;
    /// output waits for the end of its window.
    pub fn publish(&self, event: SessionEvent) {
        let mut inner = self.lock();
        match (&self.windows, event) {
            (Some(windows), SessionEvent::Terminal { text }) => {
                if inner.output.push(&text) {
                    // The task ends only with the session.
                    let _ = windows.send(());
                }
            }
            (_, event) => {
                self.core.release(&mut inner);
                self.core.emit(&mut inner, event);
            }
        }
    }

    /// Bytes of output waiting for their window to end.
    #[cfg(test)]
    pub fn output_held(&self) -> usize {
        self.lock().output.held()
    }

    /// Reads the current state.
    pub fn read<T>(&self, f: impl FnOnce(&SessionState) -> T) -> T {
        f(&self.lock().state)
    }

    /// A snapshot, then every later event, for as long as the stream is
    /// polled. A subscriber that falls behind gets a new snapshot.
    pub fn subscribe(self: &Arc<Self>) -> impl Stream<Item = Arc<Envelope>> + Send + 'static {
        // Taking the snapshot and subscribing under one lock means no event
        // falls between them.
        let (first, rx) = {
            let inner = self.lock();
            (self.snapshot(&inner), self.core.tx.subscribe())
        };
        let session = Arc::clone(self);
        futures::stream::unfold(
            (Some(first), 0, rx, session),
            |(first, mut seen, mut rx, session)| async move {
                if let Some(first) = first {
                    let seq = first.seq;
                    return Some((first, (None, seq, rx, session)));
                }
                loop {
                    match rx.recv().await {
                        // A stored session delivers an event after the state
                        // has it, so the snapshot may already hold it.
                        Ok(envelope) if envelope.seq <= seen => {}
                        Ok(envelope) => {
                            seen = envelope.seq;
                            return Some((envelope, (None, seen, rx, session)));
                        }
                        Err(broadcast::error::RecvError::Lagged(_)) => {
                            // Start over from the present: a fresh receiver and a snapshot.
                            let (snapshot, fresh) = {
                                let inner = session.lock();
                                (session.snapshot(&inner), session.core.tx.subscribe())
                            };
                            let seq = snapshot.seq;
                            return Some((snapshot, (None, seq, fresh, session)));
                        }
                        Err(broadcast::error::RecvError::Closed) => return None,
                    }
                }
            },
        )
    }

    fn snapshot(&self, inner: &Inner) -> Arc<Envelope> {
        Arc::new(Envelope {
            seq: inner.seq,
            event: SessionEvent::Snapshot {
                state: Box::new(inner.state.clone()),
            },
        })
    }
}

impl Core {
    fn new(
        state: SessionState,
        seq: u64,
        tx: broadcast::Sender<Arc<Envelope>>,
        writer: Option<EventWriter>,
    ) -> Core {
        let inner = Inner {
            state,
            seq,
            output: OutputGate::default(),
        };
        Core {
            inner: Mutex::new(inner),
            tx,
            writer,
        }
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        // A panic while holding the lock leaves a state that is still
        // consistent event by event, so the poison is ignored.
        self.inner
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Numbers `event`, applies it and hands it on.
    fn emit(&self, inner: &mut Inner, event: SessionEvent) {
        inner.state.apply(&event);
        inner.seq += 1;
        let envelope = Arc::new(Envelope {
            seq: inner.seq,
            event,
        });
        match &self.writer {
            // Queued under the lock, so the store sees events in order.
            Some(writer) => writer.event(envelope),
            // Sending fails only when nobody listens, which is fine.
            None => drop(self.tx.send(envelope)),
        }
    }

    /// Publishes the output of the open window, if any, as one event.
    fn release(&self, inner: &mut Inner) {
        if let Some(text) = inner.output.take() {
            self.emit(inner, SessionEvent::Terminal { text });
        }
    }
}

/// Ends each output window [`OUTPUT_WINDOW`] after it opened (unless another
/// event released its output first); stops with the session.
async fn end_windows(core: Weak<Core>, mut opened: mpsc::UnboundedReceiver<()>) {
    while opened.recv().await.is_some() {
        tokio::time::sleep(OUTPUT_WINDOW).await;
        let Some(core) = core.upgrade() else {
            return;
        };
        core.release(&mut core.lock());
    }
}

#[cfg(test)]
mod output_tests;

#[cfg(test)]
mod tests {
    use futures::StreamExt;

    use super::*;
    use crate::runtime::session::Message;

    fn session() -> Arc<Session> {
        Arc::new(Session::new(
            ProjectId::parse("p").unwrap(),
            SessionState::default(),
        ))
    }

    fn terminal(text: &str) -> SessionEvent {
        SessionEvent::Terminal { text: text.into() }
    }

    #[tokio::test]
    async fn subscribers_start_from_a_snapshot_then_follow() {
        let session = session();
        session.publish(SessionEvent::MessageAdded {
            message: Message::user("m1", "hi"),
        });
        let mut events = Box::pin(session.subscribe());
        let first = events.next().await.unwrap();
        assert_eq!(first.seq, 1);
        let SessionEvent::Snapshot { state } = &first.event else {
            panic!("first event is {:?}", first.event)
        };
        assert_eq!(state.messages.len(), 1);
        session.publish(terminal("a"));
        session.publish(terminal("b"));
        let next: Vec<u64> = vec![
            events.next().await.unwrap().seq,
            events.next().await.unwrap().seq,
        ];
        assert_eq!(next, [2, 3]);
    }

    #[tokio::test]
    async fn a_subscriber_that_falls_behind_gets_a_new_snapshot() {
        let session = session();
        let mut events = Box::pin(session.subscribe());
        events.next().await.unwrap();
        for _ in 0..(BACKLOG + 10) {
            session.publish(terminal("x"));
        }
        let resync = events.next().await.unwrap();
        assert!(matches!(resync.event, SessionEvent::Snapshot { .. }));
        assert_eq!(resync.seq, (BACKLOG + 10) as u64);
        session.publish(terminal("y"));
        assert_eq!(events.next().await.unwrap().seq, (BACKLOG + 11) as u64);
    }

    #[test]
    fn envelopes_are_flat_json() {
        let envelope = Envelope {
            seq: 7,
            event: terminal("hi"),
        };
        let json = serde_json::to_value(&envelope).unwrap();
        assert_eq!(
            json,
            serde_json::json!({"seq": 7, "type": "terminal", "text": "hi"})
        );
    }
}
