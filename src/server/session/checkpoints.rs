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
pub(crate) use rewind::write_back;
pub use rewind::{Restored, redo, restore};

use super::project::ProjectHandle;
use crate::runtime::session::{Role, SessionState};
use crate::server::checkpoint::{CheckpointError, Checkpoints};
use crate::server::store::CheckpointKind;

/// How often the wait for an answer's actions looks at the session.
const POLL: Duration = Duration::from_millis(250);
/// The longest an answer's checkpoint waits for its actions.
const LONGEST_WAIT: Duration = Duration::from_secs(15 * 60);

/// The project's checkpoints (none in tests of the session alone).
pub(crate) fn checkpoints(handle: &ProjectHandle) -> Option<Arc<Checkpoints>> {
    handle.checkpoints.get().cloned()
}

pub(crate) fn latest_answer(state: &SessionState) -> Option<String> {
    state
        .messages
        .iter()
        .rev()
        .find(|m| m.role == Role::Assistant)
        .map(|m| m.id.clone())
}

/// What the person asked for with answer `answer`: the text of the user
/// message before it in its chat (a checkpoint's commit message).
fn request_of(state: &SessionState, answer: &str) -> Option<String> {
    let index = state.messages.iter().position(|m| m.id == answer)?;
    let chat = &state.messages[index].chat;
    let asked = state.messages[..index]
        .iter()
        .rev()
        .find(|m| m.role == Role::User && &m.chat == chat)?;
    Some(match asked.automatic {
        Some(_) => "Fix the failure Rivet reported".to_owned(),
        None => asked.text(),
    })
}

/// Takes answer `message_id`'s checkpoint unless it has one. The caller
/// holds the lock.
async fn ensure_answer(
    handle: &ProjectHandle,
    checkpoints: &Checkpoints,
    message_id: &str,
) -> Result<(), CheckpointError> {
    let request = handle.session.read(|s| request_of(s, message_id));
    checkpoints
        .ensure_answer_locked(message_id, request.as_deref())
        .await
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
        ensure_answer(handle, checkpoints, latest).await?;
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
        if let Err(error) = ensure_answer(&handle, &checkpoints, &message_id).await {
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
    let edited = handle.conversation().has_user_edits();
    let _guard = checkpoints.lock().await;
    let outcome = async {
        if let Some(latest) = &latest {
            ensure_answer(handle, &checkpoints, latest).await?;
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
        ensure_answer(handle, &checkpoints, message_id).await?;
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::session::{ChatId, Message};

    #[test]
    fn an_answers_request_is_the_user_message_before_it_in_its_chat() {
        let mut state = SessionState::default();
        let other = ChatId::numbered(2);
        let mut side = Message::user("m3", "Explain the router");
        side.chat = other.clone();
        let mut side_answer = Message::assistant("m4");
        side_answer.chat = other;
        state.messages = vec![
            Message::user("m1", "Build a todo app"),
            Message::assistant("m2"),
            side,
            Message::assistant("m5"),
            side_answer,
        ];
        let request = |id| request_of(&state, id);
        assert_eq!(request("m2").as_deref(), Some("Build a todo app"));
        assert_eq!(request("m5").as_deref(), Some("Build a todo app"));
        assert_eq!(request("m4").as_deref(), Some("Explain the router"));
        assert_eq!(request("m9"), None);
    }
}
