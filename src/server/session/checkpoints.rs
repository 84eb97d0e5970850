//! The session's use of checkpoints (`server::checkpoint`, docs/checkpoints.md):
//! when they are taken (after an answer, before the person's message, before
//! an automatic fix), "Restore to here" and Redo (`rewind.rs`), and "Fork
//! from here" (`fork.rs`). They live here rather than in `checkpoint`
//! because they work on open projects; the repository below knows none.

mod fork;
mod rewind;

use std::sync::Arc;
use std::time::Duration;

pub use fork::fork;
pub use rewind::{Restored, redo, restore};

use super::project::ProjectHandle;
use crate::runtime::session::{Role, SessionState};
use crate::server::checkpoint::{CheckpointError, Checkpoints};
use crate::server::store::CheckpointKind;

/// How often the wait for an answer's actions looks at the session.
const POLL: Duration = Duration::from_millis(250);
/// The longest an answer's checkpoint waits for its actions.
const LONGEST_WAIT: Duration = Duration::from_secs(15 * 60);

fn checkpoints(handle: &ProjectHandle) -> Option<Arc<Checkpoints>> {
    handle.checkpoints.get().cloned()
}

fn latest_answer(state: &SessionState) -> Option<String> {
    state
        .messages
        .iter()
        .rev()
        .find(|m| m.role == Role::Assistant)
        .map(|m| m.id.clone())
}

/// Before a push: the latest answer's checkpoint, then the files as they
/// are now when they changed since (whoever changed them). The caller
/// holds the lock.
pub async fn take_current_locked(
    handle: &ProjectHandle,
    checkpoints: &Checkpoints,
) -> Result<(), CheckpointError> {
    let latest = handle.session.read(latest_answer);
    if let Some(latest) = &latest {
        checkpoints.ensure_answer_locked(latest).await?;
    }
    checkpoints
        .take_locked(CheckpointKind::Edits, latest.as_deref(), true, &[])
        .await?;
    Ok(())
}

/// After answer `message_id`: once its actions are done (or a newer
/// message began, which takes the checkpoint itself), commit the files.
pub fn after_answer(handle: &Arc<ProjectHandle>, message_id: &str) {
    let Some(checkpoints) = checkpoints(handle) else {
        return;
    };
    let (handle, message_id) = (Arc::clone(handle), message_id.to_owned());
    tokio::spawn(async move {
        let started = tokio::time::Instant::now();
        loop {
            let (busy, latest) = handle.session.read(|s| (s.is_busy(), latest_answer(s)));
            if latest.as_deref() != Some(message_id.as_str()) {
                return;
            }
            if !busy || started.elapsed() > LONGEST_WAIT {
                break;
            }
            tokio::time::sleep(POLL).await;
        }
        let _guard = checkpoints.lock().await;
        if let Err(error) = checkpoints.ensure_answer_locked(&message_id).await {
            tracing::warn!(project = %handle.id, %error, "the answer's checkpoint could not be taken");
        }
    });
}

/// Before the person's next message: the latest answer's checkpoint (if
/// its actions have not settled yet), then their own edits since, as a
/// checkpoint of their own.
pub async fn before_message(handle: &ProjectHandle) {
    let Some(checkpoints) = checkpoints(handle) else {
        return;
    };
    let latest = handle.session.read(latest_answer);
    let edited = !handle.conversation().user_edits.is_empty();
    let _guard = checkpoints.lock().await;
    let outcome = async {
        if let Some(latest) = &latest {
            checkpoints.ensure_answer_locked(latest).await?;
        }
        if edited {
            checkpoints
                .take_locked(CheckpointKind::Edits, latest.as_deref(), true, &[])
                .await?;
        }
        Ok::<(), CheckpointError>(())
    }
    .await;
    if let Err(error) = outcome {
        tracing::warn!(project = %handle.id, %error, "the checkpoint before a message could not be taken");
    }
}

/// Before an automatic fix of answer `message_id`.
pub async fn before_fix(handle: &ProjectHandle, message_id: &str) {
    let Some(checkpoints) = checkpoints(handle) else {
        return;
    };
    let _guard = checkpoints.lock().await;
    let outcome = async {
        checkpoints.ensure_answer_locked(message_id).await?;
        checkpoints
            .take_locked(CheckpointKind::BeforeFix, Some(message_id), true, &[])
            .await
            .map(drop)
    }
    .await;
    if let Err(error) = outcome {
        tracing::warn!(project = %handle.id, %error, "the checkpoint before a fix could not be taken");
    }
}
