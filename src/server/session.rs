//! Project sessions on the server: every open project has one
//! [`ProjectHandle`] that holds its [`Session`] (state and broadcast), its
//! action runner and its conversation. A run (an answer streaming, its
//! actions running) belongs to the project, not to a tab, so it goes on when
//! the tab closes and a reopened tab starts from a snapshot.

pub mod agent;
pub mod api;
pub mod browser;
pub mod budget;
mod chats;
pub mod checkpoints;
mod context;
mod conversation;
pub mod database;
pub mod enhance;
pub mod fix;
mod hub;
pub mod images;
pub mod manage;
pub mod mcp;
pub mod page_report;
mod project;
pub mod publish;
mod recording;
pub mod remote;
mod restore;
pub mod rules;
pub mod runtime_choice;
mod saved;
#[cfg(test)]
mod scripted_tests;
pub mod secrets;
pub mod selection;
mod summary;
mod turn;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

pub use hub::Session;
pub use project::ProjectHandle;

use crate::runtime::attachment::ImageRef;
use crate::runtime::host::{DirEntry, EntryKind, Runtime, TreeListing};
use crate::runtime::project::ProjectId;
use crate::runtime::session::SessionState;
use crate::runtime::tree::is_inside_skipped_dir;
use crate::server::state::AppState;
use crate::server::store::ProjectRow;

/// The project's row in the store; a project the store does not know (its
/// directory alone, which versions before the store left) is recorded by
/// the restore under its id.
async fn project_row(state: &AppState, id: &ProjectId) -> ProjectRow {
    match state.store.project(id.as_str()).await {
        Ok(Some(row)) => row,
        _ => ProjectRow {
            id: id.as_str().to_owned(),
            name: id.as_str().to_owned(),
            created_at: crate::server::store::now(),
            updated_at: crate::server::store::now(),
            runtime: state.config.runtime.default,
        },
    }
}

/// Rebuilds the conversation the model sees from the stored messages,
/// after a restore or a redo changed which of them are undone.
pub fn reset_conversation(
    state: &AppState,
    handle: &ProjectHandle,
    messages: &[crate::server::store::MessageRow],
) {
    let images = state.projects.images(&handle.id);
    let load = |refs: &[ImageRef]| images::load_parts(&images, refs);
    let conversation = handle
        .session
        .read(|s| restore::conversation(s, messages, &load));
    *handle.conversation() = conversation;
}

/// The projects that have been opened since the server started.
#[derive(Default)]
pub struct OpenProjects {
    handles: Mutex<HashMap<ProjectId, Arc<ProjectHandle>>>,
    /// One lock per project being opened, so it is opened once.
    opening: Mutex<HashMap<ProjectId, Arc<tokio::sync::Mutex<()>>>>,
}

impl OpenProjects {
    /// The project's handle, opening it (session, sandbox, runner) on first
    /// use. Concurrent first uses (a page asks several things at once) wait
    /// for one opening: a second session of the same project would number
    /// its events from the same point and publish besides the first.
    pub async fn open(&self, state: &AppState, id: &ProjectId) -> Arc<ProjectHandle> {
        if let Some(handle) = self.get(id) {
            return handle;
        }
        let lock = Arc::clone(
            self.opening
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .entry(id.clone())
                .or_default(),
        );
        let _opening = lock.lock().await;
        if let Some(handle) = self.get(id) {
            return handle;
        }
        let handle = self.open_once(state, id).await;
        self.opening
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(id);
        handle
    }

    async fn open_once(&self, state: &AppState, id: &ProjectId) -> Arc<ProjectHandle> {
        let runtime = state.sandbox.runtime(id);
        let restored = match restore::load(&state.store, &project_row(state, id).await).await {
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
        if let Some((entries, cut)) = file_list(runtime.as_ref(), id).await {
            initial.files = entries
                .into_iter()
                .filter(|e| e.kind == EntryKind::File && !is_inside_skipped_dir(&e.path))
                .map(|e| e.path)
                .collect();
            initial.files_cut = cut;
        }
        let images = state.projects.images(id);
        let load = |refs: &[ImageRef]| images::load_parts(&images, refs);
        let conversation = restore::conversation(&initial, &restored.messages, &load);
        let session = Arc::new(Session::stored(
            id.clone(),
            initial,
            restored.seq,
            state.store.clone(),
        ));
        let previews = state.preview_ports.hooks(id);
        let database = state.databases.for_project(id);
        let handle = ProjectHandle::new(id.clone(), session, runtime, database, previews);
        let mut handles = self.handles.lock().unwrap_or_else(|p| p.into_inner());
        *handle.conversation() = conversation;
        let checkpoints = crate::server::checkpoint::Checkpoints::for_project(state, id);
        // Just made, so nothing has set it.
        let _ = handle.checkpoints.set(Arc::new(checkpoints));
        restore::settle(&handle.session, &restored.messages);
        handles.insert(id.clone(), Arc::clone(&handle));
        handle
    }

    /// Opens a handle made by a test.
    #[cfg(test)]
    pub fn insert_for_tests(&self, handle: Arc<ProjectHandle>) {
        let mut handles = self.handles.lock().unwrap_or_else(|p| p.into_inner());
        handles.insert(handle.id.clone(), handle);
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
            conversation::end_for_shutdown(&handle);
            handle.runner.shutdown().await;
            handle.agent.stop_servers().await;
            // What was published is on disk before the process ends.
            handle.session.flush().await;
        }
    }
}

/// The project's files and folders, and whether there are more than one
/// listing holds (then the largest listing the runtime gives); `None` when
/// the runtime cannot list them.
async fn file_list(runtime: &dyn Runtime, id: &ProjectId) -> Option<(Vec<DirEntry>, bool)> {
    let TreeListing { entries, cut } = runtime.list_tree_noting_cut("").await.ok()?;
    if let Some(limit) = &cut {
        tracing::warn!(
            project = %id.as_str(),
            shown = entries.len(),
            "the file tree shows part of the project: more than one listing holds ({limit})"
        );
    }
    Some((entries, cut.is_some()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::session::SessionEvent;

    fn state() -> (AppState, tempfile::TempDir) {
        crate::server::state::for_tests(|_| {})
    }

    /// A page asks several things of a project at once when it loads; each
    /// may be the first use. Two sessions would number their events from
    /// the same point, and the store would refuse the second's.
    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn concurrent_first_opens_of_a_project_make_one_session() {
        let (state, _data) = state();
        let project = crate::server::state::project_for_tests(&state, "p").await;
        let opens = (0..8).map(|_| {
            let (state, id) = (state.clone(), project.id.clone());
            tokio::spawn(async move { state.open_projects.open(&state, &id).await })
        });
        let handles: Vec<_> = futures::future::join_all(opens)
            .await
            .into_iter()
            .map(|h| h.unwrap())
            .collect();
        for handle in &handles[1..] {
            assert!(Arc::ptr_eq(&handles[0], handle));
        }
        handles[0].publish(SessionEvent::Terminal { text: "one".into() });
        handles[0].session.flush().await;
        let replay = state.store.events(project.id.as_str()).await.unwrap();
        assert_eq!(replay.events.len(), 1);
    }
}
