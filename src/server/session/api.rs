//! What the UI's server functions do (`crate::app::api` declares them).

use std::sync::Arc;

use futures::StreamExt;
use leptos::prelude::expect_context;
use leptos::server_fn::codec::ByteStream;

use super::agent;
use super::conversation;
use super::project::ProjectHandle;
use crate::runtime::action::ProjectPath;
use crate::runtime::host::RuntimeError;
use crate::runtime::project::{InvalidProjectId, ProjectId};
use crate::runtime::runner::PreviewError;
use crate::runtime::session::{Decision, FileChange, Mode, SessionEvent};
use crate::server::checkpoint::CheckpointError;
use crate::server::projects::ProjectError;
use crate::server::state::AppState;
use crate::server::store::StoreError;

#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    #[error(transparent)]
    InvalidProject(#[from] InvalidProjectId),
    #[error(transparent)]
    Project(#[from] ProjectError),
    #[error(transparent)]
    Runtime(#[from] RuntimeError),
    #[error("an answer is still streaming; stop it or wait for it to finish")]
    Busy,
    #[error("the message is empty")]
    EmptyMessage,
    #[error("message {0} cannot be continued: only the latest interrupted answer can")]
    NotContinuable(String),
    #[error("message {0} is not an answer that can be asked again")]
    NotRetryable(String),
    #[error("{0} is not UTF-8 text")]
    NotText(String),
    #[error(transparent)]
    Preview(#[from] PreviewError),
    #[error(transparent)]
    Approval(#[from] agent::ApprovalError),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Checkpoint(#[from] CheckpointError),
    #[error("a project needs a name")]
    EmptyName,
}

/// The project's handle. The request has passed `access::guard` (the
/// owner's token, from the IDE's own page or a program).
async fn open(project: &ProjectId) -> Result<(AppState, Arc<ProjectHandle>), ApiError> {
    let state = expect_context::<AppState>();
    let handle = open_project(&state, project).await?;
    Ok((state, handle))
}

/// The project's handle, for callers that have the state at hand (the
/// HTTP API, which passes the id as it came).
pub async fn open_in(state: &AppState, project: &str) -> Result<Arc<ProjectHandle>, ApiError> {
    open_project(state, &ProjectId::parse(project)?).await
}

/// The handle of a project that exists.
pub async fn open_project(
    state: &AppState,
    id: &ProjectId,
) -> Result<Arc<ProjectHandle>, ApiError> {
    super::manage::require(state, id).await?;
    Ok(state.open_projects.open(state, id).await)
}

pub async fn feed(
    project: &ProjectId,
) -> Result<ByteStream<crate::runtime::error::RivetError>, ApiError> {
    let (_, handle) = open(project).await?;
    let lines = handle.session.subscribe().map(|envelope| {
        // Serialising our own types cannot fail; an empty line is skipped by readers.
        let mut line = serde_json::to_vec(&*envelope).unwrap_or_default();
        line.push(b'\n');
        bytes::Bytes::from(line)
    });
    Ok(ByteStream::from(lines))
}

pub async fn send(project: &ProjectId, text: String) -> Result<(), ApiError> {
    let state = expect_context::<AppState>();
    send_in(&state, project.as_str(), text).await.map(drop)
}

pub use super::conversation::Sent;

/// The person's message and its answer (see [`conversation::send`]).
pub async fn send_in(state: &AppState, project: &str, text: String) -> Result<Sent, ApiError> {
    let text = text.trim();
    if text.is_empty() {
        return Err(ApiError::EmptyMessage);
    }
    let handle = open_in(state, project).await?;
    let sent = conversation::send(state, &handle, text).await?;
    super::manage::name_after_message(state, &handle.id, text).await;
    Ok(sent)
}

pub async fn stop(project: &ProjectId) -> Result<(), ApiError> {
    let (_, handle) = open(project).await?;
    super::manage::stop_in(&handle);
    handle.browser.stop();
    Ok(())
}

pub async fn continue_answer(project: &ProjectId, message_id: &str) -> Result<(), ApiError> {
    let (state, handle) = open(project).await?;
    conversation::continue_answer(&state, &handle, message_id)
}

pub async fn retry(project: &ProjectId, message_id: &str) -> Result<(), ApiError> {
    let (state, handle) = open(project).await?;
    conversation::retry(&state, &handle, message_id).await
}

pub async fn read_file(project: &ProjectId, path: &ProjectPath) -> Result<String, ApiError> {
    let (_, handle) = open(project).await?;
    let bytes = handle.runtime.read_file(path.as_str()).await?;
    String::from_utf8(bytes).map_err(|_| ApiError::NotText(path.to_string()))
}

pub async fn write_file(
    project: &ProjectId,
    path: &ProjectPath,
    content: String,
) -> Result<(), ApiError> {
    let (_, handle) = open(project).await?;
    write_file_in(&handle, path.as_str(), content).await
}

/// Saves a file the person (or a program, through the HTTP API) wrote.
pub async fn write_file_in(
    handle: &ProjectHandle,
    path: &str,
    content: String,
) -> Result<(), ApiError> {
    let before = match handle.runtime.read_file(path).await {
        Ok(bytes) => Some(String::from_utf8_lossy(&bytes).into_owned()),
        Err(_) => None,
    };
    handle.runtime.write_file(path, content.as_bytes()).await?;
    handle
        .conversation()
        .user_edits
        .entry(path.to_owned())
        .and_modify(|(_, after)| after.clone_from(&content))
        .or_insert((before, content));
    handle.publish(SessionEvent::FileWritten {
        path: path.to_owned(),
        by_model: false,
    });
    Ok(())
}

pub async fn rename(
    project: &ProjectId,
    from: &ProjectPath,
    to: &ProjectPath,
) -> Result<(), ApiError> {
    let (from, to) = (from.as_str(), to.as_str());
    let (_, handle) = open(project).await?;
    handle.runtime.rename(from, to).await?;
    handle.publish(SessionEvent::FileRemoved {
        path: from.to_owned(),
    });
    // A renamed folder brings its files along.
    let moved = handle.runtime.list_tree(to).await.unwrap_or_default();
    let files: Vec<String> = if moved.is_empty() {
        vec![to.to_owned()]
    } else {
        moved
            .into_iter()
            .filter(|e| e.kind == crate::runtime::host::EntryKind::File)
            .map(|e| e.path)
            .collect()
    };
    for path in files {
        handle.publish(SessionEvent::FileWritten {
            path,
            by_model: false,
        });
    }
    Ok(())
}

pub async fn delete(project: &ProjectId, path: &ProjectPath) -> Result<(), ApiError> {
    let (_, handle) = open(project).await?;
    delete_in(&handle, path.as_str()).await
}

pub async fn delete_in(handle: &ProjectHandle, path: &str) -> Result<(), ApiError> {
    handle.runtime.remove(path).await?;
    handle.publish(SessionEvent::FileRemoved {
        path: path.to_owned(),
    });
    Ok(())
}

pub async fn answer_diff(
    project: &ProjectId,
    path: &ProjectPath,
) -> Result<Option<FileChange>, ApiError> {
    let path = path.as_str();
    let (_, handle) = open(project).await?;
    let before = handle
        .answer_before
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .get(path)
        .cloned();
    let Some(before) = before else {
        return Ok(None);
    };
    let after = match handle.runtime.read_file(path).await {
        Ok(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
        Err(_) => String::new(),
    };
    Ok(Some(FileChange { before, after }))
}

/// Gives a port of the project a preview address (the person picked it in
/// the preview pane) and returns it; the session hears of it too.
pub async fn open_preview(project: &ProjectId, port: u16) -> Result<String, ApiError> {
    let (_, handle) = open(project).await?;
    Ok(handle.runner.open_preview(port)?)
}

/// The conversation's mode (the configured default until one is chosen).
pub async fn mode(project: &ProjectId) -> Result<Mode, ApiError> {
    let (state, handle) = open(project).await?;
    Ok(agent::mode(&handle, &state.config.agent))
}

pub async fn set_mode(project: &ProjectId, mode: Mode) -> Result<(), ApiError> {
    let (_, handle) = open(project).await?;
    agent::set_mode(&handle, mode);
    Ok(())
}

/// The person's decision on an agent step that waits for approval.
pub async fn decide_step(
    project: &ProjectId,
    step_id: &str,
    decision: Decision,
) -> Result<(), ApiError> {
    let (_, handle) = open(project).await?;
    Ok(agent::decide(&handle, step_id, decision)?)
}

pub async fn decide_step_in(
    state: &AppState,
    project: &str,
    step_id: &str,
    decision: Decision,
) -> Result<(), ApiError> {
    let handle = open_in(state, project).await?;
    Ok(agent::decide(&handle, step_id, decision)?)
}
