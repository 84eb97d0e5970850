//! [`Runtime`] for one project, backed by its sandbox (started on first use).

use std::collections::BTreeMap;
use std::sync::Arc;

use async_trait::async_trait;
use futures::StreamExt;
use tokio_stream::wrappers::BroadcastStream;

use super::bwrap::SANDBOX_USER;
use super::client::{Failure, Incoming, ProjectEvents};
use super::launch::Sandbox;
use super::process::{Launch, QuotaNote, SandboxProcess};
use super::wire::{Op, Reply};
use super::{ProjectVars, SandboxManager};
use crate::runtime::host::{
    CommandKind, CommandSpec, DirEntry, EventStream, FsEvent, PortEvent, Process, PtySize, Runtime,
    RuntimeError, TreeListing, checked_path,
};
use crate::runtime::mask::Masker;
use crate::runtime::project::ProjectId;

/// A project as the manager tracks it; it outlives each of its sandboxes.
pub struct ProjectEntry {
    pub id: ProjectId,
    pub events: Arc<ProjectEvents>,
    /// The running sandbox; locked while one starts or stops.
    pub slot: tokio::sync::Mutex<Option<Arc<Sandbox>>>,
    /// Where the project stands against its disk quota.
    pub quota: super::quota::Quota,
}

impl ProjectEntry {
    pub fn new(id: ProjectId) -> ProjectEntry {
        ProjectEntry {
            id,
            events: Arc::new(ProjectEvents::default()),
            slot: tokio::sync::Mutex::new(None),
            quota: super::quota::Quota::default(),
        }
    }
}

/// Longest accepted environment value, in bytes.
const MAX_ENV_VALUE: usize = 32 * 1024;

fn check_env(name: &str, value: &str) -> Result<(), RuntimeError> {
    let mut bytes = name.bytes();
    let valid_name = bytes
        .next()
        .is_some_and(|b| b.is_ascii_alphabetic() || b == b'_')
        && bytes.all(|b| b.is_ascii_alphanumeric() || b == b'_')
        && name.len() <= 128;
    if !valid_name {
        return Err(RuntimeError::InvalidCommand(format!(
            "invalid environment variable name {name:?}"
        )));
    }
    if value.contains('\0') || value.len() > MAX_ENV_VALUE {
        return Err(RuntimeError::InvalidCommand(format!(
            "invalid value for {name}"
        )));
    }
    Ok(())
}

/// The whole environment of a sandboxed process: a short allow-list, never
/// the IDE's own (no API keys, no configuration), then the project's
/// secrets (none replaces a variable of the sandbox's), then the command's
/// extras.
pub fn environment(
    sandbox: &Sandbox,
    secrets: &BTreeMap<String, String>,
    extra: &[(String, String)],
) -> Result<Vec<(String, String)>, RuntimeError> {
    let workspace = sandbox.workspace_inside.to_string_lossy().into_owned();
    let home = sandbox.home_inside.to_string_lossy().into_owned();
    let mut env: Vec<(String, String)> = [
        (
            "PATH",
            format!("/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin:{workspace}/node_modules/.bin"),
        ),
        ("HOME", home),
        ("USER", SANDBOX_USER.to_owned()),
        ("LOGNAME", SANDBOX_USER.to_owned()),
        ("SHELL", "/bin/bash".to_owned()),
        ("TERM", "xterm-256color".to_owned()),
        ("LANG", "C.UTF-8".to_owned()),
        ("TMPDIR", "/tmp".to_owned()),
        ("NPM_CONFIG_UPDATE_NOTIFIER", "false".to_owned()),
        ("NPM_CONFIG_FUND", "false".to_owned()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v))
    .collect();
    if let Some(options) = &sandbox.node_options {
        env.push(("NODE_OPTIONS".to_owned(), options.clone()));
    }
    env.extend(sandbox.network_env.iter().cloned());
    for (name, value) in secrets {
        if !env.iter().any(|(k, _)| k == name) {
            env.push((name.clone(), value.clone()));
        }
    }
    for (name, value) in extra {
        check_env(name, value)?;
        let value = match (name.as_str(), &sandbox.node_options) {
            // The command's own Node options come on top of the sandbox's.
            ("NODE_OPTIONS", Some(ours)) => format!("{ours} {value}"),
            _ => value.clone(),
        };
        env.retain(|(k, _)| k != name);
        env.push((name.clone(), value));
    }
    Ok(env)
}

pub struct ProjectRuntime {
    pub(super) manager: Arc<SandboxManager>,
    pub(super) entry: Arc<ProjectEntry>,
}

impl ProjectRuntime {
    pub fn project(&self) -> &ProjectId {
        &self.entry.id
    }

    async fn sandbox(&self) -> Result<Arc<Sandbox>, RuntimeError> {
        let sandbox = self.manager.ensure(&self.entry).await?;
        super::quota::monitor(&self.manager, &self.entry);
        Ok(sandbox)
    }

    /// Starts a process, unless the project is over its disk quota.
    async fn start(
        &self,
        sandbox: Arc<Sandbox>,
        launch: Launch,
    ) -> Result<SandboxProcess, RuntimeError> {
        self.manager.admit(&self.entry).await?;
        let (manager, entry) = (Arc::downgrade(&self.manager), Arc::clone(&self.entry));
        let quota_note: QuotaNote = Arc::new(move || manager.upgrade()?.quota_stop_message(&entry));
        let process =
            SandboxProcess::start(sandbox, self.manager.limits(), quota_note, launch).await?;
        // The quota may have been enforced while it started.
        if let Some(message) = self.manager.quota_stop_message(&self.entry) {
            let _ = process.kill().await;
            return Err(RuntimeError::Unavailable(message));
        }
        Ok(process)
    }

    /// The project's secrets and services' variables, for a process about
    /// to start.
    fn vars(&self) -> Result<ProjectVars, RuntimeError> {
        self.manager
            .project_vars(&self.entry.id)
            .map_err(|e| RuntimeError::Unavailable(e.to_string()))
    }

    async fn request(&self, op: Op, payload: &[u8], path: &str) -> Result<Incoming, RuntimeError> {
        let sandbox = self.sandbox().await?;
        sandbox
            .client
            .request(op, payload, &[])
            .await
            .map_err(|e: Failure| e.for_path(path))
    }

    /// The helper's listing of `path`, and whether it was cut short.
    async fn listing(
        &self,
        path: &str,
        recursive: bool,
    ) -> Result<(Vec<DirEntry>, bool), RuntimeError> {
        let checked = checked_path(path)?;
        if checked.as_str().is_empty() && self.empty_and_stopped().await {
            return Ok((Vec::new(), false));
        }
        let op = Op::List {
            path: checked.as_str().to_owned(),
            recursive,
        };
        match self.request(op, &[], path).await?.reply {
            Reply::Entries { entries, truncated } => Ok((entries, truncated)),
            _ => Err(odd_reply(path)),
        }
    }

    async fn list_entries(
        &self,
        path: &str,
        recursive: bool,
    ) -> Result<Vec<DirEntry>, RuntimeError> {
        let (entries, truncated) = self.listing(path, recursive).await?;
        if truncated {
            tracing::warn!(
                project = %self.entry.id,
                path,
                shown = entries.len(),
                "the listing is too large and was cut short"
            );
        }
        Ok(entries)
    }

    /// Whether the project has no files while its sandbox is stopped (a new
    /// project): listing it or reading a file of it then needs no sandbox,
    /// so an answer that runs nothing (prose, a question) starts none. Only
    /// the workspace folder itself is read on the host, never what is
    /// inside it.
    async fn empty_and_stopped(&self) -> bool {
        if self.manager.running(&self.entry.id).await.is_some() {
            return false;
        }
        match std::fs::read_dir(self.manager.workspace_dir(&self.entry.id)) {
            Ok(mut entries) => entries.next().is_none(),
            Err(e) => e.kind() == std::io::ErrorKind::NotFound,
        }
    }

    /// Starts a program with an explicit argument vector (a terminal's shell).
    pub async fn spawn_argv(
        &self,
        argv: Vec<String>,
        pty: Option<PtySize>,
    ) -> Result<SandboxProcess, RuntimeError> {
        let sandbox = self.sandbox().await?;
        let vars = self.vars()?;
        let env = environment(&sandbox, &vars.env, &[])?;
        let launch = Launch {
            argv,
            env,
            pty,
            timeout: None,
            reap_leftovers: false,
            mask: mask_for(&vars.masked),
        };
        self.start(sandbox, launch).await
    }
}

/// What masks the secrets' values in a process's output.
fn mask_for(secrets: &BTreeMap<String, String>) -> Masker {
    Masker::new(secrets.iter().map(|(k, v)| (k.as_str(), v.as_str())))
}

fn odd_reply(path: &str) -> RuntimeError {
    RuntimeError::Io {
        op: "sandbox".to_owned(),
        path: path.to_owned(),
        message: "unexpected reply".to_owned(),
    }
}

fn checked(path: &str) -> Result<String, RuntimeError> {
    Ok(checked_path(path)?.as_str().to_owned())
}

#[async_trait]
impl Runtime for ProjectRuntime {
    async fn read_file(&self, path: &str) -> Result<Vec<u8>, RuntimeError> {
        let op = Op::ReadFile {
            path: checked(path)?,
        };
        if self.empty_and_stopped().await {
            return Err(RuntimeError::NotFound {
                path: path.to_owned(),
            });
        }
        let incoming = self.request(op, &[], path).await?;
        match incoming.reply {
            Reply::File => Ok(incoming.payload),
            _ => Err(odd_reply(path)),
        }
    }

    async fn write_file(&self, path: &str, contents: &[u8]) -> Result<(), RuntimeError> {
        if contents.len() > super::wire::MAX_PAYLOAD {
            return Err(RuntimeError::Io {
                op: "write".to_owned(),
                path: path.to_owned(),
                message: "file too large".to_owned(),
            });
        }
        let op = Op::WriteFile {
            path: checked(path)?,
        };
        self.request(op, contents, path).await.map(|_| ())
    }

    async fn mkdir(&self, path: &str) -> Result<(), RuntimeError> {
        let op = Op::Mkdir {
            path: checked(path)?,
        };
        self.request(op, &[], path).await.map(|_| ())
    }

    async fn remove(&self, path: &str) -> Result<(), RuntimeError> {
        let op = Op::Remove {
            path: checked(path)?,
        };
        self.request(op, &[], path).await.map(|_| ())
    }

    async fn rename(&self, from: &str, to: &str) -> Result<(), RuntimeError> {
        let op = Op::Rename {
            from: checked(from)?,
            to: checked(to)?,
        };
        self.request(op, &[], from).await.map(|_| ())
    }

    async fn list(&self, path: &str) -> Result<Vec<DirEntry>, RuntimeError> {
        self.list_entries(path, false).await
    }

    async fn list_tree(&self, path: &str) -> Result<Vec<DirEntry>, RuntimeError> {
        self.list_entries(path, true).await
    }

    async fn list_tree_noting_cut(&self, path: &str) -> Result<TreeListing, RuntimeError> {
        let (entries, cut) = self.listing(path, true).await?;
        let cut = cut.then(|| {
            format!(
                "{} files and folders or {} KiB of names, outside node_modules \
                 and the other skipped folders",
                super::fsops::MAX_ENTRIES,
                super::fsops::MAX_LISTING_BYTES / 1024
            )
        });
        Ok(TreeListing { entries, cut })
    }

    fn fs_events(&self) -> EventStream<FsEvent> {
        let events = BroadcastStream::new(self.entry.events.files.subscribe());
        Box::pin(events.filter_map(|event| async move { event.ok() }))
    }

    async fn spawn(&self, spec: CommandSpec) -> Result<Box<dyn Process>, RuntimeError> {
        if spec.command.trim().is_empty() {
            return Err(RuntimeError::InvalidCommand("empty command".to_owned()));
        }
        if spec.command.contains('\0') {
            return Err(RuntimeError::InvalidCommand(
                "the command contains a NUL byte".to_owned(),
            ));
        }
        let sandbox = self.sandbox().await?;
        if !sandbox.isolated {
            tracing::warn!(
                project = %self.entry.id,
                command = %spec.command,
                "running a command WITHOUT isolation (--unsafe-no-sandbox)"
            );
        }
        let limits = self.manager.limits();
        let timeout = match spec.kind {
            CommandKind::Command => spec.timeout.or_else(|| limits.timeout()),
            CommandKind::Server => None,
        };
        let vars = self.vars()?;
        let launch = Launch {
            argv: vec!["/bin/bash".to_owned(), "-c".to_owned(), spec.command],
            env: environment(&sandbox, &vars.env, &spec.env)?,
            pty: spec.pty,
            timeout,
            reap_leftovers: spec.kind == CommandKind::Command,
            mask: mask_for(&vars.masked),
        };
        let process = self.start(sandbox, launch).await?;
        Ok(Box::new(process))
    }

    fn port_events(&self) -> EventStream<PortEvent> {
        Box::pin(self.entry.events.port_stream())
    }

    async fn open_ports(&self) -> Vec<u16> {
        self.entry.events.open_ports()
    }

    async fn secret_names(&self) -> Vec<String> {
        self.manager
            .secrets()
            .names(&self.entry.id)
            .unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn environment_names_are_checked() {
        for (name, ok) in [
            ("NODE_ENV", true),
            ("_x1", true),
            ("1X", false),
            ("A-B", false),
            ("", false),
            ("A B", false),
        ] {
            assert_eq!(check_env(name, "v").is_ok(), ok, "{name:?}");
        }
        assert!(check_env("A", "a\0b").is_err());
    }
}
