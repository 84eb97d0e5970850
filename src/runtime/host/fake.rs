//! The one in-memory [`Runtime`] for tests: files and directories in a map,
//! symbolic links that file operations refuse (as the sandbox's do),
//! processes that play a [`Script`] (output, exit code, files they write, a
//! port they open) or run until the test ends them, and port events. It
//! does no IO, so logic built on the trait (the runner, the agent's tools,
//! checkpoints) can be tested without a sandbox.
//!
//! Native only: its streams and futures are `Send`.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex, PoisonError};

use async_trait::async_trait;
use futures::channel::mpsc;
use futures::stream::StreamExt;

mod process;
mod script;

pub use process::FakeProcess;
pub use script::Script;

use process::Handle;
use script::{Pattern, Scripts};

use super::{
    CommandSpec, DirEntry, EntryKind, EventStream, ExitStatus, FsEvent, PortEvent, Process,
    Runtime, RuntimeError, checked_path,
};
use crate::runtime::path::ProjectPath;
use crate::runtime::tree::is_skipped_dir;

#[derive(Default)]
struct State {
    files: BTreeMap<String, Vec<u8>>,
    dirs: BTreeSet<String>,
    /// Link path to target, as written.
    links: BTreeMap<String, String>,
    scripts: Scripts,
    processes: Vec<Arc<FakeProcess>>,
    ports: BTreeSet<u16>,
    port_subscribers: Vec<mpsc::UnboundedSender<PortEvent>>,
    fs_subscribers: Vec<mpsc::UnboundedSender<FsEvent>>,
    next_pid: u32,
    /// Each file's modification time: a counter that every write moves on.
    modified: BTreeMap<String, u64>,
    clock: u64,
}

impl State {
    fn touch(&mut self, path: &str) {
        self.clock += 1;
        self.modified.insert(path.to_owned(), self.clock);
    }

    fn set_port(&mut self, port: u16, open: bool) {
        let changed = if open {
            self.ports.insert(port)
        } else {
            self.ports.remove(&port)
        };
        if changed {
            let event = if open {
                PortEvent::Opened { port }
            } else {
                PortEvent::Closed { port }
            };
            self.port_subscribers
                .retain(|tx| tx.unbounded_send(event).is_ok());
        }
    }
}

/// The in-memory runtime. Cheap to clone; clones share their state.
#[derive(Clone, Default)]
pub struct FakeRuntime {
    state: Arc<Mutex<State>>,
}

impl FakeRuntime {
    pub fn new() -> FakeRuntime {
        FakeRuntime::default()
    }

    /// A runtime holding these files.
    pub fn with_files<'a>(files: impl IntoIterator<Item = (&'a str, &'a str)>) -> FakeRuntime {
        let fake = FakeRuntime::new();
        for (path, contents) in files {
            fake.put(path, contents.as_bytes());
        }
        fake
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Adds or overwrites a file without any event (test setup).
    pub fn put(&self, path: &str, contents: &[u8]) {
        let mut state = self.lock();
        state.files.insert(path.to_owned(), contents.to_vec());
        state.touch(path);
    }

    /// Plants a symbolic link at `path` pointing at `target`.
    pub fn symlink(&self, path: &str, target: &str) {
        self.lock().links.insert(path.to_owned(), target.to_owned());
    }

    /// The contents of a file, if it exists.
    pub fn file(&self, path: &str) -> Option<Vec<u8>> {
        self.lock().files.get(path).cloned()
    }

    /// The contents of a file as text, if it exists.
    pub fn text(&self, path: &str) -> Option<String> {
        self.file(path)
            .map(|b| String::from_utf8_lossy(&b).into_owned())
    }

    /// Commands whose line contains `pattern` play `script`. The first
    /// pattern given that matches wins; given again, a pattern's scripts
    /// are played in order by its spawns, and the last one stays.
    pub fn script(&self, pattern: impl Into<String>, script: Script) {
        self.lock()
            .scripts
            .add(Pattern::Contains(pattern.into()), script);
    }

    /// Like [`FakeRuntime::script`], for exactly this command line.
    pub fn script_exact(&self, command: impl Into<String>, script: Script) {
        self.lock()
            .scripts
            .add(Pattern::Exactly(command.into()), script);
    }

    /// What commands no script matches do (by default they exit 127).
    pub fn otherwise(&self, script: Script) {
        self.lock().scripts.otherwise(script);
    }

    /// Every command spawned so far, in order.
    pub fn spawned(&self) -> Vec<CommandSpec> {
        self.processes().iter().map(|p| p.spec.clone()).collect()
    }

    /// Every command line spawned so far, in order.
    pub fn commands(&self) -> Vec<String> {
        self.processes()
            .iter()
            .map(|p| p.spec.command.clone())
            .collect()
    }

    /// Every process spawned so far, in order, running or not.
    pub fn processes(&self) -> Vec<Arc<FakeProcess>> {
        self.lock().processes.clone()
    }

    /// Opens or closes a port as a server in the runtime would.
    pub fn set_port(&self, port: u16, open: bool) {
        self.lock().set_port(port, open);
    }

    fn changed(state: &mut State, path: &str, removed: bool) {
        let event = FsEvent {
            path: path.to_owned(),
            removed,
        };
        state
            .fs_subscribers
            .retain(|tx| tx.unbounded_send(event.clone()).is_ok());
    }
}

fn invalid(path: &str, reason: &str) -> RuntimeError {
    RuntimeError::InvalidPath {
        path: path.to_owned(),
        reason: reason.to_owned(),
    }
}

fn not_found(path: &str) -> RuntimeError {
    RuntimeError::NotFound {
        path: path.to_owned(),
    }
}

impl State {
    fn is_dir(&self, path: &str) -> bool {
        path.is_empty()
            || self.dirs.contains(path)
            || self.all_paths().any(|p| p.starts_with(&format!("{path}/")))
    }

    fn all_paths(&self) -> impl Iterator<Item = &String> {
        self.files
            .keys()
            .chain(self.dirs.iter())
            .chain(self.links.keys())
    }

    /// Refuses a path that is a link or goes through one, like the
    /// sandbox's file operations, which never follow links.
    fn check_links(&self, path: &ProjectPath) -> Result<(), RuntimeError> {
        let mut prefix = String::new();
        for part in path.as_str().split('/') {
            if !prefix.is_empty() {
                prefix.push('/');
            }
            prefix.push_str(part);
            if self.links.contains_key(&prefix) {
                return Err(invalid(
                    path.as_str(),
                    "is a symbolic link (file operations do not follow links)",
                ));
            }
        }
        Ok(())
    }

    fn resolve(&self, raw: &str) -> Result<ProjectPath, RuntimeError> {
        let path = checked_path(raw)?;
        self.check_links(&path)?;
        Ok(path)
    }

    fn entry(&self, path: &str) -> Option<DirEntry> {
        let (kind, size) = if let Some(bytes) = self.files.get(path) {
            (EntryKind::File, bytes.len() as u64)
        } else if self.links.contains_key(path) {
            (EntryKind::Symlink, 0)
        } else if self.is_dir(path) {
            (EntryKind::Dir, 0)
        } else {
            return None;
        };
        Some(DirEntry {
            path: path.to_owned(),
            kind,
            size,
            modified: self.modified.get(path).copied(),
        })
    }

    /// The direct children of a directory.
    fn children(&self, dir: &str) -> Vec<DirEntry> {
        let prefix = if dir.is_empty() {
            String::new()
        } else {
            format!("{dir}/")
        };
        let names: BTreeSet<String> = self
            .all_paths()
            .filter_map(|p| p.strip_prefix(&prefix))
            .filter_map(|rest| rest.split('/').next())
            .filter(|name| !name.is_empty())
            .map(|name| format!("{prefix}{name}"))
            .collect();
        names.iter().filter_map(|p| self.entry(p)).collect()
    }
}

#[async_trait]
impl Runtime for FakeRuntime {
    async fn read_file(&self, path: &str) -> Result<Vec<u8>, RuntimeError> {
        let state = self.lock();
        let path = state.resolve(path)?;
        match state.files.get(path.as_str()) {
            Some(bytes) => Ok(bytes.clone()),
            None if state.is_dir(path.as_str()) => {
                Err(invalid(path.as_str(), "is a directory, not a regular file"))
            }
            None => Err(not_found(path.as_str())),
        }
    }

    async fn write_file(&self, path: &str, contents: &[u8]) -> Result<(), RuntimeError> {
        let mut state = self.lock();
        let path = state.resolve(path)?;
        if path.is_root() || state.is_dir(path.as_str()) {
            return Err(invalid(path.as_str(), "is a directory, not a regular file"));
        }
        state
            .files
            .insert(path.as_str().to_owned(), contents.to_vec());
        state.touch(path.as_str());
        FakeRuntime::changed(&mut state, path.as_str(), false);
        Ok(())
    }

    async fn mkdir(&self, path: &str) -> Result<(), RuntimeError> {
        let mut state = self.lock();
        let path = state.resolve(path)?;
        if state.files.contains_key(path.as_str()) {
            return Err(invalid(path.as_str(), "is a file"));
        }
        if !path.is_root() {
            state.dirs.insert(path.as_str().to_owned());
        }
        Ok(())
    }

    async fn remove(&self, path: &str) -> Result<(), RuntimeError> {
        let mut state = self.lock();
        let path = checked_path(path)?;
        let p = path.as_str().to_owned();
        if state.entry(&p).is_none() {
            return Err(not_found(&p));
        }
        let under = format!("{p}/");
        state.files.retain(|k, _| k != &p && !k.starts_with(&under));
        state.dirs.retain(|k| k != &p && !k.starts_with(&under));
        state.links.retain(|k, _| k != &p && !k.starts_with(&under));
        FakeRuntime::changed(&mut state, &p, true);
        Ok(())
    }

    async fn rename(&self, from: &str, to: &str) -> Result<(), RuntimeError> {
        let bytes = self.read_file(from).await?;
        self.write_file(to, &bytes).await?;
        self.remove(from).await
    }

    async fn list(&self, path: &str) -> Result<Vec<DirEntry>, RuntimeError> {
        let state = self.lock();
        let path = state.resolve(path)?;
        if !state.is_dir(path.as_str()) {
            return Err(not_found(path.as_str()));
        }
        Ok(state.children(path.as_str()))
    }

    async fn list_tree(&self, path: &str) -> Result<Vec<DirEntry>, RuntimeError> {
        let state = self.lock();
        let path = state.resolve(path)?;
        if !state.is_dir(path.as_str()) {
            return Err(not_found(path.as_str()));
        }
        let mut out = Vec::new();
        let mut pending = vec![path.as_str().to_owned()];
        while let Some(dir) = pending.pop() {
            for entry in state.children(&dir) {
                let name = entry.path.rsplit('/').next().unwrap_or("");
                if entry.kind == EntryKind::Dir && !is_skipped_dir(name) {
                    pending.push(entry.path.clone());
                }
                out.push(entry);
            }
        }
        out.sort_by(|a, b| a.path.cmp(&b.path));
        Ok(out)
    }

    fn fs_events(&self) -> EventStream<FsEvent> {
        let (tx, rx) = mpsc::unbounded();
        self.lock().fs_subscribers.push(tx);
        rx.boxed()
    }

    async fn spawn(&self, spec: CommandSpec) -> Result<Box<dyn Process>, RuntimeError> {
        if spec.command.trim().is_empty() {
            return Err(RuntimeError::InvalidCommand("empty command".to_owned()));
        }
        let script = self.lock().scripts.next(&spec.command);
        for (path, contents) in &script.writes {
            self.write_file(path, contents.as_bytes()).await?;
        }
        let process = {
            let mut state = self.lock();
            state.next_pid += 1;
            let process = Arc::new(FakeProcess::new(
                state.next_pid,
                spec,
                script.opens_port,
                Arc::downgrade(&self.state),
            ));
            state.processes.push(Arc::clone(&process));
            process
        };
        if !script.output.is_empty() {
            process.print(&script.output);
        }
        if let Some(port) = script.opens_port {
            self.set_port(port, true);
        }
        if let Some(code) = script.exit_code {
            process.end(ExitStatus {
                code: Some(code),
                ..ExitStatus::default()
            });
        }
        Ok(Box::new(Handle(process)))
    }

    fn port_events(&self) -> EventStream<PortEvent> {
        let (tx, rx) = mpsc::unbounded();
        self.lock().port_subscribers.push(tx);
        rx.boxed()
    }

    async fn open_ports(&self) -> Vec<u16> {
        self.lock().ports.iter().copied().collect()
    }
}

#[cfg(test)]
mod tests {
    use futures::executor::block_on;

    use super::*;

    #[test]
    fn files_directories_and_listings_behave_like_a_project() {
        let fake = FakeRuntime::with_files([("src/a.js", "a"), ("node_modules/x/i.js", "x")]);
        block_on(async {
            fake.write_file("b.txt", b"b").await.unwrap();
            assert_eq!(fake.read_file("./b.txt").await.unwrap(), b"b");
            let root: Vec<String> = fake
                .list("")
                .await
                .unwrap()
                .into_iter()
                .map(|e| e.path)
                .collect();
            assert_eq!(root, ["b.txt", "node_modules", "src"]);
            let tree: Vec<String> = fake
                .list_tree("")
                .await
                .unwrap()
                .into_iter()
                .map(|e| e.path)
                .collect();
            assert_eq!(tree, ["b.txt", "node_modules", "src", "src/a.js"]);
            assert!(matches!(
                fake.read_file("src").await,
                Err(RuntimeError::InvalidPath { .. })
            ));
            assert!(matches!(
                fake.read_file("nope").await,
                Err(RuntimeError::NotFound { .. })
            ));
            assert!(fake.read_file("../x").await.is_err());
        });
    }

    #[test]
    fn file_operations_refuse_symbolic_links() {
        let fake = FakeRuntime::new();
        fake.symlink("out", "/etc");
        block_on(async {
            assert!(matches!(
                fake.read_file("out/passwd").await,
                Err(RuntimeError::InvalidPath { .. })
            ));
            assert!(fake.write_file("out/x", b"x").await.is_err());
            let entries = fake.list("").await.unwrap();
            assert_eq!(entries[0].kind, EntryKind::Symlink);
        });
    }

    #[test]
    fn scripted_processes_print_exit_and_open_ports() {
        let fake = FakeRuntime::new();
        fake.script("npm install", Script::exits(0, "added 1 package\n"));
        fake.script("npm run dev", Script::serves(5173, "ready\n"));
        block_on(async {
            let install = fake
                .spawn(CommandSpec::command("npm install"))
                .await
                .unwrap();
            let output: Vec<Vec<u8>> = install.take_output().unwrap().collect().await;
            assert_eq!(output.concat(), b"added 1 package\n");
            assert_eq!(install.wait().await.code, Some(0));

            let dev = fake
                .spawn(CommandSpec::server("npm run dev"))
                .await
                .unwrap();
            assert_eq!(fake.open_ports().await, [5173]);
            dev.kill().await.unwrap();
            assert_eq!(dev.wait().await.signal, Some(9));
            assert!(fake.open_ports().await.is_empty());

            let other = fake.spawn(CommandSpec::command("make")).await.unwrap();
            assert_eq!(other.wait().await.code, Some(127));
            assert_eq!(fake.spawned().len(), 3);
        });
    }

    #[test]
    fn held_processes_run_until_the_test_ends_them() {
        let fake = FakeRuntime::new();
        fake.script_exact("npm install", Script::held());
        fake.script_exact("npm install", Script::exits(0, ""));
        block_on(async {
            let first = fake
                .spawn(CommandSpec::command("npm install"))
                .await
                .unwrap();
            let output = first.take_output().unwrap();
            let process = &fake.processes()[0];
            assert_eq!(process.exited(), None, "held");
            process.print("added 1 package\n");
            process.exit(2);
            let printed: Vec<Vec<u8>> = output.collect().await;
            assert_eq!(printed.concat(), b"added 1 package\n");
            assert_eq!(first.wait().await.code, Some(2));

            let second = fake
                .spawn(CommandSpec::command("npm install"))
                .await
                .unwrap();
            assert_eq!(second.wait().await.code, Some(0), "the next script");
            let exact = fake
                .spawn(CommandSpec::command("npm install left-pad"))
                .await
                .unwrap();
            assert_eq!(exact.wait().await.code, Some(127), "exact lines only");
            assert_eq!(
                fake.commands(),
                ["npm install", "npm install", "npm install left-pad"]
            );
        });
    }

    #[test]
    fn a_killed_server_closes_its_port_and_unmatched_commands_play_the_fallback() {
        let fake = FakeRuntime::new();
        fake.script("dev", Script::serves(5173, ""));
        fake.otherwise(Script::exits(0, ""));
        block_on(async {
            let dev = fake
                .spawn(CommandSpec::server("npm run dev"))
                .await
                .unwrap();
            assert_eq!(fake.open_ports().await, [5173]);
            dev.kill().await.unwrap();
            let killed = fake.processes()[0].exited();
            assert_eq!(killed.and_then(|s| s.signal), Some(9));
            assert!(fake.open_ports().await.is_empty());
            let other = fake.spawn(CommandSpec::command("make")).await.unwrap();
            assert_eq!(other.wait().await.code, Some(0));
        });
    }
}
