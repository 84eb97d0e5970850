//! One open project on the server: its session, its action runner, the
//! conversation the model sees, and what changed since the last answer.

use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use std::time::Duration;

use futures::FutureExt;

use super::conversation::Conversation;
use super::hub::Session;
use super::recording::{Baselines, RecordingRuntime};
use crate::runtime::database::Database;
use crate::runtime::host::Runtime;
use crate::runtime::project::ProjectId;
use crate::runtime::runner::{PreviewHooks, Runner, RunnerContext};
use crate::runtime::session::SessionEvent;

/// How long a dev server may take to open its port.
const START_TIMEOUT: Duration = Duration::from_secs(180);

pub struct ProjectHandle {
    pub id: ProjectId,
    pub session: Arc<Session>,
    pub runtime: Arc<dyn Runtime>,
    pub runner: Runner,
    /// Files the latest answer wrote: what they held before it.
    pub answer_before: Baselines,
    /// The project's checkpoints (unset in tests of the session alone).
    pub checkpoints: OnceLock<Arc<crate::server::checkpoint::Checkpoints>>,
    /// Agent steps waiting for the person, and the agent's servers.
    pub agent: super::agent::AgentSlot,
    /// The answers' text for the browser, when the project runs there.
    pub browser: super::browser::Relay,
    /// The site the browser tab is building for a publish, while it builds.
    pub site_build: super::publish::BrowserBuild,
    conversation: Mutex<Conversation>,
    /// Told when an answer frees the conversation's slot
    /// (`conversation::release`), so a new message waiting for it wakes.
    pub(super) slot_freed: tokio::sync::Notify,
}

impl ProjectHandle {
    pub fn new(
        id: ProjectId,
        session: Arc<Session>,
        runtime: Arc<dyn Runtime>,
        database: Arc<dyn Database>,
        previews: PreviewHooks,
    ) -> Arc<ProjectHandle> {
        let answer_before = Baselines::default();
        let recording: Arc<dyn Runtime> = Arc::new(RecordingRuntime {
            inner: Arc::clone(&runtime),
            before: Arc::clone(&answer_before),
        });
        let sink_session = Arc::clone(&session);
        let runner = Runner::new(RunnerContext {
            runtime: recording,
            database,
            sink: Arc::new(move |event: SessionEvent| sink_session.publish(event)),
            spawn: Arc::new(|task| {
                tokio::spawn(task);
            }),
            sleep: Arc::new(|duration| tokio::time::sleep(duration).boxed()),
            previews,
            start_timeout: START_TIMEOUT,
        });
        Arc::new(ProjectHandle {
            id,
            session,
            runtime,
            runner,
            answer_before,
            checkpoints: OnceLock::new(),
            agent: super::agent::AgentSlot::default(),
            browser: super::browser::Relay::default(),
            site_build: Default::default(),
            conversation: Mutex::new(Conversation::default()),
            slot_freed: tokio::sync::Notify::new(),
        })
    }

    pub fn conversation(&self) -> MutexGuard<'_, Conversation> {
        self.conversation.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub fn publish(&self, event: SessionEvent) {
        self.session.publish(event);
    }
}
