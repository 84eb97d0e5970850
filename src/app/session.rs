//! The browser's copy of the project's session: the server's events folded
//! into a [`SessionState`] by the shared reducer, with a version signal per
//! message, artifact and pane, so a token re-renders only the message it
//! belongs to.

use std::collections::HashMap;

use leptos::prelude::*;

use super::workbench::Workbench;
use crate::runtime::session::{SessionEvent, SessionState, Touched};

/// Writes to the Rivet terminal tab: text, and whether to clear it first.
#[cfg(feature = "hydrate")]
type TerminalWriter = Box<dyn Fn(&str, bool)>;

// The server only renders the initial, empty state; events arrive in the browser.
#[cfg_attr(not(feature = "hydrate"), allow(dead_code))]
#[derive(Clone, Copy)]
pub struct SessionStore {
    state: StoredValue<SessionState>,
    /// Bumped when the message list changes (or everything does).
    pub messages: RwSignal<u64>,
    // Reference-counted, not owned by the component that first asked for
    // them: components are rebuilt while an answer streams.
    message_versions: StoredValue<HashMap<String, ArcRwSignal<u64>>>,
    artifact_versions: StoredValue<HashMap<(String, String), ArcRwSignal<u64>>>,
    pub files: RwSignal<u64>,
    pub alerts: RwSignal<u64>,
    pub previews: RwSignal<u64>,
    /// An answer streams or an action is pending or running.
    pub busy: RwSignal<bool>,
    /// Whether the event feed is connected.
    pub connected: RwSignal<bool>,
    /// Receives the "Rivet" terminal's output: the whole tail after a
    /// snapshot (`reset` true), then each new piece. Browser only: a
    /// thread-local value created during server rendering panics when the
    /// render's owner is dropped on another worker thread.
    #[cfg(feature = "hydrate")]
    terminal: StoredValue<Option<TerminalWriter>, LocalStorage>,
    workbench: Workbench,
}

#[cfg_attr(not(feature = "hydrate"), allow(dead_code))]
impl SessionStore {
    pub fn new(workbench: Workbench) -> SessionStore {
        SessionStore {
            state: StoredValue::new(SessionState::default()),
            messages: RwSignal::new(0),
            message_versions: StoredValue::new(HashMap::new()),
            artifact_versions: StoredValue::new(HashMap::new()),
            files: RwSignal::new(0),
            alerts: RwSignal::new(0),
            previews: RwSignal::new(0),
            busy: RwSignal::new(false),
            connected: RwSignal::new(false),
            #[cfg(feature = "hydrate")]
            terminal: StoredValue::new_local(None),
            workbench,
        }
    }

    /// Reads the state; call inside a reactive closure after tracking the
    /// version signal of what is read.
    pub fn with<T>(&self, f: impl FnOnce(&SessionState) -> T) -> T {
        self.state.with_value(f)
    }

    pub fn message_version(&self, id: &str) -> ArcRwSignal<u64> {
        version(self.message_versions, id.to_owned())
    }

    pub fn artifact_version(&self, message_id: &str, artifact_id: &str) -> ArcRwSignal<u64> {
        version(
            self.artifact_versions,
            (message_id.to_owned(), artifact_id.to_owned()),
        )
    }

    /// Sets where terminal output goes and replays the current tail there.
    #[cfg(feature = "hydrate")]
    pub fn attach_terminal(&self, write: impl Fn(&str, bool) + 'static) {
        let tail = self.with(|s| s.terminal.clone());
        write(&tail, true);
        self.terminal.set_value(Some(Box::new(write)));
    }

    #[cfg(feature = "hydrate")]
    fn write_terminal(&self, text: &str, reset: bool) {
        self.terminal.with_value(|t| {
            if let Some(write) = t {
                write(text, reset);
            }
        });
    }

    #[cfg(not(feature = "hydrate"))]
    fn write_terminal(&self, _text: &str, _reset: bool) {}

    /// Folds a server event in and wakes what it changed.
    pub fn apply(&self, event: SessionEvent) {
        self.workbench.observe(&event);
        let touched = self
            .state
            .try_update_value(|s| s.apply(&event))
            .unwrap_or(Touched::Nothing);
        match touched {
            Touched::Nothing => {}
            Touched::All => {
                self.message_versions
                    .with_value(|m| m.values().for_each(|v| v.update(|n| *n += 1)));
                self.artifact_versions
                    .with_value(|m| m.values().for_each(|v| v.update(|n| *n += 1)));
                for signal in [self.messages, self.files, self.alerts, self.previews] {
                    signal.update(|n| *n += 1);
                }
                let tail = self.with(|s| s.terminal.clone());
                self.write_terminal(&tail, true);
                let files = self.with(|s| s.files.clone());
                self.workbench.sync_files(&files);
            }
            Touched::Messages => self.messages.update(|n| *n += 1),
            Touched::Message(id) => self.message_version(&id).update(|n| *n += 1),
            Touched::Artifact {
                message_id,
                artifact_id,
            } => self
                .artifact_version(&message_id, &artifact_id)
                .update(|n| *n += 1),
            Touched::Files => self.files.update(|n| *n += 1),
            Touched::Terminal(text) => self.write_terminal(&text, false),
            Touched::Alerts => self.alerts.update(|n| *n += 1),
            Touched::Previews => self.previews.update(|n| *n += 1),
        }
        let busy = self.with(SessionState::is_busy);
        if self.busy.get_untracked() != busy {
            self.busy.set(busy);
        }
    }
}

fn version<K: std::hash::Hash + Eq + Clone + Send + Sync + 'static>(
    map: StoredValue<HashMap<K, ArcRwSignal<u64>>>,
    key: K,
) -> ArcRwSignal<u64> {
    if let Some(signal) = map.with_value(|m| m.get(&key).cloned()) {
        return signal;
    }
    let signal = ArcRwSignal::new(0);
    map.update_value(|m| {
        m.insert(key, signal.clone());
    });
    signal
}

/// Follows the project's event feed for as long as the page lives,
/// reconnecting after a drop (the first event after a reconnect is a
/// snapshot, so nothing is missed).
#[cfg(feature = "hydrate")]
pub fn follow(store: SessionStore, project: crate::runtime::project::ProjectId) {
    use futures::StreamExt;

    use crate::runtime::session::{Envelope, LineDecoder};

    leptos::task::spawn_local(async move {
        let mut backoff_ms = 250;
        loop {
            if let Ok(feed) = crate::app::api::session_feed(project.clone()).await {
                store.connected.set(true);
                backoff_ms = 250;
                let mut lines = LineDecoder::default();
                let mut chunks = feed.into_inner();
                while let Some(Ok(chunk)) = chunks.next().await {
                    for line in lines.push(&chunk) {
                        match serde_json::from_slice::<Envelope>(&line) {
                            Ok(envelope) => store.apply(envelope.event),
                            Err(e) => leptos::logging::warn!("unreadable session event: {e}"),
                        }
                    }
                }
            }
            store.connected.set(false);
            sleep_ms(backoff_ms).await;
            backoff_ms = (backoff_ms * 2).min(5000);
        }
    });
}

#[cfg(feature = "hydrate")]
async fn sleep_ms(ms: u64) {
    let (tx, rx) = futures::channel::oneshot::channel::<()>();
    set_timeout(
        move || {
            let _ = tx.send(());
        },
        std::time::Duration::from_millis(ms),
    );
    let _ = rx.await;
}
