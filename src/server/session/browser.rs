//! The server's half of a `webcontainer` project's answers: the model's
//! text is relayed to the browser tab that runs the actions (keys stay
//! here), and what that tab reports back (the session events its parser and
//! runner made, the files it wrote) becomes the project's record, exactly
//! as if the server had run them.

use std::collections::{HashSet, VecDeque};
use std::sync::{Arc, Mutex};

use futures::channel::mpsc;

use super::ProjectHandle;
use super::runtime_choice::{RuntimeChoiceError, runtime_of};
use crate::runtime::host::{EntryKind, RuntimeError, checked_path};
use crate::runtime::kind::RuntimeKind;
use crate::runtime::project::ProjectId;
use crate::runtime::protocol::ActionKind;
use crate::runtime::relay::{
    BrowserSnapshot, FileContent, FileMirror, MountedFile, RelayEvent, reportable,
};
use crate::runtime::session::{SessionEvent, SessionState};
use crate::runtime::tree::is_inside_skipped_dir;
use crate::server::state::AppState;

/// Files larger than this are not sent to a tab taking over a project.
const LARGEST_MOUNTED_FILE: u64 = 1024 * 1024;

#[derive(Debug, thiserror::Error)]
pub enum BrowserError {
    #[error(transparent)]
    Choice(#[from] RuntimeChoiceError),
    #[error(transparent)]
    Runtime(#[from] RuntimeError),
    #[error("this project runs on the sandbox runtime; its actions run on the server")]
    NotBrowserProject,
    #[error("a browser may not report {0}: only what its parser and runner make")]
    Refused(String),
}

/// The answers' text on its way to the tab that runs the project. Each
/// piece goes to exactly one tab: the latest that asked, or the next one to
/// ask when none listens.
#[derive(Default)]
pub struct Relay {
    inner: Mutex<RelayInner>,
}

#[derive(Default)]
struct RelayInner {
    pending: VecDeque<RelayEvent>,
    tab: Option<mpsc::UnboundedSender<RelayEvent>>,
    /// Answers that had text relayed and no end yet.
    open: HashSet<String>,
}

impl Relay {
    fn lock(&self) -> std::sync::MutexGuard<'_, RelayInner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub fn delta(&self, message_id: &str, text: &str) {
        let mut inner = self.lock();
        inner.open.insert(message_id.to_owned());
        inner.send(RelayEvent::Delta {
            message_id: message_id.to_owned(),
            text: text.to_owned(),
        });
    }

    /// Ends an answer that had text relayed (a no-op otherwise).
    pub fn end(&self, message_id: &str, stopped: bool) {
        let mut inner = self.lock();
        if inner.open.remove(message_id) {
            inner.send(RelayEvent::End {
                message_id: message_id.to_owned(),
                stopped,
            });
        }
    }

    /// Tells the tab to stop what runs; nothing when no tab listens.
    pub fn stop(&self) {
        let mut inner = self.lock();
        if let Some(tab) = &inner.tab
            && tab.unbounded_send(RelayEvent::Stop).is_err()
        {
            inner.tab = None;
        }
    }

    /// Sends `event` to the tab that listens now; false when none does
    /// (nothing is kept for a later tab).
    pub fn ask(&self, event: RelayEvent) -> bool {
        let mut inner = self.lock();
        let Some(tab) = &inner.tab else { return false };
        if tab.unbounded_send(event).is_ok() {
            return true;
        }
        inner.tab = None;
        false
    }

    /// Whether a tab listens.
    pub fn has_tab(&self) -> bool {
        self.lock().tab.as_ref().is_some_and(|tab| !tab.is_closed())
    }

    /// The relay for a tab; the previous tab's ends.
    pub fn subscribe(&self) -> mpsc::UnboundedReceiver<RelayEvent> {
        let (tx, rx) = mpsc::unbounded();
        let mut inner = self.lock();
        if let Some(previous) = inner.tab.take() {
            // It may have closed already; then there is nobody to tell.
            let _ = previous.unbounded_send(RelayEvent::Replaced);
        }
        for event in inner.pending.drain(..) {
            // The receiver is in hand, so this cannot fail.
            let _ = tx.unbounded_send(event);
        }
        inner.tab = Some(tx);
        rx
    }
}

impl RelayInner {
    fn send(&mut self, event: RelayEvent) {
        let unsent = match &self.tab {
            Some(tab) => tab.unbounded_send(event).err().map(|e| e.into_inner()),
            None => Some(event),
        };
        if let Some(event) = unsent {
            self.tab = None;
            self.pending.push_back(event);
        }
    }
}

/// The project's handle, when it runs in the browser.
async fn browser_project(
    state: &AppState,
    project: &ProjectId,
) -> Result<Arc<ProjectHandle>, BrowserError> {
    if runtime_of(state, project).await? != RuntimeKind::Webcontainer {
        return Err(BrowserError::NotBrowserProject);
    }
    Ok(state.open_projects.open(state, project).await)
}

/// The relayed text of the project's answers, for the tab that runs them.
pub async fn answers(
    state: &AppState,
    project: &ProjectId,
) -> Result<mpsc::UnboundedReceiver<RelayEvent>, BrowserError> {
    Ok(browser_project(state, project).await?.browser.subscribe())
}

/// Publishes what the browser's parser and runner made, in order; nothing
/// when any event is not the browser's to report.
pub async fn report(
    state: &AppState,
    project: &ProjectId,
    events: Vec<SessionEvent>,
) -> Result<(), BrowserError> {
    let handle = browser_project(state, project).await?;
    if let Some(refused) = events.iter().find(|e| !reportable(e)) {
        let name = serde_json::to_value(refused)
            .ok()
            .and_then(|v| v.get("type").and_then(|t| t.as_str().map(str::to_owned)))
            .unwrap_or_default();
        return Err(BrowserError::Refused(name));
    }
    // A tab reporting faster than the store writes waits here, and with it
    // its next report (back-pressure).
    if let Some(room) = handle.session.room() {
        room.wait().await;
    }
    for event in events {
        handle.publish(event);
    }
    Ok(())
}

/// Repeats a file change of the browser's runtime on the server's copy,
/// byte for byte. Removing what is gone already changes nothing.
pub async fn mirror(
    state: &AppState,
    project: &ProjectId,
    change: FileMirror,
) -> Result<(), BrowserError> {
    let handle = browser_project(state, project).await?;
    let runtime = &handle.runtime;
    match change {
        FileMirror::Write { path, content } => {
            let path = checked_path(&path)?;
            runtime
                .write_file(path.as_str(), content.as_bytes())
                .await?;
        }
        FileMirror::Remove { path } => {
            let path = checked_path(&path)?;
            match runtime.remove(path.as_str()).await {
                Ok(()) | Err(RuntimeError::NotFound { .. }) => {}
                Err(e) => return Err(e.into()),
            }
        }
        FileMirror::Rename { from, to } => {
            let (from, to) = (checked_path(&from)?, checked_path(&to)?);
            runtime.rename(from.as_str(), to.as_str()).await?;
        }
    }
    Ok(())
}

/// The project's files (byte for byte, outside skipped folders, up to
/// [`LARGEST_MOUNTED_FILE`]) and its dev server command, for a tab that
/// boots a WebContainer.
pub async fn snapshot(
    state: &AppState,
    project: &ProjectId,
) -> Result<BrowserSnapshot, BrowserError> {
    let handle = browser_project(state, project).await?;
    let mut files = Vec::new();
    // Every file or a clear error: a tab booted with part of the project
    // would run something other than what the server keeps.
    let listing = handle.runtime.list_tree_noting_cut("").await?;
    for entry in listing.whole("")? {
        if entry.kind != EntryKind::File
            || entry.size > LARGEST_MOUNTED_FILE
            || is_inside_skipped_dir(&entry.path)
        {
            continue;
        }
        let content = FileContent::new(handle.runtime.read_file(&entry.path).await?);
        files.push(MountedFile {
            path: entry.path,
            content,
        });
    }
    let start = handle.session.read(latest_start);
    Ok(BrowserSnapshot { files, start })
}

/// The command of the latest whole `start` action.
pub fn latest_start(state: &SessionState) -> Option<String> {
    state
        .artifacts
        .iter()
        .rev()
        .flat_map(|artifact| artifact.actions.iter().rev())
        .find(|action| action.kind == ActionKind::Start && action.closed && !action.truncated)
        .map(|action| action.content.trim().to_owned())
}

#[cfg(test)]
mod tests {
    use futures::StreamExt;

    use super::*;
    use crate::runtime::session::{Message, MessageStatus};

    fn delta(message_id: &str, text: &str) -> RelayEvent {
        RelayEvent::Delta {
            message_id: message_id.into(),
            text: text.into(),
        }
    }

    #[tokio::test]
    async fn relayed_text_waits_for_a_tab_and_goes_to_one_tab() {
        let relay = Relay::default();
        relay.delta("m2", "<bolt");
        let mut first = relay.subscribe();
        relay.delta("m2", "Artifact");
        assert_eq!(first.next().await, Some(delta("m2", "<bolt")));
        assert_eq!(first.next().await, Some(delta("m2", "Artifact")));
        // A second tab takes over; the first one's relay ends.
        let mut second = relay.subscribe();
        relay.end("m2", false);
        assert_eq!(first.next().await, Some(RelayEvent::Replaced));
        assert_eq!(first.next().await, None);
        let end = RelayEvent::End {
            message_id: "m2".into(),
            stopped: false,
        };
        assert_eq!(second.next().await, Some(end));
    }

    #[tokio::test]
    async fn relay_end_of_an_answer_never_relayed_is_not_sent() {
        let relay = Relay::default();
        relay.end("m9", true);
        relay.stop();
        relay.delta("m2", "x");
        let mut tab = relay.subscribe();
        assert_eq!(tab.next().await, Some(delta("m2", "x")));
        relay.stop();
        assert_eq!(tab.next().await, Some(RelayEvent::Stop));
    }

    fn state(default: RuntimeKind) -> (AppState, tempfile::TempDir) {
        crate::server::state::for_tests(|config| config.runtime.default = default)
    }

    #[tokio::test]
    async fn browser_report_for_a_sandbox_project_is_refused() {
        let (state, _data) = state(RuntimeKind::Sandbox);
        let project = crate::server::state::project_for_tests(&state, "p").await;
        let events = vec![SessionEvent::Terminal { text: "x".into() }];
        let err = report(&state, &project.id, events).await.unwrap_err();
        assert!(matches!(err, BrowserError::NotBrowserProject), "{err}");
        let err = answers(&state, &project.id).await.unwrap_err();
        assert!(matches!(err, BrowserError::NotBrowserProject), "{err}");
    }

    #[tokio::test]
    async fn browser_report_is_published_in_order() {
        let (state, _data) = state(RuntimeKind::Webcontainer);
        let project = crate::server::state::project_for_tests(&state, "p").await;
        let events = vec![
            SessionEvent::Terminal {
                text: "$ npm i\r\n".into(),
            },
            SessionEvent::FileWritten {
                path: "src/App.jsx".into(),
                by_model: true,
            },
        ];
        report(&state, &project.id, events).await.unwrap();
        let handle = state.open_projects.get(&project.id).unwrap();
        let (terminal, files) = handle
            .session
            .read(|s| (s.terminal.clone(), s.files.clone()));
        assert!(terminal.contains("$ npm i"), "{terminal}");
        assert!(files.contains("src/App.jsx"), "{files:?}");
    }

    #[tokio::test]
    async fn browser_report_with_a_message_event_publishes_nothing() {
        let (state, _data) = state(RuntimeKind::Webcontainer);
        let project = crate::server::state::project_for_tests(&state, "p").await;
        let events = vec![
            SessionEvent::Terminal {
                text: "first".into(),
            },
            SessionEvent::MessageFinished {
                message_id: "m2".into(),
                status: MessageStatus::Complete,
                finish_reason: None,
            },
            SessionEvent::MessageAdded {
                message: Message::user("m1", "hi"),
            },
        ];
        let err = report(&state, &project.id, events).await.unwrap_err();
        assert!(err.to_string().contains("message_finished"), "{err}");
        let handle = state.open_projects.get(&project.id).unwrap();
        assert!(!handle.session.read(|s| s.terminal.contains("first")));
    }

    #[tokio::test]
    async fn browser_mirror_outside_the_project_is_refused() {
        let (state, _data) = state(RuntimeKind::Webcontainer);
        let project = crate::server::state::project_for_tests(&state, "p").await;
        for path in ["../escape.txt", "/etc/passwd", ".git/config"] {
            let change = FileMirror::Write {
                path: path.into(),
                content: "x".into(),
            };
            let err = mirror(&state, &project.id, change).await.unwrap_err();
            assert!(
                matches!(err, BrowserError::Runtime(RuntimeError::InvalidPath { .. })),
                "{path}: {err}"
            );
        }
    }

    fn folded(answer: &str, finish: bool) -> SessionState {
        let mut state = SessionState::default();
        state.apply(&SessionEvent::MessageAdded {
            message: Message::assistant("m2"),
        });
        let mut parser = crate::runtime::protocol::Parser::new("m2");
        let mut events: Vec<_> = parser.push(answer).collect();
        if finish {
            events.extend(parser.finish());
        }
        for event in events {
            state.apply(&SessionEvent::Protocol {
                message_id: "m2".into(),
                event,
            });
        }
        state
    }

    #[test]
    fn the_latest_whole_start_command_is_resumed() {
        let answer = r#"<boltArtifact id="a" title="t"><boltAction type="start">npm run dev</boltAction><boltAction type="start">npx vite --port 5173</boltAction></boltArtifact>"#;
        let state = folded(answer, true);
        assert_eq!(
            latest_start(&state).as_deref(),
            Some("npx vite --port 5173")
        );
    }

    #[test]
    fn a_truncated_start_command_is_not_resumed() {
        let answer = r#"<boltArtifact id="a" title="t"><boltAction type="start">npm run dev</boltAction><boltAction type="start">npx vi"#;
        let state = folded(answer, true);
        assert_eq!(latest_start(&state).as_deref(), Some("npm run dev"));
        assert_eq!(latest_start(&SessionState::default()), None);
    }
}
