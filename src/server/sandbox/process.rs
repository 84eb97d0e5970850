//! A process of a sandbox, seen from the IDE: its output read straight from
//! the pipe or terminal the IDE holds, its exit reported by the helper, its
//! limits judged here.

use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use tokio::io::unix::AsyncFd;
use tokio::sync::{mpsc, watch};
use tokio_stream::wrappers::ReceiverStream;

use super::client::{Failure, Incoming, RawExit};
use super::launch::Sandbox;
use super::limits::{self, Ending, Limits};
use super::sys;
use super::wire::{Op, Reply, SpawnRequest, register, set_nonblocking};
use crate::runtime::host::{EventStream, ExitStatus, Limit, Process, PtySize, RuntimeError};
use crate::runtime::mask::Masker;

/// Output chunks buffered for a reader that has not taken the stream yet;
/// beyond that, they are dropped rather than blocking the process.
const BUFFERED_CHUNKS: usize = 256;
/// The end of the output kept to explain a failure.
const TAIL_BYTES: usize = 16 * 1024;
/// How long to wait for the last output after the process has ended (a
/// background child may keep the pipe open forever).
const OUTPUT_GRACE: Duration = Duration::from_millis(500);

/// What to run, after the runtime has added its environment.
pub struct Launch {
    pub argv: Vec<String>,
    pub env: Vec<(String, String)>,
    pub pty: Option<PtySize>,
    pub timeout: Option<Duration>,
    /// Kill what the process leaves running when it ends: a command is
    /// done when its main process is, a server's helpers may outlive it.
    pub reap_leftovers: bool,
    /// Masks the project's secrets in the output.
    pub mask: Masker,
}

/// Why the project's processes are being stopped for its disk quota, when
/// they are.
pub type QuotaNote = Arc<dyn Fn() -> Option<String> + Send + Sync>;

pub struct SandboxProcess {
    pid: i32,
    sandbox: Arc<Sandbox>,
    output: Mutex<Option<EventStream<Vec<u8>>>>,
    taken: Arc<AtomicBool>,
    /// Where stdin goes: a pipe, or the terminal's master.
    input: Mutex<Option<Arc<AsyncFd<OwnedFd>>>>,
    terminal: Option<Arc<AsyncFd<OwnedFd>>>,
    status: watch::Receiver<Option<ExitStatus>>,
}

fn pipe() -> io::Result<(OwnedFd, OwnedFd)> {
    Ok(nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC)?)
}

fn async_fd(fd: OwnedFd) -> io::Result<Arc<AsyncFd<OwnedFd>>> {
    set_nonblocking(&fd)?;
    Ok(Arc::new(register(fd)?))
}

impl SandboxProcess {
    pub async fn start(
        sandbox: Arc<Sandbox>,
        limits: Limits,
        quota: QuotaNote,
        launch: Launch,
    ) -> Result<SandboxProcess, RuntimeError> {
        let failed =
            |e: io::Error| RuntimeError::Unavailable(format!("cannot start the command: {e}"));
        let request = SpawnRequest {
            argv: launch.argv,
            env: launch.env,
            pty: launch.pty,
            rlimits: limits.rlimits(),
        };
        let (incoming, input, output) = if launch.pty.is_some() {
            let incoming = sandbox
                .client
                .request(Op::Spawn(request), &[], &[])
                .await
                .map_err(Failure::into_runtime)?;
            (incoming, None, None)
        } else {
            let (stdin_read, stdin_write) = pipe().map_err(failed)?;
            let (output_read, output_write) = pipe().map_err(failed)?;
            let fds: [BorrowedFd<'_>; 2] = [stdin_read.as_fd(), output_write.as_fd()];
            let incoming = sandbox
                .client
                .request(Op::Spawn(request), &[], &fds)
                .await
                .map_err(Failure::into_runtime)?;
            // Only the child holds these ends now, so the output ends when it does.
            drop((stdin_read, output_write));
            (incoming, Some(stdin_write), Some(output_read))
        };
        let Reply::Spawned { pid } = incoming.reply else {
            return Err(RuntimeError::Unavailable(
                "the sandbox answered a spawn oddly".to_owned(),
            ));
        };
        let Some(exit) = incoming.exit else {
            return Err(RuntimeError::Unavailable(
                "the sandbox answered a spawn oddly".to_owned(),
            ));
        };
        let (input, output, terminal) = match (input, output, incoming.fds.into_iter().next()) {
            (Some(input), Some(output), _) => (
                async_fd(input).map_err(failed)?,
                async_fd(output).map_err(failed)?,
                None,
            ),
            (None, None, Some(master)) => {
                let master = async_fd(master).map_err(failed)?;
                (master.clone(), master.clone(), Some(master))
            }
            _ => {
                return Err(RuntimeError::Unavailable(
                    "the sandbox sent no terminal".to_owned(),
                ));
            }
        };

        let (chunks, stream) = mpsc::channel(BUFFERED_CHUNKS);
        let taken = Arc::new(AtomicBool::new(false));
        let tail = Arc::new(Mutex::new(Vec::new()));
        let (eof_tx, eof) = watch::channel(false);
        tokio::spawn(pump(
            Pumped {
                fd: output,
                chunks,
                taken: taken.clone(),
                tail: tail.clone(),
                eof: eof_tx,
            },
            launch.mask,
        ));
        let (status_tx, status) = watch::channel(None);
        tokio::spawn(supervise(Supervised {
            sandbox: sandbox.clone(),
            pid,
            limits,
            quota,
            timeout: launch.timeout,
            reap_leftovers: launch.reap_leftovers,
            exit,
            eof,
            tail,
            status: status_tx,
        }));
        let stream: EventStream<Vec<u8>> = Box::pin(ReceiverStream::new(stream));
        Ok(SandboxProcess {
            pid,
            sandbox,
            output: Mutex::new(Some(stream)),
            taken,
            input: Mutex::new(Some(input)),
            terminal,
            status,
        })
    }
}

/// Where a process's output goes.
struct Pumped {
    fd: Arc<AsyncFd<OwnedFd>>,
    chunks: mpsc::Sender<Vec<u8>>,
    taken: Arc<AtomicBool>,
    tail: Arc<Mutex<Vec<u8>>>,
    eof: watch::Sender<bool>,
}

/// How long the start of a secret's value may be held back, waiting for
/// the rest: a terminal's prompt or echo shows after this at the latest.
const MASK_HOLD: Duration = Duration::from_millis(100);

impl Pumped {
    async fn deliver(&self, chunk: Vec<u8>) {
        if chunk.is_empty() {
            return;
        }
        {
            let mut tail = self.tail.lock().unwrap_or_else(|e| e.into_inner());
            tail.extend_from_slice(&chunk);
            let excess = tail.len().saturating_sub(TAIL_BYTES);
            tail.drain(..excess);
        }
        if self.taken.load(Ordering::Acquire) {
            // A reader that went away does not stop the draining.
            let _ = self.chunks.send(chunk).await;
        } else {
            let _ = self.chunks.try_send(chunk);
        }
    }
}

/// Reads the output until end of file, masks the secrets in it, and hands
/// it to the stream and the tail.
async fn pump(out: Pumped, mut mask: Masker) {
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let readable = if mask.is_holding() {
            match tokio::time::timeout(MASK_HOLD, out.fd.readable()).await {
                Ok(readable) => readable,
                Err(_paused) => {
                    out.deliver(mask.flush()).await;
                    continue;
                }
            }
        } else {
            out.fd.readable().await
        };
        let Ok(mut guard) = readable else {
            break;
        };
        let read = guard
            .try_io(|inner| nix::unistd::read(inner.get_ref(), &mut buf).map_err(io::Error::from));
        let n = match read {
            Ok(Ok(0)) => break,
            Ok(Ok(n)) => n,
            // A terminal's master reads EIO once every slave is closed.
            Ok(Err(_)) => break,
            Err(_would_block) => continue,
        };
        out.deliver(mask.push(&buf[..n])).await;
    }
    out.deliver(mask.flush()).await;
    out.eof.send_replace(true);
}

struct Supervised {
    sandbox: Arc<Sandbox>,
    pid: i32,
    limits: Limits,
    quota: QuotaNote,
    timeout: Option<Duration>,
    reap_leftovers: bool,
    exit: watch::Receiver<Option<RawExit>>,
    eof: watch::Receiver<bool>,
    tail: Arc<Mutex<Vec<u8>>>,
    status: watch::Sender<Option<ExitStatus>>,
}

/// Waits for the exit (killing the process at its deadline), then publishes
/// the status with the limit it hit, if any.
async fn supervise(mut s: Supervised) {
    let deadline = async {
        match s.timeout {
            Some(limit) => tokio::time::sleep(limit).await,
            None => std::future::pending().await,
        }
    };
    let exited = tokio::select! {
        _ = s.exit.wait_for(Option::is_some) => true,
        () = deadline => false,
    };
    let timed_out = !exited;
    if timed_out {
        let _ = s
            .sandbox
            .client
            .request(Op::KillTree { pid: s.pid }, &[], &[])
            .await;
        let _ = s.exit.wait_for(Option::is_some).await;
    }
    let raw = (*s.exit.borrow()).unwrap_or(RawExit {
        code: None,
        signal: None,
        lost: true,
    });
    // What a finished command left behind (`cmd &`, a fork bomb) goes with it.
    let mut leftovers = 0;
    if s.reap_leftovers && !timed_out && !raw.lost {
        let killed = s
            .sandbox
            .client
            .request(Op::KillTree { pid: s.pid }, &[], &[])
            .await;
        if let Ok(Incoming {
            reply: Reply::Killed { processes },
            ..
        }) = killed
        {
            leftovers = processes;
        }
    }
    let _ = tokio::time::timeout(OUTPUT_GRACE, s.eof.wait_for(|eof| *eof)).await;
    let status = if raw.lost {
        ExitStatus {
            code: None,
            signal: raw.signal,
            limit_hit: None,
            timed_out,
            message: Some("stopped: the project's sandbox was closed".to_owned()),
        }
    } else {
        let tail = s.tail.lock().unwrap_or_else(|e| e.into_inner()).clone();
        let ending = Ending {
            code: raw.code,
            signal: raw.signal,
            timed_out,
            left_behind: leftovers > 0,
        };
        let mut status = limits::exit_status(
            &s.limits,
            ending,
            s.timeout,
            &tail,
            s.sandbox.network_note.as_deref(),
        );
        if leftovers > 0 {
            let note = format!("{leftovers} background process(es) it left running were stopped");
            status.message = Some(match status.message.take() {
                Some(m) => format!("{m}; {note}"),
                None => note,
            });
        }
        status
    };
    s.status
        .send_replace(Some(name_the_quota(status, &s.quota)));
}

/// A process that failed while its project's disk quota was enforced was
/// stopped for it (or ran out of room): its status says so.
fn name_the_quota(mut status: ExitStatus, quota: &QuotaNote) -> ExitStatus {
    if status.success() {
        return status;
    }
    if let Some(message) = quota() {
        status.limit_hit = Some(Limit::Disk);
        status.message = Some(message);
    }
    status
}

async fn write_all(fd: &AsyncFd<OwnedFd>, mut data: &[u8]) -> io::Result<()> {
    while !data.is_empty() {
        let mut guard = fd.writable().await?;
        match guard
            .try_io(|inner| nix::unistd::write(inner.get_ref(), data).map_err(io::Error::from))
        {
            Ok(Ok(n)) => data = &data[n..],
            Ok(Err(e)) => return Err(e),
            Err(_would_block) => continue,
        }
    }
    Ok(())
}

#[async_trait]
impl Process for SandboxProcess {
    fn pid(&self) -> u32 {
        self.pid.unsigned_abs()
    }

    fn take_output(&self) -> Option<EventStream<Vec<u8>>> {
        let stream = self.output.lock().unwrap_or_else(|e| e.into_inner()).take();
        self.taken.store(true, Ordering::Release);
        stream
    }

    async fn wait(&self) -> ExitStatus {
        let mut status = self.status.clone();
        match status.wait_for(Option::is_some).await {
            Ok(status) => status.clone().unwrap_or_default(),
            Err(_) => ExitStatus {
                message: Some("stopped: the project's sandbox was closed".to_owned()),
                ..ExitStatus::default()
            },
        }
    }

    async fn kill(&self) -> Result<(), RuntimeError> {
        if self.status.borrow().is_some() {
            return Ok(());
        }
        self.sandbox
            .client
            .request(Op::KillTree { pid: self.pid }, &[], &[])
            .await
            .map(|_| ())
            .map_err(Failure::into_runtime)
    }

    async fn write_stdin(&self, data: &[u8]) -> Result<(), RuntimeError> {
        let input = self.input.lock().unwrap_or_else(|e| e.into_inner()).clone();
        let Some(input) = input else {
            return Err(RuntimeError::InvalidCommand("stdin is closed".to_owned()));
        };
        write_all(&input, data)
            .await
            .map_err(|e| RuntimeError::InvalidCommand(format!("cannot write to the process: {e}")))
    }

    async fn close_stdin(&self) {
        // A terminal has no separate stdin to close; Ctrl-D is the shell's.
        if self.terminal.is_none() {
            self.input.lock().unwrap_or_else(|e| e.into_inner()).take();
        }
    }

    async fn resize(&self, size: PtySize) -> Result<(), RuntimeError> {
        let Some(terminal) = &self.terminal else {
            return Err(RuntimeError::InvalidCommand(
                "the process has no terminal".to_owned(),
            ));
        };
        sys::set_winsize(terminal.get_ref().as_fd(), size)
            .map_err(|e| RuntimeError::InvalidCommand(format!("cannot resize the terminal: {e}")))
    }
}
