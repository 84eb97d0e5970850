//! A project's git remote as the UI and the HTTP API reach it: set it, read
//! it (never its token), push the project's checkpoints to it, pull from
//! it, and say how far apart the two are. A push or pull first takes a
//! checkpoint of the files as they are, so what is pushed is what the
//! person sees and a pull never loses an edit.

use std::sync::Arc;

use super::ProjectHandle;
use super::api::{ApiError, open_project};
use crate::runtime::project::ProjectId;
use crate::server::checkpoint::git::Repo;
use crate::server::checkpoint::git::sync::{Credentials, Merge, SyncError};
use crate::server::checkpoint::{CheckpointError, Checkpoints};
use crate::server::remote::{Remote, RemoteError, RemoteInput, RemoteView};
use crate::server::state::AppState;
use crate::server::store::CheckpointKind;

pub use crate::runtime::ship::{GitStatus, PullOutcome, Pulled, Pushed};

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

/// The project's checkpoints once nothing runs, and its remote.
async fn prepare(
    state: &AppState,
    project: &ProjectId,
) -> Result<(Arc<ProjectHandle>, Arc<Checkpoints>, Remote), ApiError> {
    let handle = open_project(state, project).await?;
    let remote = state.remotes.get(project)?.ok_or(RemoteError::NotSet)?;
    if super::conversation::is_busy(&handle) {
        return Err(ApiError::Busy);
    }
    let checkpoints =
        super::checkpoints::checkpoints(&handle).ok_or(CheckpointError::Unavailable)?;
    Ok((handle, checkpoints, remote))
}

pub(super) fn credentials(remote: &Remote) -> Option<Credentials<'_>> {
    remote.token.as_deref().map(|token| Credentials {
        username: remote.username.as_deref().unwrap_or("rivet"),
        token,
    })
}

/// Pushes the project's checkpoints to its remote's branch, never forcing:
/// a remote that moved answers "pull first".
pub async fn push(state: &AppState, project: &ProjectId) -> Result<Pushed, ApiError> {
    let (handle, checkpoints, remote) = prepare(state, project).await?;
    let _guard = checkpoints.lock().await;
    super::checkpoints::take_current_locked(&handle, &checkpoints).await?;
    let commit = checkpoints
        .repo()
        .push(&remote.url, &remote.branch, credentials(&remote))
        .await?;
    tracing::info!(%project, commit, branch = remote.branch, "pushed");
    Ok(Pushed {
        commit,
        branch: remote.branch,
    })
}

/// Brings the remote branch's commits into the project: the files as they
/// are become a checkpoint first, then the remote's commit is
/// fast-forwarded to or merged, and the files that changed are written
/// through the runtime. A conflict changes nothing and names the paths.
pub async fn pull(state: &AppState, project: &ProjectId) -> Result<Pulled, ApiError> {
    let (handle, checkpoints, remote) = prepare(state, project).await?;
    let _guard = checkpoints.lock().await;
    super::checkpoints::take_current_locked(&handle, &checkpoints).await?;
    let repo = checkpoints.repo();
    let theirs = repo
        .fetch(&remote.url, &remote.branch, credentials(&remote))
        .await?
        .ok_or_else(|| SyncError::NoBranch(remote.branch.clone()))?;
    let head = repo
        .head()
        .await
        .map_err(|e| checkpoints.repo_error(e))?
        .ok_or(CheckpointError::Unavailable)?;
    let message = format!(
        "Merge {} of {}\n\nRivet-Checkpoint: pull\n",
        remote.branch, remote.url
    );
    let merge = repo.merge(&head, &theirs, &message).await?;
    let (outcome, commit) = match merge {
        Merge::UpToDate => (PullOutcome::UpToDate, head.clone()),
        Merge::FastForward(commit) => (PullOutcome::FastForward, commit),
        Merge::Merged(commit) => (PullOutcome::Merged, commit),
    };
    let mut applied = crate::server::checkpoint::Applied::default();
    if commit != head {
        applied = super::checkpoints::write_back(&handle, &checkpoints, &head, &commit).await?;
        repo.advance(&head, &commit)
            .await
            .map_err(|e| checkpoints.repo_error(e))?;
        let latest = handle.session.read(super::checkpoints::latest_answer);
        checkpoints
            .record_locked(CheckpointKind::Pull, latest.as_deref(), &commit)
            .await?;
        tell_the_model(&handle, repo, &head, &commit, &applied.written).await;
        tracing::info!(%project, commit, ?outcome, branch = remote.branch, "pulled");
    }
    Ok(Pulled {
        commit,
        branch: remote.branch,
        outcome,
        written: applied.written,
        removed: applied.removed,
    })
}

/// The most pulled files the model's next request shows as changed.
const TOLD_FILES: usize = 40;

/// The pulled changes go to the model with its next request, as the
/// person's own edits do (text files only).
async fn tell_the_model(
    handle: &ProjectHandle,
    repo: &Repo,
    from: &str,
    to: &str,
    written: &[String],
) {
    let text = |bytes: Vec<u8>| String::from_utf8(bytes).ok();
    for path in written.iter().take(TOLD_FILES) {
        let before = repo.read(from, path).await.ok().and_then(text);
        let Some(after) = repo.read(to, path).await.ok().and_then(text) else {
            continue;
        };
        handle.conversation().note_edit(path, before, after);
    }
}

/// How far the project and its remote are apart, after fetching the
/// remote's branch.
pub async fn status(state: &AppState, project: &ProjectId) -> Result<GitStatus, ApiError> {
    let remote = state.remotes.get(project)?.ok_or(RemoteError::NotSet)?;
    let handle = open_project(state, project).await?;
    let checkpoints =
        super::checkpoints::checkpoints(&handle).ok_or(CheckpointError::Unavailable)?;
    let repo = checkpoints.repo();
    {
        let _guard = checkpoints.lock().await;
        repo.ensure().await.map_err(|e| checkpoints.repo_error(e))?;
    }
    // The remote is asked with the checkpoints free: a slow or silent one
    // (up to the fetch's timeout) must not hold up the project's
    // checkpoints and restores while the settings show its status.
    let fetched = repo
        .peek(&remote.url, &remote.branch, credentials(&remote))
        .await?;
    let _guard = checkpoints.lock().await;
    let divergence = repo
        .divergence(fetched.as_deref())
        .await
        .map_err(|e| checkpoints.repo_error(e))?;
    Ok(GitStatus {
        branch: remote.branch,
        remote_commit: fetched,
        ahead: divergence.ahead,
        behind: divergence.behind,
    })
}

/// Forgets a deleted project's remote.
pub fn forget(state: &AppState, project: &ProjectId) {
    if let Err(error) = state.remotes.remove(project) {
        tracing::error!(%project, %error, "the deleted project's git remote is left on disk");
    }
}
