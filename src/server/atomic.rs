//! Crash-safe small writes: the new contents go to a temporary file in the
//! same directory, are flushed to disk, and the file is renamed over the
//! old one. A crash or a `kill -9` at any point leaves either the old file
//! or the new one, never half of either (at worst a stray temporary file).

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// Temporary files are named `.rivet-write-<random>.tmp`.
const TEMP_PREFIX: &str = ".rivet-write-";
const TEMP_SUFFIX: &str = ".tmp";

/// Whether a file name is one of this module's temporary files (listings
/// and the file watcher leave them out).
pub fn is_temp_name(name: &str) -> bool {
    name.starts_with(TEMP_PREFIX) && name.ends_with(TEMP_SUFFIX)
}

/// Replaces `path` with `contents`, atomically. A file that exists keeps its
/// permission bits; a new one gets the usual `0666 & !umask`.
pub fn write(path: &Path, contents: &[u8]) -> io::Result<()> {
    write_with(path, |file| file.write_all(contents))
}

/// Replaces `path` with `contents`, atomically, as a file only its owner can
/// read or write (0600), whatever the file was before: for secrets, which
/// are never readable by others, not even while being written.
pub fn write_private(path: &Path, contents: &[u8]) -> io::Result<()> {
    replace(path, Mode::Private, |file| file.write_all(contents))
}

/// Like [`write`], with the contents written by `fill`. When `fill` fails,
/// `path` is left as it was.
pub fn write_with(path: &Path, fill: impl FnOnce(&mut File) -> io::Result<()>) -> io::Result<()> {
    replace(path, Mode::Keep, fill)
}

/// The permissions of the file that replaces another.
#[derive(Clone, Copy)]
enum Mode {
    /// Those of the file replaced; `0666 & !umask` for a new one.
    Keep,
    /// 0600, from the moment the temporary file exists.
    Private,
}

fn replace(
    path: &Path,
    mode: Mode,
    fill: impl FnOnce(&mut File) -> io::Result<()>,
) -> io::Result<()> {
    let dir = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    let (create_mode, mode) = match mode {
        Mode::Private => (0o600, Some(0o600)),
        Mode::Keep => match std::fs::symlink_metadata(path) {
            Ok(meta) if meta.is_file() => (0o666, Some(meta.permissions().mode() & 0o777)),
            _ => (0o666, None),
        },
    };
    let (mut file, temp) = create_temp(dir, create_mode)?;
    let written = (|| {
        if let Some(mode) = mode {
            file.set_permissions(std::fs::Permissions::from_mode(mode))?;
        }
        fill(&mut file)?;
        file.sync_all()?;
        drop(file);
        std::fs::rename(&temp, path)
    })();
    if let Err(e) = written {
        let _ = std::fs::remove_file(&temp);
        return Err(e);
    }
    // The rename itself reaches the disk with the directory.
    if let Ok(dir) = File::open(dir) {
        let _ = dir.sync_all();
    }
    Ok(())
}

/// A new file of a fresh name in `dir`, never an existing file or link,
/// created with `mode` (less the umask).
fn create_temp(dir: &Path, mode: u32) -> io::Result<(File, PathBuf)> {
    let mut last = io::Error::from(io::ErrorKind::AlreadyExists);
    for _ in 0..8 {
        let name = format!("{TEMP_PREFIX}{:016x}{TEMP_SUFFIX}", rand::random::<u64>());
        let temp = dir.join(name);
        let created = OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(mode)
            .custom_flags(libc::O_NOFOLLOW)
            .open(&temp);
        match created {
            Ok(file) => return Ok((file, temp)),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => last = e,
            Err(e) => return Err(e),
        }
    }
    Err(last)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn a_write_cut_off_halfway_leaves_the_old_file_whole() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("App.jsx");
        write(&path, b"old contents").unwrap();
        let cut = write_with(&path, |file| {
            file.write_all(b"new con")?;
            // Halfway through, the file under its name is still the old one.
            assert_eq!(std::fs::read(&path).unwrap(), b"old contents");
            Err(io::Error::other("killed"))
        });
        assert!(cut.is_err());
        assert_eq!(std::fs::read(&path).unwrap(), b"old contents");
        assert_eq!(names(dir.path()), ["App.jsx"], "no temporary file is left");
        write(&path, b"new contents").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"new contents");
        assert_eq!(names(dir.path()), ["App.jsx"]);
    }

    #[test]
    fn a_replaced_file_keeps_its_permissions() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("run.sh");
        std::fs::write(&path, "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o751)).unwrap();
        write(&path, b"#!/bin/sh\necho hi\n").unwrap();
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o751);
    }

    #[test]
    fn a_private_file_is_owner_only_whatever_it_was() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("token");
        std::fs::write(&path, "old").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        write_private(&path, b"secret").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"secret");
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        let new = dir.path().join("settings.json");
        write_private(&new, b"{}").unwrap();
        let mode = std::fs::metadata(&new).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        assert_eq!(names(dir.path()), ["settings.json", "token"]);
    }

    #[test]
    fn temporary_names_are_recognised() {
        assert!(is_temp_name(".rivet-write-00ff00ff00ff00ff.tmp"));
        assert!(!is_temp_name("App.jsx"));
        assert!(!is_temp_name(".rivet-write-notes.md"));
    }
}
