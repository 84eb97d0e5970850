//! The one way into each operation on a project: the UI's server functions
//! (`crate::app::api`) are `expect_context` plus one call here, and the
//! `/api/v1` handlers are parsing plus one call. Each takes the state and a
//! checked `ProjectId` and answers with one typed error, [`ApiError`].

use std::sync::Arc;

use futures::StreamExt;
use leptos::server_fn::codec::ByteStream;

use super::agent;
use super::conversation;
use super::project::ProjectHandle;
use crate::runtime::action::ProjectPath;
use crate::runtime::host::RuntimeError;
use crate::runtime::project::{InvalidProjectId, ProjectId};
use crate::runtime::runner::PreviewError;
use crate::runtime::session::{
    Chat, ChatId, Decision, FileChange, Mode, SessionEvent, encode_line,
};
use crate::server::checkpoint::CheckpointError;
use crate::server::projects::ProjectError;
use crate::server::state::AppState;
use crate::server::store::{CheckpointRow, MessageRow, StoreError};

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
    #[error(transparent)]
    Settings(#[from] crate::server::llm::settings_file::SettingsFileError),
    #[error(
        "the project has spent {} of its budget of {}: raise the budget to go on",
        crate::runtime::llm::dollars(*spent),
        crate::runtime::llm::dollars(*budget)
    )]
    BudgetExceeded { spent: f64, budget: f64 },
    #[error("a budget is an amount of dollars, zero or more")]
    InvalidBudget,
    #[error(transparent)]
    Secret(#[from] crate::server::secrets::SecretError),
    #[error("the draft is too long to rewrite (at most 16 KiB)")]
    DraftTooLong,
    #[error(
        "a selected element is malformed or too large, or a message carries more than {}",
        crate::runtime::selection::MAX_SELECTIONS
    )]
    InvalidSelection,
    #[error(transparent)]
    Llm(#[from] crate::runtime::llm::LlmError),
    #[error(transparent)]
    Remote(#[from] crate::server::remote::RemoteError),
    #[error(transparent)]
    Sync(#[from] crate::server::checkpoint::git::sync::SyncError),
    #[error(transparent)]
    Publish(#[from] crate::server::publish::PublishError),
    #[error("the project has no chat {0}")]
    ChatNotFound(String),
    #[error("a project has at most {} chats", crate::runtime::session::MAX_CHATS)]
    TooManyChats,
    #[error(transparent)]
    Database(#[from] crate::runtime::database::DatabaseError),
    #[error(transparent)]
    Mcp(#[from] crate::server::mcp::McpSettingsError),
    #[error(transparent)]
    Image(#[from] crate::runtime::attachment::ImageError),
    #[error("the project has no image {0}")]
    ImageNotFound(String),
    #[error("the project's images could not be read or written: {0}")]
    ImageIo(std::io::Error),
}

/// The handle of a project that exists. Every operation below starts here;
/// the request has passed `access::guard` (the owner's token, from the
/// IDE's own page or a program).
pub async fn open_project(
    state: &AppState,
    id: &ProjectId,
) -> Result<Arc<ProjectHandle>, ApiError> {
    Ok(open_project_row(state, id).await?.1)
}

/// [`open_project`], with the project's row (its name, its creation time).
pub async fn open_project_row(
    state: &AppState,
    id: &ProjectId,
) -> Result<(crate::server::store::ProjectRow, Arc<ProjectHandle>), ApiError> {
    let row = super::manage::require(state, id).await?;
    Ok((row, state.open_projects.open(state, id).await))
}

/// The project's events from `after` on (see [`super::manage::events`]).
pub async fn events(
    state: &AppState,
    project: &ProjectId,
    after: Option<u64>,
) -> Result<
    impl futures::Stream<Item = Arc<crate::runtime::session::Envelope>> + Send + 'static + use<>,
    ApiError,
> {
    let handle = open_project(state, project).await?;
    super::manage::events(state, &handle, after).await
}

/// The messages of one of the project's chats as stored. Opening the
/// project first settles an answer a stopped server left streaming.
pub async fn messages(
    state: &AppState,
    project: &ProjectId,
    chat: &ChatId,
) -> Result<Vec<MessageRow>, ApiError> {
    let handle = open_project(state, project).await?;
    super::chats::require(&handle, chat)?;
    handle.session.flush().await;
    let rows = state.store.messages(project.as_str()).await?;
    Ok(super::chats::of_chat(&handle, chat, rows))
}

/// The project's chats, the first one first.
pub async fn chats(state: &AppState, project: &ProjectId) -> Result<Vec<Chat>, ApiError> {
    let handle = open_project(state, project).await?;
    Ok(super::chats::list(&handle))
}

/// Opens another chat on the project.
pub async fn open_chat(state: &AppState, project: &ProjectId) -> Result<Chat, ApiError> {
    let handle = open_project(state, project).await?;
    super::chats::open(&handle).await
}

/// The project's checkpoints, oldest first.
pub async fn checkpoints(
    state: &AppState,
    project: &ProjectId,
) -> Result<Vec<CheckpointRow>, ApiError> {
    open_project(state, project).await?;
    Ok(state.store.checkpoints(project.as_str()).await?)
}

pub async fn feed(
    state: &AppState,
    project: &ProjectId,
) -> Result<ByteStream<crate::runtime::error::RivetError>, ApiError> {
    let handle = open_project(state, project).await?;
    let lines = handle
        .session
        .subscribe()
        .map(|envelope| bytes::Bytes::from(encode_line(&*envelope)));
    Ok(ByteStream::from(lines))
}

pub use super::conversation::Sent;

/// What a message may choose beside its text: the model that answers (else
/// the configured one) and the conversation's mode from this message on
/// (else the mode it is in).
#[derive(Debug, Default, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SendOptions {
    #[serde(default)]
    pub model: Option<String>,
    #[serde(default)]
    pub mode: Option<crate::runtime::session::Mode>,
    /// The chat the message goes to; the first one when left out.
    #[serde(default)]
    pub chat: Option<ChatId>,
    /// Images (already kept with `images::upload`) and selected elements.
    #[serde(default)]
    pub attachments: crate::runtime::attachment::Attachments,
}

/// The person's message and its answer (see [`conversation::send`]).
pub async fn send(
    state: &AppState,
    project: &ProjectId,
    text: String,
    mut options: SendOptions,
) -> Result<Sent, ApiError> {
    let text = text.trim();
    if text.is_empty() && options.attachments.is_empty() {
        return Err(ApiError::EmptyMessage);
    }
    let handle = open_project(state, project).await?;
    let attached = attach(state, project, text, &mut options).await?;
    let sent = conversation::send(state, &handle, text, options, attached).await?;
    if !text.is_empty() {
        super::manage::name_after_message(state, &handle.id, text).await;
    }
    Ok(sent)
}

/// What a message carries, checked and made ready for the model: its
/// images are the project's, its selected elements are checked and placed
/// in the project's files.
async fn attach(
    state: &AppState,
    project: &ProjectId,
    text: &str,
    options: &mut SendOptions,
) -> Result<conversation::Attached, ApiError> {
    let mut attachments = std::mem::take(&mut options.attachments);
    if attachments.selections.len() > crate::runtime::selection::MAX_SELECTIONS {
        return Err(ApiError::InvalidSelection);
    }
    let images = super::images::parts(state, project, &attachments.images).await?;
    let mut located = Vec::with_capacity(attachments.selections.len());
    for selection in std::mem::take(&mut attachments.selections) {
        located.push(super::selection::locate(state, project, selection).await?);
    }
    attachments.selections = located;
    let asked = crate::runtime::selection::message_with_selections(text, &attachments.selections);
    Ok(conversation::Attached {
        attachments,
        images,
        asked,
    })
}

pub async fn stop(state: &AppState, project: &ProjectId) -> Result<(), ApiError> {
    let handle = open_project(state, project).await?;
    super::manage::stop_in(&handle);
    handle.browser.stop();
    Ok(())
}

pub async fn continue_answer(
    state: &AppState,
    project: &ProjectId,
    message_id: &str,
) -> Result<(), ApiError> {
    let handle = open_project(state, project).await?;
    conversation::continue_answer(state, &handle, message_id).await
}

pub async fn retry(
    state: &AppState,
    project: &ProjectId,
    message_id: &str,
) -> Result<(), ApiError> {
    let handle = open_project(state, project).await?;
    conversation::retry(state, &handle, message_id).await
}

/// A file's bytes as they are.
pub async fn read_bytes(
    state: &AppState,
    project: &ProjectId,
    path: &ProjectPath,
) -> Result<Vec<u8>, ApiError> {
    let handle = open_project(state, project).await?;
    Ok(handle.runtime.read_file(path.as_str()).await?)
}

/// The entries of one folder of the project (`""` is its root), every
/// folder alike: the insides of `dist/` or `node_modules/` too.
pub async fn list_dir(
    state: &AppState,
    project: &ProjectId,
    dir: &ProjectPath,
) -> Result<Vec<crate::runtime::host::DirEntry>, ApiError> {
    let handle = open_project(state, project).await?;
    Ok(handle.runtime.list(dir.as_str()).await?)
}

/// A file's text, for the editor.
pub async fn read_file(
    state: &AppState,
    project: &ProjectId,
    path: &ProjectPath,
) -> Result<String, ApiError> {
    let bytes = read_bytes(state, project, path).await?;
    String::from_utf8(bytes).map_err(|_| ApiError::NotText(path.to_string()))
}

/// Saves a file the person (or a program, through the HTTP API) wrote.
/// Text goes the editor's way: the model hears of the change.
pub async fn write_file(
    state: &AppState,
    project: &ProjectId,
    path: &ProjectPath,
    content: Vec<u8>,
) -> Result<(), ApiError> {
    let handle = open_project(state, project).await?;
    let path = path.as_str();
    let text = match String::from_utf8(content) {
        Ok(text) => text,
        Err(not_text) => {
            handle.runtime.write_file(path, not_text.as_bytes()).await?;
            publish_written(&handle, path);
            return Ok(());
        }
    };
    let before = match handle.runtime.read_file(path).await {
        Ok(bytes) => Some(String::from_utf8_lossy(&bytes).into_owned()),
        Err(_) => None,
    };
    handle.runtime.write_file(path, text.as_bytes()).await?;
    handle.conversation().note_edit(path, before, text);
    publish_written(&handle, path);
    Ok(())
}

fn publish_written(handle: &ProjectHandle, path: &str) {
    handle.publish(SessionEvent::FileWritten {
        path: path.to_owned(),
        by_model: false,
    });
}

pub async fn rename(
    state: &AppState,
    project: &ProjectId,
    from: &ProjectPath,
    to: &ProjectPath,
) -> Result<(), ApiError> {
    let (from, to) = (from.as_str(), to.as_str());
    let handle = open_project(state, project).await?;
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
        publish_written(&handle, &path);
    }
    Ok(())
}

pub async fn delete(
    state: &AppState,
    project: &ProjectId,
    path: &ProjectPath,
) -> Result<(), ApiError> {
    let handle = open_project(state, project).await?;
    handle.runtime.remove(path.as_str()).await?;
    handle.publish(SessionEvent::FileRemoved {
        path: path.to_string(),
    });
    Ok(())
}

pub async fn answer_diff(
    state: &AppState,
    project: &ProjectId,
    path: &ProjectPath,
) -> Result<Option<FileChange>, ApiError> {
    let path = path.as_str();
    let handle = open_project(state, project).await?;
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
pub async fn open_preview(
    state: &AppState,
    project: &ProjectId,
    port: u16,
) -> Result<String, ApiError> {
    let handle = open_project(state, project).await?;
    Ok(handle.runner.open_preview(port)?)
}

/// The conversation's mode (the configured default until one is chosen).
pub async fn mode(state: &AppState, project: &ProjectId) -> Result<Mode, ApiError> {
    let handle = open_project(state, project).await?;
    Ok(agent::mode(&handle, &state.config.agent))
}

pub async fn set_mode(state: &AppState, project: &ProjectId, mode: Mode) -> Result<(), ApiError> {
    let handle = open_project(state, project).await?;
    agent::set_mode(&handle, mode);
    Ok(())
}

/// The person's decision on an agent step that waits for approval.
pub async fn decide_step(
    state: &AppState,
    project: &ProjectId,
    step_id: &str,
    decision: Decision,
) -> Result<(), ApiError> {
    let handle = open_project(state, project).await?;
    Ok(agent::decide(&handle, step_id, decision)?)
}
