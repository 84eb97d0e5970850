//! The app secrets of a project, as the UI and the HTTP API reach them:
//! names out, values in, never a value out (see [`crate::server::secrets`]).

use crate::runtime::project::ProjectId;
use crate::server::secrets::SecretStore;
use crate::server::session::api::ApiError;
use crate::server::state::AppState;

/// The one store, which the sandbox reads when it starts a process.
fn store(state: &AppState) -> &SecretStore {
    state.sandbox.secrets()
}

/// The names of the project's secrets, sorted.
pub async fn names(state: &AppState, project: &ProjectId) -> Result<Vec<String>, ApiError> {
    super::manage::require(state, project).await?;
    Ok(store(state).names(project)?)
}

/// Sets one secret; processes started from now on get it. Answers the
/// names.
pub async fn set(
    state: &AppState,
    project: &ProjectId,
    name: &str,
    value: &str,
) -> Result<Vec<String>, ApiError> {
    super::manage::require(state, project).await?;
    let store = store(state);
    store.set(project, name, value)?;
    tracing::info!(%project, secret = name, "secret set");
    Ok(store.names(project)?)
}

/// Removes one secret. Answers the names left.
pub async fn remove(
    state: &AppState,
    project: &ProjectId,
    name: &str,
) -> Result<Vec<String>, ApiError> {
    super::manage::require(state, project).await?;
    let store = store(state);
    store.remove(project, name)?;
    tracing::info!(%project, secret = name, "secret removed");
    Ok(store.names(project)?)
}

/// The names and values, for the browser tab that runs a WebContainer
/// project's processes (its spawns need them, and it masks them in their
/// output as the sandbox does). A project that runs in the sandbox gets
/// none: its values never leave the server.
pub async fn for_browser(
    state: &AppState,
    project: &ProjectId,
) -> Result<Vec<(String, String)>, ApiError> {
    super::manage::require(state, project).await?;
    let kind = super::runtime_choice::runtime_of(state, project).await;
    if !matches!(kind, Ok(crate::runtime::kind::RuntimeKind::Webcontainer)) {
        return Ok(Vec::new());
    }
    Ok(store(state).values(project)?.into_iter().collect())
}

/// Forgets a deleted project's secrets.
pub fn forget(state: &AppState, project: &ProjectId) {
    if let Err(error) = store(state).remove_project(project) {
        tracing::error!(%project, %error, "the deleted project's secrets are left on disk");
    }
}
