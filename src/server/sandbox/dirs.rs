//! A project's directories on the host, and making them the sandbox user's.

use std::ffi::{CStr, CString, OsStr};
use std::ops::ControlFlow;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::rc::Rc;

use nix::dir::Dir;
use nix::errno::Errno;
use nix::fcntl::{AtFlags, OFlag};
use nix::sys::stat::{FileStat, Mode, SFlag, fstatat};

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
    helper: &Path,
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
    reachable(helper, uid, gid).map_err(|blocked| {
        unavailable(format!(
            "the sandbox user (uid {uid}) cannot reach Rivet's own binary {}: {} is closed to it",
            helper.display(),
            blocked.display()
        ))
    })
}

/// Gives `root` and everything below it to `uid:gid`, touching only entries
/// that are not theirs yet. The walk never follows a symlink (see
/// [`walk_no_follow`]): the shared npm cache is writable by every sandbox,
/// and a symlink swapped in there must not lead a root IDE to chown its
/// target.
fn chown_tree(root: &Path, uid: u32, gid: u32) -> std::io::Result<()> {
    use nix::unistd::{Gid, Uid, fchown, fchownat};
    let (owner, group) = (Some(Uid::from_raw(uid)), Some(Gid::from_raw(gid)));
    walk_no_follow(root, &mut |entry| {
        if entry.stat.st_uid == uid && entry.stat.st_gid == gid {
            return Ok(ControlFlow::Continue(()));
        }
        let changed = match entry.name {
            None => fchown(entry.dir, owner, group),
            // A symlink swapped in since the stat is chowned itself.
            Some(name) => fchownat(entry.dir, name, owner, group, AtFlags::AT_SYMLINK_NOFOLLOW),
        };
        changed.map(ControlFlow::Continue).map_err(|e| {
            let path = root.join(entry.path);
            std::io::Error::new(
                std::io::Error::from(e).kind(),
                format!("cannot chown {}: {e}", path.display()),
            )
        })
    })
}

/// One entry met by [`walk_no_follow`].
pub(super) struct Walked<'a> {
    /// The directory holding the entry, or the root itself.
    pub dir: BorrowedFd<'a>,
    /// The entry's name in `dir`; `None` for the root.
    pub name: Option<&'a CStr>,
    /// The entry itself, never a symlink's target.
    pub stat: FileStat,
    /// Where it is, below the root (for messages).
    pub path: &'a Path,
}

/// What a visit of [`walk_no_follow`] says: go on, or stop the whole walk
/// (`Break`); a directory is entered unless the walk stops.
pub(super) type Visit = std::io::Result<ControlFlow<()>>;

/// A directory still to enter: its name in a directory already open.
struct Pending {
    parent: Rc<OwnedFd>,
    name: CString,
    path: PathBuf,
}

/// Visits `root` and everything below it, depth first, through directory
/// descriptors: each directory is opened relative to its parent with
/// `O_NOFOLLOW | O_DIRECTORY`, each entry is examined with `fstatat(…,
/// AT_SYMLINK_NOFOLLOW)`. Renaming a parent or swapping a directory for a
/// symlink at any moment cannot lead the walk out of the tree: a symlink
/// is visited as itself and never entered. A directory that cannot be
/// opened or examined fails the walk with an error naming it. Holds one
/// descriptor per level of the directory being read.
pub(super) fn walk_no_follow(
    root: &Path,
    visit: &mut dyn FnMut(&Walked<'_>) -> Visit,
) -> std::io::Result<()> {
    let fd = Rc::new(nix::fcntl::open(root, dir_flags(), Mode::empty())?);
    let stat = nix::sys::stat::fstat(fd.as_fd())?;
    let first = visit(&Walked {
        dir: fd.as_fd(),
        name: None,
        stat,
        path: Path::new(""),
    })?;
    let mut stack = Vec::new();
    if first.is_break() || expand(&fd, Path::new(""), &mut stack, visit)?.is_break() {
        return Ok(());
    }
    while let Some(next) = stack.pop() {
        let opened = nix::fcntl::openat(
            next.parent.as_fd(),
            next.name.as_c_str(),
            dir_flags(),
            Mode::empty(),
        );
        drop(next.parent);
        let fd = match opened {
            Ok(fd) => Rc::new(fd),
            // Swapped for a symlink or a file, or gone, since it was seen.
            Err(Errno::ELOOP | Errno::ENOTDIR | Errno::ENOENT) => continue,
            Err(e) => return Err(named(e, &next.path)),
        };
        if expand(&fd, &next.path, &mut stack, visit)?.is_break() {
            return Ok(());
        }
    }
    Ok(())
}

/// `e`, saying which entry below the walk's root it is about.
fn named(e: Errno, path: &Path) -> std::io::Error {
    std::io::Error::new(
        std::io::Error::from(e).kind(),
        format!("{}: {e}", path.display()),
    )
}

fn dir_flags() -> OFlag {
    OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC
}

/// Visits the entries of the open directory `fd` and queues its
/// subdirectories.
fn expand(
    fd: &Rc<OwnedFd>,
    path: &Path,
    stack: &mut Vec<Pending>,
    visit: &mut dyn FnMut(&Walked<'_>) -> Visit,
) -> Visit {
    let mut names = Vec::new();
    for entry in Dir::from_fd(fd.try_clone()?)?.iter() {
        let name = entry.map_err(|e| named(e, path))?.file_name().to_owned();
        if !matches!(name.as_bytes(), b"." | b"..") {
            names.push(name);
        }
    }
    for name in names {
        let child = path.join(OsStr::from_bytes(name.as_bytes()));
        let stat = match fstatat(fd.as_fd(), name.as_c_str(), AtFlags::AT_SYMLINK_NOFOLLOW) {
            Ok(stat) => stat,
            Err(Errno::ENOENT) => continue,
            Err(e) => return Err(named(e, &child)),
        };
        let seen = visit(&Walked {
            dir: fd.as_fd(),
            name: Some(name.as_c_str()),
            stat,
            path: &child,
        })?;
        if seen.is_break() {
            return Ok(seen);
        }
        if SFlag::from_bits_truncate(stat.st_mode & SFlag::S_IFMT.bits()) == SFlag::S_IFDIR {
            stack.push(Pending {
                parent: Rc::clone(fd),
                name,
                path: child,
            });
        }
    }
    Ok(ControlFlow::Continue(()))
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

    /// A project tree holding a symlink to a directory outside it, as a
    /// sandbox can plant in the shared npm cache; returns (tree, outside).
    fn tree_with_a_way_out() -> (tempfile::TempDir, tempfile::TempDir) {
        let tree = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("secret"), "secret").unwrap();
        std::fs::create_dir_all(tree.path().join("_cacache/index")).unwrap();
        std::fs::write(tree.path().join("_cacache/index/entry"), "x").unwrap();
        std::os::unix::fs::symlink(outside.path(), tree.path().join("_cacache/tmp")).unwrap();
        (tree, outside)
    }

    #[test]
    fn the_ownership_walk_never_follows_a_symlink_out_of_the_tree() {
        let (tree, outside) = tree_with_a_way_out();
        let mut seen = Vec::new();
        walk_no_follow(tree.path(), &mut |entry| {
            seen.push(entry.path.to_string_lossy().into_owned());
            Ok(ControlFlow::Continue(()))
        })
        .unwrap();
        seen.sort();
        assert_eq!(
            seen,
            [
                "",
                "_cacache",
                "_cacache/index",
                "_cacache/index/entry",
                "_cacache/tmp"
            ],
            "the symlink is visited, never entered"
        );
        if !nix::unistd::geteuid().is_root() {
            return;
        }
        // As root (CI), the real thing: everything in the tree changes
        // owner, the link itself included; nothing outside does.
        let before = |p: &Path| std::fs::symlink_metadata(p).unwrap();
        let outside_owner = (
            before(outside.path()).uid(),
            before(&outside.path().join("secret")).uid(),
        );
        chown_tree(tree.path(), 4242, 4243).unwrap();
        for path in ["", "_cacache", "_cacache/index/entry", "_cacache/tmp"] {
            let meta = std::fs::symlink_metadata(tree.path().join(path)).unwrap();
            assert_eq!((meta.uid(), meta.gid()), (4242, 4243), "{path:?}");
        }
        assert_eq!(
            (
                before(outside.path()).uid(),
                before(&outside.path().join("secret")).uid()
            ),
            outside_owner
        );
    }

    #[test]
    fn a_symlink_given_as_the_root_is_not_walked() {
        let (tree, _outside) = tree_with_a_way_out();
        let link = tree.path().join("_cacache/tmp");
        let walked = walk_no_follow(&link, &mut |_| Ok(ControlFlow::Continue(())));
        assert!(walked.is_err());
    }

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
