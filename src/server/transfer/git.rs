//! Importing a git repository: `git clone` runs inside the new project's
//! sandbox (so a hostile URL reaches only what sandboxed code may reach, and
//! never the server's files), over http or https only, into a folder of the
//! workspace; the clone is then checked against the limits and moved into
//! place.

use std::path::Path;
use std::time::Duration;

use futures::StreamExt;

use super::TransferError;
use super::staging::Limits;
use crate::runtime::host::{CommandSpec, Runtime, shell_quote};

/// The folder of the workspace the clone is made in.
pub const CLONE_DIR: &str = ".rivet-clone";
/// How long a clone may take.
const CLONE_TIMEOUT: Duration = Duration::from_secs(300);
/// How much of git's output an error quotes.
const OUTPUT_TAIL: usize = 2000;

fn refuse(url: &str, reason: impl Into<String>) -> TransferError {
    TransferError::GitUrl {
        url: url.to_owned(),
        reason: reason.into(),
    }
}

/// The URL, when it is an `http` or `https` URL with a host. Local paths,
/// `file://`, transport helpers (`ext::`, `fd::`) and options are refused.
pub fn check_url(raw: &str) -> Result<url::Url, TransferError> {
    let raw = raw.trim();
    if raw.starts_with('-') {
        return Err(refuse(raw, "it would be read as an option of git"));
    }
    if raw.contains("::") {
        return Err(refuse(
            raw,
            "transport helpers (`ext::`, `fd::`) would run commands",
        ));
    }
    let url = url::Url::parse(raw).map_err(|_| {
        refuse(
            raw,
            "not a URL (local paths are refused): use http:// or https://",
        )
    })?;
    match url.scheme() {
        "http" | "https" => {}
        "file" => return Err(refuse(raw, "file:// would read the server's files")),
        other => {
            return Err(refuse(
                raw,
                format!("the scheme {other}: is refused; use http:// or https://"),
            ));
        }
    }
    if url.host_str().is_none_or(str::is_empty) {
        return Err(refuse(raw, "it names no host"));
    }
    Ok(url)
}

/// A name for the project: the repository's, without `.git`.
pub fn repository_name(url: &url::Url) -> String {
    let last = url
        .path_segments()
        .and_then(|mut segments| segments.rfind(|s| !s.is_empty()))
        .unwrap_or("repository");
    last.trim_end_matches(".git").to_owned()
}

/// The command that clones `url` into [`CLONE_DIR`].
pub fn clone_command(url: &url::Url) -> CommandSpec {
    let command = format!(
        "git -c protocol.allow=never -c protocol.http.allow=always \
         -c protocol.https.allow=always -c core.symlinks=false \
         clone --no-recurse-submodules --quiet -- {} {CLONE_DIR}",
        shell_quote(url.as_str())
    );
    CommandSpec::command(command)
        .with_timeout(CLONE_TIMEOUT)
        // Every request goes through the sandbox's proxy, loopback names too.
        .with_env("NO_PROXY", "")
        .with_env("no_proxy", "")
        .with_env("GIT_TERMINAL_PROMPT", "0")
        .with_env("GIT_CONFIG_NOSYSTEM", "1")
}

/// Clones `url` in `runtime`'s sandbox, whose workspace is `workspace`,
/// and moves the clone to the workspace's top.
pub async fn clone_into(
    runtime: &dyn Runtime,
    url: &url::Url,
    workspace: &Path,
    limits: Limits,
) -> Result<(), TransferError> {
    let process = runtime
        .spawn(clone_command(url))
        .await
        .map_err(|e| TransferError::Clone(e.to_string()))?;
    let mut output = process.take_output();
    let collect = async {
        let mut all = Vec::new();
        if let Some(output) = output.as_mut() {
            while let Some(chunk) = output.next().await {
                all.extend_from_slice(&chunk);
            }
        }
        all
    };
    let (status, all) = tokio::join!(process.wait(), collect);
    if !status.success() {
        let text = String::from_utf8_lossy(&all);
        let start = text.len().saturating_sub(OUTPUT_TAIL);
        let tail = text.get(start..).unwrap_or(&text).trim().to_owned();
        let why = status
            .message
            .clone()
            .unwrap_or_else(|| format!("{status:?}"));
        return Err(TransferError::Clone(format!("{tail} ({why})")));
    }
    let clone = workspace.join(CLONE_DIR);
    let check = clone.clone();
    tokio::task::spawn_blocking(move || check_tree(&check, limits))
        .await
        .map_err(|e| TransferError::Clone(e.to_string()))??;
    move_up(&clone, workspace)
}

/// Walks `root` without following links: refuses links and anything over
/// the limits.
pub fn check_tree(root: &Path, limits: Limits) -> Result<(), TransferError> {
    let (mut entries, mut total) = (0usize, 0u64);
    let mut pending = vec![root.to_owned()];
    while let Some(dir) = pending.pop() {
        let read = std::fs::read_dir(&dir).map_err(|source| TransferError::Io {
            path: dir.clone(),
            source,
        })?;
        for entry in read {
            let entry = entry.map_err(|source| TransferError::Io {
                path: dir.clone(),
                source,
            })?;
            let path = entry.path();
            let name = path
                .strip_prefix(root)
                .unwrap_or(&path)
                .to_string_lossy()
                .into_owned();
            let meta = std::fs::symlink_metadata(&path).map_err(|source| TransferError::Io {
                path: path.clone(),
                source,
            })?;
            entries += 1;
            if entries > limits.max_entries {
                return Err(TransferError::TooManyEntries {
                    entry: name,
                    limit: limits.max_entries,
                });
            }
            if meta.file_type().is_symlink() {
                return Err(TransferError::Symlink { entry: name });
            }
            if meta.is_dir() {
                pending.push(path);
                continue;
            }
            if meta.len() > limits.max_entry_bytes {
                return Err(TransferError::EntryTooLarge {
                    entry: name,
                    limit: limits.max_entry_bytes,
                });
            }
            total += meta.len();
            if total > limits.max_total_bytes {
                return Err(TransferError::TotalTooLarge {
                    entry: name,
                    limit: limits.max_total_bytes,
                });
            }
        }
    }
    Ok(())
}

/// Moves every entry of `from` into `to`, then removes `from`.
fn move_up(from: &Path, to: &Path) -> Result<(), TransferError> {
    let io = |path: &Path| {
        let path = path.to_owned();
        move |source| TransferError::Io { path, source }
    };
    for entry in std::fs::read_dir(from).map_err(io(from))? {
        let entry = entry.map_err(io(from))?;
        let target = to.join(entry.file_name());
        std::fs::rename(entry.path(), &target).map_err(io(&target))?;
    }
    std::fs::remove_dir(from).map_err(io(from))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hostile_git_urls_are_refused() {
        for url in [
            "file:///etc",
            "/etc",
            "../other-project",
            "ext::sh -c touch% /tmp/pwned",
            "fd::17",
            "--upload-pack=touch /tmp/pwned",
            "ssh://host/repo.git",
            "git@github.com:a/b.git",
            "http://",
        ] {
            let err = check_url(url).unwrap_err();
            assert!(
                matches!(err, TransferError::GitUrl { .. }),
                "{url}: {err:?}"
            );
        }
        let ok = check_url("https://example.com/org/app.git").unwrap();
        assert_eq!(repository_name(&ok), "app");
    }

    #[test]
    fn the_url_is_quoted_for_the_shell() {
        let url = check_url("https://example.com/a'b;$(x).git").unwrap();
        let spec = clone_command(&url);
        assert!(
            spec.command
                .contains("-- 'https://example.com/a'\\''b;$(x).git' .rivet-clone"),
            "{}",
            spec.command
        );
    }

    #[test]
    fn a_clone_with_a_link_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a"), "x").unwrap();
        std::os::unix::fs::symlink("/etc/passwd", dir.path().join("link")).unwrap();
        let err = check_tree(
            dir.path(),
            Limits::from_config(&crate::server::config::Config::defaults().import),
        )
        .unwrap_err();
        assert!(
            matches!(&err, TransferError::Symlink { entry } if entry == "link"),
            "{err:?}"
        );
    }
}
