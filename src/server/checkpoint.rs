//! Checkpoints: the project's files as a commit after every answer (and
//! before an automatic fix, and of the person's own edits), in a git
//! repository Rivet keeps for the project at
//! `<data_dir>/projects/<id>/checkpoints.git`, outside the sandbox. The
//! store records which commit belongs to which message. `git.rs` is the
//! repository, `apply.rs` writes a checkpoint's files through the project's
//! runtime.
//!
//! This is the layer below the session: it knows repositories and the
//! store, not open projects. When checkpoints are taken, and "Restore to
//! here", Redo and "Fork from here", are the session's
//! (`session/checkpoints.rs`).

mod apply;
pub mod git;

pub use apply::{Applied, ApplyError, apply};

use self::git::{GitError, Repo};
use crate::runtime::project::ProjectId;
use crate::server::state::AppState;
use crate::server::store::{CheckpointKind, CheckpointRow, Store, StoreError};

#[derive(Debug, thiserror::Error)]
pub enum CheckpointError {
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

    /// One git operation (and one restore) at a time: the methods that say
    /// "the caller holds the lock" expect this guard to be held.
    pub async fn lock(&self) -> tokio::sync::MutexGuard<'_, ()> {
        self.lock.lock().await
    }

    pub fn repo_error(&self, source: GitError) -> CheckpointError {
        CheckpointError::Repo {
            path: self.repo.git_dir().display().to_string(),
            source,
        }
    }

    /// Commits the files now and records it; `None` when `only_if_changed`
    /// and nothing changed since the latest checkpoint. The caller holds
    /// the lock.
    pub async fn take_locked(
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

    /// Takes the answer's checkpoint unless it has one. The caller holds the
    /// lock.
    pub async fn ensure_answer_locked(&self, message_id: &str) -> Result<(), CheckpointError> {
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
