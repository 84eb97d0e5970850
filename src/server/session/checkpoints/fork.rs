//! "Fork from here": a new project holding the files of an answer's
//! checkpoint and the conversation up to that answer (its messages, the
//! session events until the next message, and the checkpoints so far, in
//! a copy of the checkpoint repository).

use super::checkpoints;
use crate::runtime::project::ProjectId;
use crate::runtime::session::SessionEvent;
use crate::server::checkpoint::CheckpointError;
use crate::server::checkpoint::git::{GitError, Repo};
use crate::server::projects::ProjectError;
use crate::server::session::api::{ApiError, open_project};
use crate::server::state::AppState;
use crate::server::store::{CheckpointKind, ProjectRow};

fn number(message_id: &str) -> i64 {
    message_id.trim_start_matches('m').parse().unwrap_or(0)
}

/// Makes the fork of `project` as of answer `message_id` and returns its row.
pub async fn fork(
    state: &AppState,
    project: &ProjectId,
    message_id: &str,
) -> Result<ProjectRow, ApiError> {
    let handle = open_project(state, project).await?;
    let checkpoints = checkpoints(&handle).ok_or(CheckpointError::Unavailable)?;
    let _guard = checkpoints.lock().await;
    handle.session.flush().await;
    let source = handle.id.as_str();
    let messages = state.store.messages(source).await?;
    let position = messages[super::rewind::find_answer(&messages, message_id)?].position();
    let target = state
        .store
        .checkpoint_for(source, CheckpointKind::Answer, message_id)
        .await?
        .ok_or_else(|| CheckpointError::NoCheckpoint(message_id.to_owned()))?;
    checkpoints
        .repo()
        .verify(&target.commit_id)
        .await
        .map_err(|e| checkpoints.repo_error(e))?;
    let name = state
        .store
        .project(source)
        .await?
        .map_or_else(|| source.to_owned(), |p| p.name);
    let meta = state.projects.create(&format!("{name} (fork)"))?;
    let row = ProjectRow::from_meta(&meta, state.config.runtime.default);
    state.store.ensure_project(&row).await?;
    let repo = checkpoints
        .repo()
        .clone_to(
            &state.projects.dir(&meta.id).join("checkpoints.git"),
            &state.sandbox.workspace_dir(&meta.id),
        )
        .await
        .map_err(|e| checkpoints.repo_error(e))?;
    let written = write_files(state, &repo, &meta.id, &target.commit_id)
        .await
        .map_err(|e| match e {
            WriteError::Git(source) => checkpoints.repo_error(source).into(),
            WriteError::Io { path, source } => ApiError::from(ProjectError::Io { path, source }),
        })?;
    let last_event = last_event_of(state, source, position).await?;
    state
        .store
        .copy_conversation(source, meta.id.as_str(), (position, last_event, target.seq))
        .await?;
    crate::server::session::images::copy_to(state, &handle.id, &meta.id).await?;
    crate::server::session::database::after_fork(state, &meta.id, &written).await;
    Ok(state.store.project(meta.id.as_str()).await?.unwrap_or(row))
}

/// The last event that belongs to the conversation up to message
/// `position`: the one before the next message was added.
async fn last_event_of(state: &AppState, project: &str, position: i64) -> Result<i64, ApiError> {
    let replay = state.store.events(project).await?;
    let next = replay.events.iter().find(|e| {
        matches!(&e.event, SessionEvent::MessageAdded { message } if number(&message.id) > position)
    });
    let last = next.map_or(replay.last_seq, |e| e.seq.saturating_sub(1));
    Ok(crate::server::store::int(last))
}

#[derive(Debug, thiserror::Error)]
enum WriteError {
    #[error(transparent)]
    Git(#[from] GitError),
    #[error("cannot write {path}: {source}")]
    Io {
        path: std::path::PathBuf,
        source: std::io::Error,
    },
}

/// Writes the checkpoint's files into the new project's workspace (its
/// sandbox, not started yet, makes them its own when it starts).
async fn write_files(
    state: &AppState,
    repo: &Repo,
    id: &ProjectId,
    commit: &str,
) -> Result<Vec<String>, WriteError> {
    let workspace = state.sandbox.workspace_dir(id);
    let paths = repo.files(commit).await?;
    for path in &paths {
        let content = repo.read(commit, path).await?;
        let full = workspace.join(path);
        let io = |source| WriteError::Io {
            path: full.clone(),
            source,
        };
        if let Some(parent) = full.parent() {
            tokio::fs::create_dir_all(parent).await.map_err(io)?;
        }
        tokio::fs::write(&full, content).await.map_err(io)?;
    }
    Ok(paths)
}
