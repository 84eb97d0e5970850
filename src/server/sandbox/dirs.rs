//! A project's directories on the host, and making them the sandbox user's.

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use crate::runtime::host::RuntimeError;

/// The host directories of one project's sandbox.
#[derive(Debug, Clone)]
pub struct ProjectDirs {
    pub workspace: PathBuf,
    pub home: PathBuf,
    pub npm_cache: Option<PathBuf>,
}

fn unavailable(message: String) -> RuntimeError {
    RuntimeError::Unavailable(message)
}

/// Creates a project's directories, private to the user that runs the
/// sandbox. When the IDE is root, that user is `run_as`: it gets the
/// directories, and the way to them must be open to it.
pub fn prepare_dirs(
    data_dir: &Path,
    dirs: &ProjectDirs,
    agent: &Path,
    run_as: Option<(u32, u32)>,
) -> Result<(), RuntimeError> {
    let fail = |path: &Path, e: std::io::Error| {
        unavailable(format!("cannot prepare {}: {e}", path.display()))
    };
    let mut owned = vec![&dirs.workspace, &dirs.home];
    owned.extend(dirs.npm_cache.iter());
    for dir in &owned {
        std::fs::create_dir_all(dir).map_err(|e| fail(dir, e))?;
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))
            .map_err(|e| fail(dir, e))?;
    }
    let Some((uid, gid)) = run_as else {
        return Ok(());
    };
    for dir in &owned {
        chown_tree(dir, uid, gid).map_err(|e| fail(dir, e))?;
        // The directories between the data directory and this one.
        let mut parent = dir.parent();
        while let Some(p) = parent {
            if !p.starts_with(data_dir) {
                break;
            }
            let meta = std::fs::metadata(p).map_err(|e| fail(p, e))?;
            let mode = meta.permissions().mode();
            if mode & 0o001 == 0 {
                std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode | 0o001))
                    .map_err(|e| fail(p, e))?;
            }
            parent = p.parent();
        }
        reachable(dir, uid, gid).map_err(|blocked| {
            unavailable(format!(
                "the sandbox user (uid {uid}, sandbox.host_uid) cannot reach {}: {} is closed to it. \
                 Move the data directory (server.data_dir) somewhere it can reach, or run Rivet as a normal user",
                dir.display(),
                blocked.display()
            ))
        })?;
    }
    reachable(agent, uid, gid).map_err(|blocked| {
        unavailable(format!(
            "the sandbox user (uid {uid}) cannot reach Rivet's own binary {}: {} is closed to it",
            agent.display(),
            blocked.display()
        ))
    })
}

/// Gives `root` and everything below it (not following symlinks) to
/// `uid:gid`, touching only entries that are not theirs yet.
fn chown_tree(root: &Path, uid: u32, gid: u32) -> std::io::Result<()> {
    let mut stack = vec![root.to_owned()];
    while let Some(path) = stack.pop() {
        let meta = std::fs::symlink_metadata(&path)?;
        if meta.uid() != uid || meta.gid() != gid {
            std::os::unix::fs::lchown(&path, Some(uid), Some(gid))?;
        }
        if meta.is_dir() {
            for entry in std::fs::read_dir(&path)? {
                stack.push(entry?.path());
            }
        }
    }
    Ok(())
}

/// Checks that `uid:gid` may search every directory on the way to `path`;
/// returns the first that blocks it.
fn reachable(path: &Path, uid: u32, gid: u32) -> Result<(), PathBuf> {
    let mut ancestors: Vec<&Path> = path.ancestors().skip(1).collect();
    ancestors.reverse();
    for dir in ancestors {
        let Ok(meta) = std::fs::metadata(dir) else {
            return Err(dir.to_owned());
        };
        let mode = meta.permissions().mode();
        let bit = if meta.uid() == uid {
            0o100
        } else if meta.gid() == gid {
            0o010
        } else {
            0o001
        };
        if mode & bit == 0 {
            return Err(dir.to_owned());
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reachability_follows_search_bits() {
        let dir = tempfile::tempdir().unwrap();
        let closed = dir.path().join("closed");
        let inner = closed.join("inner");
        std::fs::create_dir_all(&inner).unwrap();
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o711)).unwrap();
        std::fs::set_permissions(&closed, std::fs::Permissions::from_mode(0o700)).unwrap();
        let me = nix::unistd::getuid().as_raw();
        let stranger = me.wrapping_add(4242);
        assert_eq!(reachable(&inner, stranger, stranger), Err(closed.clone()));
        assert_eq!(reachable(&inner, me, stranger), Ok(()));
        std::fs::set_permissions(&closed, std::fs::Permissions::from_mode(0o701)).unwrap();
        assert_eq!(reachable(&inner, stranger, stranger), Ok(()));
    }
}
