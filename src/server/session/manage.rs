//! Whole-project operations shared by the HTTP API and the UI's server
//! functions: create, look up, follow the events (resuming after a number),
//! stop, rename, delete, and naming a project after its first message. A
//! project's record is its row in the store; its directory holds its files.

use std::sync::Arc;
use std::time::Duration;

use futures::{Stream, StreamExt};

use super::api::ApiError;
use super::project::ProjectHandle;
use crate::runtime::project::ProjectId;
use crate::runtime::session::Envelope;
use crate::server::projects::ProjectError;
use crate::server::state::AppState;
use crate::server::store::{ProjectListing, ProjectRow};

/// How long a delete waits for a stopped answer to wind down.
const STOP_GRACE: Duration = Duration::from_secs(10);

/// Creates an empty project named `name`: its directories, then its row.
pub async fn create(state: &AppState, name: &str) -> Result<ProjectRow, ApiError> {
    let meta = state.projects.create(name)?;
    let row = ProjectRow::from_meta(&meta, state.config.runtime.default);
    if let Err(error) = state.store.ensure_project(&row).await {
        let _ = state.projects.delete(&meta.id);
        return Err(error.into());
    }
    Ok(row)
}

/// The project's row: `NotFound` when the store has no such project.
pub async fn require(state: &AppState, id: &ProjectId) -> Result<ProjectRow, ApiError> {
    state
        .store
        .project(id.as_str())
        .await?
        .ok_or_else(|| ApiError::Project(ProjectError::NotFound(id.clone())))
}

/// Stops the streaming answer, the fix loop, the running command and every
/// pending action.
pub fn stop_in(handle: &ProjectHandle) {
    if let Some(fixing) = handle.conversation().take_fixing() {
        fixing.cancel();
    }
    handle.conversation().streaming().cancel();
    handle.runner.abort();
}

/// The project's events: a snapshot first, then every later one. With
/// `after`, only the events numbered after it (read back from the store),
/// then the live ones; when those are no longer all stored, or `after` is
/// ahead of the session, a snapshot comes first instead.
pub async fn events(
    state: &AppState,
    handle: &Arc<ProjectHandle>,
    after: Option<u64>,
) -> Result<impl Stream<Item = Arc<Envelope>> + Send + 'static + use<>, ApiError> {
    let mut live = Box::pin(handle.session.subscribe());
    let Some(snapshot) = live.next().await else {
        return Ok(futures::stream::empty().boxed());
    };
    let head = match after {
        Some(after) if after <= snapshot.seq => {
            // Everything published up to the snapshot is stored once flushed.
            handle.session.flush().await;
            state
                .store
                .events_after(handle.id.as_str(), after, snapshot.seq)
                .await?
                .map(|events| events.into_iter().map(Arc::new).collect())
        }
        _ => None,
    };
    let head = head.unwrap_or_else(|| vec![snapshot]);
    Ok(futures::stream::iter(head).chain(live).boxed())
}

/// Renames the project in its directory and in the store.
pub async fn rename(
    state: &AppState,
    id: &ProjectId,
    name: &str,
) -> Result<ProjectListing, ApiError> {
    let name = name.trim();
    if name.is_empty() {
        return Err(ApiError::EmptyName);
    }
    require(state, id).await?;
    state.store.rename_project(id.as_str(), name).await?;
    listing(state, id).await
}

/// The project as the project list shows it.
pub async fn listing(state: &AppState, id: &ProjectId) -> Result<ProjectListing, ApiError> {
    require(state, id).await?;
    let found = state.store.find_projects("").await?;
    found
        .into_iter()
        .find(|p| p.id == id.as_str())
        .ok_or_else(|| ApiError::Project(ProjectError::NotFound(id.clone())))
}

/// Deletes the project: a streaming answer and the running commands are
/// stopped first, then the sandbox, the files and the rows go.
pub async fn delete(state: &AppState, id: &ProjectId) -> Result<(), ApiError> {
    require(state, id).await?;
    if let Some(handle) = state.open_projects.remove(id) {
        stop_in(&handle);
        wait_until_idle(&handle).await;
        handle.runner.shutdown().await;
        handle.session.flush().await;
    }
    state.sandbox.close_project(id).await;
    super::secrets::forget(state, id);
    super::remote::forget(state, id);
    super::publish::forget(state, id);
    super::database::forget(state, id).await;
    super::mcp::forget(state, id);
    // The row first: a directory left by a failure below is no project.
    state.store.delete_project(id.as_str()).await?;
    match state.projects.delete(id) {
        Ok(()) | Err(ProjectError::NotFound(_)) => {}
        Err(error) => return Err(error.into()),
    }
    tracing::info!(project = %id.as_str(), "project deleted");
    Ok(())
}

/// Waits (a while at most) for a stopped answer's task to finish.
async fn wait_until_idle(handle: &ProjectHandle) {
    let deadline = tokio::time::Instant::now() + STOP_GRACE;
    while super::conversation::is_busy(handle) && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Names a project still called "Untitled" after the person's message
/// (the first one, in practice). A failure is logged: the message matters more.
pub async fn name_after_message(state: &AppState, id: &ProjectId, text: &str) {
    if let Err(error) = state.store.name_after_message(id.as_str(), text).await {
        tracing::warn!(project = %id.as_str(), %error, "the project could not be named after its first message");
    }
}
