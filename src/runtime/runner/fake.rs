//! An in-memory [`Runtime`] for the runner's tests: files in a map, and
//! processes scripted by command (exit code, output, or held open until the
//! test ends them). [`Harness`] drives a runner on it with a single-threaded
//! executor, so a test advances it step by step and never waits on a clock.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex, MutexGuard};

use async_trait::async_trait;
use futures::channel::{mpsc, oneshot};
use futures::executor::LocalPool;
use futures::task::LocalSpawnExt;
use futures::{FutureExt, StreamExt};

use super::{PreviewHooks, Runner, RunnerContext, Task};
use crate::runtime::host::{
    CommandSpec, DirEntry, EntryKind, EventStream, ExitStatus, FsEvent, PortEvent, Process,
    PtySize, Runtime, RuntimeError,
};
use crate::runtime::protocol::{Event, Parser};
use crate::runtime::session::{ActionStatus, Alert, SessionEvent};

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|p| p.into_inner())
}

/// How a scripted process behaves.
#[derive(Clone, Debug, Default)]
pub struct Script {
    pub code: i32,
    pub output: String,
    /// Stays running until the test calls [`FakeProcess::exit`] (or it is killed).
    pub held: bool,
}

impl Script {
    pub fn exits(code: i32) -> Script {
        Script {
            code,
            ..Script::default()
        }
    }

    pub fn held() -> Script {
        Script {
            held: true,
            ..Script::default()
        }
    }

    pub fn printing(mut self, output: &str) -> Script {
        self.output = output.to_owned();
        self
    }
}

struct ProcState {
    output: Option<mpsc::UnboundedSender<Vec<u8>>>,
    reader: Option<mpsc::UnboundedReceiver<Vec<u8>>>,
    exit: Option<ExitStatus>,
    waiters: Vec<oneshot::Sender<ExitStatus>>,
}

/// A spawned process, as the test sees it.
pub struct FakeProcess {
    pub spec: CommandSpec,
    pid: u32,
    state: Mutex<ProcState>,
}

impl FakeProcess {
    fn new(pid: u32, spec: CommandSpec) -> FakeProcess {
        let (output, reader) = mpsc::unbounded();
        FakeProcess {
            spec,
            pid,
            state: Mutex::new(ProcState {
                output: Some(output),
                reader: Some(reader),
                exit: None,
                waiters: Vec::new(),
            }),
        }
    }

    pub fn print(&self, text: &str) {
        if let Some(output) = &lock(&self.state).output {
            let _ = output.unbounded_send(text.as_bytes().to_vec());
        }
    }

    /// Ends a held process with `code`.
    pub fn exit(&self, code: i32) {
        self.end(ExitStatus {
            code: Some(code),
            ..ExitStatus::default()
        });
    }

    pub fn exited(&self) -> Option<ExitStatus> {
        lock(&self.state).exit.clone()
    }

    fn end(&self, status: ExitStatus) {
        let mut state = lock(&self.state);
        if state.exit.is_some() {
            return;
        }
        state.exit = Some(status.clone());
        state.output = None;
        for waiter in state.waiters.drain(..) {
            let _ = waiter.send(status.clone());
        }
    }
}

/// What `Runtime::spawn` hands out: the test keeps the same process.
struct Handle(Arc<FakeProcess>);

#[async_trait]
impl Process for Handle {
    fn pid(&self) -> u32 {
        self.0.pid
    }

    fn take_output(&self) -> Option<EventStream<Vec<u8>>> {
        lock(&self.0.state).reader.take().map(|r| r.boxed())
    }

    async fn wait(&self) -> ExitStatus {
        let waiting = {
            let mut state = lock(&self.0.state);
            if let Some(status) = &state.exit {
                return status.clone();
            }
            let (sender, receiver) = oneshot::channel();
            state.waiters.push(sender);
            receiver
        };
        waiting.await.unwrap_or_default()
    }

    async fn kill(&self) -> Result<(), RuntimeError> {
        self.0.end(ExitStatus {
            signal: Some(9),
            ..ExitStatus::default()
        });
        Ok(())
    }

    async fn write_stdin(&self, _data: &[u8]) -> Result<(), RuntimeError> {
        Ok(())
    }

    async fn close_stdin(&self) {}

    async fn resize(&self, _size: PtySize) -> Result<(), RuntimeError> {
        Ok(())
    }
}

#[derive(Default)]
pub struct FakeRuntime {
    files: Mutex<BTreeMap<String, Vec<u8>>>,
    /// Command (exactly as spawned) → how it behaves; others exit 0 at once.
    scripts: Mutex<BTreeMap<String, (Vec<Script>, usize)>>,
    spawned: Mutex<Vec<Arc<FakeProcess>>>,
    ports: Mutex<BTreeSet<u16>>,
    port_watchers: Mutex<Vec<mpsc::UnboundedSender<PortEvent>>>,
}

impl FakeRuntime {
    /// Adds how a spawn of `command` behaves: its spawns take the scripts
    /// in order, and the last one stays.
    pub fn script(&self, command: &str, script: Script) {
        lock(&self.scripts)
            .entry(command.to_owned())
            .or_default()
            .0
            .push(script);
    }

    pub fn put_file(&self, path: &str, content: &str) {
        lock(&self.files).insert(path.to_owned(), content.as_bytes().to_vec());
    }

    pub fn file(&self, path: &str) -> Option<String> {
        lock(&self.files)
            .get(path)
            .map(|b| String::from_utf8_lossy(b).into_owned())
    }

    /// Every process spawned so far, in order.
    pub fn spawned(&self) -> Vec<Arc<FakeProcess>> {
        lock(&self.spawned).clone()
    }

    pub fn commands(&self) -> Vec<String> {
        self.spawned()
            .iter()
            .map(|p| p.spec.command.clone())
            .collect()
    }

    pub fn open_port(&self, port: u16) {
        lock(&self.ports).insert(port);
        lock(&self.port_watchers).retain(|w| w.unbounded_send(PortEvent::Opened { port }).is_ok());
    }

    fn next_script(&self, command: &str) -> Script {
        let mut scripts = lock(&self.scripts);
        let Some((list, used)) = scripts.get_mut(command) else {
            return Script::default();
        };
        let script = list.get((*used).min(list.len().saturating_sub(1))).cloned();
        *used += 1;
        script.unwrap_or_default()
    }
}

#[async_trait]
impl Runtime for FakeRuntime {
    async fn read_file(&self, path: &str) -> Result<Vec<u8>, RuntimeError> {
        lock(&self.files)
            .get(path)
            .cloned()
            .ok_or_else(|| RuntimeError::NotFound {
                path: path.to_owned(),
            })
    }

    async fn write_file(&self, path: &str, contents: &[u8]) -> Result<(), RuntimeError> {
        lock(&self.files).insert(path.to_owned(), contents.to_vec());
        Ok(())
    }

    async fn mkdir(&self, _path: &str) -> Result<(), RuntimeError> {
        Ok(())
    }

    async fn remove(&self, path: &str) -> Result<(), RuntimeError> {
        lock(&self.files).retain(|p, _| p != path && !p.starts_with(&format!("{path}/")));
        Ok(())
    }

    async fn rename(&self, from: &str, to: &str) -> Result<(), RuntimeError> {
        let mut files = lock(&self.files);
        let content = files.remove(from).ok_or_else(|| RuntimeError::NotFound {
            path: from.to_owned(),
        })?;
        files.insert(to.to_owned(), content);
        Ok(())
    }

    /// Files directly in `path` (folders are not listed).
    async fn list(&self, path: &str) -> Result<Vec<DirEntry>, RuntimeError> {
        let prefix = if path.is_empty() {
            String::new()
        } else {
            format!("{path}/")
        };
        Ok(lock(&self.files)
            .iter()
            .filter_map(|(p, content)| {
                let name = p.strip_prefix(&prefix)?;
                (!name.contains('/')).then(|| DirEntry {
                    path: p.clone(),
                    kind: EntryKind::File,
                    size: content.len() as u64,
                    modified: None,
                })
            })
            .collect())
    }

    async fn list_tree(&self, path: &str) -> Result<Vec<DirEntry>, RuntimeError> {
        self.list(path).await
    }

    fn fs_events(&self) -> EventStream<FsEvent> {
        futures::stream::pending().boxed()
    }

    async fn spawn(&self, spec: CommandSpec) -> Result<Box<dyn Process>, RuntimeError> {
        let script = self.next_script(&spec.command);
        let process = {
            let mut spawned = lock(&self.spawned);
            let process = Arc::new(FakeProcess::new(spawned.len() as u32 + 1, spec));
            spawned.push(Arc::clone(&process));
            process
        };
        if !script.output.is_empty() {
            process.print(&script.output);
        }
        if !script.held {
            process.exit(script.code);
        }
        Ok(Box::new(Handle(process)))
    }

    fn port_events(&self) -> EventStream<PortEvent> {
        let (sender, receiver) = mpsc::unbounded();
        lock(&self.port_watchers).push(sender);
        receiver.boxed()
    }

    async fn open_ports(&self) -> Vec<u16> {
        lock(&self.ports).iter().copied().collect()
    }
}

/// A runner on a [`FakeRuntime`], fed an answer the way a turn feeds it.
pub struct Harness {
    pub runtime: Arc<FakeRuntime>,
    pub runner: Runner,
    pool: LocalPool,
    events: Arc<Mutex<Vec<SessionEvent>>>,
    parser: Parser,
    /// The id of every action closed so far, in order.
    actions: Vec<String>,
}

impl Harness {
    pub fn new() -> Harness {
        let runtime = Arc::new(FakeRuntime::default());
        let pool = LocalPool::new();
        let (tasks, mut queued) = mpsc::unbounded::<Task>();
        let local = pool.spawner();
        let forwarder = local.clone();
        let _ = local.spawn_local(async move {
            while let Some(task) = queued.next().await {
                let _ = forwarder.spawn_local(task);
            }
        });
        let events = Arc::new(Mutex::new(Vec::new()));
        let sink = Arc::clone(&events);
        let runner = Runner::new(RunnerContext {
            runtime: Arc::clone(&runtime) as Arc<dyn Runtime>,
            sink: Arc::new(move |event| lock(&sink).push(event)),
            spawn: Arc::new(move |task| {
                let _ = tasks.unbounded_send(task);
            }),
            // Timers never fire: nothing in these tests depends on one.
            sleep: Arc::new(|_| futures::future::pending().boxed()),
            previews: PreviewHooks {
                url: Arc::new(|_| None),
                open: Arc::new(|port| {
                    Ok(super::OpenedPreview {
                        url: format!("http://preview/{port}"),
                        closed: Vec::new(),
                    })
                }),
                closed: Arc::new(|_| {}),
            },
            start_timeout: std::time::Duration::from_secs(60),
        });
        runner.begin_turn();
        let mut harness = Harness {
            runtime,
            runner,
            pool,
            events,
            parser: Parser::new("m1"),
            actions: Vec::new(),
        };
        harness.stream("<boltArtifact id=\"app\" title=\"App\">");
        harness
    }

    /// Streams a piece of the answer, then runs until nothing can move.
    pub fn stream(&mut self, text: &str) {
        let events: Vec<Event> = self.parser.push(text).collect();
        for event in &events {
            if let Event::ActionClose { action_id, .. } = event {
                self.actions.push(action_id.to_string());
            }
            self.runner.observe("m1", event);
        }
        self.settle();
    }

    pub fn file(&mut self, path: &str, content: &str) {
        self.stream(&format!(
            "<boltAction type=\"file\" filePath=\"{path}\">{content}</boltAction>"
        ));
    }

    pub fn shell(&mut self, command: &str) {
        self.stream(&format!(
            "<boltAction type=\"shell\">{command}</boltAction>"
        ));
    }

    pub fn start(&mut self, command: &str) {
        self.stream(&format!(
            "<boltAction type=\"start\">{command}</boltAction>"
        ));
    }

    /// Runs every task until all of them wait on something the test does.
    pub fn settle(&mut self) {
        self.pool.run_until_stalled();
    }

    /// Starts the next answer.
    pub fn next_turn(&mut self) {
        self.runner.begin_turn();
        let id = format!("m{}", self.actions.len() + 2);
        self.parser = Parser::new(id);
        self.stream("<boltArtifact id=\"next\" title=\"Next\">");
    }

    /// The latest status of each closed action, in the answer's order.
    pub fn statuses(&self) -> Vec<Option<ActionStatus>> {
        let events = lock(&self.events);
        self.actions
            .iter()
            .map(|id| {
                events.iter().rev().find_map(|e| match e {
                    SessionEvent::ActionStatus { action, status }
                        if action.action_id == id.as_str() =>
                    {
                        Some(status.clone())
                    }
                    _ => None,
                })
            })
            .collect()
    }

    /// The status of the `n`th action (from 0).
    pub fn status(&self, n: usize) -> Option<ActionStatus> {
        self.statuses().get(n).cloned().flatten()
    }

    pub fn alerts(&self) -> Vec<Alert> {
        lock(&self.events)
            .iter()
            .filter_map(|e| match e {
                SessionEvent::Alert { alert } => Some(alert.clone()),
                _ => None,
            })
            .collect()
    }

    /// The build results reported so far.
    pub fn build_results(&self) -> Vec<crate::runtime::build_result::BuildResult> {
        lock(&self.events)
            .iter()
            .filter_map(|e| match e {
                SessionEvent::BuildResult { result } => Some((**result).clone()),
                _ => None,
            })
            .collect()
    }

    /// The Rivet terminal tab, as plain text.
    pub fn terminal(&self) -> String {
        let text: String = lock(&self.events)
            .iter()
            .filter_map(|e| match e {
                SessionEvent::Terminal { text } => Some(text.as_str()),
                _ => None,
            })
            .collect();
        super::plain_text(&text)
    }

    /// The id of the `n`th action.
    pub fn action_id(&self, n: usize) -> &str {
        &self.actions[n]
    }
}
