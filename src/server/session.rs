//! Project sessions on the server: every open project has one
//! [`ProjectHandle`] that holds its [`Session`] (state and broadcast), its
//! action runner and its conversation. A run (an answer streaming, its
//! actions running) belongs to the project, not to a tab, so it goes on when
//! the tab closes and a reopened tab starts from a snapshot.

pub mod api;
pub mod fix;
mod hub;
mod project;
mod recording;
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
        let mut initial = SessionState::default();
        if let Ok(entries) = runtime.list_tree("").await {
            initial.files = entries
                .into_iter()
                .filter(|e| e.kind == EntryKind::File && !is_inside_skipped_dir(&e.path))
                .map(|e| e.path)
                .collect();
        }
        let session = Arc::new(Session::new(id.clone(), initial));
        let previews = state.preview_ports.hooks(id);
        let handle = ProjectHandle::new(id.clone(), session, runtime, previews);
        let mut handles = self.handles.lock().unwrap_or_else(|p| p.into_inner());
        // Another request may have opened it meanwhile; keep the first.
        Arc::clone(handles.entry(id.clone()).or_insert(handle))
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
        }
    }
}
