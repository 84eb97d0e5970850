//! Checkpoints: the project's files as a commit after every answer (and
//! before an automatic fix, and of the person's own edits), in a git
//! repository Rivet keeps for the project at
//! `<data_dir>/projects/<id>/checkpoints.git`, outside the sandbox. The
//! store records which commit belongs to which message. "Restore to here"
//! (`rewind.rs`) puts a message's files back and marks the later messages
//! undone, Redo undoes that, and "Fork from here" (`fork.rs`) starts a new
//! project from a message. `git.rs` is the repository, `apply.rs` writes a
//! checkpoint's files through the project's runtime.

mod apply;
mod fork;
pub mod git;
mod rewind;

use std::sync::Arc;
use std::time::Duration;

pub use apply::{Applied, ApplyError, apply};
pub use fork::fork;
pub use rewind::{Restored, redo, restore};

use self::git::{GitError, Repo};
use crate::runtime::host::RuntimeError;
use crate::runtime::project::ProjectId;
use crate::runtime::session::{Role, SessionState};
use crate::server::projects::ProjectError;
use crate::server::session::ProjectHandle;
use crate::server::session::api::ApiError;
use crate::server::state::AppState;
use crate::server::store::{CheckpointKind, CheckpointRow, Store, StoreError};

/// How often the wait for an answer's actions looks at the session.
const POLL: Duration = Duration::from_millis(250);
/// The longest an answer's checkpoint waits for its actions.
const LONGEST_WAIT: Duration = Duration::from_secs(15 * 60);

#[derive(Debug, thiserror::Error)]
pub enum CheckpointError {
    #[error(transparent)]
    Api(#[from] ApiError),
    #[error(transparent)]
    Project(#[from] ProjectError),
    #[error(transparent)]
    Runtime(#[from] RuntimeError),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(
        "the checkpoint repository {path} is missing or damaged ({source}); the project's files were left as they are"
    )]
    Repo { path: String, source: GitError },
    #[error("checkpoints are not available for this project")]
    Unavailable,
    #[error("no message {0} in this project")]
    MessageNotFound(String),
    #[error("message {0} is not an answer")]
    NotAnAnswer(String),
    #[error("message {0} was undone; redo first")]
    Undone(String),
    #[error("there is no checkpoint of message {0}")]
    NoCheckpoint(String),
    #[error("there is nothing to redo after message {0}")]
    NothingToRedo(String),
}

/// A project's checkpoint repository and its record in the store.
pub struct Checkpoints {
    repo: Repo,
    store: Store,
    project: String,
    /// One git operation (and one restore) at a time.
    lock: tokio::sync::Mutex<()>,
}

impl Checkpoints {
    pub fn new(repo: Repo, store: Store, project: &ProjectId) -> Checkpoints {
        Checkpoints {
            repo,
            store,
            project: project.as_str().to_owned(),
            lock: tokio::sync::Mutex::new(()),
        }
    }

    /// The checkpoints of project `id` on this server.
    pub fn for_project(state: &AppState, id: &ProjectId) -> Checkpoints {
        let repo = Repo::new(
            state.projects.dir(id).join("checkpoints.git"),
            state.sandbox.workspace_dir(id),
        );
        Checkpoints::new(repo, state.store.clone(), id)
    }

    pub fn repo(&self) -> &Repo {
        &self.repo
    }

    fn repo_error(&self, source: GitError) -> CheckpointError {
        CheckpointError::Repo {
            path: self.repo.git_dir().display().to_string(),
            source,
        }
    }

    /// Commits the files now and records it; `None` when `only_if_changed`
    /// and nothing changed since the latest checkpoint. The caller holds
    /// the lock.
    async fn take_locked(
        &self,
        kind: CheckpointKind,
        message_id: Option<&str>,
        only_if_changed: bool,
        undone: &[String],
    ) -> Result<Option<CheckpointRow>, CheckpointError> {
        let before = self.repo.head().await.map_err(|e| self.repo_error(e))?;
        let label = format!("{} {}", kind.as_str(), message_id.unwrap_or("-"));
        let commit = self
            .repo
            .snapshot(&label)
            .await
            .map_err(|e| self.repo_error(e))?;
        if only_if_changed && before.as_deref() == Some(commit.as_str()) {
            return Ok(None);
        }
        let row = self
            .store
            .add_checkpoint(&self.project, kind, message_id, &commit, undone)
            .await?;
        Ok(Some(row))
    }

    /// Takes the answer's checkpoint unless it has one.
    async fn ensure_answer_locked(&self, message_id: &str) -> Result<(), CheckpointError> {
        let existing = self
            .store
            .checkpoint_for(&self.project, CheckpointKind::Answer, message_id)
            .await?;
        if existing.is_none() {
            self.take_locked(CheckpointKind::Answer, Some(message_id), false, &[])
                .await?;
        }
        Ok(())
    }
}

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
        let _guard = checkpoints.lock.lock().await;
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
    let _guard = checkpoints.lock.lock().await;
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
    let _guard = checkpoints.lock.lock().await;
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

/// [`restore`] for the UI's server functions, which find the state in
/// their context.
pub async fn restore_here(
    project: &ProjectId,
    message_id: &str,
) -> Result<Restored, CheckpointError> {
    restore(
        &leptos::prelude::expect_context::<AppState>(),
        project.as_str(),
        message_id,
    )
    .await
}

/// [`redo`] for the UI's server functions.
pub async fn redo_here(project: &ProjectId, message_id: &str) -> Result<Restored, CheckpointError> {
    redo(
        &leptos::prelude::expect_context::<AppState>(),
        project.as_str(),
        message_id,
    )
    .await
}

/// [`fork`] for the UI's server functions.
pub async fn fork_here(
    project: &ProjectId,
    message_id: &str,
) -> Result<crate::server::store::ProjectRow, CheckpointError> {
    fork(
        &leptos::prelude::expect_context::<AppState>(),
        project.as_str(),
        message_id,
    )
    .await
}
