//! A project's git remote: where its checkpoints are pushed. The URL, user
//! name and branch are the owner's settings; the token is kept beside them
//! in `<data_dir>/remotes/<project>.json` (0600, see
//! [`crate::server::private_files`]), never in `rivet.db`, the project's
//! files, a checkpoint, an export or a log, and never sent back to the
//! browser. It goes only to the remote's host, in the push's own header
//! (`checkpoint::git::push`).

use std::net::IpAddr;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::runtime::project::ProjectId;
use crate::server::private_files::PrivateFiles;

/// The branch pushed to when none is given.
pub const DEFAULT_BRANCH: &str = "main";
/// Longest URL, user name, token and branch accepted.
const MAX_URL: usize = 2048;
const MAX_FIELD: usize = 4096;
const MAX_BRANCH: usize = 200;

/// A remote as the owner sets it (`PUT …/git/remote`).
#[derive(Clone, Debug, Default, Deserialize)]
pub struct RemoteInput {
    pub url: String,
    #[serde(default)]
    pub username: Option<String>,
    #[serde(default)]
    pub token: Option<String>,
    #[serde(default)]
    pub branch: Option<String>,
}

/// A remote as it is kept.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Remote {
    pub url: String,
    pub username: Option<String>,
    pub token: Option<String>,
    pub branch: String,
}

pub use crate::runtime::ship::RemoteView;

impl Remote {
    pub fn view(&self) -> RemoteView {
        RemoteView {
            url: self.url.clone(),
            username: self.username.clone(),
            branch: self.branch.clone(),
            token_set: self.token.is_some(),
        }
    }
}

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum RemoteError {
    #[error("invalid remote URL: {0}")]
    InvalidUrl(String),
    #[error("invalid branch name {0:?}")]
    InvalidBranch(String),
    #[error("invalid {0}: it must be one line of text, at most 4 KiB")]
    InvalidField(&'static str),
    #[error("the project has no git remote: connect one first")]
    NotSet,
    #[error("the git remote cannot be read or written: {0}")]
    Io(String),
}

/// Checks a remote URL: HTTPS anywhere, HTTP only to this machine or the
/// local network (a token over plain HTTP elsewhere would cross the
/// internet readable), no credentials, query or fragment in it.
pub fn check_url(text: &str) -> Result<url::Url, RemoteError> {
    let invalid = |why: &str| RemoteError::InvalidUrl(format!("{why}: {text}"));
    if text.len() > MAX_URL || text.chars().any(char::is_control) {
        return Err(invalid("too long or not one line"));
    }
    let url = url::Url::parse(text).map_err(|e| invalid(&e.to_string()))?;
    if !url.username().is_empty() || url.password().is_some() {
        return Err(invalid(
            "put the user name and token in their own fields, not in the URL",
        ));
    }
    if url.query().is_some() || url.fragment().is_some() {
        return Err(invalid("a query or fragment is not a repository"));
    }
    let host = url.host_str().ok_or_else(|| invalid("no host"))?;
    match url.scheme() {
        "https" => Ok(url),
        "http" if is_local(host) => Ok(url),
        "http" => Err(invalid(
            "plain HTTP is allowed only on this machine or the local network; use HTTPS",
        )),
        _ => Err(invalid("only http and https remotes are supported")),
    }
}

/// Whether `host` is this machine or a local network's.
fn is_local(host: &str) -> bool {
    let host = host.trim_start_matches('[').trim_end_matches(']');
    if let Ok(ip) = host.parse::<IpAddr>() {
        return match ip {
            IpAddr::V4(v4) => v4.is_loopback() || v4.is_private() || v4.is_link_local(),
            IpAddr::V6(v6) => {
                v6.is_loopback() || v6.is_unique_local() || v6.is_unicast_link_local()
            }
        };
    }
    let host = host.to_ascii_lowercase();
    host == "localhost"
        || !host.contains('.')
        || [".local", ".lan", ".home.arpa", ".internal", ".localhost"]
            .iter()
            .any(|suffix| host.ends_with(suffix))
}

/// Checks a branch name as `git check-ref-format --branch` would, more
/// strictly: letters, digits, `._-/`, no `..`, no leading `-` or `/`.
pub fn check_branch(branch: &str) -> Result<(), RemoteError> {
    let valid = !branch.is_empty()
        && branch.len() <= MAX_BRANCH
        && branch
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"._-/".contains(&b))
        && !branch.starts_with(['-', '/', '.'])
        && !branch.ends_with(['/', '.'])
        && !branch.ends_with(".lock")
        && !branch.contains("..")
        && !branch.contains("//")
        && !branch.contains("/.");
    if valid {
        Ok(())
    } else {
        Err(RemoteError::InvalidBranch(branch.to_owned()))
    }
}

fn field(value: Option<String>, name: &'static str) -> Result<Option<String>, RemoteError> {
    match value.map(|v| v.trim().to_owned()).filter(|v| !v.is_empty()) {
        Some(v) if v.len() > MAX_FIELD || v.chars().any(char::is_control) => {
            Err(RemoteError::InvalidField(name))
        }
        other => Ok(other),
    }
}

impl RemoteInput {
    /// The remote this input sets, checked. A token left out keeps the one
    /// kept for the same URL's host (so the UI can change the branch
    /// without the token, which it never sees); another host gets none.
    pub fn checked(self, kept: Option<&Remote>) -> Result<Remote, RemoteError> {
        let url = check_url(self.url.trim())?;
        let branch = field(self.branch, "branch")?.unwrap_or_else(|| DEFAULT_BRANCH.to_owned());
        check_branch(&branch)?;
        let username = field(self.username, "user name")?;
        let token = match field(self.token, "token")? {
            Some(token) => Some(token),
            None => kept
                .filter(|k| same_origin(&k.url, &url))
                .and_then(|k| k.token.clone()),
        };
        Ok(Remote {
            url: url.to_string(),
            username,
            token,
            branch,
        })
    }
}

fn same_origin(kept: &str, url: &url::Url) -> bool {
    url::Url::parse(kept).is_ok_and(|k| k.origin() == url.origin())
}

/// Every project's remote, under one data directory.
#[derive(Debug, Clone)]
pub struct RemoteStore {
    files: PrivateFiles,
}

impl RemoteStore {
    pub fn new(data_dir: &Path) -> RemoteStore {
        RemoteStore {
            files: PrivateFiles::new(data_dir, "remotes"),
        }
    }

    pub fn get(&self, project: &ProjectId) -> Result<Option<Remote>, RemoteError> {
        self.files.read(project).map_err(io)
    }

    pub fn set(&self, project: &ProjectId, input: RemoteInput) -> Result<Remote, RemoteError> {
        let remote = input.checked(self.get(project)?.as_ref())?;
        self.files.write(project, &remote).map_err(io)?;
        Ok(remote)
    }

    pub fn remove(&self, project: &ProjectId) -> Result<(), RemoteError> {
        self.files.remove(project).map_err(io)
    }
}

fn io(e: impl std::fmt::Display) -> RemoteError {
    RemoteError::Io(e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn remote_urls_are_https_or_local_http_without_credentials() {
        for good in [
            "https://github.com/me/app.git",
            "http://127.0.0.1:8080/app.git",
            "http://192.168.1.20/git/app",
            "http://gitea.lan/me/app.git",
            "http://localhost:3000/app",
            "http://[::1]:9/app",
        ] {
            assert!(check_url(good).is_ok(), "{good}");
        }
        for bad in [
            "http://github.com/me/app.git",
            "https://me:token@github.com/me/app.git",
            "ssh://git@github.com/me/app.git",
            "file:///etc",
            "ext::sh -c id",
            "https://github.com/me/app.git?x=1",
            "https://github.com/a\nb",
            "http://8.8.8.8/app",
            "not a url",
        ] {
            assert!(check_url(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn branch_names_that_git_would_refuse_or_misread_are_refused() {
        for good in ["main", "feature/login", "release-1.2", "v2_x"] {
            assert!(check_branch(good).is_ok(), "{good}");
        }
        for bad in [
            "",
            "-f",
            "a..b",
            "a/",
            "/a",
            ".hidden",
            "a.lock",
            "a b",
            "a:b",
            "a//b",
            "refs/../x",
            "a~1",
            "a^",
            "x/.y",
        ] {
            assert!(check_branch(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_remote_is_kept_private_and_shown_without_its_token() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let store = RemoteStore::new(dir.path());
        let project = ProjectId::parse("p1").unwrap();
        assert_eq!(store.get(&project).unwrap(), None);
        let set = store
            .set(
                &project,
                RemoteInput {
                    url: "http://127.0.0.1:9/app.git".into(),
                    username: Some("me".into()),
                    token: Some("tok-123456".into()),
                    branch: None,
                },
            )
            .unwrap();
        assert_eq!(set.branch, "main");
        let file = dir.path().join("remotes/p1.json");
        let mode = std::fs::metadata(&file).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        let view = serde_json::to_string(&set.view()).unwrap();
        assert!(!view.contains("tok-123456"), "{view}");
        assert!(view.contains("\"token_set\":true"), "{view}");

        // Without a token: the same host keeps it, another host has none.
        let same = RemoteInput {
            url: "http://127.0.0.1:9/app.git".into(),
            branch: Some("dev".into()),
            ..Default::default()
        };
        let kept = store.set(&project, same).unwrap();
        assert_eq!(kept.token.as_deref(), Some("tok-123456"));
        assert_eq!(kept.branch, "dev");
        let other = RemoteInput {
            url: "https://example.com/app.git".into(),
            ..Default::default()
        };
        assert_eq!(store.set(&project, other).unwrap().token, None);

        std::fs::write(&file, b"{not json").unwrap();
        assert!(matches!(store.get(&project), Err(RemoteError::Io(_))));
    }
}
