//! A project's git remote as the UI and the HTTP API reach it: set it, read
//! it (never its token), and push the project's checkpoints to it. A push
//! first takes a checkpoint of the files as they are, so what is pushed is
//! what the person sees.

use serde::Serialize;

use super::api::{ApiError, open_project};
use crate::runtime::project::ProjectId;
use crate::server::checkpoint::git::push::Credentials;
use crate::server::remote::{RemoteError, RemoteInput, RemoteView};
use crate::server::state::AppState;

/// What a push sent.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Pushed {
    pub commit: String,
    pub branch: String,
}

/// The project's remote, without its token.
pub async fn remote(state: &AppState, project: &ProjectId) -> Result<RemoteView, ApiError> {
    super::manage::require(state, project).await?;
    let remote = state.remotes.get(project)?.ok_or(RemoteError::NotSet)?;
    Ok(remote.view())
}

/// Connects the project to a remote (or changes it).
pub async fn set_remote(
    state: &AppState,
    project: &ProjectId,
    input: RemoteInput,
) -> Result<RemoteView, ApiError> {
    super::manage::require(state, project).await?;
    let remote = state.remotes.set(project, input)?;
    tracing::info!(%project, url = remote.url, branch = remote.branch, "git remote set");
    Ok(remote.view())
}

/// Pushes the project's checkpoints to its remote's branch, never forcing:
/// a remote that moved answers "pull first".
pub async fn push(state: &AppState, project: &ProjectId) -> Result<Pushed, ApiError> {
    let handle = open_project(state, project).await?;
    let remote = state.remotes.get(project)?.ok_or(RemoteError::NotSet)?;
    if super::conversation::is_busy(&handle) {
        return Err(ApiError::Busy);
    }
    let checkpoints = handle
        .checkpoints
        .get()
        .cloned()
        .ok_or(crate::server::checkpoint::CheckpointError::Unavailable)?;
    let _guard = checkpoints.lock().await;
    super::checkpoints::take_current_locked(&handle, &checkpoints).await?;
    let credentials = remote.token.as_deref().map(|token| Credentials {
        username: remote.username.as_deref().unwrap_or("rivet"),
        token,
    });
    let commit = checkpoints
        .repo()
        .push(&remote.url, &remote.branch, credentials)
        .await?;
    tracing::info!(%project, commit, branch = remote.branch, "pushed");
    Ok(Pushed {
        commit,
        branch: remote.branch,
    })
}

/// Forgets a deleted project's remote.
pub fn forget(state: &AppState, project: &ProjectId) {
    if let Err(error) = state.remotes.remove(project) {
        tracing::error!(%project, %error, "the deleted project's git remote is left on disk");
    }
}
