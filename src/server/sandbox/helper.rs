//! The sandbox's helper process (`rivet sandbox-agent`): the first process of a
//! project's sandbox.
//!
//! It runs inside the sandbox, as the sandbox's user, and is the init of the
//! sandbox's pid namespace: every command of the project is its child, so the
//! commands share one machine (processes, network, files). It forks and execs
//! what the IDE asks for with descriptors the IDE sends, applies the limits,
//! reaps, reports exits, listening ports and file changes, and kills. It never
//! relays process output.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::io;
use std::os::fd::{AsFd, FromRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{ExitCode, Stdio};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use nix::fcntl::OFlag;
use nix::sys::signal::{Signal, kill, killpg};
use nix::sys::wait::{WaitPidFlag, WaitStatus, waitpid};
use nix::unistd::Pid;
use tokio::net::TcpStream;
use tokio::sync::mpsc;

use super::wire::{
    FdChannel, Frame, HelperError, HelperMessage, Op, Reply, Request, Rlimits, SpawnRequest,
    from_header, to_header,
};
use super::{fsops, ports, sys, watch};
use crate::runtime::host::{FsEvent, PtySize};

/// How often the listening ports are read just after a process starts or
/// the ports change: a dev server's port is what the preview waits for
/// after the answer's last token. One ask is a `sock_diag` dump of the
/// listening sockets, tens of microseconds (`ports.rs`).
const PORT_POLL: Duration = Duration::from_millis(50);
/// How long ports are read that often after a process starts or the ports
/// change (a dev server takes seconds to listen).
const PORT_POLL_FAST_FOR: Duration = Duration::from_secs(30);
/// The slowest reading, reached by doubling once that time is over, so an
/// idle sandbox costs next to nothing (a server keeps many sandboxes).
const PORT_POLL_IDLE: Duration = Duration::from_secs(1);
/// Most file operations running at once; more wait their turn.
const FILE_THREADS: usize = 4;

#[derive(Debug, Clone, clap::Args)]
pub struct HelperArgs {
    /// The descriptor of the socket to the IDE.
    #[arg(long)]
    pub fd: i32,
    /// The project's directory, as the helper sees it.
    #[arg(long)]
    pub root: PathBuf,
    /// Set when the helper runs in a sandbox (its own pid and network
    /// namespaces); unset with --unsafe-no-sandbox.
    #[arg(long)]
    pub isolated: bool,
}

pub fn main(args: HelperArgs) -> ExitCode {
    // File operations run on blocking threads (see `Helper::file_op`); a few
    // are enough, and each thread counts against the project's processes.
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .max_blocking_threads(FILE_THREADS)
        .build();
    let result = runtime.and_then(|rt| rt.block_on(run(args)));
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("rivet sandbox agent: {e}");
            ExitCode::FAILURE
        }
    }
}

#[derive(Default)]
struct Children {
    /// Started, but the IDE has not been told the pid yet.
    pending: HashSet<i32>,
    /// The IDE knows them; their exit is reported.
    known: HashSet<i32>,
    /// Exited before the IDE knew them.
    early: HashMap<i32, (Option<i32>, Option<i32>)>,
    /// Every session started, for the final kill without a pid namespace.
    sessions: HashSet<i32>,
}

struct Helper {
    channel: FdChannel,
    root: PathBuf,
    isolated: bool,
    children: Mutex<Children>,
    /// The port of the registry proxy's socket, once the IDE asked for it.
    proxy_port: Mutex<Option<u16>>,
    /// Woken when a process starts, so ports are read often again.
    spawned: tokio::sync::Notify,
}

impl Helper {
    fn children(&self) -> MutexGuard<'_, Children> {
        // A poisoned lock only means a panic elsewhere; the data is still sound.
        self.children.lock().unwrap_or_else(|e| e.into_inner())
    }

    async fn send(
        &self,
        message: &HelperMessage,
        payload: &[u8],
        fds: &[std::os::fd::BorrowedFd<'_>],
    ) -> io::Result<()> {
        self.channel.send(&to_header(message)?, payload, fds).await
    }

    async fn reply(
        &self,
        id: u64,
        result: Result<Reply, HelperError>,
        payload: &[u8],
        fds: &[std::os::fd::BorrowedFd<'_>],
    ) -> io::Result<()> {
        self.send(&HelperMessage::Reply { id, result }, payload, fds)
            .await
    }

    async fn handle(self: &Arc<Self>, request: Request, frame: Frame) -> io::Result<()> {
        let id = request.id;
        let result = match request.op {
            Op::Spawn(spawn) => return self.spawn(id, spawn, frame.fds).await,
            Op::Connect { port } => {
                let helper = self.clone();
                tokio::spawn(async move {
                    let result = helper.connect(port).await;
                    let _ = match result {
                        Ok(fd) => {
                            helper
                                .reply(id, Ok(Reply::Connected), &[], &[fd.as_fd()])
                                .await
                        }
                        Err(e) => helper.reply(id, Err(e), &[], &[]).await,
                    };
                });
                return Ok(());
            }
            Op::Listen { port } => match self.listen(port) {
                Ok(fd) => {
                    return self
                        .reply(id, Ok(Reply::Listening), &[], &[fd.as_fd()])
                        .await;
                }
                Err(e) => Err(e),
            },
            Op::KillTree { pid } => {
                let helper = self.clone();
                tokio::spawn(async move {
                    let result = helper
                        .kill_tree(pid)
                        .await
                        .map(|processes| Reply::Killed { processes });
                    let _ = helper.reply(id, result, &[], &[]).await;
                });
                return Ok(());
            }
            Op::Shutdown => {
                self.kill_everything().await;
                Ok(Reply::Done)
            }
            file_op => {
                self.file_op(id, file_op, frame.payload);
                return Ok(());
            }
        };
        self.reply(id, result, &[], &[]).await
    }

    /// Runs a file operation on a thread of its own and replies when it is
    /// done: a slow one (a huge tree, a slow disk) never holds up spawning,
    /// exits or port reports, which run on this event loop.
    fn file_op(self: &Arc<Self>, id: u64, op: Op, payload: Vec<u8>) {
        let helper = self.clone();
        tokio::spawn(async move {
            let root = helper.root.clone();
            let done =
                tokio::task::spawn_blocking(move || fsops::perform(&root, op, &payload)).await;
            let result = done.unwrap_or_else(|e| {
                Err(HelperError::io(format!("the file operation failed: {e}")))
            });
            let _ = match result {
                Ok((reply, contents)) => helper.reply(id, Ok(reply), &contents, &[]).await,
                Err(e) => helper.reply(id, Err(e), &[], &[]).await,
            };
        });
    }

    async fn spawn(&self, id: u64, request: SpawnRequest, fds: Vec<OwnedFd>) -> io::Result<()> {
        self.spawned.notify_one();
        let started = start(&self.root, request, fds);
        let (pid, master) = match started {
            Ok(started) => started,
            Err(e) => return self.reply(id, Err(e), &[], &[]).await,
        };
        {
            let mut children = self.children();
            children.pending.insert(pid);
            children.sessions.insert(pid);
        }
        let fds: Vec<_> = master.iter().map(|m| m.as_fd()).collect();
        let sent = self.reply(id, Ok(Reply::Spawned { pid }), &[], &fds).await;
        // Only now may the exit be reported: the IDE must know the pid first.
        let early = {
            let mut children = self.children();
            children.pending.remove(&pid);
            let early = children.early.remove(&pid);
            if early.is_none() {
                children.known.insert(pid);
            }
            early
        };
        if let Some((code, signal)) = early {
            self.send(&HelperMessage::Exited { pid, code, signal }, &[], &[])
                .await?;
        }
        sent
    }

    /// Reaps every child that has ended (orphans included: the helper is the
    /// sandbox's init) and reports those the IDE started.
    async fn reap(&self) -> io::Result<()> {
        loop {
            let status = match waitpid(None, Some(WaitPidFlag::WNOHANG)) {
                Ok(WaitStatus::StillAlive) | Err(nix::errno::Errno::ECHILD) => return Ok(()),
                Ok(status) => status,
                Err(nix::errno::Errno::EINTR) => continue,
                Err(e) => return Err(e.into()),
            };
            let (pid, code, signal) = match status {
                WaitStatus::Exited(pid, code) => (pid.as_raw(), Some(code), None),
                WaitStatus::Signaled(pid, signal, _) => (pid.as_raw(), None, Some(signal as i32)),
                _ => continue,
            };
            let report = {
                let mut children = self.children();
                if children.known.remove(&pid) {
                    true
                } else {
                    if children.pending.contains(&pid) {
                        children.early.insert(pid, (code, signal));
                    }
                    false
                }
            };
            if report {
                self.send(&HelperMessage::Exited { pid, code, signal }, &[], &[])
                    .await?;
            }
        }
    }

    /// Kills a session the IDE started: everything in it is first stopped
    /// (a fork bomb refills whatever is killed while its other members still
    /// run), then SIGKILLed, until none of it is left.
    async fn kill_tree(&self, leader: i32) -> Result<usize, HelperError> {
        if !self.children().sessions.contains(&leader) {
            return Err(HelperError::invalid(format!(
                "process {leader} was not started here"
            )));
        }
        // Counted before the first kill: a group killed at once may be
        // reaped before its session is listed again.
        let mut seen: std::collections::HashSet<i32> =
            sys::session_members(leader).iter().map(|p| p.pid).collect();
        let _ = killpg(Pid::from_raw(leader), Signal::SIGKILL);
        for _ in 0..2000 {
            let members = sys::session_members(leader);
            seen.extend(members.iter().map(|p| p.pid));
            if members.is_empty() {
                return Ok(seen.len());
            }
            let running: Vec<i32> = members
                .iter()
                .filter(|p| p.state != 'T')
                .map(|p| p.pid)
                .collect();
            if running.is_empty() {
                // Nobody can fork any more: kill them all.
                for member in &members {
                    let _ = kill(Pid::from_raw(member.pid), Signal::SIGKILL);
                }
            } else {
                for pid in running {
                    let _ = kill(Pid::from_raw(pid), Signal::SIGSTOP);
                }
            }
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
        Err(HelperError::io(format!(
            "process {leader} survived SIGKILL"
        )))
    }

    /// Kills everything the project runs.
    async fn kill_everything(&self) {
        if self.isolated {
            // From the init of a pid namespace, -1 means every other process
            // in the namespace, and nothing outside it.
            for _ in 0..200 {
                let _ = kill(Pid::from_raw(-1), Signal::SIGKILL);
                let me = std::process::id() as i32;
                let others = sys::processes(std::path::Path::new("/proc"))
                    .into_iter()
                    .any(|p| p.pid != me && p.state != 'Z');
                if !others {
                    return;
                }
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
        } else {
            let sessions: Vec<i32> = self.children().sessions.iter().copied().collect();
            for leader in sessions {
                let _ = self.kill_tree(leader).await;
            }
        }
    }

    fn proxy_port(&self) -> Option<u16> {
        *self.proxy_port.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A socket listening on `127.0.0.1:port` of the sandbox's own network,
    /// for the IDE to serve the registry proxy on.
    fn listen(&self, port: u16) -> Result<OwnedFd, HelperError> {
        if !self.isolated {
            return Err(HelperError::invalid(
                "without a sandbox there is no network of its own to listen in",
            ));
        }
        let listener = std::net::TcpListener::bind(("127.0.0.1", port))
            .map_err(|e| HelperError::io(format!("cannot listen on 127.0.0.1:{port}: {e}")))?;
        *self.proxy_port.lock().unwrap_or_else(|e| e.into_inner()) = Some(port);
        Ok(OwnedFd::from(listener))
    }

    async fn connect(&self, port: u16) -> Result<OwnedFd, HelperError> {
        if self.proxy_port() == Some(port) {
            return Err(HelperError::invalid(format!(
                "port {port} is the sandbox's registry proxy, not a server of the project"
            )));
        }
        if !self.isolated && !ports::listening(false, std::process::id() as i32).contains(&port) {
            return Err(HelperError::invalid(format!(
                "no process of this project listens on port {port}"
            )));
        }
        let mut last = String::new();
        for host in ["127.0.0.1", "::1"] {
            match tokio::time::timeout(Duration::from_secs(3), TcpStream::connect((host, port)))
                .await
            {
                Ok(Ok(stream)) => {
                    let stream = stream
                        .into_std()
                        .map_err(|e| HelperError::io(e.to_string()))?;
                    return Ok(OwnedFd::from(stream));
                }
                Ok(Err(e)) => last = e.to_string(),
                Err(_) => last = "timed out".to_owned(),
            }
        }
        Err(HelperError::io(format!(
            "nothing answers on port {port}: {last}"
        )))
    }
}

/// Forks and execs one program; returns its pid and, with a terminal, the
/// terminal's master.
fn start(
    root: &std::path::Path,
    request: SpawnRequest,
    fds: Vec<OwnedFd>,
) -> Result<(i32, Option<OwnedFd>), HelperError> {
    let Some((program, args)) = request.argv.split_first() else {
        return Err(HelperError::invalid("empty command"));
    };
    let mut command = std::process::Command::new(program);
    command
        .args(args)
        .env_clear()
        .envs(request.env)
        .current_dir(root);
    let io_err = |e: io::Error| HelperError::io(format!("cannot start {program}: {e}"));
    let master = match request.pty {
        Some(size) => {
            let (master, slave) = open_pty(size).map_err(io_err)?;
            command
                .stdin(Stdio::from(slave.try_clone().map_err(io_err)?))
                .stdout(Stdio::from(slave.try_clone().map_err(io_err)?))
                .stderr(Stdio::from(slave));
            Some(master)
        }
        None => {
            let [stdin, output]: [OwnedFd; 2] = fds.try_into().map_err(|_| {
                HelperError::invalid("a command needs stdin and output descriptors")
            })?;
            command
                .stdin(Stdio::from(stdin))
                .stdout(Stdio::from(output.try_clone().map_err(io_err)?))
                .stderr(Stdio::from(output));
            None
        }
    };
    let tty = request.pty.is_some();
    let limits = request.rlimits;
    // SAFETY: the closure runs between fork and exec and only makes
    // async-signal-safe system calls.
    unsafe {
        command.pre_exec(move || prepare_child(tty, &limits));
    }
    let child = command.spawn().map_err(io_err)?;
    // The reaper collects it; std's handle neither waits nor kills on drop.
    let pid = child.id() as i32;
    Ok((pid, master))
}

/// In the child: a session of its own (so a kill reaches everything it
/// starts), the terminal as controlling terminal, then the limits.
fn prepare_child(tty: bool, limits: &Rlimits) -> io::Result<()> {
    // SAFETY: setsid and ioctl are async-signal-safe and touch no memory of ours.
    if unsafe { libc::setsid() } < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: as above; TIOCSCTTY takes an integer argument.
    if tty && unsafe { libc::ioctl(0, libc::TIOCSCTTY, 0) } < 0 {
        return Err(io::Error::last_os_error());
    }
    let cpu_hard = limits.cpu_secs.map(|s| s.saturating_add(5));
    let table = [
        (libc::RLIMIT_AS, limits.address_space, limits.address_space),
        (libc::RLIMIT_NPROC, limits.processes, limits.processes),
        (libc::RLIMIT_FSIZE, limits.file_size, limits.file_size),
        (libc::RLIMIT_NOFILE, limits.open_files, limits.open_files),
        // The soft limit sends SIGXCPU, which names the limit; the hard one
        // kills a process that ignores it.
        (libc::RLIMIT_CPU, limits.cpu_secs, cpu_hard),
    ];
    for (resource, soft, hard) in table {
        let (Some(soft), Some(hard)) = (soft, hard) else {
            continue;
        };
        let mut current = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: getrlimit writes one `rlimit` into the valid pointer.
        if unsafe { libc::getrlimit(resource, &mut current) } < 0 {
            return Err(io::Error::last_os_error());
        }
        // A limit can only be lowered without privilege.
        let hard = hard.min(current.rlim_max);
        let wanted = libc::rlimit {
            rlim_cur: soft.min(hard),
            rlim_max: hard,
        };
        // SAFETY: setrlimit reads one `rlimit` from the valid pointer.
        if unsafe { libc::setrlimit(resource, &wanted) } < 0 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}

/// A new terminal from the sandbox's own devpts, so `tty` works inside.
fn open_pty(size: PtySize) -> io::Result<(OwnedFd, OwnedFd)> {
    use nix::pty::{grantpt, posix_openpt, ptsname_r, unlockpt};
    let master = posix_openpt(OFlag::O_RDWR | OFlag::O_NOCTTY | OFlag::O_CLOEXEC)?;
    grantpt(&master)?;
    unlockpt(&master)?;
    let name = ptsname_r(&master)?;
    let slave = nix::fcntl::open(
        name.as_str(),
        OFlag::O_RDWR | OFlag::O_NOCTTY | OFlag::O_CLOEXEC,
        nix::sys::stat::Mode::empty(),
    )?;
    let master = OwnedFd::from(master);
    sys::set_winsize(master.as_fd(), size)?;
    Ok((master, slave))
}

/// Hardening of the helper itself, before anything else runs.
fn harden(isolated: bool) -> io::Result<()> {
    // Not dumpable: processes of the sandbox (same user) cannot ptrace the
    // helper or take its socket to the IDE from /proc.
    nix::sys::prctl::set_dumpable(false)?;
    // When memory runs out, the kernel kills the project's processes before
    // the IDE's; a lower priority keeps the IDE responsive.
    let _ = std::fs::write("/proc/self/oom_score_adj", "500");
    // SAFETY: setpriority has no memory effects.
    unsafe { libc::setpriority(libc::PRIO_PROCESS, 0, 5) };
    if !isolated {
        // Orphans become the helper's children, so they are reaped and killed.
        nix::sys::prctl::set_child_subreaper(true)?;
        nix::sys::prctl::set_pdeathsig(Signal::SIGKILL)?;
    }
    Ok(())
}

async fn run(args: HelperArgs) -> io::Result<()> {
    harden(args.isolated)?;
    // Registered before the first child exists, so no exit is missed.
    let mut sigchld = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::child())?;
    // SAFETY: the IDE passes the socket at this number and nothing else in
    // this process owns it.
    let socket = unsafe { OwnedFd::from_raw_fd(args.fd) };
    nix::fcntl::fcntl(
        &socket,
        nix::fcntl::FcntlArg::F_SETFD(nix::fcntl::FdFlag::FD_CLOEXEC),
    )?;
    let helper = Arc::new(Helper {
        channel: FdChannel::new(socket)?,
        root: args.root,
        isolated: args.isolated,
        children: Mutex::new(Children::default()),
        proxy_port: Mutex::new(None),
        spawned: tokio::sync::Notify::new(),
    });
    let pid = std::process::id() as i32;
    helper.send(&HelperMessage::Ready { pid }, &[], &[]).await?;

    tokio::spawn({
        let helper = helper.clone();
        async move {
            while sigchld.recv().await.is_some() {
                if helper.reap().await.is_err() {
                    return;
                }
            }
        }
    });
    tokio::spawn({
        let helper = helper.clone();
        async move {
            let mut last = BTreeSet::new();
            let mut pause = PORT_POLL;
            let mut fast_until = tokio::time::Instant::now() + PORT_POLL_FAST_FOR;
            loop {
                let mut now = ports::listening(helper.isolated, pid);
                if let Some(proxy) = helper.proxy_port() {
                    now.remove(&proxy);
                }
                if now != last {
                    let ports = now.iter().copied().collect();
                    if helper
                        .send(&HelperMessage::Ports { ports }, &[], &[])
                        .await
                        .is_err()
                    {
                        return;
                    }
                    last = now;
                    fast_until = tokio::time::Instant::now() + PORT_POLL_FAST_FOR;
                }
                pause = if tokio::time::Instant::now() < fast_until {
                    PORT_POLL
                } else {
                    (pause * 2).min(PORT_POLL_IDLE)
                };
                tokio::select! {
                    () = tokio::time::sleep(pause) => {}
                    () = helper.spawned.notified() => {
                        fast_until = tokio::time::Instant::now() + PORT_POLL_FAST_FOR;
                    }
                }
            }
        }
    });
    let (changes, mut changed) = mpsc::channel(16);
    let root = helper.root.clone();
    tokio::spawn(async move {
        if let Err(e) = watch::watch_tree(&root, changes).await {
            eprintln!("rivet sandbox agent: file changes are not reported: {e}");
        }
    });
    tokio::spawn({
        let helper = helper.clone();
        async move {
            while let Some(paths) = changed.recv().await {
                let changes = paths
                    .into_iter()
                    .map(|path| FsEvent {
                        removed: std::fs::symlink_metadata(helper.root.join(&path)).is_err(),
                        path,
                    })
                    .collect();
                if helper
                    .send(&HelperMessage::Changed { changes }, &[], &[])
                    .await
                    .is_err()
                {
                    return;
                }
            }
        }
    });

    loop {
        let Some(frame) = helper.channel.recv().await? else {
            break;
        };
        let request: Request = from_header(&frame.header)?;
        let shutdown = matches!(request.op, Op::Shutdown);
        helper.handle(request, frame).await?;
        if shutdown {
            return Ok(());
        }
    }
    // The IDE is gone: nothing of the project may outlive it.
    helper.kill_everything().await;
    Ok(())
}
