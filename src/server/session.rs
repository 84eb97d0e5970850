//! Project sessions on the server: every open project has one
//! [`ProjectHandle`] that holds its [`Session`] (state and broadcast), its
//! action runner and its conversation. A run (an answer streaming, its
//! actions running) belongs to the project, not to a tab, so it goes on when
//! the tab closes and a reopened tab starts from a snapshot.

pub mod agent;
pub mod api;
pub mod browser;
mod context;
pub mod fix;
mod hub;
pub mod manage;
pub mod page_report;
mod project;
mod recording;
mod restore;
pub mod runtime_choice;
mod saved;
mod summary;
mod turn;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

pub use hub::Session;
pub use project::ProjectHandle;

use crate::runtime::host::EntryKind;
use crate::runtime::project::ProjectId;
use crate::runtime::session::SessionState;
use crate::runtime::tree::is_inside_skipped_dir;
use crate::server::state::AppState;
use crate::server::store::ProjectRow;

/// The project's row in the store, from its directory's metadata.
fn project_row(state: &AppState, id: &ProjectId) -> ProjectRow {
    let runtime = runtime_name(state);
    match state.projects.get(id) {
        Ok(meta) => ProjectRow::from_meta(&meta, &runtime),
        Err(_) => ProjectRow {
            id: id.as_str().to_owned(),
            name: id.as_str().to_owned(),
            created_at: crate::server::store::now(),
            updated_at: crate::server::store::now(),
            runtime,
        },
    }
}

/// The runtime new projects run on, as the store records it.
pub fn runtime_name(state: &AppState) -> String {
    format!("{:?}", state.config.runtime.default).to_lowercase()
}

/// Rebuilds the conversation the model sees from the stored messages,
/// after a restore or a redo changed which of them are undone.
pub fn reset_conversation(handle: &ProjectHandle, messages: &[crate::server::store::MessageRow]) {
    let conversation = handle.session.read(|s| restore::conversation(s, messages));
    *handle.conversation() = conversation;
}

/// The projects that have been opened since the server started.
#[derive(Default)]
pub struct OpenProjects {
    handles: Mutex<HashMap<ProjectId, Arc<ProjectHandle>>>,
}

impl OpenProjects {
    /// The project's handle, opening it (session, sandbox, runner) on first use.
    pub async fn open(&self, state: &AppState, id: &ProjectId) -> Arc<ProjectHandle> {
        if let Some(handle) = self.get(id) {
            return handle;
        }
        let runtime = state.sandbox.runtime(id);
        let restored = match restore::load(&state.store, &project_row(state, id)).await {
            Ok(restored) => restored,
            Err(error) => {
                tracing::error!(project = %id.as_str(), %error, "the project's stored session could not be read");
                restore::Restored {
                    state: SessionState::default(),
                    seq: 0,
                    messages: Vec::new(),
                }
            }
        };
        let mut initial = restored.state;
        // The files on disk are the truth, whatever the events said.
        if let Ok(entries) = runtime.list_tree("").await {
            initial.files = entries
                .into_iter()
                .filter(|e| e.kind == EntryKind::File && !is_inside_skipped_dir(&e.path))
                .map(|e| e.path)
                .collect();
        }
        let conversation = restore::conversation(&initial, &restored.messages);
        let session = Arc::new(Session::stored(
            id.clone(),
            initial,
            restored.seq,
            state.store.clone(),
        ));
        let previews = state.preview_ports.hooks(id);
        let handle = ProjectHandle::new(id.clone(), session, runtime, previews);
        let mut handles = self.handles.lock().unwrap_or_else(|p| p.into_inner());
        // Another request may have opened it meanwhile; keep the first.
        if let Some(first) = handles.get(id) {
            return Arc::clone(first);
        }
        *handle.conversation() = conversation;
        let checkpoints = crate::server::checkpoint::Checkpoints::for_project(state, id);
        // Just made, so nothing has set it.
        let _ = handle.checkpoints.set(Arc::new(checkpoints));
        restore::settle(&handle.session, &restored.messages);
        handles.insert(id.clone(), Arc::clone(&handle));
        handle
    }

    /// Forgets the project's handle (it is being deleted).
    pub fn remove(&self, id: &ProjectId) -> Option<Arc<ProjectHandle>> {
        self.handles
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(id)
    }

    pub fn get(&self, id: &ProjectId) -> Option<Arc<ProjectHandle>> {
        self.handles
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(id)
            .cloned()
    }

    /// Stops every run (the server is shutting down).
    pub async fn shutdown(&self) {
        let handles: Vec<_> = self
            .handles
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .values()
            .cloned()
            .collect();
        for handle in handles {
            if let Some(cancel) = handle.conversation().streaming.take() {
                cancel.cancel();
            }
            handle.runner.shutdown().await;
            handle.agent.stop_servers().await;
            // What was published is on disk before the process ends.
            handle.session.flush().await;
        }
    }
}
