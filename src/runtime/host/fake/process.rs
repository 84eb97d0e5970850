//! A process of the fake runtime: it plays its script, and the test can
//! print to it and end it while it runs.

use std::sync::{Mutex, MutexGuard, PoisonError, Weak};

use async_trait::async_trait;
use futures::channel::{mpsc, oneshot};
use futures::stream::StreamExt;

use super::State;
use crate::runtime::host::{CommandSpec, EventStream, ExitStatus, Process, PtySize, RuntimeError};

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

struct Life {
    output: Option<mpsc::UnboundedSender<Vec<u8>>>,
    reader: Option<mpsc::UnboundedReceiver<Vec<u8>>>,
    exit: Option<ExitStatus>,
    waiters: Vec<oneshot::Sender<ExitStatus>>,
}

/// A spawned process, as the test sees it: the runtime's caller holds the
/// same one.
pub struct FakeProcess {
    pub spec: CommandSpec,
    pid: u32,
    /// The port its script opened, closed when it ends.
    port: Option<u16>,
    runtime: Weak<Mutex<State>>,
    life: Mutex<Life>,
}

impl FakeProcess {
    pub(super) fn new(
        pid: u32,
        spec: CommandSpec,
        port: Option<u16>,
        runtime: Weak<Mutex<State>>,
    ) -> FakeProcess {
        let (output, reader) = mpsc::unbounded();
        FakeProcess {
            spec,
            pid,
            port,
            runtime,
            life: Mutex::new(Life {
                output: Some(output),
                reader: Some(reader),
                exit: None,
                waiters: Vec::new(),
            }),
        }
    }

    /// Prints `text` on the process's output, if it still runs.
    pub fn print(&self, text: &str) {
        if let Some(output) = &lock(&self.life).output {
            let _ = output.unbounded_send(text.as_bytes().to_vec());
        }
    }

    /// Ends a running process with `code`.
    pub fn exit(&self, code: i32) {
        self.end(ExitStatus {
            code: Some(code),
            ..ExitStatus::default()
        });
    }

    /// How it ended, if it has (`signal: Some(9)` when it was killed).
    pub fn exited(&self) -> Option<ExitStatus> {
        lock(&self.life).exit.clone()
    }

    /// Ends the process: closes its output, resolves `wait` and closes its
    /// port. Only the first end counts.
    pub(super) fn end(&self, status: ExitStatus) {
        {
            let mut life = lock(&self.life);
            if life.exit.is_some() {
                return;
            }
            life.exit = Some(status.clone());
            life.output = None;
            for waiter in life.waiters.drain(..) {
                let _ = waiter.send(status.clone());
            }
        }
        if let (Some(port), Some(state)) = (self.port, self.runtime.upgrade()) {
            lock(&state).set_port(port, false);
        }
    }
}

/// What `Runtime::spawn` hands out: a handle on the test's process.
pub(super) struct Handle(pub(super) std::sync::Arc<FakeProcess>);

#[async_trait]
impl Process for Handle {
    fn pid(&self) -> u32 {
        self.0.pid
    }

    fn take_output(&self) -> Option<EventStream<Vec<u8>>> {
        lock(&self.0.life).reader.take().map(|r| r.boxed())
    }

    async fn wait(&self) -> ExitStatus {
        let waiting = {
            let mut life = lock(&self.0.life);
            if let Some(status) = &life.exit {
                return status.clone();
            }
            let (sender, receiver) = oneshot::channel();
            life.waiters.push(sender);
            receiver
        };
        waiting.await.unwrap_or(ExitStatus {
            signal: Some(9),
            ..ExitStatus::default()
        })
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
        Err(RuntimeError::InvalidCommand(
            "the process has no terminal".to_owned(),
        ))
    }
}
