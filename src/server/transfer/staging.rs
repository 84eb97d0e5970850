//! Where an import is written before it becomes a project: a temporary
//! directory under `<data_dir>/imports/`, filled entry by entry under
//! [`Limits`] that are checked on the bytes really written (never on sizes
//! an archive declares), and moved into place whole or removed whole.

use std::fs::{File, OpenOptions};
use std::io::{self, Read, Write};
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Component, Path, PathBuf};

use super::TransferError;
use crate::server::config::ImportConfig;

const MIB: u64 = 1024 * 1024;

/// How much one import may hold.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Files and folders, counted together.
    pub max_entries: usize,
    /// Bytes of one file.
    pub max_entry_bytes: u64,
    /// Bytes of every file together.
    pub max_total_bytes: u64,
}

impl Limits {
    /// The limits `[import]` sets.
    pub fn from_config(config: &ImportConfig) -> Limits {
        Limits {
            max_entries: config.max_entries,
            max_entry_bytes: config.max_file_mb.saturating_mul(MIB),
            max_total_bytes: config.max_total_mb.saturating_mul(MIB),
        }
    }
}

/// A temporary directory being filled; removed on drop unless placed.
pub struct Staging {
    dir: PathBuf,
    limits: Limits,
    entries: usize,
    total: u64,
    placed: bool,
}

fn io_error(path: &Path) -> impl FnOnce(io::Error) -> TransferError + '_ {
    move |source| TransferError::Io {
        path: path.to_owned(),
        source,
    }
}

impl Staging {
    /// A new, empty directory under `parent` (created if missing).
    pub fn new(parent: &Path, limits: Limits) -> Result<Staging, TransferError> {
        std::fs::create_dir_all(parent).map_err(io_error(parent))?;
        let dir = parent.join(format!("import-{:016x}", rand::random::<u64>()));
        std::fs::create_dir(&dir).map_err(io_error(&dir))?;
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700))
            .map_err(io_error(&dir))?;
        Ok(Staging {
            dir,
            limits,
            entries: 0,
            total: 0,
            placed: false,
        })
    }

    pub fn path(&self) -> &Path {
        &self.dir
    }

    pub fn limits(&self) -> Limits {
        self.limits
    }

    /// Counts one more entry against the entry limit.
    pub fn count(&mut self, entry: &str) -> Result<(), TransferError> {
        self.entries += 1;
        if self.entries > self.limits.max_entries {
            return Err(TransferError::TooManyEntries {
                entry: entry.to_owned(),
                limit: self.limits.max_entries,
            });
        }
        Ok(())
    }

    /// Counts `bytes` more of `entry`, whose size so far is `entry_size`.
    pub fn add_bytes(&mut self, entry: &str, entry_size: u64) -> Result<(), TransferError> {
        if entry_size > self.limits.max_entry_bytes {
            return Err(TransferError::EntryTooLarge {
                entry: entry.to_owned(),
                limit: self.limits.max_entry_bytes,
            });
        }
        if self.total + entry_size > self.limits.max_total_bytes {
            return Err(TransferError::TotalTooLarge {
                entry: entry.to_owned(),
                limit: self.limits.max_total_bytes,
            });
        }
        Ok(())
    }

    /// Creates the folder `entry` (a project-relative path).
    pub fn add_dir(&mut self, entry: &str) -> Result<(), TransferError> {
        let relative = safe_path(entry)?;
        self.count(entry)?;
        let path = self.dir.join(relative);
        std::fs::create_dir_all(&path).map_err(io_error(&path))
    }

    /// Writes the file `entry` from `reader`, stopping at the first byte
    /// over a limit.
    pub fn add_file(
        &mut self,
        entry: &str,
        reader: &mut dyn Read,
        executable: bool,
    ) -> Result<(), TransferError> {
        let relative = safe_path(entry)?;
        self.count(entry)?;
        let path = self.dir.join(relative);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(io_error(parent))?;
        }
        let mode = if executable { 0o755 } else { 0o644 };
        let mut file = OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(mode)
            .custom_flags(libc::O_NOFOLLOW)
            .open(&path)
            .map_err(io_error(&path))?;
        let written = self.copy(entry, reader, &mut file, &path)?;
        self.total += written;
        Ok(())
    }

    fn copy(
        &mut self,
        entry: &str,
        reader: &mut dyn Read,
        file: &mut File,
        path: &Path,
    ) -> Result<u64, TransferError> {
        let mut buf = vec![0u8; 64 * 1024];
        let mut size = 0u64;
        loop {
            let n = match reader.read(&mut buf) {
                Ok(0) => return Ok(size),
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(TransferError::Archive(format!("{entry}: {e}"))),
            };
            size += n as u64;
            self.add_bytes(entry, size)?;
            file.write_all(&buf[..n]).map_err(io_error(path))?;
        }
    }

    /// Makes the staged files the folder `target`, which must be missing or
    /// an empty folder.
    pub fn place(mut self, target: &Path) -> Result<(), TransferError> {
        match std::fs::remove_dir(target) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(source) => {
                return Err(TransferError::Io {
                    path: target.to_owned(),
                    source,
                });
            }
        }
        std::fs::rename(&self.dir, target).map_err(io_error(target))?;
        self.placed = true;
        Ok(())
    }
}

impl Drop for Staging {
    fn drop(&mut self) {
        if !self.placed {
            // Nothing of a refused import stays behind.
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
}

/// The project-relative path an entry names, refusing absolute paths and
/// paths that climb out (zip-slip). `.` parts and empty parts are dropped.
pub fn safe_path(entry: &str) -> Result<PathBuf, TransferError> {
    let refuse = |reason: &'static str| TransferError::UnsafePath {
        entry: entry.to_owned(),
        reason,
    };
    if entry.contains('\0') {
        return Err(refuse("it contains a NUL byte"));
    }
    let bytes = entry.as_bytes();
    let drive = bytes.len() >= 2 && bytes[0].is_ascii_alphabetic() && bytes[1] == b':';
    if entry.starts_with('/') || entry.starts_with('\\') || drive {
        return Err(refuse("it is an absolute path"));
    }
    let mut path = PathBuf::new();
    for part in entry.split(['/', '\\']) {
        match part {
            "" | "." => {}
            ".." => return Err(refuse("it leaves the project (`..`)")),
            part => path.push(part),
        }
    }
    // `split` leaves no separators, so only normal parts remain.
    if path
        .components()
        .any(|c| !matches!(c, Component::Normal(_)))
        || path.as_os_str().is_empty()
    {
        return Err(refuse("it names no file"));
    }
    Ok(path)
}

#[cfg(test)]
mod tests {
    use std::io::Read;

    use super::*;

    fn small() -> Limits {
        Limits {
            max_entries: 3,
            max_entry_bytes: 10,
            max_total_bytes: 15,
        }
    }

    #[test]
    fn paths_that_climb_out_or_are_absolute_are_refused() {
        for entry in [
            "../evil",
            "a/../../evil",
            "a/..",
            "/etc/passwd",
            "\\windows\\evil",
            "C:/evil",
            "a\\..\\..\\evil",
            "a\0b",
            "",
            "./",
        ] {
            let err = safe_path(entry).unwrap_err();
            assert!(matches!(err, TransferError::UnsafePath { .. }), "{entry}");
        }
        assert_eq!(safe_path("./src/a.js").unwrap(), PathBuf::from("src/a.js"));
        assert_eq!(safe_path("src//b/").unwrap(), PathBuf::from("src/b"));
    }

    #[test]
    fn a_reader_that_never_ends_is_stopped_at_the_limit() {
        let dir = tempfile::tempdir().unwrap();
        let mut staging = Staging::new(dir.path(), small()).unwrap();
        let err = staging
            .add_file("endless", &mut std::io::repeat(b'x'), false)
            .unwrap_err();
        assert!(
            matches!(err, TransferError::EntryTooLarge { .. }),
            "{err:?}"
        );
    }

    #[test]
    fn a_file_over_the_per_entry_limit_is_refused_while_written() {
        let dir = tempfile::tempdir().unwrap();
        let mut staging = Staging::new(dir.path(), small()).unwrap();
        staging
            .add_file("ok.txt", &mut &b"0123456789"[..], false)
            .unwrap();
        let err = staging
            .add_file("big.txt", &mut &b"01234567890"[..], false)
            .unwrap_err();
        assert!(
            matches!(&err, TransferError::EntryTooLarge { entry, limit: 10 } if entry == "big.txt"),
            "{err:?}"
        );
        assert!(err.to_string().contains("big.txt") && err.to_string().contains("10"));
    }

    #[test]
    fn the_total_limit_counts_the_bytes_really_written() {
        let dir = tempfile::tempdir().unwrap();
        let mut staging = Staging::new(dir.path(), small()).unwrap();
        staging
            .add_file("a", &mut &b"0123456789"[..], false)
            .unwrap();
        // Under the per-file limit, over the total.
        let err = staging
            .add_file("b", &mut std::io::repeat(b'x').take(8), false)
            .unwrap_err();
        assert!(
            matches!(&err, TransferError::TotalTooLarge { entry, limit: 15 } if entry == "b"),
            "{err:?}"
        );
    }

    #[test]
    fn entries_past_the_count_limit_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let mut staging = Staging::new(dir.path(), small()).unwrap();
        staging.add_dir("src").unwrap();
        staging.add_file("src/a", &mut &b""[..], false).unwrap();
        staging.add_file("src/b", &mut &b""[..], false).unwrap();
        let err = staging.add_file("src/c", &mut &b""[..], false).unwrap_err();
        assert!(
            matches!(&err, TransferError::TooManyEntries { entry, limit: 3 } if entry == "src/c"),
            "{err:?}"
        );
    }

    #[test]
    fn a_dropped_staging_leaves_nothing_and_a_placed_one_becomes_the_target() {
        let dir = tempfile::tempdir().unwrap();
        let imports = dir.path().join("imports");
        let mut staging = Staging::new(&imports, small()).unwrap();
        staging.add_file("a/b.txt", &mut &b"hi"[..], true).unwrap();
        drop(staging);
        assert_eq!(std::fs::read_dir(&imports).unwrap().count(), 0);

        let mut staging = Staging::new(&imports, small()).unwrap();
        staging.add_file("a/b.txt", &mut &b"hi"[..], true).unwrap();
        let target = dir.path().join("workspace");
        std::fs::create_dir(&target).unwrap();
        staging.place(&target).unwrap();
        assert_eq!(std::fs::read(target.join("a/b.txt")).unwrap(), b"hi");
        let mode = std::fs::metadata(target.join("a/b.txt"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o111, 0o111);
        assert_eq!(std::fs::read_dir(&imports).unwrap().count(), 0);
    }
}
