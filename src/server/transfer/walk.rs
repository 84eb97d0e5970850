//! A project's files for an export, read straight from its workspace on the
//! host. The workspace is written by untrusted code, so the walk never
//! leaves it: every folder is opened relative to its parent with
//! `O_NOFOLLOW | O_DIRECTORY`, every file with `O_NOFOLLOW | O_NONBLOCK`,
//! and only what `fstat` then says is a regular file is handed on. A link
//! is never followed, a FIFO or socket never blocks, and swapping a folder
//! for a link mid-walk leads nowhere.
//!
//! What it yields is what exports always held: the files outside the
//! folders of the one skip rule (`runtime::tree`), but not the atomic
//! writes' temporary files nor names that are not UTF-8, in path order.

use std::ffi::CString;
use std::fs::File;
use std::os::fd::{AsFd, OwnedFd};
use std::path::{Path, PathBuf};

use nix::dir::Dir;
use nix::errno::Errno;
use nix::fcntl::{AtFlags, OFlag};
use nix::sys::stat::{Mode, SFlag, fstat, fstatat};

use super::TransferError;
use crate::runtime::tree::is_skipped_dir;
use crate::server::atomic;

/// How much of a project an export walks before it refuses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WalkLimits {
    /// Files, folders and anything else seen, outside skipped folders.
    pub max_entries: usize,
    /// Folders nested below the project's root.
    pub max_depth: usize,
}

impl Default for WalkLimits {
    /// 100,000 entries (the zip's directory of them stays within tens of
    /// MiB) and 64 levels (each holds one open folder while walked).
    fn default() -> WalkLimits {
        WalkLimits {
            max_entries: 100_000,
            max_depth: 64,
        }
    }
}

/// One regular file of the project, open, and its size when opened.
pub struct Found<'a> {
    pub path: &'a str,
    pub file: File,
    pub size: u64,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    File,
    Dir,
    /// A link, FIFO, socket, device or skipped folder: never opened.
    Other,
}

struct Child {
    name: CString,
    path: String,
    kind: Kind,
}

impl Child {
    /// Its order among its siblings: by path, a folder's path being the
    /// prefix of its files' (so the whole walk comes out in path order).
    fn order_key(&self) -> impl Iterator<Item = u8> + '_ {
        let slash = (self.kind == Kind::Dir).then_some(b'/');
        self.path.bytes().chain(slash)
    }
}

/// A folder being walked and its entries still to visit.
struct Frame {
    dir: OwnedFd,
    children: std::vec::IntoIter<Child>,
}

/// What the walk has counted so far.
struct Walk {
    limits: WalkLimits,
    seen: usize,
}

fn io_error(path: &str, errno: Errno) -> TransferError {
    TransferError::Io {
        path: PathBuf::from(path),
        source: errno.into(),
    }
}

fn dir_flags() -> OFlag {
    OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC
}

fn file_flags() -> OFlag {
    OFlag::O_RDONLY | OFlag::O_NOFOLLOW | OFlag::O_NONBLOCK | OFlag::O_CLOEXEC | OFlag::O_NOCTTY
}

fn kind_of(mode: u32) -> Kind {
    match SFlag::from_bits_truncate(mode & SFlag::S_IFMT.bits()) {
        SFlag::S_IFREG => Kind::File,
        SFlag::S_IFDIR => Kind::Dir,
        _ => Kind::Other,
    }
}

/// Hands `visit` every file of the project at `root`, in path order. A
/// missing `root` has no files.
pub fn walk(
    root: &Path,
    limits: WalkLimits,
    visit: &mut dyn FnMut(Found<'_>) -> Result<(), TransferError>,
) -> Result<(), TransferError> {
    let dir = match nix::fcntl::open(root, dir_flags(), Mode::empty()) {
        Ok(dir) => dir,
        Err(Errno::ENOENT) => return Ok(()),
        Err(errno) => return Err(io_error(&root.to_string_lossy(), errno)),
    };
    let mut walk = Walk { limits, seen: 0 };
    let children = walk.children(&dir, "")?;
    let mut stack = vec![Frame {
        dir,
        children: children.into_iter(),
    }];
    loop {
        let depth = stack.len();
        let Some(frame) = stack.last_mut() else {
            return Ok(());
        };
        let Some(child) = frame.children.next() else {
            stack.pop();
            continue;
        };
        match child.kind {
            Kind::Dir => {
                if let Some(next) = walk.enter(&frame.dir, &child, depth)? {
                    stack.push(next);
                }
            }
            Kind::File => {
                if let Some((file, size)) = open_file(&frame.dir, &child)? {
                    let path = child.path.as_str();
                    visit(Found { path, file, size })?;
                }
            }
            Kind::Other => {}
        }
    }
}

impl Walk {
    /// Opens the folder `child` of `parent`, `depth` levels down, with its
    /// entries; `None` when it is no longer a folder.
    fn enter(
        &mut self,
        parent: &OwnedFd,
        child: &Child,
        depth: usize,
    ) -> Result<Option<Frame>, TransferError> {
        if depth > self.limits.max_depth {
            return Err(TransferError::ExportTooDeep {
                entry: child.path.clone(),
                limit: self.limits.max_depth,
            });
        }
        let dir = match nix::fcntl::openat(
            parent.as_fd(),
            child.name.as_c_str(),
            dir_flags(),
            Mode::empty(),
        ) {
            Ok(dir) => dir,
            // Swapped for a link or a file, or gone, since it was seen.
            Err(Errno::ELOOP | Errno::ENOTDIR | Errno::ENOENT) => return Ok(None),
            Err(errno) => return Err(io_error(&child.path, errno)),
        };
        let children = self.children(&dir, &child.path)?;
        Ok(Some(Frame {
            dir,
            children: children.into_iter(),
        }))
    }

    /// The entries of the open folder `dir` (at `prefix`), sorted.
    fn children(&mut self, dir: &OwnedFd, prefix: &str) -> Result<Vec<Child>, TransferError> {
        let mut listed = Dir::from_fd(dir.try_clone().map_err(|e| TransferError::Io {
            path: PathBuf::from(prefix),
            source: e,
        })?)
        .map_err(|errno| io_error(prefix, errno))?;
        let mut children = Vec::new();
        for entry in listed.iter() {
            let entry = entry.map_err(|errno| io_error(prefix, errno))?;
            let name = entry.file_name();
            let Ok(text) = std::str::from_utf8(name.to_bytes()) else {
                continue;
            };
            if matches!(text, "." | "..") || atomic::is_temp_name(text) {
                continue;
            }
            let path = if prefix.is_empty() {
                text.to_owned()
            } else {
                format!("{prefix}/{text}")
            };
            self.count(&path)?;
            let kind = match fstatat(dir.as_fd(), name, AtFlags::AT_SYMLINK_NOFOLLOW) {
                Ok(stat) => kind_of(stat.st_mode),
                Err(Errno::ENOENT) => continue,
                Err(errno) => return Err(io_error(&path, errno)),
            };
            let kind = if kind == Kind::Dir && is_skipped_dir(text) {
                Kind::Other
            } else {
                kind
            };
            let name = name.to_owned();
            children.push(Child { name, path, kind });
        }
        children.sort_by(|a, b| a.order_key().cmp(b.order_key()));
        Ok(children)
    }

    fn count(&mut self, path: &str) -> Result<(), TransferError> {
        self.seen += 1;
        if self.seen > self.limits.max_entries {
            return Err(TransferError::ExportTooManyEntries {
                entry: path.to_owned(),
                limit: self.limits.max_entries,
            });
        }
        Ok(())
    }
}

/// Opens the file `child` of `dir`; `None` unless what was opened is a
/// regular file (a link, FIFO or socket swapped in since it was seen).
fn open_file(dir: &OwnedFd, child: &Child) -> Result<Option<(File, u64)>, TransferError> {
    let fd = match nix::fcntl::openat(
        dir.as_fd(),
        child.name.as_c_str(),
        file_flags(),
        Mode::empty(),
    ) {
        Ok(fd) => fd,
        Err(Errno::ELOOP | Errno::ENOENT | Errno::ENXIO) => return Ok(None),
        Err(errno) => return Err(io_error(&child.path, errno)),
    };
    let stat = fstat(fd.as_fd()).map_err(|errno| io_error(&child.path, errno))?;
    if kind_of(stat.st_mode) != Kind::File {
        return Ok(None);
    }
    let size = u64::try_from(stat.st_size).unwrap_or(0);
    Ok(Some((File::from(fd), size)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    fn files(root: &Path, limits: WalkLimits) -> Result<Vec<(String, Vec<u8>)>, TransferError> {
        let mut found = Vec::new();
        walk(root, limits, &mut |mut file| {
            let mut bytes = Vec::new();
            file.file.read_to_end(&mut bytes).unwrap();
            assert_eq!(bytes.len() as u64, file.size, "{}", file.path);
            found.push((file.path.to_owned(), bytes));
            Ok(())
        })?;
        Ok(found)
    }

    fn write(root: &Path, path: &str, bytes: &[u8]) {
        let path = root.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, bytes).unwrap();
    }

    #[test]
    fn files_come_in_path_order_without_skipped_folders_or_temporary_files() {
        let root = tempfile::tempdir().unwrap();
        let root = root.path();
        for path in [
            "a-c",
            "a/b",
            "a.js",
            "src/z/y.js",
            "src/x.js",
            "node_modules/r/i.js",
        ] {
            write(root, path, path.as_bytes());
        }
        write(root, "web/dist/app.js", b"built");
        write(root, "src/.rivet-write-1.tmp", b"half");
        assert!(
            atomic::is_temp_name(".rivet-write-1.tmp"),
            "the temp name rule changed"
        );
        let paths: Vec<String> = files(root, WalkLimits::default())
            .unwrap()
            .into_iter()
            .map(|(path, bytes)| {
                assert_eq!(path.as_bytes(), bytes);
                path
            })
            .collect();
        let mut sorted = paths.clone();
        sorted.sort();
        assert_eq!(paths, sorted);
        assert_eq!(paths, ["a-c", "a.js", "a/b", "src/x.js", "src/z/y.js"]);
    }

    #[test]
    fn a_missing_workspace_has_no_files() {
        let root = tempfile::tempdir().unwrap();
        let files = files(&root.path().join("never-made"), WalkLimits::default()).unwrap();
        assert!(files.is_empty());
    }

    #[test]
    fn links_to_files_and_folders_outside_are_not_followed() {
        let outside = tempfile::tempdir().unwrap();
        write(outside.path(), "secret/key", b"secret");
        let root = tempfile::tempdir().unwrap();
        write(root.path(), "ok.txt", b"ok");
        std::os::unix::fs::symlink(outside.path().join("secret/key"), root.path().join("key"))
            .unwrap();
        std::os::unix::fs::symlink(outside.path().join("secret"), root.path().join("dir")).unwrap();
        let files = files(root.path(), WalkLimits::default()).unwrap();
        assert_eq!(files, [("ok.txt".to_owned(), b"ok".to_vec())]);
    }

    #[test]
    fn a_project_with_more_entries_than_the_export_limit_is_refused() {
        let root = tempfile::tempdir().unwrap();
        for n in 0..4 {
            write(root.path(), &format!("src/{n}.js"), b"x");
        }
        let limits = WalkLimits {
            max_entries: 4,
            ..WalkLimits::default()
        };
        let err = files(root.path(), limits).unwrap_err();
        assert!(
            matches!(&err, TransferError::ExportTooManyEntries { limit: 4, .. }),
            "{err:?}"
        );
    }

    #[test]
    fn a_folder_nested_deeper_than_the_export_limit_is_refused() {
        let root = tempfile::tempdir().unwrap();
        write(root.path(), "a/b/c/d.js", b"deep");
        let limits = WalkLimits {
            max_depth: 2,
            ..WalkLimits::default()
        };
        let err = files(root.path(), limits).unwrap_err();
        assert!(
            matches!(&err, TransferError::ExportTooDeep { entry, limit: 2 } if entry == "a/b/c"),
            "{err:?}"
        );
        let limits = WalkLimits {
            max_depth: 3,
            ..WalkLimits::default()
        };
        assert_eq!(files(root.path(), limits).unwrap().len(), 1);
    }
}
