//! The programs Rivet runs on the host itself (git for checkpoints, bwrap,
//! slirp4netns, node and npm) are found here, by one rule: only absolute
//! directories are searched, the absolute entries of the IDE's `PATH` first,
//! then the usual system directories. An empty entry, `.` or any other
//! relative entry is ignored: it names a directory relative to wherever the
//! program happens to run, which for checkpoints is the project's workspace,
//! so a project file named `git` would run on the host. The programs found
//! are run by their absolute path, and given [`path_env`] (the same absolute
//! directories) as their `PATH`.

use std::collections::HashMap;
use std::ffi::{OsStr, OsString};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock, PoisonError};

/// Searched after the absolute entries of the IDE's `PATH`.
pub const SYSTEM_DIRS: [&str; 6] = [
    "/usr/local/sbin",
    "/usr/local/bin",
    "/usr/sbin",
    "/usr/bin",
    "/sbin",
    "/bin",
];

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HostToolError {
    #[error("`{name}` is not installed on this machine (searched {searched})")]
    Missing { name: String, searched: String },
    #[error("`{0}` is not a program name (a host program is looked up by its bare name)")]
    NotAName(String),
}

/// The directories host programs are looked up in, in order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SearchPath {
    dirs: Vec<PathBuf>,
}

impl SearchPath {
    /// The absolute entries of `path` (a `PATH` value), then [`SYSTEM_DIRS`],
    /// each once.
    pub fn new(path: Option<&OsStr>) -> SearchPath {
        let given = path.into_iter().flat_map(std::env::split_paths);
        let mut dirs: Vec<PathBuf> = Vec::new();
        for dir in given
            .filter(|dir| dir.is_absolute())
            .chain(SYSTEM_DIRS.map(PathBuf::from))
        {
            if !dirs.contains(&dir) {
                dirs.push(dir);
            }
        }
        SearchPath { dirs }
    }

    pub fn dirs(&self) -> &[PathBuf] {
        &self.dirs
    }

    /// The directories as a `PATH` value. No entry holds a `:`, since each
    /// came out of a split `PATH` or is a system directory.
    pub fn to_env(&self) -> OsString {
        let mut joined = OsString::new();
        for (index, dir) in self.dirs.iter().enumerate() {
            if index > 0 {
                joined.push(":");
            }
            joined.push(dir);
        }
        joined
    }

    /// The absolute path of the first executable file called `name`.
    pub fn find(&self, name: &str) -> Result<PathBuf, HostToolError> {
        if name.is_empty() || name == "." || name == ".." || name.contains('/') {
            return Err(HostToolError::NotAName(name.to_owned()));
        }
        self.dirs
            .iter()
            .map(|dir| dir.join(name))
            .find(|candidate| is_executable(candidate))
            .ok_or_else(|| HostToolError::Missing {
                name: name.to_owned(),
                searched: self.to_env().to_string_lossy().into_owned(),
            })
    }
}

fn is_executable(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// The IDE's own search path, read from its `PATH` once.
pub fn host() -> &'static SearchPath {
    static HOST: OnceLock<SearchPath> = OnceLock::new();
    HOST.get_or_init(|| SearchPath::new(std::env::var_os("PATH").as_deref()))
}

/// The `PATH` every host program Rivet starts is given.
pub fn path_env() -> &'static OsStr {
    static ENV: OnceLock<OsString> = OnceLock::new();
    ENV.get_or_init(|| host().to_env())
}

/// `name` on the IDE's search path. A program once found is remembered; a
/// missing one is looked for again next time (it may have been installed).
pub fn find(name: &str) -> Result<PathBuf, HostToolError> {
    static FOUND: OnceLock<Mutex<HashMap<String, PathBuf>>> = OnceLock::new();
    let found = FOUND.get_or_init(Mutex::default);
    if let Some(path) = found
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .get(name)
    {
        return Ok(path.clone());
    }
    let path = host().find(name)?;
    found
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .insert(name.to_owned(), path.clone());
    Ok(path)
}

#[cfg(test)]
mod tests;
