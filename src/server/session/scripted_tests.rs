//! Whole conversations on fakes: a message goes through the session's own
//! entry ([`super::api::send`]) to the scripted provider (in process,
//! replaying fixtures from `tests/fixtures`), its answer is parsed and run on
//! the in-memory runtime, whose processes play scripts, and the fix loop
//! follows it; each test takes milliseconds. The integration tests
//! (`tests/it/session`) run these flows' real counterparts once on the
//! sandbox with npm and Vite, and the browser tests the rest of the world.

mod fix;
mod slips;
mod stored;
mod tool_calls;

use std::collections::BTreeSet;
use std::net::{Ipv4Addr, SocketAddr};
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::runtime::host::fake::{FakeRuntime, Script};
use crate::runtime::project::ProjectId;
use crate::runtime::runner::{OpenedPreview, PreviewHooks};
use crate::runtime::session::{ActionStatus, SessionState};
use crate::server::config::Config;
use crate::server::llm::mock::{MockConfig, MockServer, Transcript};
use crate::server::state::AppState;

use super::api::{SendOptions, send};
use super::{ProjectHandle, Session};

/// The longest a test waits for the session to reach what it expects.
const DEADLINE: Duration = Duration::from_secs(10);

/// A state whose provider replays scripted answers, and its projects on the
/// in-memory runtime.
pub(super) struct Scripted {
    pub state: AppState,
    pub mock: MockServer,
    _data: tempfile::TempDir,
}

/// The fixtures of `tests/fixtures/<dir>`.
pub(super) fn fixtures(dir: &str) -> Vec<Transcript> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(dir);
    crate::server::llm::mock::load_dir(&path).unwrap()
}

impl Scripted {
    /// The fix loop watches a finished run for 50 ms (`[fix] settle_ms`,
    /// `page_error_ms`) instead of seconds: the fake's processes print
    /// everything at once.
    pub async fn start(
        transcripts: Vec<Transcript>,
        configure: impl FnOnce(&mut Config),
    ) -> Scripted {
        let config = MockConfig::replaying(transcripts, "scripted");
        let mock = MockServer::start(config, SocketAddr::from((Ipv4Addr::LOCALHOST, 0)))
            .await
            .unwrap();
        let base_url = mock.base_url();
        let (state, data) = crate::server::state::for_tests(|config| {
            config.llm.provider = "custom".to_owned();
            config.llm.base_url = base_url;
            config.llm.model = "scripted".to_owned();
            config.fix.settle_ms = 50;
            config.fix.page_error_ms = 50;
            configure(config);
        });
        Scripted {
            state,
            mock,
            _data: data,
        }
    }

    /// A new project on the in-memory runtime where `npm install` succeeds
    /// and `npm run dev` serves port 5173.
    pub async fn project(&self) -> (ProjectId, FakeRuntime) {
        self.project_with(&[
            ("npm install", Script::exits(0, "added 61 packages\n")),
            ("npm run dev", Script::serves(5173, "VITE ready\n")),
        ])
        .await
    }

    /// A new project on the in-memory runtime whose commands play
    /// `scripts` (a command given twice plays its scripts in turn). Every
    /// port a run opens gets a preview address, as the sandbox gives one.
    pub async fn project_with(&self, scripts: &[(&str, Script)]) -> (ProjectId, FakeRuntime) {
        let id = crate::server::state::project_for_tests(&self.state, "p")
            .await
            .id;
        let runtime = FakeRuntime::new();
        for (command, script) in scripts {
            runtime.script(*command, script.clone());
        }
        let store = self.state.store.clone();
        let session = Arc::new(Session::stored(id.clone(), Default::default(), 0, store));
        let handle = ProjectHandle::new(
            id.clone(),
            session,
            Arc::new(runtime.clone()),
            self.state.databases.for_project(&id),
            previews(),
        );
        self.state.open_projects.insert_for_tests(handle);
        (id, runtime)
    }

    pub async fn send(&self, project: &ProjectId, text: &str) {
        send(
            &self.state,
            project,
            text.to_owned(),
            SendOptions::default(),
        )
        .await
        .unwrap();
    }

    /// The session once `done` holds for it; panics, naming `what` and
    /// showing the session, when it does not within [`DEADLINE`].
    pub async fn until(
        &self,
        project: &ProjectId,
        what: &str,
        done: impl Fn(&SessionState) -> bool,
    ) -> SessionState {
        let handle = self.state.open_projects.get(project).unwrap();
        let deadline = tokio::time::Instant::now() + DEADLINE;
        loop {
            let state = handle.session.read(SessionState::clone);
            if done(&state) {
                return state;
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "waited for {what}: {:#?}",
                summary(&state)
            );
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }

    /// What the session holds once its runs and the fix loop have settled:
    /// nothing busy, and no attempt starting after twice the loop's watch.
    pub async fn settled(&self, project: &ProjectId) -> SessionState {
        let before = self.until(project, "the run's end", |s| !s.is_busy()).await;
        tokio::time::sleep(Duration::from_millis(200)).await;
        let after = self.until(project, "the run's end", |s| !s.is_busy()).await;
        assert_eq!(
            before.messages.len(),
            after.messages.len(),
            "{:#?}",
            summary(&after)
        );
        after
    }
}

/// Preview addresses as the IDE gives them: a port has one once it was
/// opened (the dev server's first port, or asked for) and keeps it.
fn previews() -> PreviewHooks {
    let opened = Arc::new(Mutex::new(BTreeSet::new()));
    let address = |port| format!("http://preview.test:{port}/");
    let known = Arc::clone(&opened);
    PreviewHooks {
        url: Arc::new(move |port| known.lock().unwrap().contains(&port).then(|| address(port))),
        open: Arc::new(move |port| {
            opened.lock().unwrap().insert(port);
            Ok(OpenedPreview {
                url: address(port),
                closed: Vec::new(),
            })
        }),
        closed: Arc::new(|_| {}),
    }
}

/// The status of the last message's first action of `kind`.
pub(super) fn status_of(state: &SessionState, kind: &str) -> Option<ActionStatus> {
    let last = &state.messages.last()?.id;
    state
        .artifacts
        .iter()
        .filter(|a| &a.message_id == last)
        .flat_map(|a| &a.actions)
        .find(|e| e.kind.type_name() == kind)
        .map(|e| e.status.clone())
}

/// The last message is an answer that has ended.
pub(super) fn answered(state: &SessionState) -> bool {
    state.messages.len() >= 2 && state.messages.last().is_some_and(|m| m.status.is_final())
}

/// The last answer's dev server runs and has its preview address.
pub(super) fn serving(state: &SessionState) -> bool {
    status_of(state, "start") == Some(ActionStatus::Complete)
        && state.previews.first().is_some_and(|p| p.url.is_some())
}

/// Each action's kind and status, each message's status, each alert.
pub(super) fn summary(state: &SessionState) -> Vec<String> {
    let actions = state.artifacts.iter().flat_map(|a| &a.actions);
    let mut lines: Vec<String> = actions
        .map(|e| format!("{} {:?}", e.kind.type_name(), e.status))
        .collect();
    let messages = state.messages.iter();
    lines.extend(messages.map(|m| format!("{} {:?}", m.id, m.status)));
    let alerts = state.alerts.iter();
    lines.extend(alerts.map(|a| format!("alert {}: {}", a.title, a.detail)));
    lines
}
