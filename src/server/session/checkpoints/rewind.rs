//! "Restore to here" and Redo. A restore first commits the files as they
//! are (so it never loses anything), then writes back those of the
//! answer's checkpoint and marks every later message undone; Redo puts
//! back the state that restore replaced and the messages it undid.

use std::sync::Arc;

use super::checkpoints;
use crate::runtime::project::ProjectId;
use crate::runtime::session::{MessageStatus, Role, SessionEvent};
use crate::server::checkpoint::{Applied, ApplyError, CheckpointError, Checkpoints, apply};
use crate::server::session::api::{ApiError, open_project};
use crate::server::session::{ProjectHandle, reset_conversation};
use crate::server::state::AppState;
use crate::server::store::{CheckpointKind, MessageRow};

/// What a restore or redo did.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Restored {
    pub message_id: String,
    /// The commit the files now match.
    pub checkpoint: String,
    /// The commit holding the files as they were before.
    pub saved: String,
    /// Messages marked undone (restore) or given back (redo).
    pub undone: Vec<String>,
    pub redone: Vec<String>,
    pub written: Vec<String>,
    pub removed: Vec<String>,
}

/// The handle, its checkpoints and the stored messages, once nothing runs.
async fn prepare(
    state: &AppState,
    project: &ProjectId,
) -> Result<(Arc<ProjectHandle>, Arc<Checkpoints>), ApiError> {
    let handle = open_project(state, project).await?;
    let checkpoints = checkpoints(&handle).ok_or(CheckpointError::Unavailable)?;
    Ok((handle, checkpoints))
}

/// Refuses while an answer streams or actions run; ends a fix loop.
fn ensure_idle(handle: &ProjectHandle) -> Result<(), ApiError> {
    let mut conversation = handle.conversation();
    if conversation.streaming().is_active() || handle.session.read(|s| s.is_busy()) {
        return Err(ApiError::Busy);
    }
    if let Some(fixing) = conversation.take_fixing() {
        fixing.cancel();
    }
    Ok(())
}

/// The index of answer `message_id` in `messages`, which must not be undone.
pub(super) fn find_answer(messages: &[MessageRow], message_id: &str) -> Result<usize, ApiError> {
    let index = messages
        .iter()
        .position(|m| m.id == message_id)
        .ok_or_else(|| CheckpointError::MessageNotFound(message_id.to_owned()))?;
    let message = &messages[index];
    if message.role != Role::Assistant {
        return Err(CheckpointError::NotAnAnswer(message_id.to_owned()).into());
    }
    match message.status {
        MessageStatus::Undone { .. } => Err(CheckpointError::Undone(message_id.to_owned()).into()),
        MessageStatus::Streaming => Err(ApiError::Busy),
        _ => Ok(index),
    }
}

/// Gives each message its new status, stored before the event that says so.
fn set_statuses(handle: &ProjectHandle, changed: Vec<MessageRow>) {
    for row in changed {
        let event = SessionEvent::MessageStatusChanged {
            message_id: row.id.clone(),
            status: row.status.clone(),
        };
        handle.session.save_message(row);
        handle.publish(event);
    }
}

/// Writes the files of `to` (the work tree holding `from`) and tells the session.
pub(crate) async fn write_back(
    handle: &ProjectHandle,
    checkpoints: &Checkpoints,
    from: &str,
    to: &str,
) -> Result<Applied, ApiError> {
    let applied = apply(checkpoints.repo(), handle.runtime.as_ref(), from, to)
        .await
        .map_err(|error| match error {
            ApplyError::Git(source) => checkpoints.repo_error(source).into(),
            ApplyError::Runtime(error) => ApiError::from(error),
        })?;
    for event in applied.events() {
        handle.publish(event);
    }
    Ok(applied)
}

/// Puts the files back as they were right after answer `message_id`.
pub async fn restore(
    state: &AppState,
    project: &ProjectId,
    message_id: &str,
) -> Result<Restored, ApiError> {
    let (handle, checkpoints) = prepare(state, project).await?;
    let _guard = checkpoints.lock().await;
    ensure_idle(&handle)?;
    handle.session.flush().await;
    let mut messages = state.store.messages(handle.id.as_str()).await?;
    let index = find_answer(&messages, message_id)?;
    let target = state
        .store
        .checkpoint_for(handle.id.as_str(), CheckpointKind::Answer, message_id)
        .await?
        .ok_or_else(|| CheckpointError::NoCheckpoint(message_id.to_owned()))?;
    // Nothing changes unless the checkpoint can be read whole.
    checkpoints
        .repo()
        .verify(&target.commit_id)
        .await
        .map_err(|e| checkpoints.repo_error(e))?;
    let undone: Vec<String> = messages[index + 1..]
        .iter()
        .filter(|m| !matches!(m.status, MessageStatus::Undone { .. }))
        .map(|m| m.id.clone())
        .collect();
    let saved = checkpoints
        .take_locked(
            CheckpointKind::BeforeRestore,
            Some(message_id),
            false,
            &undone,
        )
        .await?
        .ok_or(CheckpointError::Unavailable)?;
    let applied = write_back(&handle, &checkpoints, &saved.commit_id, &target.commit_id).await?;
    let mut changed = Vec::new();
    for row in messages.iter_mut().filter(|m| undone.contains(&m.id)) {
        let was = std::mem::replace(&mut row.status, MessageStatus::Complete);
        row.status = MessageStatus::Undone { was: Box::new(was) };
        changed.push(row.clone());
    }
    set_statuses(&handle, changed);
    reset_conversation(state, &handle, &messages);
    crate::server::session::database::after_rewind(state, &handle).await;
    Ok(Restored {
        message_id: message_id.to_owned(),
        checkpoint: target.commit_id,
        saved: saved.commit_id,
        undone,
        redone: Vec::new(),
        written: applied.written,
        removed: applied.removed,
    })
}

/// Undoes the latest restore to answer `message_id`: its files and the
/// messages it undid come back (the state meanwhile is kept as a checkpoint).
pub async fn redo(
    state: &AppState,
    project: &ProjectId,
    message_id: &str,
) -> Result<Restored, ApiError> {
    let (handle, checkpoints) = prepare(state, project).await?;
    let _guard = checkpoints.lock().await;
    ensure_idle(&handle)?;
    handle.session.flush().await;
    let mut messages = state.store.messages(handle.id.as_str()).await?;
    let index = find_answer(&messages, message_id)?;
    let nothing = || CheckpointError::NothingToRedo(message_id.to_owned());
    let later = &messages[index + 1..];
    if later.is_empty()
        || !later
            .iter()
            .all(|m| matches!(m.status, MessageStatus::Undone { .. }))
    {
        return Err(nothing().into());
    }
    let back = state
        .store
        .checkpoint_for(
            handle.id.as_str(),
            CheckpointKind::BeforeRestore,
            message_id,
        )
        .await?
        .ok_or_else(nothing)?;
    checkpoints
        .repo()
        .verify(&back.commit_id)
        .await
        .map_err(|e| checkpoints.repo_error(e))?;
    let saved = checkpoints
        .take_locked(CheckpointKind::BeforeRedo, Some(message_id), false, &[])
        .await?
        .ok_or(CheckpointError::Unavailable)?;
    let applied = write_back(&handle, &checkpoints, &saved.commit_id, &back.commit_id).await?;
    let mut changed = Vec::new();
    for row in messages.iter_mut().filter(|m| back.undone.contains(&m.id)) {
        if let MessageStatus::Undone { was } = &row.status {
            row.status = (**was).clone();
            changed.push(row.clone());
        }
    }
    let redone = changed.iter().map(|m| m.id.clone()).collect();
    set_statuses(&handle, changed);
    reset_conversation(state, &handle, &messages);
    crate::server::session::database::after_rewind(state, &handle).await;
    Ok(Restored {
        message_id: message_id.to_owned(),
        checkpoint: back.commit_id,
        saved: saved.commit_id,
        undone: Vec::new(),
        redone,
        written: applied.written,
        removed: applied.removed,
    })
}
