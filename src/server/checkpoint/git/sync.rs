//! Pushing to and pulling from the git remote the owner connected. The
//! token travels in an `Authorization` header given to this one `git push`
//! or `git fetch` through `GIT_CONFIG_*` variables: never on a command
//! line, in a URL, in `.git/config` or in the project. Only HTTP(S) is
//! allowed, redirects are not followed (the header would go to another
//! host), and no credential helper or prompt is asked.
//!
//! A pull is a fetch into a ref of Rivet's (`refs/rivet/remote`), then a
//! fast-forward or a merge commit made with `git merge-tree`, which needs
//! no work tree: the caller writes the merged files back through the
//! project's runtime. A conflict changes nothing. A status's fetch, made
//! without holding the checkpoints (a silent remote takes up to
//! [`REMOTE_TIMEOUT`]), goes to a ref of its own ([`Repo::peek`]).

use std::process::Output;
use std::time::Duration;

use base64::Engine;
use tokio::process::Command;

use super::{BRANCH, GitError, Repo};

/// A push or fetch that takes longer is stopped.
const REMOTE_TIMEOUT: Duration = Duration::from_secs(120);
/// Where the remote branch's latest fetched commit is kept.
const FETCHED: &str = "refs/rivet/remote";
/// Where a status's fetch puts its commit, one ref per fetch (numbered by
/// [`PEEKS`]) and removed once read.
const PEEKED: &str = "refs/rivet/peek";
static PEEKS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// Who pushes: the remote's user name (any, for most token schemes) and
/// its token.
pub struct Credentials<'a> {
    pub username: &'a str,
    pub token: &'a str,
}

#[derive(Debug, thiserror::Error)]
pub enum SyncError {
    #[error("the remote has commits this project does not: pull first")]
    PullFirst,
    #[error("the remote's changes conflict with the project's in {}; nothing was changed", .0.join(", "))]
    Conflict(Vec<String>),
    #[error("the remote has no branch {0}")]
    NoBranch(String),
    #[error("the remote refused the user name and token (HTTP 401 or 403): {0}")]
    Refused(String),
    #[error("the remote cannot be reached: {0}")]
    Unreachable(String),
    #[error("git could not reach an agreement with the remote: {0}")]
    Failed(String),
    #[error("the project has no checkpoint to push yet")]
    NothingToPush,
    #[error(transparent)]
    Git(#[from] GitError),
}

/// What a merge of the fetched commit did to the checkpoint branch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Merge {
    /// The project already has every commit of the remote.
    UpToDate,
    /// The branch moved on to the remote's commit.
    FastForward(String),
    /// A merge commit of both.
    Merged(String),
}

/// How far the project and the remote are apart, in commits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct Divergence {
    pub ahead: u64,
    pub behind: u64,
}

impl Repo {
    /// A git command that talks to a remote: HTTP(S) only, no redirects,
    /// no helper, and the token (if any) as a header.
    fn remote_command(
        &self,
        args: &[&str],
        credentials: Option<Credentials<'_>>,
    ) -> Result<Command, GitError> {
        let mut command = self.command(args)?;
        let header = credentials.map(|c| {
            let pair = format!("{}:{}", c.username, c.token);
            format!(
                "Authorization: Basic {}",
                base64::engine::general_purpose::STANDARD.encode(pair)
            )
        });
        let mut config: Vec<(&str, &str)> = vec![
            ("protocol.allow", "never"),
            ("protocol.http.allow", "always"),
            ("protocol.https.allow", "always"),
            ("http.followRedirects", "false"),
            ("credential.helper", ""),
        ];
        if let Some(header) = &header {
            config.push(("http.extraHeader", header));
        }
        command.env("GIT_CONFIG_COUNT", config.len().to_string());
        for (i, (key, value)) in config.iter().enumerate() {
            command
                .env(format!("GIT_CONFIG_KEY_{i}"), key)
                .env(format!("GIT_CONFIG_VALUE_{i}"), value);
        }
        command
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped());
        Ok(command)
    }

    /// Runs a remote command within [`REMOTE_TIMEOUT`]; its output, whether
    /// it succeeded or not.
    async fn talk(&self, mut command: Command) -> Result<Output, SyncError> {
        let child = command.spawn().map_err(GitError::Spawn)?;
        let output = tokio::time::timeout(REMOTE_TIMEOUT, child.wait_with_output())
            .await
            .map_err(|_| {
                SyncError::Unreachable(format!("no answer in {} s", REMOTE_TIMEOUT.as_secs()))
            })?
            .map_err(GitError::Spawn)?;
        Ok(output)
    }

    /// Pushes the latest checkpoint (and so its whole history) to `branch`
    /// of `url`, never forcing; returns the commit pushed.
    pub async fn push(
        &self,
        url: &str,
        branch: &str,
        credentials: Option<Credentials<'_>>,
    ) -> Result<String, SyncError> {
        let head = self.head().await?.ok_or(SyncError::NothingToPush)?;
        let refspec = format!("{head}:refs/heads/{branch}");
        let args = ["push", "--porcelain", "--no-verify", url, &refspec];
        let output = self.talk(self.remote_command(&args, credentials)?).await?;
        if output.status.success() {
            return Ok(head);
        }
        Err(classify(&said(&output)))
    }

    /// Fetches `branch` of `url` into [`FETCHED`]; its commit, or `None`
    /// when the remote has no such branch yet.
    pub async fn fetch(
        &self,
        url: &str,
        branch: &str,
        credentials: Option<Credentials<'_>>,
    ) -> Result<Option<String>, SyncError> {
        self.ensure().await?;
        self.fetch_into(url, branch, credentials, FETCHED, &[])
            .await
    }

    /// Fetches `branch` of `url` for a look only, safe beside the
    /// checkpoints' own git (the caller need not hold them): into a ref of
    /// this fetch's own, removed once read, with no maintenance after it.
    /// The repository must exist ([`Repo::ensure`]). The commit stays in
    /// the object store, for [`Repo::divergence`].
    pub async fn peek(
        &self,
        url: &str,
        branch: &str,
        credentials: Option<Credentials<'_>>,
    ) -> Result<Option<String>, SyncError> {
        let n = PEEKS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let into = format!("{PEEKED}/{}-{n}", std::process::id());
        let quiet = ["--no-auto-maintenance"];
        let fetched = self
            .fetch_into(url, branch, credentials, &into, &quiet)
            .await;
        if matches!(fetched, Ok(Some(_)))
            && let Err(error) = self.run(&["update-ref", "-d", &into]).await
        {
            // Left, it only keeps the fetched commit's objects.
            tracing::warn!(%error, peeked = into, "a status's fetched ref stays");
        }
        fetched
    }

    async fn fetch_into(
        &self,
        url: &str,
        branch: &str,
        credentials: Option<Credentials<'_>>,
        into: &str,
        options: &[&str],
    ) -> Result<Option<String>, SyncError> {
        let refspec = format!("+refs/heads/{branch}:{into}");
        let mut args = vec!["fetch", "--no-tags", "--no-write-fetch-head", "-q"];
        args.extend_from_slice(options);
        args.extend([url, &refspec]);
        let output = self.talk(self.remote_command(&args, credentials)?).await?;
        if output.status.success() {
            return Ok(Some(self.run_line(&["rev-parse", into]).await?));
        }
        let said = said(&output);
        if said.contains("couldn't find remote ref") {
            return Ok(None);
        }
        Err(classify(&said))
    }

    /// How many checkpoints the remote lacks (`ahead`) and how many of its
    /// commits the project lacks (`behind`), against the fetched commit.
    pub async fn divergence(&self, fetched: Option<&str>) -> Result<Divergence, GitError> {
        let head = self.head().await?;
        let count = |range: String| async move {
            let out = self.run_line(&["rev-list", "--count", &range]).await?;
            out.parse::<u64>().map_err(|_| GitError::Unexpected {
                command: "rev-list --count".into(),
                output: out,
            })
        };
        Ok(match (head, fetched) {
            (None, None) => Divergence {
                ahead: 0,
                behind: 0,
            },
            (Some(head), None) => Divergence {
                ahead: count(head).await?,
                behind: 0,
            },
            (None, Some(theirs)) => Divergence {
                ahead: 0,
                behind: count(theirs.to_owned()).await?,
            },
            (Some(head), Some(theirs)) => Divergence {
                ahead: count(format!("{theirs}..{head}")).await?,
                behind: count(format!("{head}..{theirs}")).await?,
            },
        })
    }

    /// What bringing the fetched commit `theirs` into the checkpoint
    /// branch at `head` makes: a fast-forward when the branch has nothing
    /// the remote lacks, else a merge commit with `message`, or the
    /// conflicting paths. The branch does not move (see [`Repo::advance`]).
    pub async fn merge(&self, head: &str, theirs: &str, message: &str) -> Result<Merge, SyncError> {
        if self.is_ancestor(theirs, head).await? {
            return Ok(Merge::UpToDate);
        }
        if self.is_ancestor(head, theirs).await? {
            return Ok(Merge::FastForward(theirs.to_owned()));
        }
        let tree = self.merged_tree(head, theirs).await?;
        let args = [
            "commit-tree",
            &tree,
            "-p",
            head,
            "-p",
            theirs,
            "-m",
            message,
        ];
        Ok(Merge::Merged(self.run_line(&args).await?))
    }

    /// Starts the branch at `commit` (a fetched one), whatever it held.
    pub async fn start_at(&self, commit: &str) -> Result<(), GitError> {
        self.run(&["update-ref", BRANCH, commit]).await.map(drop)
    }

    /// Moves the checkpoint branch from `from` to `to`; fails if it is no
    /// longer at `from`.
    pub async fn advance(&self, from: &str, to: &str) -> Result<(), GitError> {
        self.run(&["update-ref", BRANCH, to, from]).await.map(drop)
    }

    async fn is_ancestor(&self, ancestor: &str, of: &str) -> Result<bool, GitError> {
        let output = self
            .command(&["merge-base", "--is-ancestor", ancestor, of])?
            .output()
            .await
            .map_err(GitError::Spawn)?;
        match output.status.code() {
            Some(0) => Ok(true),
            Some(1) => Ok(false),
            _ => Err(self.failure("merge-base --is-ancestor", &output.stderr)),
        }
    }

    /// The tree of merging `ours` and `theirs`, or the conflicting paths.
    async fn merged_tree(&self, ours: &str, theirs: &str) -> Result<String, SyncError> {
        let args = [
            "merge-tree",
            "--write-tree",
            "--name-only",
            "--no-messages",
            "--allow-unrelated-histories",
            ours,
            theirs,
        ];
        let output = self
            .command(&args)?
            .output()
            .await
            .map_err(GitError::Spawn)?;
        let text = String::from_utf8_lossy(&output.stdout);
        let mut lines = text.lines();
        let tree = lines.next().unwrap_or_default().trim().to_owned();
        match output.status.code() {
            Some(0) if !tree.is_empty() => Ok(tree),
            Some(1) => {
                let mut paths: Vec<String> = lines
                    .take_while(|l| !l.is_empty())
                    .map(str::to_owned)
                    .collect();
                paths.dedup();
                Err(SyncError::Conflict(paths))
            }
            _ => Err(self.failure("merge-tree", &output.stderr).into()),
        }
    }
}

fn said(output: &Output) -> String {
    format!(
        "{}\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

/// What a failed push or fetch's output says went wrong.
pub fn classify(said: &str) -> SyncError {
    let reason = said
        .lines()
        .map(str::trim)
        .find(|l| l.starts_with("fatal:") || l.starts_with("error:") || l.starts_with('!'))
        .unwrap_or_else(|| said.trim())
        .to_owned();
    let has = |words: &[&str]| words.iter().any(|w| said.contains(w));
    if has(&["[rejected]", "non-fast-forward", "fetch first"]) {
        SyncError::PullFirst
    } else if has(&[
        "Authentication failed",
        "returned error: 401",
        "returned error: 403",
        // A 401 makes git ask for a user name, which it may not.
        "could not read Username",
        "could not read Password",
    ]) {
        SyncError::Refused(reason)
    } else if has(&[
        "Could not resolve host",
        "Failed to connect",
        "Connection refused",
        "Connection timed out",
        "unable to access",
    ]) {
        SyncError::Unreachable(reason)
    } else {
        SyncError::Failed(reason)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failed_push_says_why() {
        let rejected = "To http://127.0.0.1:9/r.git\n!\trefs/heads/x:refs/heads/main\t[rejected] (fetch first)\nDone";
        assert!(matches!(classify(rejected), SyncError::PullFirst));
        let auth = "fatal: Authentication failed for 'http://127.0.0.1:9/r.git/'";
        assert!(
            matches!(classify(auth), SyncError::Refused(r) if r.starts_with("fatal: Authentication"))
        );
        let asked =
            "fatal: could not read Username for 'http://127.0.0.1:9': terminal prompts disabled";
        assert!(matches!(classify(asked), SyncError::Refused(_)));
        let down = "fatal: unable to access 'http://127.0.0.1:9/r.git/': Failed to connect to 127.0.0.1 port 9";
        assert!(matches!(classify(down), SyncError::Unreachable(_)));
        assert!(matches!(
            classify("error: src refspec x does not match any"),
            SyncError::Failed(_)
        ));
    }
}
