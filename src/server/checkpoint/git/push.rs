//! Pushing the checkpoints to a git remote the owner connected. The token
//! travels in an `Authorization` header given to this one `git push`
//! through `GIT_CONFIG_*` variables: never on a command line, in a URL, in
//! `.git/config` or in the project. Only HTTP(S) is allowed, redirects are
//! not followed (the header would go to another host), and no credential
//! helper or prompt is asked.

use std::time::Duration;

use base64::Engine;

use super::{GitError, Repo};

/// A push that takes longer is stopped.
const PUSH_TIMEOUT: Duration = Duration::from_secs(120);

/// Who pushes: the remote's user name (any, for most token schemes) and
/// its token.
pub struct Credentials<'a> {
    pub username: &'a str,
    pub token: &'a str,
}

#[derive(Debug, thiserror::Error)]
pub enum PushError {
    #[error("the remote has commits this project does not: pull first")]
    PullFirst,
    #[error("the remote refused the user name and token (HTTP 401 or 403): {0}")]
    Refused(String),
    #[error("the remote cannot be reached: {0}")]
    Unreachable(String),
    #[error("the push failed: {0}")]
    Failed(String),
    #[error("the project has no checkpoint to push yet")]
    NothingToPush,
    #[error(transparent)]
    Git(#[from] GitError),
}

impl Repo {
    /// Pushes the latest checkpoint (and so its whole history) to `branch`
    /// of `url`, never forcing; returns the commit pushed.
    pub async fn push(
        &self,
        url: &str,
        branch: &str,
        credentials: Option<Credentials<'_>>,
    ) -> Result<String, PushError> {
        let head = self.head().await?.ok_or(PushError::NothingToPush)?;
        let refspec = format!("{head}:refs/heads/{branch}");
        let mut command = self.command(&["push", "--porcelain", "--no-verify", url, &refspec])?;
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
        let child = command.spawn().map_err(GitError::Spawn)?;
        let output = tokio::time::timeout(PUSH_TIMEOUT, child.wait_with_output())
            .await
            .map_err(|_| {
                PushError::Unreachable(format!("no answer in {} s", PUSH_TIMEOUT.as_secs()))
            })?
            .map_err(GitError::Spawn)?;
        if output.status.success() {
            return Ok(head);
        }
        let said = format!(
            "{}\n{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
        Err(classify(&said))
    }
}

/// What a failed push's output says went wrong.
pub fn classify(said: &str) -> PushError {
    let reason = said
        .lines()
        .map(str::trim)
        .find(|l| l.starts_with("fatal:") || l.starts_with("error:") || l.starts_with('!'))
        .unwrap_or_else(|| said.trim())
        .to_owned();
    let has = |words: &[&str]| words.iter().any(|w| said.contains(w));
    if has(&["[rejected]", "non-fast-forward", "fetch first"]) {
        PushError::PullFirst
    } else if has(&[
        "Authentication failed",
        "returned error: 401",
        "returned error: 403",
        // A 401 makes git ask for a user name, which it may not.
        "could not read Username",
        "could not read Password",
    ]) {
        PushError::Refused(reason)
    } else if has(&[
        "Could not resolve host",
        "Failed to connect",
        "Connection refused",
        "Connection timed out",
        "unable to access",
    ]) {
        PushError::Unreachable(reason)
    } else {
        PushError::Failed(reason)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failed_push_says_why() {
        let rejected = "To http://127.0.0.1:9/r.git\n!\trefs/heads/x:refs/heads/main\t[rejected] (fetch first)\nDone";
        assert!(matches!(classify(rejected), PushError::PullFirst));
        let auth = "fatal: Authentication failed for 'http://127.0.0.1:9/r.git/'";
        assert!(
            matches!(classify(auth), PushError::Refused(r) if r.starts_with("fatal: Authentication"))
        );
        let asked =
            "fatal: could not read Username for 'http://127.0.0.1:9': terminal prompts disabled";
        assert!(matches!(classify(asked), PushError::Refused(_)));
        let down = "fatal: unable to access 'http://127.0.0.1:9/r.git/': Failed to connect to 127.0.0.1 port 9";
        assert!(matches!(classify(down), PushError::Unreachable(_)));
        assert!(matches!(
            classify("error: src refspec x does not match any"),
            PushError::Failed(_)
        ));
    }
}
