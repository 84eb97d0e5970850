//! The contract between the actions and the place they run in: a project's
//! files, its processes and the ports its servers listen on.
//!
//! Two runtimes implement it: the server sandbox (`crate::server::sandbox`)
//! and, in the browser, the WebContainer. The trait is object-safe, so the
//! action runner holds an `Arc<dyn Runtime>` and does not know which one runs.

#[cfg(all(not(target_arch = "wasm32"), test))]
pub mod fake;

use std::time::Duration;

use crate::runtime::path::ProjectPath;
use async_trait::async_trait;
use serde::{Deserialize, Serialize};

/// A stream of events or output chunks. Native streams are `Send` so any task
/// can drive them; the browser has one thread and its streams are not.
#[cfg(not(target_arch = "wasm32"))]
pub type EventStream<T> = futures::stream::BoxStream<'static, T>;
#[cfg(target_arch = "wasm32")]
pub type EventStream<T> = futures::stream::LocalBoxStream<'static, T>;

/// `Send + Sync` on native targets, nothing in the browser.
#[cfg(not(target_arch = "wasm32"))]
pub trait MaybeSendSync: Send + Sync {}
#[cfg(not(target_arch = "wasm32"))]
impl<T: Send + Sync + ?Sized> MaybeSendSync for T {}
#[cfg(target_arch = "wasm32")]
pub trait MaybeSendSync {}
#[cfg(target_arch = "wasm32")]
impl<T: ?Sized> MaybeSendSync for T {}

/// A terminal's size in character cells.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct PtySize {
    pub cols: u16,
    pub rows: u16,
}

impl Default for PtySize {
    fn default() -> Self {
        PtySize { cols: 80, rows: 24 }
    }
}

/// Whether a command is expected to finish (`npm install`) or to keep running
/// (`npm run dev`). Only commands get the wall-clock timeout.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CommandKind {
    #[default]
    Command,
    Server,
}

/// What to run: a shell command line, run with `bash -c` in the project's
/// directory.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct CommandSpec {
    pub command: String,
    /// Variables added to the runtime's own small environment.
    pub env: Vec<(String, String)>,
    /// Run on a pseudo-terminal of this size instead of pipes.
    pub pty: Option<PtySize>,
    /// Overrides the runtime's wall-clock limit for a `Command`.
    pub timeout: Option<Duration>,
    pub kind: CommandKind,
}

impl CommandSpec {
    /// A command expected to finish.
    pub fn command(command: impl Into<String>) -> CommandSpec {
        CommandSpec {
            command: command.into(),
            ..CommandSpec::default()
        }
    }

    /// A long-running server (no wall-clock limit).
    pub fn server(command: impl Into<String>) -> CommandSpec {
        CommandSpec {
            command: command.into(),
            kind: CommandKind::Server,
            ..CommandSpec::default()
        }
    }

    pub fn with_env(mut self, name: impl Into<String>, value: impl Into<String>) -> CommandSpec {
        self.env.push((name.into(), value.into()));
        self
    }

    pub fn with_pty(mut self, size: PtySize) -> CommandSpec {
        self.pty = Some(size);
        self
    }

    pub fn with_timeout(mut self, timeout: Duration) -> CommandSpec {
        self.timeout = Some(timeout);
        self
    }
}

/// `text` as one word of a [`CommandSpec`]'s command line, whatever it holds.
pub fn shell_quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}

/// A resource limit a process can run into.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Limit {
    Memory,
    Processes,
    FileSize,
    /// The project's disk quota: its files together, or one file as large.
    Disk,
    OpenFiles,
    CpuTime,
    WallClock,
}

impl Limit {
    /// The configuration key that sets this limit.
    pub fn config_key(self) -> &'static str {
        match self {
            Limit::Memory => "sandbox.memory_mb",
            Limit::Processes => "sandbox.max_processes",
            Limit::FileSize => "sandbox.file_size_mb",
            Limit::Disk => "sandbox.disk_mb",
            Limit::OpenFiles => "sandbox.open_files",
            Limit::CpuTime => "sandbox.cpu_secs",
            Limit::WallClock => "sandbox.timeout_secs",
        }
    }
}

/// How a process ended.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ExitStatus {
    /// The exit code, when the process exited by itself.
    pub code: Option<i32>,
    /// The signal that ended it, if one did.
    pub signal: Option<i32>,
    /// The resource limit it ran into, if any.
    pub limit_hit: Option<Limit>,
    /// Whether the wall-clock limit stopped it.
    pub timed_out: bool,
    /// A sentence for the person (and the model) saying why it stopped, when
    /// the reason is more than an exit code, e.g. "stopped: CPU time limit of
    /// 600 s reached (sandbox.cpu_secs)".
    pub message: Option<String>,
}

impl ExitStatus {
    pub fn success(&self) -> bool {
        self.code == Some(0) && self.signal.is_none() && self.limit_hit.is_none() && !self.timed_out
    }
}

/// A server inside the runtime started or stopped listening.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum PortEvent {
    Opened { port: u16 },
    Closed { port: u16 },
}

/// A path in the project changed: created, written, renamed or removed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FsEvent {
    pub path: String,
    /// Whether the path no longer exists.
    pub removed: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum EntryKind {
    File,
    Dir,
    Symlink,
    Other,
}

/// One entry of a directory listing; `path` is relative to the project.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DirEntry {
    pub path: String,
    pub kind: EntryKind,
    pub size: u64,
    /// Last modification, in milliseconds since the Unix epoch, when the
    /// runtime knows it.
    #[serde(default)]
    pub modified: Option<u64>,
}

/// A listing of a whole tree ([`Runtime::list_tree_noting_cut`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TreeListing {
    pub entries: Vec<DirEntry>,
    /// Set when the runtime cut the listing short: how large a listing it
    /// gives, in words.
    pub cut: Option<String>,
}

impl TreeListing {
    /// Every entry, or, when the listing was cut short, an error that names
    /// the limit: for a caller that must have every file (a WebContainer
    /// booted from the server's copy). `path` is what was listed.
    pub fn whole(self, path: &str) -> Result<Vec<DirEntry>, RuntimeError> {
        match self.cut {
            None => Ok(self.entries),
            Some(limit) => Err(RuntimeError::TooLarge {
                path: if path.is_empty() { "the project" } else { path }.to_owned(),
                limit,
            }),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, Serialize, Deserialize)]
pub enum RuntimeError {
    #[error("invalid path {path:?}: {reason}")]
    InvalidPath { path: String, reason: String },
    #[error("{path}: no such file or directory")]
    NotFound { path: String },
    #[error("{op} {path}: {message}")]
    Io {
        op: String,
        path: String,
        message: String,
    },
    /// A listing larger than the runtime gives whole
    /// ([`TreeListing::whole`]); `limit` says how large that is.
    #[error("list {path}: more than one listing holds ({limit})")]
    TooLarge { path: String, limit: String },
    #[error("invalid command: {0}")]
    InvalidCommand(String),
    /// The runtime cannot run anything (not installed, closed, shutting down).
    #[error("{0}")]
    Unavailable(String),
}

/// A running process.
#[cfg_attr(target_arch = "wasm32", async_trait(?Send))]
#[cfg_attr(not(target_arch = "wasm32"), async_trait)]
pub trait Process: MaybeSendSync {
    /// The process id inside the runtime.
    fn pid(&self) -> u32;
    /// The output (stdout and stderr interleaved, or the terminal's output),
    /// once: take it right after spawning, or early output is dropped when
    /// nobody reads it.
    fn take_output(&self) -> Option<EventStream<Vec<u8>>>;
    /// Resolves when the process has ended; can be awaited any number of times.
    async fn wait(&self) -> ExitStatus;
    /// Kills the process and everything it started.
    async fn kill(&self) -> Result<(), RuntimeError>;
    async fn write_stdin(&self, data: &[u8]) -> Result<(), RuntimeError>;
    /// Closes stdin, so a command reading it sees the end of its input (a
    /// command's stdin stays open until then; a terminal has none to close).
    async fn close_stdin(&self);
    /// Resizes the process's terminal; an error for a process without one.
    async fn resize(&self, size: PtySize) -> Result<(), RuntimeError>;
}

/// Where a project's actions run. Paths are project-relative (`src/App.jsx`),
/// checked by [`checked_path`].
#[cfg_attr(target_arch = "wasm32", async_trait(?Send))]
#[cfg_attr(not(target_arch = "wasm32"), async_trait)]
pub trait Runtime: MaybeSendSync {
    async fn read_file(&self, path: &str) -> Result<Vec<u8>, RuntimeError>;
    /// Writes a whole file, creating its parent directories.
    async fn write_file(&self, path: &str, contents: &[u8]) -> Result<(), RuntimeError>;
    /// `mkdir -p`.
    async fn mkdir(&self, path: &str) -> Result<(), RuntimeError>;
    /// Removes a file, or a directory with everything in it.
    async fn remove(&self, path: &str) -> Result<(), RuntimeError>;
    /// Moves a file or directory, creating the destination's parents.
    async fn rename(&self, from: &str, to: &str) -> Result<(), RuntimeError>;
    /// The entries of one directory (`""` is the project's root).
    async fn list(&self, path: &str) -> Result<Vec<DirEntry>, RuntimeError>;
    /// Every entry under a directory, in path order. The folders of
    /// [`crate::runtime::tree::SKIPPED_DIRS`] (`node_modules`, `.git`,
    /// build output…) are listed but not entered. A runtime may cut a very
    /// large listing short.
    async fn list_tree(&self, path: &str) -> Result<Vec<DirEntry>, RuntimeError>;
    /// Like [`Runtime::list_tree`], saying whether the runtime cut the
    /// listing short, in one walk: for a caller that shows what there is
    /// and says when it is part of the project, or one that must have every
    /// file ([`TreeListing::whole`]). A runtime that never cuts a listing
    /// short lists as `list_tree` does.
    async fn list_tree_noting_cut(&self, path: &str) -> Result<TreeListing, RuntimeError> {
        Ok(TreeListing {
            entries: self.list_tree(path).await?,
            cut: None,
        })
    }
    /// Changes to the project's files from now on, whoever made them (the
    /// actions, the editor, or a process in the runtime). A runtime may
    /// leave out changes inside skipped folders (`node_modules`, …).
    fn fs_events(&self) -> EventStream<FsEvent>;
    async fn spawn(&self, spec: CommandSpec) -> Result<Box<dyn Process>, RuntimeError>;
    /// Servers starting and stopping to listen, from now on.
    fn port_events(&self) -> EventStream<PortEvent>;
    /// The ports servers listen on right now.
    async fn open_ports(&self) -> Vec<u16>;
    /// The names of the secrets the project's processes get as environment
    /// variables, never their values (the model is told the names).
    async fn secret_names(&self) -> Vec<String> {
        Vec::new()
    }
}

/// `path` as any place in the project (the root included), or the
/// runtime's error saying why it is refused.
pub fn checked_path(path: &str) -> Result<ProjectPath, RuntimeError> {
    ProjectPath::parse_any(path).map_err(|reason| RuntimeError::InvalidPath {
        path: path.to_owned(),
        reason: reason.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_clean_exits_succeed() {
        let ok = ExitStatus {
            code: Some(0),
            ..ExitStatus::default()
        };
        assert!(ok.success());
        for failed in [
            ExitStatus {
                code: Some(1),
                ..ExitStatus::default()
            },
            ExitStatus {
                signal: Some(9),
                ..ExitStatus::default()
            },
            ExitStatus {
                code: Some(0),
                timed_out: true,
                ..ExitStatus::default()
            },
        ] {
            assert!(!failed.success(), "{failed:?}");
        }
    }

    #[test]
    fn a_listing_cut_short_is_whole_only_as_an_error_naming_its_limit() {
        let entry = DirEntry {
            path: "a.txt".to_owned(),
            kind: EntryKind::File,
            size: 1,
            modified: None,
        };
        let complete = TreeListing {
            entries: vec![entry.clone()],
            cut: None,
        };
        assert_eq!(complete.whole(""), Ok(vec![entry.clone()]));
        let cut = |limit: &str| TreeListing {
            entries: vec![entry.clone()],
            cut: Some(limit.to_owned()),
        };
        let error = cut("10 files").whole("").unwrap_err();
        assert_eq!(
            error.to_string(),
            "list the project: more than one listing holds (10 files)"
        );
        assert!(matches!(
            cut("10 files").whole("src"),
            Err(RuntimeError::TooLarge { path, .. }) if path == "src"
        ));
    }
}
