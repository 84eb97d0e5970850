//! File operations the helper performs for the IDE, inside the sandbox: they
//! run as the sandbox's user and see only what the sandbox sees, so a symlink
//! planted by code in the project cannot lead them to the host's files.
//!
//! They accept only regular files (and directories where a directory is
//! meant): a FIFO, socket, device or symlink planted under a file's name is
//! refused with a clear error, and never opened in a way that could block.
//! Writes are atomic (`server::atomic`). Listings skip the folders of
//! `runtime::tree` and stop at [`MAX_ENTRIES`] entries or [`MAX_LISTING_BYTES`]
//! of encoded entries, whichever comes first, so a reply always fits the
//! wire format's header.

use std::fs;
use std::io::{self, Read};
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use super::wire::{ErrorKind, HelperError, MAX_HEADER, MAX_PAYLOAD, Op, Reply};
use crate::runtime::host::{DirEntry, EntryKind};
use crate::runtime::path::ProjectPath;
use crate::runtime::tree::is_skipped_dir;
use crate::server::atomic;

/// Most entries one listing returns; a longer one is cut short and marked
/// truncated.
pub const MAX_ENTRIES: usize = 10_000;
/// Most bytes of encoded entries one listing returns (long names reach this
/// before [`MAX_ENTRIES`]); well under the wire format's [`MAX_HEADER`].
pub const MAX_LISTING_BYTES: usize = MAX_HEADER * 3 / 4;

/// What a listing found, and whether it was cut short.
#[derive(Debug, Default)]
pub struct Listing {
    pub entries: Vec<DirEntry>,
    pub truncated: bool,
}

impl Listing {
    /// Adds an entry if it fits; returns false (and marks the listing
    /// truncated) when it does not.
    fn push(&mut self, entry: DirEntry, bytes: &mut usize) -> bool {
        // The entry as it will be encoded, and the comma after it.
        let size = serde_json::to_vec(&entry).map_or(usize::MAX, |v| v.len() + 1);
        if self.entries.len() >= MAX_ENTRIES || bytes.saturating_add(size) > MAX_LISTING_BYTES {
            self.truncated = true;
            return false;
        }
        *bytes += size;
        self.entries.push(entry);
        true
    }
}

/// Runs one file operation; the reply and, for a read, the file's contents.
pub fn perform(root: &Path, op: Op, payload: &[u8]) -> Result<(Reply, Vec<u8>), HelperError> {
    let done = |r: Result<(), HelperError>| r.map(|()| (Reply::Done, Vec::new()));
    match op {
        Op::ReadFile { path } => read_file(root, &path).map(|contents| (Reply::File, contents)),
        Op::WriteFile { path } => done(write_file(root, &path, payload)),
        Op::Mkdir { path } => done(mkdir(root, &path)),
        Op::Remove { path } => done(remove(root, &path)),
        Op::Rename { from, to } => done(rename(root, &from, &to)),
        Op::List { path, recursive } => list(root, &path, recursive).map(|listing| {
            let reply = Reply::Entries {
                entries: listing.entries,
                truncated: listing.truncated,
            };
            (reply, Vec::new())
        }),
        Op::Spawn(_)
        | Op::KillTree { .. }
        | Op::Connect { .. }
        | Op::Listen { .. }
        | Op::Shutdown => Err(HelperError::invalid("not a file operation")),
    }
}

fn error(path: &ProjectPath, op: &str, e: &io::Error) -> HelperError {
    let kind = match e.kind() {
        io::ErrorKind::NotFound => ErrorKind::NotFound,
        _ if e.raw_os_error() == Some(libc::ELOOP) => {
            return HelperError::invalid(format!(
                "{op} {path}: is a symbolic link (file operations do not follow links)"
            ));
        }
        _ => ErrorKind::Io,
    };
    HelperError {
        kind,
        message: format!("{op} {path}: {e}"),
    }
}

/// Refuses anything but a regular file, naming what it is.
fn regular_only(path: &ProjectPath, op: &str, kind: fs::FileType) -> Result<(), HelperError> {
    let what = if kind.is_file() {
        return Ok(());
    } else if kind.is_dir() {
        "a directory"
    } else if kind.is_symlink() {
        "a symbolic link (file operations do not follow links)"
    } else if kind.is_fifo() {
        "a FIFO"
    } else if kind.is_socket() {
        "a socket"
    } else if kind.is_block_device() || kind.is_char_device() {
        "a device"
    } else {
        "something else"
    };
    Err(HelperError::invalid(format!(
        "{op} {path}: is {what}, not a regular file"
    )))
}

pub fn resolve(root: &Path, raw: &str) -> Result<(ProjectPath, PathBuf), HelperError> {
    let path = ProjectPath::parse_any(raw)
        .map_err(|e| HelperError::invalid(format!("invalid path {raw:?}: {e}")))?;
    let full = root.join(path.as_str());
    Ok((path, full))
}

fn not_root(path: &ProjectPath, op: &str) -> Result<(), HelperError> {
    if path.is_root() {
        return Err(HelperError::invalid(format!(
            "cannot {op} the project's root"
        )));
    }
    Ok(())
}

pub fn read_file(root: &Path, raw: &str) -> Result<Vec<u8>, HelperError> {
    let (path, full) = resolve(root, raw)?;
    let kind = fs::symlink_metadata(&full)
        .map_err(|e| error(&path, "read", &e))?
        .file_type();
    regular_only(&path, "read", kind)?;
    // Checked again on what was opened: a FIFO or link swapped in meanwhile
    // neither blocks (O_NONBLOCK) nor is followed (O_NOFOLLOW).
    let mut file = fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOFOLLOW)
        .open(&full)
        .map_err(|e| error(&path, "read", &e))?;
    let meta = file.metadata().map_err(|e| error(&path, "read", &e))?;
    regular_only(&path, "read", meta.file_type())?;
    if meta.len() > MAX_PAYLOAD as u64 {
        return Err(HelperError::invalid(format!(
            "read {path}: larger than {} MiB",
            MAX_PAYLOAD >> 20
        )));
    }
    let mut contents = Vec::with_capacity(meta.len() as usize);
    file.by_ref()
        .take(MAX_PAYLOAD as u64)
        .read_to_end(&mut contents)
        .map_err(|e| error(&path, "read", &e))?;
    Ok(contents)
}

/// Writes a whole file atomically; what stands under its name must be a
/// regular file or nothing.
pub fn write_file(root: &Path, raw: &str, contents: &[u8]) -> Result<(), HelperError> {
    let (path, full) = resolve(root, raw)?;
    not_root(&path, "write")?;
    if let Some(parent) = full.parent() {
        fs::create_dir_all(parent).map_err(|e| error(&path, "write", &e))?;
    }
    match fs::symlink_metadata(&full) {
        Ok(meta) => regular_only(&path, "write", meta.file_type())?,
        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
        Err(e) => return Err(error(&path, "write", &e)),
    }
    atomic::write(&full, contents).map_err(|e| error(&path, "write", &e))
}

pub fn mkdir(root: &Path, raw: &str) -> Result<(), HelperError> {
    let (path, full) = resolve(root, raw)?;
    fs::create_dir_all(&full).map_err(|e| error(&path, "mkdir", &e))
}

pub fn remove(root: &Path, raw: &str) -> Result<(), HelperError> {
    let (path, full) = resolve(root, raw)?;
    not_root(&path, "remove")?;
    let meta = fs::symlink_metadata(&full).map_err(|e| error(&path, "remove", &e))?;
    // Neither removal opens a file, nor follows a link.
    let result = if meta.is_dir() {
        fs::remove_dir_all(&full)
    } else {
        fs::remove_file(&full)
    };
    result.map_err(|e| error(&path, "remove", &e))
}

pub fn rename(root: &Path, from: &str, to: &str) -> Result<(), HelperError> {
    let (from_path, from_full) = resolve(root, from)?;
    let (to_path, to_full) = resolve(root, to)?;
    not_root(&from_path, "move")?;
    not_root(&to_path, "replace")?;
    if let Some(parent) = to_full.parent() {
        fs::create_dir_all(parent).map_err(|e| error(&to_path, "rename", &e))?;
    }
    fs::rename(&from_full, &to_full).map_err(|e| error(&from_path, "rename", &e))
}

fn entry(root: &Path, full: &Path) -> Option<DirEntry> {
    let meta = fs::symlink_metadata(full).ok()?;
    let kind = meta.file_type();
    let kind = if kind.is_dir() {
        EntryKind::Dir
    } else if kind.is_file() {
        EntryKind::File
    } else if kind.is_symlink() {
        EntryKind::Symlink
    } else {
        EntryKind::Other
    };
    let path = full.strip_prefix(root).ok()?.to_str()?.to_owned();
    Some(DirEntry {
        path,
        kind,
        size: if kind == EntryKind::File {
            meta.len()
        } else {
            0
        },
        modified: meta
            .modified()
            .ok()
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .and_then(|d| u64::try_from(d.as_millis()).ok()),
    })
}

fn read_dir(root: &Path, dir: &Path) -> io::Result<Vec<DirEntry>> {
    let mut entries: Vec<DirEntry> = fs::read_dir(dir)?
        .filter_map(Result::ok)
        .filter(|e| !atomic::is_temp_name(&e.file_name().to_string_lossy()))
        .filter_map(|e| entry(root, &e.path()))
        .collect();
    entries.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(entries)
}

/// The entries of a directory, or (`recursive`) of everything below it but
/// the skipped folders' insides, in path order; cut short past
/// [`MAX_ENTRIES`] or [`MAX_LISTING_BYTES`].
pub fn list(root: &Path, raw: &str, recursive: bool) -> Result<Listing, HelperError> {
    let (path, full) = resolve(root, raw)?;
    let top = read_dir(root, &full).map_err(|e| error(&path, "list", &e))?;
    let mut listing = Listing::default();
    let mut bytes = 0;
    let mut stack: Vec<DirEntry> = top.into_iter().rev().collect();
    while let Some(entry) = stack.pop() {
        let enter = recursive
            && entry.kind == EntryKind::Dir
            && !entry.path.rsplit('/').next().is_some_and(is_skipped_dir);
        let dir = enter.then(|| root.join(&entry.path));
        if !listing.push(entry, &mut bytes) {
            break;
        }
        // A directory that vanished or cannot be read is listed, empty.
        if let Some(Ok(children)) = dir.map(|d| read_dir(root, &d)) {
            stack.extend(children.into_iter().rev());
        }
    }
    Ok(listing)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn paths(listing: Listing) -> Vec<String> {
        listing.entries.into_iter().map(|e| e.path).collect()
    }

    #[test]
    fn files_round_trip_and_trees_skip_dependencies() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        write_file(root, "src/a/b.txt", b"hello").unwrap();
        write_file(root, "node_modules/x/index.js", b"x").unwrap();
        write_file(root, "web/dist/bundle.js", b"x").unwrap();
        write_file(root, "README.md", b"r").unwrap();
        assert_eq!(read_file(root, "./src/a/b.txt").unwrap(), b"hello");
        rename(root, "src/a/b.txt", "lib/c.txt").unwrap();
        assert_eq!(read_file(root, "lib/c.txt").unwrap(), b"hello");
        let listing = list(root, "", true).unwrap();
        assert!(!listing.truncated);
        assert_eq!(
            paths(listing),
            [
                "README.md",
                "lib",
                "lib/c.txt",
                "node_modules",
                "src",
                "src/a",
                "web",
                "web/dist"
            ]
        );
        remove(root, "src").unwrap();
        let err = read_file(root, "src/a/b.txt").unwrap_err();
        assert_eq!(err.kind, ErrorKind::NotFound);
    }

    #[test]
    fn odd_files_and_paths_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        assert_eq!(
            read_file(root, "../x").unwrap_err().kind,
            ErrorKind::Invalid
        );
        assert_eq!(remove(root, "").unwrap_err().kind, ErrorKind::Invalid);
        assert_eq!(
            write_file(root, ".git/config", b"").unwrap_err().kind,
            ErrorKind::Invalid
        );
        std::fs::create_dir(root.join("folder")).unwrap();
        let err = write_file(root, "folder", b"x").unwrap_err();
        assert!(err.message.contains("is a directory"), "{}", err.message);
    }

    /// Runs `f` on a thread and fails the test if it has not returned
    /// within a (generous) minute: a blocked helper would never return.
    fn returns<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let _ = tx.send(f());
        });
        rx.recv_timeout(std::time::Duration::from_secs(60))
            .expect("the file operation blocked")
    }

    #[test]
    fn a_fifo_in_place_of_a_file_does_not_block_the_helper() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().to_owned();
        nix::unistd::mkfifo(&root.join("App.jsx"), nix::sys::stat::Mode::S_IRWXU).unwrap();
        let read = returns({
            let root = root.clone();
            move || read_file(&root, "App.jsx")
        });
        let err = read.unwrap_err();
        assert_eq!(err.kind, ErrorKind::Invalid);
        assert!(err.message.contains("is a FIFO"), "{}", err.message);
        let write = returns({
            let root = root.clone();
            move || write_file(&root, "App.jsx", b"export default 1")
        });
        let err = write.unwrap_err();
        assert_eq!(err.kind, ErrorKind::Invalid);
        assert!(err.message.contains("is a FIFO"), "{}", err.message);
        // Still a FIFO: the write replaced nothing.
        let kind = std::fs::symlink_metadata(root.join("App.jsx"))
            .unwrap()
            .file_type();
        assert!(kind.is_fifo());
    }

    #[test]
    fn a_symlink_in_place_of_a_file_is_neither_read_nor_written_through() {
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        let secret = outside.path().join("secret");
        std::fs::write(&secret, "secret").unwrap();
        let root = dir.path();
        std::os::unix::fs::symlink(&secret, root.join("link")).unwrap();
        let err = read_file(root, "link").unwrap_err();
        assert!(err.message.contains("symbolic link"), "{}", err.message);
        let err = write_file(root, "link", b"overwritten").unwrap_err();
        assert!(err.message.contains("symbolic link"), "{}", err.message);
        assert_eq!(std::fs::read(&secret).unwrap(), b"secret");
    }

    #[test]
    fn a_listing_too_large_for_one_reply_is_cut_short_and_says_so() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let long = "n".repeat(200);
        // 5000 names of 200 bytes: more than a megabyte of names.
        for i in 0..5000 {
            std::fs::write(root.join(format!("{long}{i:05}")), "").unwrap();
        }
        for recursive in [false, true] {
            let listing = list(root, "", recursive).unwrap();
            assert!(listing.truncated);
            assert!(!listing.entries.is_empty());
            let encoded = serde_json::to_vec(&listing.entries).unwrap();
            assert!(encoded.len() <= MAX_LISTING_BYTES, "{}", encoded.len());
        }
        // Many short names stop at the entry limit.
        let many = tempfile::tempdir().unwrap();
        for i in 0..MAX_ENTRIES + 10 {
            std::fs::write(many.path().join(i.to_string()), "").unwrap();
        }
        let listing = list(many.path(), "", true).unwrap();
        assert!(listing.truncated);
        assert_eq!(listing.entries.len(), MAX_ENTRIES);
    }

    #[test]
    fn atomic_writes_leave_no_temporary_file_in_listings() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        write_file(root, "a.txt", b"1").unwrap();
        write_file(root, "a.txt", b"2").unwrap();
        std::fs::write(root.join(".rivet-write-0123456789abcdef.tmp"), "x").unwrap();
        assert_eq!(paths(list(root, "", false).unwrap()), ["a.txt"]);
        assert_eq!(read_file(root, "a.txt").unwrap(), b"2");
    }
}
