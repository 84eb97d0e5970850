//! File operations the agent performs for the IDE, inside the sandbox: they
//! run as the sandbox's user and see only what the sandbox sees, so a symlink
//! planted by code in the project cannot lead them to the host's files.

use std::fs;
use std::io::{self, Read};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use super::protocol::{AgentError, ErrorKind, MAX_PAYLOAD};
use crate::runtime::host::{DirEntry, EntryKind, WorkspacePath};

/// Most entries one recursive listing returns.
pub const MAX_ENTRIES: usize = 100_000;
/// Directories a recursive listing shows but does not enter.
pub const UNEXPANDED: [&str; 2] = ["node_modules", ".git"];

fn error(path: &WorkspacePath, op: &str, e: &io::Error) -> AgentError {
    let kind = if e.kind() == io::ErrorKind::NotFound {
        ErrorKind::NotFound
    } else {
        ErrorKind::Io
    };
    AgentError {
        kind,
        message: format!("{op} {path}: {e}"),
    }
}

pub fn resolve(root: &Path, raw: &str) -> Result<(WorkspacePath, PathBuf), AgentError> {
    let path = WorkspacePath::parse(raw).map_err(|e| AgentError::invalid(e.to_string()))?;
    let full = root.join(path.as_str());
    Ok((path, full))
}

fn not_root(path: &WorkspacePath, op: &str) -> Result<(), AgentError> {
    if path.is_root() {
        return Err(AgentError::invalid(format!(
            "cannot {op} the project's root"
        )));
    }
    Ok(())
}

pub fn read_file(root: &Path, raw: &str) -> Result<Vec<u8>, AgentError> {
    let (path, full) = resolve(root, raw)?;
    // O_NONBLOCK: a FIFO planted under a source file's name must not hang
    // the agent; it is refused below as not a regular file.
    let mut file = fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(&full)
        .map_err(|e| error(&path, "read", &e))?;
    let meta = file.metadata().map_err(|e| error(&path, "read", &e))?;
    if !meta.is_file() {
        return Err(AgentError::invalid(format!(
            "read {path}: not a regular file"
        )));
    }
    if meta.len() > MAX_PAYLOAD as u64 {
        return Err(AgentError::invalid(format!(
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

pub fn write_file(root: &Path, raw: &str, contents: &[u8]) -> Result<(), AgentError> {
    let (path, full) = resolve(root, raw)?;
    not_root(&path, "write")?;
    if let Some(parent) = full.parent() {
        fs::create_dir_all(parent).map_err(|e| error(&path, "write", &e))?;
    }
    fs::write(&full, contents).map_err(|e| error(&path, "write", &e))
}

pub fn mkdir(root: &Path, raw: &str) -> Result<(), AgentError> {
    let (path, full) = resolve(root, raw)?;
    fs::create_dir_all(&full).map_err(|e| error(&path, "mkdir", &e))
}

pub fn remove(root: &Path, raw: &str) -> Result<(), AgentError> {
    let (path, full) = resolve(root, raw)?;
    not_root(&path, "remove")?;
    let meta = fs::symlink_metadata(&full).map_err(|e| error(&path, "remove", &e))?;
    let result = if meta.is_dir() {
        fs::remove_dir_all(&full)
    } else {
        fs::remove_file(&full)
    };
    result.map_err(|e| error(&path, "remove", &e))
}

pub fn rename(root: &Path, from: &str, to: &str) -> Result<(), AgentError> {
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
    })
}

fn read_dir(root: &Path, dir: &Path) -> io::Result<Vec<DirEntry>> {
    let mut entries: Vec<DirEntry> = fs::read_dir(dir)?
        .filter_map(Result::ok)
        .filter_map(|e| entry(root, &e.path()))
        .collect();
    entries.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(entries)
}

pub fn list(root: &Path, raw: &str, recursive: bool) -> Result<Vec<DirEntry>, AgentError> {
    let (path, full) = resolve(root, raw)?;
    let top = read_dir(root, &full).map_err(|e| error(&path, "list", &e))?;
    if !recursive {
        return Ok(top);
    }
    let mut all = Vec::new();
    let mut stack: Vec<DirEntry> = top.into_iter().rev().collect();
    while let Some(entry) = stack.pop() {
        if all.len() >= MAX_ENTRIES {
            break;
        }
        let enter = entry.kind == EntryKind::Dir
            && !entry
                .path
                .rsplit('/')
                .next()
                .is_some_and(|name| UNEXPANDED.contains(&name));
        if enter {
            // A directory that vanished or cannot be read is listed, empty.
            if let Ok(children) = read_dir(root, &root.join(&entry.path)) {
                stack.extend(children.into_iter().rev());
            }
        }
        all.push(entry);
    }
    Ok(all)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_round_trip_and_trees_skip_dependencies() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        write_file(root, "src/a/b.txt", b"hello").unwrap();
        write_file(root, "node_modules/x/index.js", b"x").unwrap();
        write_file(root, "README.md", b"r").unwrap();
        assert_eq!(read_file(root, "./src/a/b.txt").unwrap(), b"hello");
        rename(root, "src/a/b.txt", "lib/c.txt").unwrap();
        assert_eq!(read_file(root, "lib/c.txt").unwrap(), b"hello");
        let paths: Vec<String> = list(root, "", true)
            .unwrap()
            .into_iter()
            .map(|e| e.path)
            .collect();
        assert_eq!(
            paths,
            [
                "README.md",
                "lib",
                "lib/c.txt",
                "node_modules",
                "src",
                "src/a"
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
        nix::unistd::mkfifo(&root.join("pipe"), nix::sys::stat::Mode::S_IRWXU).unwrap();
        assert_eq!(
            read_file(root, "pipe").unwrap_err().kind,
            ErrorKind::Invalid
        );
        assert_eq!(
            read_file(root, "../x").unwrap_err().kind,
            ErrorKind::Invalid
        );
        assert_eq!(remove(root, "").unwrap_err().kind, ErrorKind::Invalid);
        assert_eq!(
            write_file(root, ".git/config", b"").unwrap_err().kind,
            ErrorKind::Invalid
        );
    }
}
