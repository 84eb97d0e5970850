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

use self::git::{Author, GitError, Repo};
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
        let git = &state.config.git;
        let repo = Repo::new(
            state.projects.dir(id).join("checkpoints.git"),
            state.sandbox.workspace_dir(id),
        )
        .with_author(Author::new(&git.author_name, &git.author_email));
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
        let message = commit_message(kind, message_id, None);
        self.commit_locked(kind, message_id, &message, only_if_changed, undone)
            .await
    }

    async fn commit_locked(
        &self,
        kind: CheckpointKind,
        message_id: Option<&str>,
        message: &str,
        only_if_changed: bool,
        undone: &[String],
    ) -> Result<Option<CheckpointRow>, CheckpointError> {
        let snapshot = self
            .repo
            .snapshot_if_changed(message)
            .await
            .map_err(|e| self.repo_error(e))?;
        if only_if_changed && !snapshot.new {
            return Ok(None);
        }
        let row = self
            .store
            .add_checkpoint(&self.project, kind, message_id, &snapshot.commit, undone)
            .await?;
        Ok(Some(row))
    }

    /// Takes the answer's checkpoint unless it has one; `request` is what
    /// the person asked for, the commit's message. The caller holds the
    /// lock.
    pub async fn ensure_answer_locked(
        &self,
        message_id: &str,
        request: Option<&str>,
    ) -> Result<(), CheckpointError> {
        let existing = self
            .store
            .checkpoint_for(&self.project, CheckpointKind::Answer, message_id)
            .await?;
        if existing.is_none() {
            let kind = CheckpointKind::Answer;
            let message = commit_message(kind, Some(message_id), request);
            self.commit_locked(kind, Some(message_id), &message, false, &[])
                .await?;
        }
        Ok(())
    }

    /// Records `commit`, made by another operation (a pull), as the latest
    /// checkpoint. The caller holds the lock.
    pub async fn record_locked(
        &self,
        kind: CheckpointKind,
        message_id: Option<&str>,
        commit: &str,
    ) -> Result<CheckpointRow, CheckpointError> {
        Ok(self
            .store
            .add_checkpoint(&self.project, kind, message_id, commit, &[])
            .await?)
    }
}

/// The longest first line of a checkpoint's commit message.
const SUBJECT_CHARS: usize = 72;

/// A checkpoint's commit message: what the person asked for (its first
/// line, shortened) or what the checkpoint is, then a trailer naming the
/// checkpoint's kind and message.
pub fn commit_message(
    kind: CheckpointKind,
    message_id: Option<&str>,
    request: Option<&str>,
) -> String {
    let id = message_id.unwrap_or("-");
    let subject = match (kind, request.map(shorten).filter(|r| !r.is_empty())) {
        (CheckpointKind::Answer, Some(request)) => request,
        (CheckpointKind::Answer, None) => format!("Answer {id}"),
        (CheckpointKind::BeforeFix, _) => format!("Before an automatic fix of {id}"),
        (CheckpointKind::Edits, _) => "Edits since the last answer".to_owned(),
        (CheckpointKind::BeforeRestore, _) => format!("Before restoring to {id}"),
        (CheckpointKind::BeforeRedo, _) => format!("Before redoing {id}"),
        (CheckpointKind::Pull, _) => "Pulled from the remote".to_owned(),
    };
    format!("{subject}\n\nRivet-Checkpoint: {} {id}\n", kind.as_str())
}

/// The first line with text, its spaces collapsed, cut to [`SUBJECT_CHARS`].
fn shorten(text: &str) -> String {
    let line = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
    let words: Vec<&str> = line.split_whitespace().collect();
    let line = words.join(" ");
    if line.chars().count() <= SUBJECT_CHARS {
        return line;
    }
    let cut: String = line.chars().take(SUBJECT_CHARS - 1).collect();
    format!("{}…", cut.trim_end())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_checkpoint_commit_says_what_the_person_asked_for() {
        let message = commit_message(
            CheckpointKind::Answer,
            Some("m2"),
            Some("\n  Build a   todo app\nwith React"),
        );
        assert_eq!(message, "Build a todo app\n\nRivet-Checkpoint: answer m2\n");
        let long = "word ".repeat(40);
        let message = commit_message(CheckpointKind::Answer, Some("m4"), Some(&long));
        let subject = message.lines().next().unwrap();
        assert_eq!(subject.chars().count(), SUBJECT_CHARS);
        assert!(subject.ends_with('…'), "{subject}");
        let message = commit_message(CheckpointKind::Answer, Some("m6"), None);
        assert!(message.starts_with("Answer m6\n"), "{message}");
        let message = commit_message(CheckpointKind::BeforeRestore, Some("m2"), Some("x"));
        assert!(message.starts_with("Before restoring to m2\n"), "{message}");
    }
}
