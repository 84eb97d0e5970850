//! The `git` binary over a repository Rivet owns: its own `GIT_DIR` (outside
//! the project, so code in the sandbox cannot touch it) and the project's
//! workspace as the work tree. Nothing of the host's git setup applies: the
//! environment is cleared, no system or global configuration is read, hooks
//! and signing are off and the author is the one `[git]` names. `git` itself is found by
//! `host_tools` (absolute directories only), never through the workspace.
//!
//! Checkpoints are commits chained on one branch, so none is ever
//! unreachable (garbage collection keeps them all).

use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};

use tokio::io::AsyncWriteExt;
use tokio::process::Command;

use crate::runtime::tree::SKIPPED_DIRS;
use crate::server::host_tools::{self, HostToolError};

/// The branch every checkpoint is chained on.
pub(super) const BRANCH: &str = "refs/heads/checkpoints";

/// Waits for a turn to run git: at most half the machine's cores (one at
/// least) run it at once, in the whole IDE. A hundred answers ending
/// together take a checkpoint each, several runs of git apiece; run all at
/// once they filled every core, and each spawn held an IDE thread until
/// its child could run, so the answers still streaming stalled.
async fn git_turn() -> Option<tokio::sync::SemaphorePermit<'static>> {
    static TURNS: std::sync::OnceLock<tokio::sync::Semaphore> = std::sync::OnceLock::new();
    let turns = TURNS.get_or_init(|| {
        let cores = std::thread::available_parallelism().map_or(1, usize::from);
        tokio::sync::Semaphore::new((cores / 2).max(1))
    });
    // Never closed, so a turn always comes.
    turns.acquire().await.ok()
}

/// Runs `command` in its turn and collects its output, whatever its exit
/// status.
async fn output(mut command: Command) -> Result<Output, GitError> {
    let _turn = git_turn().await;
    command.output().await.map_err(GitError::Spawn)
}

#[derive(Debug, thiserror::Error)]
pub enum GitError {
    #[error("cannot run git: {0}")]
    Spawn(#[source] std::io::Error),
    #[error("cannot run git: {0}")]
    Missing(#[from] HostToolError),
    #[error("git {command} failed in {repo}: {stderr}")]
    Failed {
        command: String,
        repo: PathBuf,
        stderr: String,
    },
    #[error("git {command} printed something unexpected: {output}")]
    Unexpected { command: String, output: String },
    #[error("cannot prepare the checkpoint repository {path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// How a file differs between two checkpoints.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Change {
    /// Added or modified: write the target's content.
    Write(String),
    /// Not in the target: remove it.
    Remove(String),
}

/// Who checkpoints are written by (`[git] author_name`, `author_email`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Author {
    name: String,
    email: String,
}

impl Author {
    /// The name and address as given, without the characters git's
    /// `Name <email>` line cannot hold; Rivet's own where nothing is left.
    pub fn new(name: &str, email: &str) -> Author {
        let clean = |text: &str, fallback: &str| {
            let kept: String = text
                .chars()
                .filter(|c| !matches!(c, '<' | '>') && !c.is_control())
                .collect();
            let kept = kept.trim();
            if kept.is_empty() { fallback } else { kept }.to_owned()
        };
        Author {
            name: clean(name, "Rivet"),
            email: clean(email, "rivet@localhost"),
        }
    }
}

impl Default for Author {
    fn default() -> Author {
        Author::new("", "")
    }
}

/// One checkpoint repository.
#[derive(Clone, Debug)]
pub struct Repo {
    git_dir: PathBuf,
    work_tree: PathBuf,
    author: Author,
    /// The skipped folders stay out of its commits (checkpoints); off for a
    /// published site, whose build may hold a `build/` or `dist/` folder.
    skips: bool,
}

impl Repo {
    pub fn new(git_dir: impl Into<PathBuf>, work_tree: impl Into<PathBuf>) -> Repo {
        Repo {
            git_dir: git_dir.into(),
            work_tree: work_tree.into(),
            author: Author::default(),
            skips: true,
        }
    }

    /// The same repository, committing every file of its work tree: no
    /// folder is left out as a checkpoint leaves out build output.
    pub fn with_every_folder(mut self) -> Repo {
        self.skips = false;
        self
    }

    /// The same repository, its commits written by `author`.
    pub fn with_author(mut self, author: Author) -> Repo {
        self.author = author;
        self
    }

    pub fn git_dir(&self) -> &Path {
        &self.git_dir
    }

    fn command(&self, args: &[&str]) -> Result<Command, GitError> {
        let mut command = Command::new(host_tools::find("git")?);
        command
            .env_clear()
            .env("PATH", host_tools::path_env())
            .env("LC_ALL", "C")
            .env("GIT_DIR", &self.git_dir)
            .env("GIT_WORK_TREE", &self.work_tree)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_TERMINAL_PROMPT", "0")
            .env("GIT_AUTHOR_NAME", &self.author.name)
            .env("GIT_AUTHOR_EMAIL", &self.author.email)
            .env("GIT_COMMITTER_NAME", &self.author.name)
            .env("GIT_COMMITTER_EMAIL", &self.author.email)
            .args(["-c", "core.hooksPath=/dev/null"])
            .args(["-c", "commit.gpgSign=false"])
            .args(["-c", "core.autocrlf=false"])
            .args(["-c", "core.quotePath=false"])
            // The workspace belongs to the sandbox user when Rivet runs as root.
            .args(["-c", "safe.directory=*"])
            .args(args)
            .current_dir(&self.work_tree)
            .stdin(Stdio::null())
            .kill_on_drop(true);
        Ok(command)
    }

    /// Runs git and returns its standard output.
    async fn run(&self, args: &[&str]) -> Result<Vec<u8>, GitError> {
        let command = self.command(args)?;
        Ok(self.finish(command, args, &[]).await?.stdout)
    }

    /// Runs a prepared git command with `input` on its standard input;
    /// fails unless it exits with 0 (or 1 for `check-ignore`, which means
    /// "nothing is ignored").
    async fn finish(
        &self,
        mut command: Command,
        args: &[&str],
        input: &[u8],
    ) -> Result<Output, GitError> {
        command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let _turn = git_turn().await;
        let mut child = command.spawn().map_err(GitError::Spawn)?;
        let stdin = child.stdin.take();
        let write = async move {
            if let Some(mut stdin) = stdin {
                stdin.write_all(input).await?;
            }
            Ok::<(), std::io::Error>(())
        };
        let (written, output) = tokio::join!(write, child.wait_with_output());
        let output = output.map_err(GitError::Spawn)?;
        let nothing_ignored =
            args.first() == Some(&"check-ignore") && output.status.code() == Some(1);
        if !output.status.success() && !nothing_ignored {
            return Err(self.failure(&args.join(" "), &output.stderr));
        }
        written.map_err(GitError::Spawn)?;
        Ok(output)
    }

    fn failure(&self, command: &str, stderr: &[u8]) -> GitError {
        GitError::Failed {
            command: command.to_owned(),
            repo: self.git_dir.clone(),
            stderr: String::from_utf8_lossy(stderr).trim().to_owned(),
        }
    }

    async fn run_line(&self, args: &[&str]) -> Result<String, GitError> {
        let out = self.run(args).await?;
        Ok(String::from_utf8_lossy(&out).trim().to_owned())
    }

    /// Creates the repository if it does not exist yet.
    pub async fn ensure(&self) -> Result<(), GitError> {
        if !self.git_dir.join("HEAD").exists() {
            let dir = self.git_dir.display().to_string();
            // No template: the sample hooks and the rest would be a dozen files
            // more per project, and hooks never run (`core.hooksPath`).
            let mut init = self.command(&["init", "-q", "--bare", "--template=", &dir])?;
            init.env_remove("GIT_DIR").env_remove("GIT_WORK_TREE");
            let output = output(init).await?;
            if !output.status.success() {
                return Err(self.failure("init", &output.stderr));
            }
        }
        if self.skips {
            self.write_excludes()?;
        }
        Ok(())
    }

    /// The folders the IDE never looks into stay out of checkpoints too
    /// (the one list in `runtime::tree`).
    fn write_excludes(&self) -> Result<(), GitError> {
        let info = self.git_dir.join("info");
        let io = |source| GitError::Io {
            path: info.clone(),
            source,
        };
        std::fs::create_dir_all(&info).map_err(io)?;
        let mut rules = String::from("# Written by Rivet from runtime::tree::SKIPPED_DIRS.\n");
        for dir in SKIPPED_DIRS {
            rules.push_str(&format!("{dir}/\n"));
        }
        let exclude = info.join("exclude");
        // Every checkpoint comes here: the file is written (and synced)
        // only when it is missing or says something else.
        if std::fs::read(&exclude).is_ok_and(|kept| kept == rules.as_bytes()) {
            return Ok(());
        }
        crate::server::atomic::write(&exclude, rules.as_bytes()).map_err(io)
    }

    /// The latest checkpoint on the branch, if any.
    pub async fn head(&self) -> Result<Option<String>, GitError> {
        let out = output(self.command(&["rev-parse", "-q", "--verify", BRANCH])?).await?;
        let line = String::from_utf8_lossy(&out.stdout).trim().to_owned();
        Ok((out.status.success() && !line.is_empty()).then_some(line))
    }

    /// The tree the work tree holds now (staging every change first).
    async fn current_tree(&self) -> Result<String, GitError> {
        self.stage().await?;
        self.run_line(&["write-tree"]).await
    }

    /// Commits the work tree as it is now, unless it equals the latest
    /// checkpoint, whose commit is then returned. The repository is
    /// created on first use.
    pub async fn snapshot(&self, message: &str) -> Result<String, GitError> {
        Ok(self.snapshot_if_changed(message).await?.commit)
    }

    /// [`Repo::snapshot`], saying whether it made a new commit.
    pub async fn snapshot_if_changed(&self, message: &str) -> Result<Snapshot, GitError> {
        self.ensure().await?;
        let tree = self.current_tree().await?;
        let parent = self.tip().await?;
        if let Some(parent) = &parent
            && parent.tree == tree
        {
            return Ok(Snapshot {
                commit: parent.commit.clone(),
                new: false,
            });
        }
        let mut args = vec!["commit-tree", tree.as_str(), "-m", message];
        if let Some(parent) = &parent {
            args.extend(["-p", parent.commit.as_str()]);
        }
        let commit = self.run_line(&args).await?;
        self.run(&["update-ref", BRANCH, &commit]).await?;
        Ok(Snapshot { commit, new: true })
    }

    /// The latest checkpoint's commit and tree, in one run of git.
    async fn tip(&self) -> Result<Option<Tip>, GitError> {
        let line = self
            .run_line(&["for-each-ref", "--format=%(objectname) %(tree)", BRANCH])
            .await?;
        Ok(line.split_once(' ').map(|(commit, tree)| Tip {
            commit: commit.to_owned(),
            tree: tree.to_owned(),
        }))
    }

    /// Whether the work tree differs from the latest checkpoint.
    pub async fn changed(&self) -> Result<bool, GitError> {
        self.ensure().await?;
        let tree = self.current_tree().await?;
        Ok(self.tip().await?.is_none_or(|tip| tip.tree != tree))
    }

    /// Fails unless `commit` is a whole commit of this repository (checked
    /// before anything is changed).
    pub async fn verify(&self, commit: &str) -> Result<(), GitError> {
        if !self.git_dir.join("HEAD").exists() {
            return Err(GitError::Failed {
                command: "rev-parse".into(),
                repo: self.git_dir.clone(),
                stderr: "the repository does not exist".into(),
            });
        }
        self.run(&[
            "rev-parse",
            "--verify",
            "-q",
            &format!("{commit}^{{commit}}"),
        ])
        .await?;
        // Every object of the commit's tree must be readable.
        self.run(&["ls-tree", "-r", "-l", commit]).await.map(drop)
    }

    /// What turns checkpoint `from` into checkpoint `to`.
    pub async fn changes(&self, from: &str, to: &str) -> Result<Vec<Change>, GitError> {
        let out = self
            .run(&[
                "diff-tree",
                "-r",
                "-z",
                "--no-renames",
                // Gitlinks of older checkpoints: never files to write.
                "--ignore-submodules",
                "--name-status",
                from,
                to,
            ])
            .await?;
        parse_name_status(&out)
    }

    /// Every file of a checkpoint (not the gitlinks an older checkpoint of
    /// a nested repository may hold).
    pub async fn files(&self, commit: &str) -> Result<Vec<String>, GitError> {
        let out = self
            .run(&["ls-tree", "-r", "-z", "--full-tree", commit])
            .await?;
        Ok(out
            .split(|b| *b == 0)
            .filter_map(|entry| {
                let entry = String::from_utf8_lossy(entry);
                let (meta, path) = entry.split_once('\t')?;
                (meta.split(' ').nth(1) == Some("blob")).then(|| path.to_owned())
            })
            .collect())
    }

    /// A file's content in a checkpoint.
    pub async fn read(&self, commit: &str, path: &str) -> Result<Vec<u8>, GitError> {
        self.run(&["cat-file", "blob", &format!("{commit}:{path}")])
            .await
    }

    /// A copy of the whole repository at `git_dir` (objects are hard-linked
    /// where the file system allows), for a fork working on `work_tree`.
    pub async fn clone_to(&self, git_dir: &Path, work_tree: &Path) -> Result<Repo, GitError> {
        let (from, to) = (
            self.git_dir.display().to_string(),
            git_dir.display().to_string(),
        );
        let mut clone = self.command(&["clone", "-q", "--bare", "--local", &from, &to])?;
        clone.env_remove("GIT_DIR").env_remove("GIT_WORK_TREE");
        let output = output(clone).await?;
        if !output.status.success() {
            return Err(self.failure("clone", &output.stderr));
        }
        let repo = Repo::new(git_dir, work_tree).with_author(self.author.clone());
        repo.ensure().await?;
        Ok(repo)
    }
}

/// `diff-tree -z --name-status` output: a status, then a path, each ended by NUL.
fn parse_name_status(out: &[u8]) -> Result<Vec<Change>, GitError> {
    let mut fields = out.split(|b| *b == 0).filter(|f| !f.is_empty());
    let mut changes = Vec::new();
    while let Some(status) = fields.next() {
        let unexpected = || GitError::Unexpected {
            command: "diff-tree".into(),
            output: String::from_utf8_lossy(out).into_owned(),
        };
        let path = String::from_utf8_lossy(fields.next().ok_or_else(unexpected)?).into_owned();
        match status.first() {
            Some(b'D') => changes.push(Change::Remove(path)),
            Some(b'A' | b'M' | b'T') => changes.push(Change::Write(path)),
            _ => return Err(unexpected()),
        }
    }
    Ok(changes)
}

mod nested;
pub mod sync;

/// What [`Repo::snapshot_if_changed`] did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Snapshot {
    pub commit: String,
    /// False when the work tree equalled the latest checkpoint.
    pub new: bool,
}

/// The branch's latest commit and its tree.
struct Tip {
    commit: String,
    tree: String,
}

#[cfg(test)]
mod tests;
