//! The action runner: carries out the actions of every answer, strictly in
//! the order they were written, on a [`Runtime`], and reports each step as
//! [`SessionEvent`]s (statuses, terminal output, written files, previews,
//! alerts).
//!
//! File writes and edits happen as soon as their action closes; `shell` and
//! `build` wait for their command to exit; `start` launches a dev server and
//! completes when it opens a port, without holding up the queue. A truncated
//! or invalid action is reported as failed and never run. `abort` stops the
//! running command and everything still pending.
//!
//! A written `package.json` starts the dependency install at once, in the
//! background; the answer's own plain install joins it, and every other
//! command waits for it to end (see `early`).
//!
//! The `start` action is not moved ahead of earlier commands: it runs when
//! the queue reaches it, which is as soon as its command arrives once the
//! install it depends on is done (earlier file writes take milliseconds).
//! Starting it before an earlier command ended would break the order the
//! answer was written in: that command may be the install itself (joined or
//! not), a build the server serves, or one that creates files the server
//! needs.
//!
//! The runner does not spawn tasks itself: its owner gives it a spawner, the
//! server a tokio one and the browser `spawn_local`.

mod database;
mod early;
#[cfg(test)]
mod fake;
mod output;
mod previews;
mod shell;
#[cfg(test)]
mod tests;

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use futures::channel::mpsc;
use futures::stream::FusedStream;
use futures::{FutureExt, StreamExt};

use self::early::{Early, Prelude};
use self::output::OutputTail;
use crate::runtime::action::{ValidatedAction, apply_blocks, validate};
use crate::runtime::build_result::{BuildResult, Stage};
use crate::runtime::database::Database;
use crate::runtime::host::{
    CommandSpec, EventStream, ExitStatus, PortEvent, Process, PtySize, Runtime,
};
use crate::runtime::protocol::{Action, ActionKind, Event};
use crate::runtime::session::{ActionRef, ActionStatus, Alert, SessionEvent};

pub use self::previews::{OpenedPreview, PreviewError, PreviewHooks};
pub use self::shell::{Rewrite, referenced_paths, rewrite};

/// How a command that runs is shown in the Rivet terminal (an action's, or
/// an agent tool's).
pub fn command_line(command: &str) -> String {
    format!("\x1b[1;36m$ {command}\x1b[0m\r\n")
}

/// A unit of background work.
#[cfg(not(target_arch = "wasm32"))]
pub type Task = futures::future::BoxFuture<'static, ()>;
#[cfg(target_arch = "wasm32")]
pub type Task = futures::future::LocalBoxFuture<'static, ()>;

/// The terminal size commands run with, so tools format their output for
/// the "Rivet" terminal tab.
const COMMAND_PTY: PtySize = PtySize {
    cols: 120,
    rows: 30,
};
/// Lines of output quoted when a command fails.
const REASON_LINES: usize = 20;
/// Output still read after a command exited (a PTY may lag behind the exit).
const DRAIN_AFTER_EXIT: Duration = Duration::from_millis(300);
/// Output of a dev server still added to a compile error after its first
/// line (the rest of the message and its code frame).
const COMPILE_ERROR_REST: Duration = Duration::from_millis(400);

// The owner's callbacks are `Send + Sync` on the server, where any thread may
// run the runner, and need not be in the single-threaded browser.
#[cfg(not(target_arch = "wasm32"))]
mod callbacks {
    use super::*;
    pub type Sink = Arc<dyn Fn(SessionEvent) + Send + Sync>;
    pub type Spawner = Arc<dyn Fn(Task) + Send + Sync>;
    pub type Sleeper = Arc<dyn Fn(Duration) -> Task + Send + Sync>;
    pub type PreviewUrl = Arc<dyn Fn(u16) -> Option<String> + Send + Sync>;
    pub type OpenPreview = Arc<dyn Fn(u16) -> Result<OpenedPreview, PreviewError> + Send + Sync>;
    pub type ClosePreview = Arc<dyn Fn(u16) + Send + Sync>;
}
#[cfg(target_arch = "wasm32")]
mod callbacks {
    use super::*;
    pub type Sink = Arc<dyn Fn(SessionEvent)>;
    pub type Spawner = Arc<dyn Fn(Task)>;
    pub type Sleeper = Arc<dyn Fn(Duration) -> Task>;
    pub type PreviewUrl = Arc<dyn Fn(u16) -> Option<String>>;
    pub type OpenPreview = Arc<dyn Fn(u16) -> Result<OpenedPreview, PreviewError>>;
    pub type ClosePreview = Arc<dyn Fn(u16)>;
}
pub use callbacks::{ClosePreview, OpenPreview, PreviewUrl, Sink, Sleeper, Spawner};

/// What the runner needs from its owner.
#[derive(Clone)]
pub struct RunnerContext {
    pub runtime: Arc<dyn Runtime>,
    /// Where `supabase` actions run.
    pub database: Arc<dyn Database>,
    /// Receives every event the runner produces.
    pub sink: Sink,
    /// Runs background work (the queue, dev-server watchers).
    pub spawn: Spawner,
    /// Sleeps, on the owner's timer.
    pub sleep: Sleeper,
    /// Gives previewed ports their addresses.
    pub previews: PreviewHooks,
    /// How long a dev server may take to open a port before `start` fails.
    pub start_timeout: Duration,
}

struct Job {
    turn: u64,
    action: ActionRef,
    parsed: Action,
}

/// A process the runner may have to kill.
struct Tracked {
    turn: u64,
    process: Arc<dyn Process>,
}

#[derive(Default)]
struct Control {
    turn: u64,
    /// Jobs of this turn and earlier are aborted instead of run.
    aborted_turn: u64,
    /// The command being waited for.
    running: Option<Tracked>,
    /// The dev server of the latest `start`.
    server: Option<Tracked>,
    alerts: u64,
    results: u64,
    /// The signature of the dev server's last compile error, so one that is
    /// printed again for every request is reported once per file change.
    last_compile: Option<String>,
}

struct Inner {
    cx: RunnerContext,
    queue: mpsc::UnboundedSender<Job>,
    control: Mutex<Control>,
    early: Mutex<Early>,
    /// Held while a preview changes and the session is told.
    previews: Mutex<()>,
}

/// A cheap handle; clones drive the same queue.
#[derive(Clone)]
pub struct Runner {
    inner: Arc<Inner>,
}

impl Runner {
    /// Starts the runner's queue and its preview watcher on `cx.spawn`.
    // In the single-threaded browser the callbacks are not `Send`; one `Arc`
    // type still serves both targets.
    #[cfg_attr(target_arch = "wasm32", allow(clippy::arc_with_non_send_sync))]
    pub fn new(cx: RunnerContext) -> Runner {
        let (queue, mut jobs) = mpsc::unbounded::<Job>();
        let runner = Runner {
            inner: Arc::new(Inner {
                cx,
                queue,
                control: Mutex::new(Control::default()),
                early: Mutex::new(Early::default()),
                previews: Mutex::new(()),
            }),
        };
        let worker = runner.clone();
        (runner.inner.cx.spawn)(
            async move {
                while let Some(job) = jobs.next().await {
                    worker.run(job).await;
                }
            }
            .boxed_task(),
        );
        runner.watch_ports();
        runner
    }

    fn control(&self) -> MutexGuard<'_, Control> {
        self.inner.control.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn emit(&self, event: SessionEvent) {
        (self.inner.cx.sink)(event);
    }

    fn status(&self, action: &ActionRef, status: ActionStatus) {
        self.emit(SessionEvent::ActionStatus {
            action: action.clone(),
            status,
        });
    }

    fn terminal(&self, text: impl Into<String>) {
        self.emit(SessionEvent::Terminal { text: text.into() });
    }

    /// Shows an alert, numbered with the runner's own.
    pub fn alert(&self, title: String, detail: String, action: Option<&ActionRef>) {
        self.push_alert(title, detail, action, Vec::new());
    }

    /// The fix loop's stop alert, which names the build results it stopped
    /// on (so the person can try again).
    pub fn fix_stopped(&self, title: String, detail: String, results: Vec<u64>) {
        self.push_alert(title, detail, None, results);
    }

    fn push_alert(
        &self,
        title: String,
        detail: String,
        action: Option<&ActionRef>,
        fix_results: Vec<u64>,
    ) {
        let id = {
            let mut control = self.control();
            control.alerts += 1;
            control.alerts
        };
        self.emit(SessionEvent::Alert {
            alert: Alert {
                id,
                title,
                detail,
                action: action.cloned(),
                fix_results,
                resolved: None,
            },
        });
    }

    /// Reports a failure of the run as a build result (also one the
    /// previewed page reported).
    pub fn build_result(&self, mut result: BuildResult, action: Option<&ActionRef>) {
        result.id = {
            let mut control = self.control();
            control.results += 1;
            control.results
        };
        result.action = action.cloned();
        self.emit(SessionEvent::BuildResult {
            result: Box::new(result),
        });
    }

    /// A failed command's build result.
    fn command_failed(
        &self,
        stage: Stage,
        command: &str,
        status: &ExitStatus,
        tail: &OutputTail,
        action: &ActionRef,
    ) {
        let result = BuildResult::new(
            stage,
            Some(command.to_owned()),
            status.code,
            &tail.raw_text(),
        );
        self.build_result(result, Some(action));
    }

    /// Collects the raw output of a serving dev server from the piece that
    /// starts a compile error (true: the caller waits for the rest) on.
    fn collect_compile_error(&self, bytes: &[u8], pending: &mut Option<String>) -> bool {
        let text = String::from_utf8_lossy(bytes);
        match pending {
            Some(raw) => {
                raw.push_str(&text);
                false
            }
            None if crate::runtime::build_result::compile_error(&text).is_some() => {
                *pending = Some(text.into_owned());
                true
            }
            None => false,
        }
    }

    /// Reports a collected compile error, unless it is the one reported
    /// last and no file changed since.
    fn report_compile_error(&self, raw: &str, action: &ActionRef) {
        let Some(error) = crate::runtime::build_result::compile_error(raw) else {
            return;
        };
        let result = BuildResult::new(Stage::CompileError, None, None, &error);
        let signature = result.signature();
        let new = {
            let mut control = self.control();
            let new = control.last_compile.as_ref() != Some(&signature);
            control.last_compile = Some(signature);
            new
        };
        if new {
            self.build_result(result, Some(action));
        }
    }

    /// Starts a new turn (an answer); returns its number.
    pub fn begin_turn(&self) -> u64 {
        let mut control = self.control();
        control.turn += 1;
        control.turn
    }

    /// Feeds a parser event of `message_id`; each closed action is queued.
    pub fn observe(&self, message_id: &str, event: &Event) {
        if let Event::ActionClose {
            action_id, action, ..
        } = event
        {
            let turn = self.control().turn;
            let job = Job {
                turn,
                action: ActionRef {
                    message_id: message_id.to_owned(),
                    action_id: action_id.clone(),
                },
                parsed: (**action).clone(),
            };
            // The queue lives as long as the runner, so sending cannot fail.
            let _ = self.inner.queue.unbounded_send(job);
        }
    }

    /// Stops the current turn: its running command is killed and every
    /// action of it still pending is marked aborted. A dev server that is
    /// already serving stays up.
    pub fn abort(&self) {
        let to_kill = {
            let mut control = self.control();
            control.aborted_turn = control.turn;
            let turn = control.turn;
            let running = control.running.as_ref().map(|t| Arc::clone(&t.process));
            // A `start` still waiting for its port counts as running.
            let starting = control
                .server
                .as_ref()
                .filter(|s| s.turn == turn)
                .map(|s| Arc::clone(&s.process));
            [running, starting]
        };
        // The early install's lock is never taken while `control` is held.
        let early = self.early_abort();
        for process in to_kill.into_iter().flatten().chain(early) {
            (self.inner.cx.spawn)(
                async move {
                    let _ = process.kill().await;
                }
                .boxed_task(),
            );
        }
    }

    fn is_aborted(&self, turn: u64) -> bool {
        turn <= self.control().aborted_turn
    }

    async fn run(&self, job: Job) {
        if self.is_aborted(job.turn) {
            self.status(&job.action, ActionStatus::Aborted);
            return;
        }
        let validated = match validate(job.parsed.clone()) {
            Ok(validated) => validated,
            Err(error) => {
                let reason = error.to_string();
                self.action_failed("An action was not run", &reason, &job.action);
                self.status(&job.action, ActionStatus::Failed { reason });
                return;
            }
        };
        self.status(&job.action, ActionStatus::Running);
        let writes_a_file = matches!(
            validated,
            ValidatedAction::WriteFile { .. } | ValidatedAction::Edit { .. }
        );
        let result = match validated {
            ValidatedAction::WriteFile { path, content } => {
                self.write_file(job.turn, path.as_str(), &content).await
            }
            ValidatedAction::Edit { path, blocks } => {
                self.edit_file(job.turn, path.as_str(), &blocks).await
            }
            ValidatedAction::Shell { command } | ValidatedAction::Build { command } => {
                self.run_shell(&job, &command).await
            }
            ValidatedAction::Start { command } => return self.start(&job, &command).await,
            ValidatedAction::Supabase {
                operation,
                path,
                sql,
                ..
            } => self.supabase(&job, operation, path, &sql).await,
        };
        let status = match result {
            Ok(()) => ActionStatus::Complete,
            Err(_) if self.is_aborted(job.turn) => ActionStatus::Aborted,
            Err(reason) => {
                if writes_a_file {
                    self.action_failed("A file was not written", &reason, &job.action);
                }
                ActionStatus::Failed { reason }
            }
        };
        self.status(&job.action, status);
    }

    /// An action refused or failed without a command's output (a command
    /// reports its own): an alert for the person and a build result for
    /// the fix loop, which names the file so the model sees it as it is.
    fn action_failed(&self, title: &str, reason: &str, action: &ActionRef) {
        self.alert(title.to_owned(), reason.to_owned(), Some(action));
        self.build_result(
            BuildResult::new(Stage::Action, None, None, reason),
            Some(action),
        );
    }

    async fn write_file(&self, turn: u64, path: &str, content: &str) -> Result<(), String> {
        self.inner
            .cx
            .runtime
            .write_file(path, content.as_bytes())
            .await
            .map_err(|e| e.to_string())?;
        self.control().last_compile = None;
        self.emit(SessionEvent::FileWritten {
            path: path.to_owned(),
            by_model: true,
        });
        self.early_after_write(turn, path, content).await;
        Ok(())
    }

    async fn edit_file(
        &self,
        turn: u64,
        path: &str,
        blocks: &[crate::runtime::action::EditBlock],
    ) -> Result<(), String> {
        let bytes = self
            .inner
            .cx
            .runtime
            .read_file(path)
            .await
            .map_err(|e| e.to_string())?;
        let original = String::from_utf8(bytes).map_err(|_| format!("{path} is not UTF-8 text"))?;
        let edited = apply_blocks(&original, blocks).map_err(|e| format!("edit of {path}: {e}"))?;
        self.write_file(turn, path, &edited).await
    }

    /// Applies the `rm`/`cd` rewrites, telling the terminal about each.
    async fn rewritten(&self, command: &str) -> String {
        let mut missing = BTreeSet::new();
        for path in referenced_paths(command) {
            if !self.exists(&path).await {
                missing.insert(path);
            }
        }
        match rewrite(command, &missing) {
            Some(rewrite) => {
                for note in &rewrite.notes {
                    self.terminal(format!("\x1b[2m# Rivet: {note}\x1b[0m\r\n"));
                }
                rewrite.command
            }
            None => command.to_owned(),
        }
    }

    async fn exists(&self, path: &str) -> bool {
        let (parent, name) = path.rsplit_once('/').unwrap_or(("", path));
        match self.inner.cx.runtime.list(parent).await {
            Ok(entries) => entries
                .iter()
                .any(|e| e.path.rsplit('/').next() == Some(name)),
            Err(_) => false,
        }
    }

    async fn spawn(&self, turn: u64, spec: CommandSpec) -> Result<Arc<dyn Process>, String> {
        self.terminal(command_line(&spec.command));
        let process: Arc<dyn Process> = Arc::from(
            self.inner
                .cx
                .runtime
                .spawn(spec)
                .await
                .map_err(|e| e.to_string())?,
        );
        // Stop may have been pressed while the process was starting.
        if self.is_aborted(turn) {
            let _ = process.kill().await;
        }
        Ok(process)
    }

    /// A `shell` or `build` action: joins the early install or waits for
    /// it, then runs (the rest of) the command.
    async fn run_shell(&self, job: &Job, command: &str) -> Result<(), String> {
        match self.early_before(job, command).await? {
            Prelude::Run => self.run_command(job, command).await,
            Prelude::Joined { rest: Some(rest) } => self.run_command(job, &rest).await,
            Prelude::Joined { rest: None } => Ok(()),
        }
    }

    /// A `start` action: the dev server starts once the install it depends
    /// on is done (an `npm install && npm run dev` joins the early install).
    async fn start(&self, job: &Job, command: &str) {
        match self.early_before(job, command).await {
            Ok(Prelude::Run) => self.start_server(job, command).await,
            Ok(Prelude::Joined { rest: Some(rest) }) => self.start_server(job, &rest).await,
            Ok(Prelude::Joined { rest: None }) => self.status(&job.action, ActionStatus::Complete),
            Err(reason) => self.early_start_failed(job, reason),
        }
    }

    async fn run_command(&self, job: &Job, command: &str) -> Result<(), String> {
        let command = self.rewritten(command).await;
        let process = self
            .spawn(
                job.turn,
                CommandSpec::command(command.clone()).with_pty(COMMAND_PTY),
            )
            .await?;
        self.control().running = Some(Tracked {
            turn: job.turn,
            process: Arc::clone(&process),
        });
        let mut tail = OutputTail::default();
        let status = self.pump_until_exit(&process, &mut tail).await;
        self.control().running = None;
        self.terminal(exit_line(&status));
        if status.success() {
            Ok(())
        } else {
            Err(failure_reason(&command, &status, &tail))
        }
        .inspect_err(|reason| {
            if !self.is_aborted(job.turn) {
                let stage =
                    Stage::of_command(&command, matches!(job.parsed.kind, ActionKind::Build));
                self.command_failed(stage, &command, &status, &tail, &job.action);
                self.alert(
                    format!("`{command}` failed"),
                    reason.clone(),
                    Some(&job.action),
                );
            }
        })
    }

    /// Copies the process's output to the terminal until it exits.
    async fn pump_until_exit(
        &self,
        process: &Arc<dyn Process>,
        tail: &mut OutputTail,
    ) -> ExitStatus {
        let Some(output) = process.take_output() else {
            return process.wait().await;
        };
        let mut output = output.fuse();
        let mut exit = process.wait().fuse();
        let status = loop {
            futures::select! {
                chunk = output.next() => match chunk {
                    Some(bytes) => self.copy_output(&bytes, tail),
                    None => break exit.await,
                },
                status = exit => break status,
            }
        };
        self.drain_output(&mut output, tail).await;
        status
    }

    /// Copies what a process wrote just before it exited, which may still
    /// be in flight (unless its output has already ended: then there is no
    /// wait).
    async fn drain_output(
        &self,
        output: &mut futures::stream::Fuse<EventStream<Vec<u8>>>,
        tail: &mut OutputTail,
    ) {
        let mut deadline = (self.inner.cx.sleep)(DRAIN_AFTER_EXIT).fuse();
        while !output.is_terminated() {
            futures::select! {
                chunk = output.next() => match chunk {
                    Some(bytes) => self.copy_output(&bytes, tail),
                    None => break,
                },
                () = deadline => break,
            }
        }
    }

    fn copy_output(&self, bytes: &[u8], tail: &mut OutputTail) {
        tail.push(bytes);
        self.terminal(String::from_utf8_lossy(bytes).into_owned());
    }

    /// Launches a dev server and returns at once; a watcher completes the
    /// action when a port opens, or fails it if the server exits first.
    async fn start_server(&self, job: &Job, command: &str) {
        // A new dev server replaces the previous one, as in bolt.
        let previous = self.control().server.take();
        if let Some(previous) = previous {
            self.terminal("\x1b[2m# Rivet: stopping the previous dev server\x1b[0m\r\n");
            let _ = previous.process.kill().await;
            let _ = previous.process.wait().await;
        }
        let command = self.rewritten(command).await;
        let ports = self.inner.cx.runtime.port_events();
        let process = match self
            .spawn(
                job.turn,
                CommandSpec::server(command.clone()).with_pty(COMMAND_PTY),
            )
            .await
        {
            Ok(process) => process,
            Err(reason) => {
                let result =
                    BuildResult::new(Stage::DevServerStart, Some(command.clone()), None, &reason);
                self.build_result(result, Some(&job.action));
                self.alert(
                    format!("`{command}` did not start"),
                    reason.clone(),
                    Some(&job.action),
                );
                self.status(&job.action, ActionStatus::Failed { reason });
                return;
            }
        };
        self.control().server = Some(Tracked {
            turn: job.turn,
            process: Arc::clone(&process),
        });
        let watcher = self.clone();
        let action = job.action.clone();
        let turn = job.turn;
        (self.inner.cx.spawn)(
            async move {
                watcher
                    .watch_server(turn, action, command, process, ports)
                    .await
            }
            .boxed_task(),
        );
    }

    async fn watch_server(
        &self,
        turn: u64,
        action: ActionRef,
        command: String,
        process: Arc<dyn Process>,
        ports: EventStream<PortEvent>,
    ) {
        let mut tail = OutputTail::default();
        let mut output = process
            .take_output()
            .unwrap_or_else(|| futures::stream::empty().boxed_stream())
            .fuse();
        let mut ports = ports.fuse();
        let mut exit = process.wait().fuse();
        let mut timeout = (self.inner.cx.sleep)(self.inner.cx.start_timeout).fuse();
        let mut serving = false;
        let mut compile_error = None;
        let mut compile_error_done = futures::future::Fuse::terminated();
        let status = loop {
            futures::select! {
                chunk = output.next() => if let Some(bytes) = chunk {
                    self.copy_output(&bytes, &mut tail);
                    if serving && self.collect_compile_error(&bytes, &mut compile_error) {
                        compile_error_done = (self.inner.cx.sleep)(COMPILE_ERROR_REST).fuse();
                    }
                },
                () = compile_error_done => if let Some(error) = compile_error.take() {
                    self.report_compile_error(&error, &action);
                },
                event = ports.next() => if let Some(PortEvent::Opened { port }) = event && !serving {
                    serving = true;
                    self.terminal(format!("\x1b[1;32m# Rivet: the dev server is listening on port {port}\x1b[0m\r\n"));
                    self.preview_started(port);
                    self.status(&action, ActionStatus::Complete);
                },
                () = timeout => if !serving {
                    let reason = format!(
                        "`{command}` opened no port within {} s\n{}",
                        self.inner.cx.start_timeout.as_secs(),
                        tail.last_lines(REASON_LINES)
                    );
                    let result = BuildResult::new(Stage::DevServerStart, Some(command.clone()), None, &reason);
                    self.build_result(result, Some(&action));
                    self.alert("The dev server did not start".to_owned(), reason.clone(), Some(&action));
                    self.status(&action, ActionStatus::Failed { reason });
                    serving = true;
                },
                status = exit => break status,
            }
        };
        // The exit may win the race with the server's last words.
        self.drain_output(&mut output, &mut tail).await;
        if let Some(error) = compile_error.take() {
            self.report_compile_error(&error, &action);
        }
        self.terminal(exit_line(&status));
        let replaced = {
            let mut control = self.control();
            let current = control
                .server
                .as_ref()
                .is_some_and(|s| Arc::ptr_eq(&s.process, &process));
            if current {
                control.server = None;
            }
            !current
        };
        if self.is_aborted(turn) && !serving {
            self.status(&action, ActionStatus::Aborted);
        } else if !serving {
            let reason = failure_reason(&command, &status, &tail);
            self.command_failed(Stage::DevServerStart, &command, &status, &tail, &action);
            self.alert(
                "The dev server exited before it opened a port".to_owned(),
                reason.clone(),
                Some(&action),
            );
            self.status(&action, ActionStatus::Failed { reason });
        } else if !replaced && !self.is_aborted(turn) {
            let reason = failure_reason(&command, &status, &tail);
            self.command_failed(Stage::DevServerCrash, &command, &status, &tail, &action);
            self.alert("The dev server stopped".to_owned(), reason, Some(&action));
        }
    }

    /// Every port a server opens in the runtime is listed as a preview.
    fn watch_ports(&self) {
        let runner = self.clone();
        (self.inner.cx.spawn)(
            async move {
                for port in runner.inner.cx.runtime.open_ports().await {
                    runner.preview_opened(port);
                }
                let mut events = runner.inner.cx.runtime.port_events();
                while let Some(event) = events.next().await {
                    match event {
                        PortEvent::Opened { port } => runner.preview_opened(port),
                        PortEvent::Closed { port } => runner.preview_closed(port),
                    }
                }
            }
            .boxed_task(),
        );
    }

    /// Kills every process the runner started (the project is closing).
    pub async fn shutdown(&self) {
        let processes = {
            let mut control = self.control();
            control.aborted_turn = control.turn;
            [control.running.take(), control.server.take()]
        };
        let early = self.early_abort();
        for process in processes
            .into_iter()
            .flatten()
            .map(|t| t.process)
            .chain(early)
        {
            let _ = process.kill().await;
        }
    }
}

fn exit_line(status: &ExitStatus) -> String {
    match (&status.message, status.code) {
        (Some(message), _) => format!("\x1b[1;31m# {message}\x1b[0m\r\n"),
        (None, Some(0)) => "\x1b[2m# exit 0\x1b[0m\r\n".to_owned(),
        (None, Some(code)) => format!("\x1b[1;31m# exit {code}\x1b[0m\r\n"),
        (None, None) => format!(
            "\x1b[1;31m# killed by signal {}\x1b[0m\r\n",
            status.signal.unwrap_or(0)
        ),
    }
}

/// Why a command failed, for the action card, the alert and the model.
fn failure_reason(command: &str, status: &ExitStatus, tail: &OutputTail) -> String {
    let how = match (&status.message, status.code, status.signal) {
        (Some(message), _, _) => message.clone(),
        (None, Some(code), _) => format!("exited with code {code}"),
        (None, None, Some(signal)) => format!("was killed by signal {signal}"),
        (None, None, None) => "ended".to_owned(),
    };
    let output = tail.last_lines(REASON_LINES);
    if output.is_empty() {
        format!("`{command}` {how}")
    } else {
        format!("`{command}` {how}:\n{output}")
    }
}

/// Boxing for the owner's spawner, on either target.
trait BoxedTask {
    fn boxed_task(self) -> Task;
}

#[cfg(not(target_arch = "wasm32"))]
impl<F: std::future::Future<Output = ()> + Send + 'static> BoxedTask for F {
    fn boxed_task(self) -> Task {
        self.boxed()
    }
}

#[cfg(target_arch = "wasm32")]
impl<F: std::future::Future<Output = ()> + 'static> BoxedTask for F {
    fn boxed_task(self) -> Task {
        self.boxed_local()
    }
}

/// Boxing for output streams, on either target.
trait BoxedStream<T> {
    fn boxed_stream(self) -> EventStream<T>;
}

#[cfg(not(target_arch = "wasm32"))]
impl<T, S: futures::Stream<Item = T> + Send + 'static> BoxedStream<T> for S {
    fn boxed_stream(self) -> EventStream<T> {
        self.boxed()
    }
}

#[cfg(target_arch = "wasm32")]
impl<T, S: futures::Stream<Item = T> + 'static> BoxedStream<T> for S {
    fn boxed_stream(self) -> EventStream<T> {
        self.boxed_local()
    }
}
