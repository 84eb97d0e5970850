//! Puts a checkpoint's files back through the project's runtime, so they
//! are written as the sandbox writes every file (its user, its modes, one
//! atomic rename each) and the running dev server sees them like any edit.
//! Folders left out of checkpoints (`node_modules`, build output) are never
//! touched: they are in neither tree.

use super::git::{Change, GitError, Repo};
use crate::runtime::host::{Runtime, RuntimeError};
use crate::runtime::session::SessionEvent;

#[derive(Debug, thiserror::Error)]
pub enum ApplyError {
    #[error(transparent)]
    Git(#[from] GitError),
    #[error(transparent)]
    Runtime(#[from] RuntimeError),
}

/// What a restore changed.
#[derive(Debug, Default, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Applied {
    pub written: Vec<String>,
    pub removed: Vec<String>,
}

impl Applied {
    /// The session events that tell the file tree and the editor.
    pub fn events(&self) -> Vec<SessionEvent> {
        let written = self.written.iter().map(|path| SessionEvent::FileWritten {
            path: path.clone(),
            by_model: false,
        });
        let removed = self
            .removed
            .iter()
            .map(|path| SessionEvent::FileRemoved { path: path.clone() });
        written.chain(removed).collect()
    }
}

/// Turns the files of checkpoint `from` (what the work tree holds now)
/// into those of checkpoint `to`.
pub async fn apply(
    repo: &Repo,
    runtime: &dyn Runtime,
    from: &str,
    to: &str,
) -> Result<Applied, ApplyError> {
    let mut applied = Applied::default();
    for change in repo.changes(from, to).await? {
        match change {
            Change::Write(path) => {
                let content = repo.read(to, &path).await?;
                runtime.write_file(&path, &content).await?;
                applied.written.push(path);
            }
            Change::Remove(path) => {
                match runtime.remove(&path).await {
                    Ok(()) | Err(RuntimeError::NotFound { .. }) => {}
                    Err(error) => return Err(error.into()),
                }
                applied.removed.push(path);
            }
        }
    }
    Ok(applied)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::host::fake::FakeRuntime;

    #[tokio::test]
    async fn files_added_later_are_removed_and_changed_ones_rewritten() {
        let dir = tempfile::tempdir().unwrap();
        let work = dir.path().join("work");
        std::fs::create_dir_all(&work).unwrap();
        let repo = Repo::new(dir.path().join("c.git"), &work);
        std::fs::write(work.join("a.txt"), "v1").unwrap();
        let first = repo.snapshot("one").await.unwrap();
        std::fs::write(work.join("a.txt"), "v2").unwrap();
        std::fs::write(work.join("b.txt"), "later").unwrap();
        let second = repo.snapshot("two").await.unwrap();
        let runtime = FakeRuntime::new();
        runtime.write_file("a.txt", b"v2").await.unwrap();
        runtime.write_file("b.txt", b"later").await.unwrap();
        runtime
            .write_file("node_modules/x.js", b"dep")
            .await
            .unwrap();
        let applied = apply(&repo, &runtime, &second, &first).await.unwrap();
        assert_eq!(applied.written, ["a.txt"]);
        assert_eq!(applied.removed, ["b.txt"]);
        assert_eq!(runtime.read_file("a.txt").await.unwrap(), b"v1");
        assert!(runtime.read_file("b.txt").await.is_err());
        assert_eq!(
            runtime.read_file("node_modules/x.js").await.unwrap(),
            b"dep"
        );
        assert_eq!(applied.events().len(), 2);
    }
}
