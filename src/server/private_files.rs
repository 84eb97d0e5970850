//! One JSON file per project that only the IDE's user can read: 0600, in a
//! 0700 folder of the data directory, replaced atomically. App secrets and
//! git remotes (with their tokens) are kept this way, never in `rivet.db`;
//! [`read_json`] and [`write_json`] serve other private files alike (the
//! owner's MCP servers).

use std::io;
use std::path::{Path, PathBuf};

use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::runtime::project::ProjectId;
use crate::server::atomic;

#[derive(Debug, Clone)]
pub struct PrivateFiles {
    dir: PathBuf,
}

impl PrivateFiles {
    /// The files of `<data_dir>/<folder>`.
    pub fn new(data_dir: &Path, folder: &str) -> PrivateFiles {
        PrivateFiles {
            dir: data_dir.join(folder),
        }
    }

    fn file(&self, project: &ProjectId) -> PathBuf {
        self.dir.join(format!("{}.json", project.as_str()))
    }

    /// The project's value; `None` when it has none. A file that does not
    /// parse is an error, never an empty value.
    pub fn read<T: DeserializeOwned>(&self, project: &ProjectId) -> io::Result<Option<T>> {
        read_json(&self.file(project))
    }

    /// Replaces the project's value.
    pub fn write<T: Serialize>(&self, project: &ProjectId, value: &T) -> io::Result<()> {
        write_json(&self.file(project), value)
    }

    /// Forgets the project's value (it was deleted).
    pub fn remove(&self, project: &ProjectId) -> io::Result<()> {
        match std::fs::remove_file(self.file(project)) {
            Err(e) if e.kind() != io::ErrorKind::NotFound => Err(e),
            _ => Ok(()),
        }
    }
}

/// The value in a private JSON file; `None` when there is no file. A file
/// that does not parse is an error, never an empty value.
pub fn read_json<T: DeserializeOwned>(file: &Path) -> io::Result<Option<T>> {
    match std::fs::read(file) {
        Ok(bytes) => serde_json::from_slice(&bytes)
            .map(Some)
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

/// Replaces a private JSON file (0600, in a 0700 folder), atomically.
pub fn write_json<T: Serialize>(file: &Path, value: &T) -> io::Result<()> {
    use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
    let dir = file.parent().unwrap_or(Path::new("."));
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)?;
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))?;
    let json = serde_json::to_vec(value).map_err(io::Error::other)?;
    atomic::write_private(file, &json)
}
