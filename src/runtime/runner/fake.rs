//! [`Harness`] drives a runner on the in-memory
//! [`FakeRuntime`](crate::runtime::host::fake::FakeRuntime) with a
//! single-threaded executor and a clock that moves only when the test moves
//! it, so a test advances the runner step by step and never waits.

use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use futures::channel::{mpsc, oneshot};
use futures::executor::LocalPool;
use futures::task::LocalSpawnExt;
use futures::{FutureExt, StreamExt};

use super::{PreviewHooks, Runner, RunnerContext, Task};
use crate::runtime::database::fake::FakeDatabase;
use crate::runtime::database::{Database, QueryResult};
use crate::runtime::host::Runtime;
use crate::runtime::host::fake::{FakeRuntime, Script};
use crate::runtime::protocol::{Event, Parser};
use crate::runtime::session::{ActionStatus, Alert, SessionEvent};

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|p| p.into_inner())
}

/// The runner's clock: time moves only when the test says so, and each
/// sleep ends once the clock passes its deadline.
#[derive(Default)]
struct Clock {
    now: Duration,
    timers: Vec<(Duration, oneshot::Sender<()>)>,
}

impl Clock {
    fn sleep(clock: &Arc<Mutex<Clock>>, duration: Duration) -> Task {
        let (sender, receiver) = oneshot::channel();
        {
            let mut clock = lock(clock);
            let at = clock.now + duration;
            clock.timers.push((at, sender));
        }
        async move {
            let _ = receiver.await;
        }
        .boxed()
    }

    fn advance(&mut self, by: Duration) {
        self.now += by;
        let now = self.now;
        let (due, later) = std::mem::take(&mut self.timers)
            .into_iter()
            .partition(|(at, _)| *at <= now);
        self.timers = later;
        for (_, timer) in due {
            let _ = timer.send(());
        }
    }
}

/// How long a start action waits for its server's port.
pub const START_TIMEOUT: Duration = Duration::from_secs(60);

/// A runner on a [`FakeRuntime`], fed an answer the way a turn feeds it.
pub struct Harness {
    /// Commands no script matches exit 0 at once.
    pub runtime: FakeRuntime,
    /// Where `supabase` actions run.
    pub database: Arc<FakeDatabase>,
    pub runner: Runner,
    pool: LocalPool,
    clock: Arc<Mutex<Clock>>,
    events: Arc<Mutex<Vec<SessionEvent>>>,
    parser: Parser,
    /// The id of every action closed so far, in order.
    actions: Vec<String>,
}

impl Harness {
    pub fn new() -> Harness {
        let runtime = FakeRuntime::new();
        runtime.otherwise(Script::exits(0, ""));
        let clock = Arc::new(Mutex::new(Clock::default()));
        let timers = Arc::clone(&clock);
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
        let database = Arc::new(FakeDatabase::default());
        let runner = Runner::new(RunnerContext {
            runtime: Arc::new(runtime.clone()) as Arc<dyn Runtime>,
            database: Arc::clone(&database) as Arc<dyn Database>,
            sink: Arc::new(move |event| lock(&sink).push(event)),
            spawn: Arc::new(move |task| {
                let _ = tasks.unbounded_send(task);
            }),
            sleep: Arc::new(move |duration| Clock::sleep(&timers, duration)),
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
            start_timeout: START_TIMEOUT,
        });
        runner.begin_turn();
        let mut harness = Harness {
            runtime,
            database,
            runner,
            pool,
            clock,
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

    pub fn supabase(&mut self, operation: &str, path: Option<&str>, sql: &str) {
        let path = path
            .map(|p| format!(" filePath=\"{p}\""))
            .unwrap_or_default();
        self.stream(&format!(
            "<boltAction type=\"supabase\" operation=\"{operation}\"{path}>{sql}</boltAction>"
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

    /// Moves the clock on by `by`, then runs until nothing can move.
    pub fn advance(&mut self, by: Duration) {
        lock(&self.clock).advance(by);
        self.settle();
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

    /// The query results reported so far.
    pub fn query_results(&self) -> Vec<QueryResult> {
        lock(&self.events)
            .iter()
            .filter_map(|e| match e {
                SessionEvent::QueryResult { result, .. } => Some(result.clone()),
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
        crate::runtime::terminal_text::plain_text(&text)
    }

    /// The id of the `n`th action.
    pub fn action_id(&self, n: usize) -> &str {
        &self.actions[n]
    }
}
