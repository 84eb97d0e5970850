//! The IDE's end of a sandbox's socket: requests with replies, and the
//! helper's events (exits, ports, file changes) dispatched to whoever waits.
//!
//! The helper runs the project's code next to it, so everything it says is
//! treated as untrusted: sizes are bounded by the wire format, unexpected
//! descriptors are closed, unknown ids are ignored.

use std::collections::{BTreeSet, HashMap, VecDeque};
use std::os::fd::{BorrowedFd, OwnedFd};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use tokio::sync::{broadcast, oneshot, watch};

use super::wire::{
    ErrorKind, FdChannel, HelperError, HelperMessage, Op, Reply, Request, from_header, to_header,
};
use crate::runtime::host::{FsEvent, PortEvent, RuntimeError};

/// How a process ended, as the helper saw it; `lost` when the sandbox went
/// away before it could say.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RawExit {
    pub code: Option<i32>,
    pub signal: Option<i32>,
    pub lost: bool,
}

/// A project's event fan-out. It outlives each sandbox of the project, so
/// subscribers keep their streams across a restart.
pub struct ProjectEvents {
    pub ports: broadcast::Sender<PortEvent>,
    pub files: broadcast::Sender<FsEvent>,
    open: Mutex<BTreeSet<u16>>,
}

impl Default for ProjectEvents {
    fn default() -> Self {
        ProjectEvents {
            ports: broadcast::channel(64).0,
            files: broadcast::channel(1024).0,
            open: Mutex::new(BTreeSet::new()),
        }
    }
}

impl ProjectEvents {
    fn open(&self) -> MutexGuard<'_, BTreeSet<u16>> {
        self.open.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub fn open_ports(&self) -> Vec<u16> {
        self.open().iter().copied().collect()
    }

    /// Port events from now on. A subscriber that falls behind (a project
    /// can open and close ports faster than anyone reads the events) is not
    /// left with a wrong picture: it gets the difference between what it
    /// last knew and the ports open now, then goes on.
    pub fn port_stream(
        self: &Arc<Self>,
    ) -> impl futures::Stream<Item = PortEvent> + Send + 'static {
        let (known, rx) = {
            let open = self.open();
            (open.clone(), self.ports.subscribe())
        };
        let state = (known, rx, VecDeque::new(), Arc::clone(self));
        futures::stream::unfold(
            state,
            |(mut known, mut rx, mut pending, events)| async move {
                loop {
                    if let Some(event) = pending.pop_front() {
                        return Some((event, (known, rx, pending, events)));
                    }
                    match rx.recv().await {
                        Ok(event) => {
                            if note(&mut known, event) {
                                return Some((event, (known, rx, pending, events)));
                            }
                        }
                        Err(broadcast::error::RecvError::Lagged(_)) => {
                            let now = events.open().clone();
                            let closed = known
                                .difference(&now)
                                .map(|&port| PortEvent::Closed { port });
                            let opened = now
                                .difference(&known)
                                .map(|&port| PortEvent::Opened { port });
                            pending.extend(closed.chain(opened));
                            known = now;
                        }
                        Err(broadcast::error::RecvError::Closed) => return None,
                    }
                }
            },
        )
    }

    /// Records the ports listening now and announces the difference.
    pub fn set_ports(&self, now: BTreeSet<u16>) {
        let mut open = self.open();
        for &port in now.difference(&open) {
            let _ = self.ports.send(PortEvent::Opened { port });
        }
        for &port in open.difference(&now) {
            let _ = self.ports.send(PortEvent::Closed { port });
        }
        *open = now;
    }
}

/// Applies `event` to `known`; false when it changes nothing (an event
/// replayed after catching up).
fn note(known: &mut BTreeSet<u16>, event: PortEvent) -> bool {
    match event {
        PortEvent::Opened { port } => known.insert(port),
        PortEvent::Closed { port } => known.remove(&port),
    }
}

/// A reply with what came with it.
pub struct Incoming {
    pub reply: Reply,
    pub payload: Vec<u8>,
    pub fds: Vec<OwnedFd>,
    /// For `Spawned`: resolves when the process ends.
    pub exit: Option<watch::Receiver<Option<RawExit>>>,
}

#[derive(Debug)]
pub enum Failure {
    Helper(HelperError),
    /// The sandbox is gone.
    Closed(String),
    /// The sandbox did not answer in time; it may still be working on it.
    TimedOut(String),
}

impl Failure {
    /// The error for an operation on `path`.
    pub fn for_path(self, path: &str) -> RuntimeError {
        match self {
            Failure::Helper(HelperError {
                kind: ErrorKind::NotFound,
                ..
            }) => RuntimeError::NotFound {
                path: path.to_owned(),
            },
            Failure::Helper(HelperError {
                kind: ErrorKind::Invalid,
                message,
            }) => RuntimeError::InvalidPath {
                path: path.to_owned(),
                reason: message,
            },
            Failure::Helper(HelperError { message, .. }) => RuntimeError::Io {
                op: "sandbox".to_owned(),
                path: path.to_owned(),
                message,
            },
            Failure::Closed(why) | Failure::TimedOut(why) => RuntimeError::Unavailable(why),
        }
    }

    pub fn into_runtime(self) -> RuntimeError {
        match self {
            Failure::Helper(e) => RuntimeError::Unavailable(e.message),
            Failure::Closed(why) | Failure::TimedOut(why) => RuntimeError::Unavailable(why),
        }
    }
}

type Pending = oneshot::Sender<Result<Incoming, Failure>>;

/// How long the IDE waits for the helper to answer a request. Spawning,
/// connecting and reading return at once or fail on their own; writes of
/// up to 64 MiB, listings and removals of big trees may take a while on a
/// busy disk; killing a fork bomb takes several rounds.
pub fn timeout(op: &Op) -> Duration {
    match op {
        Op::WriteFile { .. } | Op::Remove { .. } | Op::Rename { .. } | Op::List { .. } => {
            Duration::from_secs(120)
        }
        Op::KillTree { .. } => Duration::from_secs(60),
        Op::Spawn(_)
        | Op::ReadFile { .. }
        | Op::Mkdir { .. }
        | Op::Connect { .. }
        | Op::Listen { .. }
        | Op::Shutdown => Duration::from_secs(30),
    }
}

/// `30 s`, or `250 ms` below a second.
fn seconds(limit: Duration) -> String {
    if limit >= Duration::from_secs(1) {
        format!("{} s", limit.as_secs())
    } else {
        format!("{} ms", limit.as_millis())
    }
}

/// An operation as an error message names it: `read_file src/App.jsx`.
fn describe(op: &Op) -> String {
    match op {
        Op::Spawn(spawn) => format!("spawn {}", spawn.argv.first().map_or("", String::as_str)),
        Op::KillTree { pid } => format!("kill_tree {pid}"),
        Op::ReadFile { path } => format!("read_file {path}"),
        Op::WriteFile { path } => format!("write_file {path}"),
        Op::Mkdir { path } => format!("mkdir {path}"),
        Op::Remove { path } => format!("remove {path}"),
        Op::Rename { from, to } => format!("rename {from} {to}"),
        Op::List { path, .. } => format!("list {}", if path.is_empty() { "." } else { path }),
        Op::Connect { port } => format!("connect {port}"),
        Op::Listen { port } => format!("listen {port}"),
        Op::Shutdown => "shutdown".to_owned(),
    }
}

pub struct HelperClient {
    channel: FdChannel,
    next_id: AtomicU64,
    pending: Mutex<HashMap<u64, Pending>>,
    exits: Mutex<HashMap<i32, watch::Sender<Option<RawExit>>>>,
    events: Arc<ProjectEvents>,
    /// `Some(reason)` once the socket is closed.
    closed: watch::Sender<Option<String>>,
    ready: watch::Sender<Option<i32>>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl HelperClient {
    pub fn new(channel: FdChannel, events: Arc<ProjectEvents>) -> Arc<HelperClient> {
        Arc::new(HelperClient {
            channel,
            next_id: AtomicU64::new(1),
            pending: Mutex::new(HashMap::new()),
            exits: Mutex::new(HashMap::new()),
            events,
            closed: watch::channel(None).0,
            ready: watch::channel(None).0,
        })
    }

    pub fn is_closed(&self) -> bool {
        self.closed.borrow().is_some()
    }

    /// Resolves with the helper's pid once it is ready, or the reason it
    /// never will be.
    pub async fn ready(&self) -> Result<i32, String> {
        let mut ready = self.ready.subscribe();
        let mut closed = self.closed.subscribe();
        tokio::select! {
            pid = ready.wait_for(Option::is_some) => pid.ok().and_then(|p| *p).ok_or_else(|| "the sandbox stopped".to_owned()),
            why = closed.wait_for(Option::is_some) => Err(why.ok().and_then(|w| w.clone()).unwrap_or_default()),
        }
    }

    /// Sends a request and waits for its reply, at most [`timeout`] for
    /// its kind of operation.
    pub async fn request(
        &self,
        op: Op,
        payload: &[u8],
        fds: &[BorrowedFd<'_>],
    ) -> Result<Incoming, Failure> {
        let limit = timeout(&op);
        self.request_within(limit, op, payload, fds).await
    }

    /// [`Self::request`] with its own time limit. A request that gets no
    /// answer in time fails naming the operation; the sandbox stays in use
    /// for other requests, and a late answer is dropped.
    pub async fn request_within(
        &self,
        limit: Duration,
        op: Op,
        payload: &[u8],
        fds: &[BorrowedFd<'_>],
    ) -> Result<Incoming, Failure> {
        if let Some(why) = self.closed.borrow().clone() {
            return Err(Failure::Closed(why));
        }
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let what = describe(&op);
        let (tx, rx) = oneshot::channel();
        lock(&self.pending).insert(id, tx);
        let exchange = async {
            let header =
                to_header(&Request { id, op }).map_err(|e| Failure::Closed(e.to_string()))?;
            if let Err(e) = self.channel.send(&header, payload, fds).await {
                return Err(Failure::Closed(format!("the sandbox does not answer: {e}")));
            }
            rx.await.unwrap_or_else(|_| {
                Err(Failure::Closed("the project's sandbox stopped".to_owned()))
            })
        };
        let result = tokio::time::timeout(limit, exchange)
            .await
            .unwrap_or_else(|_| {
                Err(Failure::TimedOut(format!(
                    "the sandbox did not answer {what} within {}",
                    seconds(limit)
                )))
            });
        if result.is_err() {
            lock(&self.pending).remove(&id);
        }
        result
    }

    /// Reads the helper's messages until the socket closes, then fails
    /// everything still waiting.
    pub async fn run(self: Arc<Self>) {
        let why = loop {
            let frame = match self.channel.recv().await {
                Ok(Some(frame)) => frame,
                Ok(None) => break "the project's sandbox stopped".to_owned(),
                Err(e) => break format!("the project's sandbox broke the protocol: {e}"),
            };
            let message: HelperMessage = match from_header(&frame.header) {
                Ok(message) => message,
                Err(e) => break format!("the project's sandbox broke the protocol: {e}"),
            };
            self.dispatch(message, frame.payload, frame.fds);
        };
        self.close(why);
    }

    fn dispatch(&self, message: HelperMessage, payload: Vec<u8>, fds: Vec<OwnedFd>) {
        match message {
            HelperMessage::Ready { pid } => {
                self.ready.send_replace(Some(pid));
            }
            HelperMessage::Reply { id, result } => {
                let Some(waiter) = lock(&self.pending).remove(&id) else {
                    return;
                };
                let result = result.map_err(Failure::Helper).map(|reply| {
                    // The exit watch exists before anyone can miss the exit.
                    let exit = match reply {
                        Reply::Spawned { pid } => {
                            let (tx, rx) = watch::channel(None);
                            lock(&self.exits).insert(pid, tx);
                            Some(rx)
                        }
                        _ => None,
                    };
                    Incoming {
                        reply,
                        payload,
                        fds,
                        exit,
                    }
                });
                let _ = waiter.send(result);
            }
            HelperMessage::Exited { pid, code, signal } => {
                if let Some(tx) = lock(&self.exits).remove(&pid) {
                    tx.send_replace(Some(RawExit {
                        code,
                        signal,
                        lost: false,
                    }));
                }
            }
            HelperMessage::Ports { ports } => self.events.set_ports(ports.into_iter().collect()),
            HelperMessage::Changed { changes } => {
                for change in changes {
                    let _ = self.events.files.send(change);
                }
            }
        }
    }

    /// Marks the sandbox gone: waiters fail, processes count as ended, ports
    /// as closed.
    pub fn close(&self, why: String) {
        self.closed.send_if_modified(|closed| {
            if closed.is_some() {
                return false;
            }
            *closed = Some(why.clone());
            true
        });
        for (_, waiter) in lock(&self.pending).drain() {
            let _ = waiter.send(Err(Failure::Closed(why.clone())));
        }
        for (_, tx) in lock(&self.exits).drain() {
            tx.send_replace(Some(RawExit {
                code: None,
                signal: Some(libc::SIGKILL),
                lost: true,
            }));
        }
        self.events.set_ports(BTreeSet::new());
    }
}

#[cfg(test)]
mod tests {
    use nix::sys::socket::{AddressFamily, SockFlag, SockType, socketpair};

    use futures::{FutureExt, StreamExt};

    use super::*;
    use crate::server::sandbox::wire::Request;

    /// A client, and the helper's end of its socket.
    fn connected() -> (Arc<HelperClient>, FdChannel) {
        let (ide, helper) = socketpair(
            AddressFamily::Unix,
            SockType::Stream,
            None,
            SockFlag::SOCK_CLOEXEC,
        )
        .unwrap();
        let client = HelperClient::new(
            FdChannel::new(ide).unwrap(),
            Arc::new(ProjectEvents::default()),
        );
        tokio::spawn(client.clone().run());
        (client, FdChannel::new(helper).unwrap())
    }

    #[tokio::test]
    async fn a_request_the_sandbox_never_answers_fails_naming_it() {
        let (client, helper) = connected();
        // A helper stuck on every read, answering everything else.
        tokio::spawn(async move {
            while let Ok(Some(frame)) = helper.recv().await {
                let request: Request = from_header(&frame.header).unwrap();
                if matches!(request.op, Op::ReadFile { .. }) {
                    continue;
                }
                let reply = HelperMessage::Reply {
                    id: request.id,
                    result: Ok(Reply::Done),
                };
                helper
                    .send(&to_header(&reply).unwrap(), &[], &[])
                    .await
                    .unwrap();
            }
        });
        let read = Op::ReadFile {
            path: "src/App.jsx".to_owned(),
        };
        let stuck = client
            .request_within(Duration::from_millis(300), read, &[], &[])
            .await;
        let Err(Failure::TimedOut(message)) = stuck else {
            panic!("a request nobody answers must time out");
        };
        assert_eq!(
            message,
            "the sandbox did not answer read_file src/App.jsx within 300 ms"
        );
        assert!(lock(&client.pending).is_empty());
        // The project keeps working for other requests.
        let mkdir = Op::Mkdir {
            path: "src".to_owned(),
        };
        let answered = client.request(mkdir, &[], &[]).await.unwrap();
        assert!(matches!(answered.reply, Reply::Done));
        assert!(!client.is_closed());
    }

    #[test]
    fn every_request_has_a_time_limit_long_enough_for_its_work() {
        let read = Op::ReadFile {
            path: "a".to_owned(),
        };
        assert_eq!(timeout(&read), Duration::from_secs(30));
        assert_eq!(describe(&read), "read_file a");
        let write = Op::WriteFile {
            path: "a".to_owned(),
        };
        assert!(timeout(&write) >= Duration::from_secs(60));
        let message = Failure::TimedOut("the sandbox did not answer".to_owned())
            .for_path("a")
            .to_string();
        assert_eq!(message, "the sandbox did not answer");
    }

    #[tokio::test]
    async fn a_subscriber_flooded_with_port_events_still_sees_the_ports_open_now() {
        let events = Arc::new(ProjectEvents::default());
        events.set_ports(BTreeSet::from([80]));
        let mut stream = Box::pin(events.port_stream());
        // Far more events than the channel keeps: the subscriber falls behind.
        events.set_ports((1000..1400).collect());
        events.set_ports(BTreeSet::from([1000, 5000]));
        let expected = BTreeSet::from([1000, 5000]);
        let mut seen = BTreeSet::from([80]);
        tokio::time::timeout(Duration::from_secs(10), async {
            while seen != expected {
                note(&mut seen, stream.next().await.unwrap());
            }
        })
        .await
        .unwrap_or_else(|_| panic!("the subscriber believes {seen:?} are open"));
        // Nothing is left that would change the picture again.
        assert!(stream.next().now_or_never().is_none());
        events.set_ports(BTreeSet::new());
        let mut closed = vec![stream.next().await.unwrap(), stream.next().await.unwrap()];
        closed.sort_by_key(|e| match e {
            PortEvent::Opened { port } | PortEvent::Closed { port } => *port,
        });
        assert_eq!(
            closed,
            [
                PortEvent::Closed { port: 1000 },
                PortEvent::Closed { port: 5000 }
            ]
        );
    }
}
