//! Starting and stopping one project's sandbox: `bwrap` with the agent as
//! the init of its namespaces, `slirp4netns` for its network, or, with
//! `--unsafe-no-sandbox`, the agent alone.

use std::ffi::OsString;
use std::io::{Seek, Write};
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::mpsc as std_mpsc;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use nix::sys::socket::{AddressFamily, SockFlag, SockType, socketpair};
use tokio::io::AsyncReadExt;
use tokio::sync::{oneshot, watch};

use super::client::{AgentClient, ProjectEvents};
use super::protocol::{FdChannel, Op};
use super::sys::clear_cloexec;
use super::{Isolation, SandboxError, SandboxSettings};
use crate::runtime::host::RuntimeError;

/// The sandbox's user and group inside, and their name and home.
pub const SANDBOX_UID: u32 = 1000;
pub const SANDBOX_USER: &str = "user";
pub const SANDBOX_HOME: &str = "/home/user";
pub const SANDBOX_WORKSPACE: &str = "/home/project";
pub const SANDBOX_HOSTNAME: &str = "rivet";
/// Where the agent's binary appears inside.
const AGENT_PATH: &str = "/run/rivet/sandbox-agent";
/// How long a sandbox gets to come up.
const START_TIMEOUT: Duration = Duration::from_secs(15);

/// Files of the host's `/etc` a sandbox sees (when they exist). Everything
/// else of `/etc` is absent: no shadow, no host users, no IDE configuration.
const ETC_ALLOWED: &[&str] = &[
    "alternatives",
    "bash.bashrc",
    "ca-certificates",
    "ca-certificates.conf",
    "debian_version",
    "gai.conf",
    "host.conf",
    "inputrc",
    "ld.so.cache",
    "ld.so.conf",
    "ld.so.conf.d",
    "localtime",
    "mime.types",
    "os-release",
    "profile",
    "profile.d",
    "protocols",
    "services",
    "ssl/certs",
    "ssl/openssl.cnf",
    "terminfo",
    "timezone",
];

/// Top-level system directories, bound read-only or recreated as the
/// symlinks they are on merged-/usr systems.
const SYSTEM_DIRS: &[&str] = &["bin", "sbin", "lib", "lib32", "lib64", "libx32"];

/// What this host offers, found once at startup.
#[derive(Debug, Clone)]
pub struct Host {
    pub bwrap: Option<PathBuf>,
    pub slirp: Option<PathBuf>,
    /// The host user and group that run the sandboxes when the IDE is root.
    pub run_as: Option<(u32, u32)>,
    /// Why commands have no network, when they have none.
    pub no_network: Option<String>,
    /// Whether this bwrap knows `--disable-userns` (0.8 and later).
    pub disable_userns: bool,
    /// `NODE_OPTIONS` for sandboxed processes, when the memory limit needs
    /// one (see [`node_options`]).
    pub node_options: Option<String>,
}

/// V8 reserves 8 GiB or more of address space per WebAssembly memory for its
/// guard pages, which an address-space limit forbids: Vite (and anything
/// using a wasm parser) then dies with "Cannot allocate Wasm memory". Without
/// the trap handler, V8 checks bounds explicitly and reserves only what it
/// uses. Older Node versions refuse the option, so it is tried first.
fn node_options(limit_mb: u64, find: &impl Fn(&str) -> Option<PathBuf>) -> Option<String> {
    const FLAG: &str = "--disable-wasm-trap-handler";
    if limit_mb == 0 {
        return None;
    }
    let node = find("node")?;
    let status = std::process::Command::new(node)
        .args([FLAG, "-e", "0"])
        .env_clear()
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .ok()?;
    status.success().then(|| FLAG.to_owned())
}

/// Searches `PATH` (then the usual system directories) for a program.
pub fn find_program(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_else(|| OsString::from("/usr/bin:/bin"));
    std::env::split_paths(&path)
        .chain(["/usr/bin", "/usr/sbin", "/bin"].map(PathBuf::from))
        .map(|dir| dir.join(name))
        .find(|candidate| {
            std::fs::metadata(candidate)
                .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
}

impl Host {
    /// Finds bwrap and slirp4netns and checks that bwrap can create the
    /// namespaces a sandbox needs.
    pub fn detect(settings: &SandboxSettings) -> Result<Host, SandboxError> {
        Host::detect_with(settings, find_program)
    }

    /// [`Host::detect`] with another way to find programs.
    pub fn detect_with(
        settings: &SandboxSettings,
        find: impl Fn(&str) -> Option<PathBuf>,
    ) -> Result<Host, SandboxError> {
        let run_as = nix::unistd::geteuid()
            .is_root()
            .then_some((settings.config.host_uid, settings.config.host_uid));
        let node_options = node_options(settings.config.memory_mb, &find);
        if settings.isolation == Isolation::Unsafe {
            return Ok(Host {
                bwrap: None,
                slirp: None,
                run_as: None,
                no_network: None,
                disable_userns: false,
                node_options,
            });
        }
        let bwrap = find("bwrap").ok_or(SandboxError::BwrapMissing)?;
        let help = std::process::Command::new(&bwrap)
            .arg("--help")
            .stdin(Stdio::null())
            .output()
            .map_err(|e| {
                SandboxError::NoNamespaces(format!("cannot run {}: {e}", bwrap.display()))
            })?;
        let help = String::from_utf8_lossy(&help.stdout);
        let disable_userns = help.contains("--disable-userns");
        let mut host = Host {
            bwrap: Some(bwrap),
            slirp: None,
            run_as,
            no_network: None,
            disable_userns,
            node_options,
        };
        host.probe()?;
        if !settings.config.network {
            host.no_network = Some("sandbox.network is off".to_owned());
        } else if let Some(slirp) = find("slirp4netns") {
            host.slirp = Some(slirp);
        } else {
            let why = "slirp4netns is not installed (apt-get install slirp4netns)";
            tracing::warn!("commands will run without network access: {why}");
            host.no_network = Some(why.to_owned());
        }
        Ok(host)
    }

    /// Runs `true` in a sandbox like the real ones.
    fn probe(&self) -> Result<(), SandboxError> {
        let Some(bwrap) = &self.bwrap else {
            return Ok(());
        };
        let mut args = namespace_args(self.disable_userns);
        args.extend(system_args());
        args.extend(["--proc", "/proc", "--dev", "/dev", "/usr/bin/true"].map(String::from));
        let mut command = std::process::Command::new(bwrap);
        command.args(&args).env_clear().stdin(Stdio::null());
        if let Some((uid, gid)) = self.run_as {
            command.uid(uid).gid(gid);
        }
        let output = command.output().map_err(|e| {
            SandboxError::NoNamespaces(format!("cannot run {}: {e}", bwrap.display()))
        })?;
        if output.status.success() {
            return Ok(());
        }
        Err(SandboxError::NoNamespaces(
            String::from_utf8_lossy(&output.stderr).trim().to_owned(),
        ))
    }
}

fn namespace_args(disable_userns: bool) -> Vec<String> {
    let mut args: Vec<String> = [
        "--unshare-all",
        "--unshare-user",
        "--die-with-parent",
        "--as-pid-1",
        "--uid",
        &SANDBOX_UID.to_string(),
        "--gid",
        &SANDBOX_UID.to_string(),
        "--hostname",
        SANDBOX_HOSTNAME,
    ]
    .map(String::from)
    .to_vec();
    if disable_userns {
        args.push("--disable-userns".to_owned());
    }
    args
}

fn system_args() -> Vec<String> {
    let mut args = vec!["--ro-bind".to_owned(), "/usr".to_owned(), "/usr".to_owned()];
    for name in SYSTEM_DIRS {
        let host = Path::new("/").join(name);
        match std::fs::symlink_metadata(&host) {
            Ok(meta) if meta.file_type().is_symlink() => {
                if let Ok(target) = std::fs::read_link(&host) {
                    args.extend([
                        "--symlink".to_owned(),
                        target.to_string_lossy().into_owned(),
                        host.to_string_lossy().into_owned(),
                    ]);
                }
            }
            Ok(meta) if meta.is_dir() => {
                let host = host.to_string_lossy().into_owned();
                args.extend(["--ro-bind".to_owned(), host.clone(), host]);
            }
            _ => {}
        }
    }
    args
}

/// The host directories of one project's sandbox.
#[derive(Debug, Clone)]
pub struct ProjectDirs {
    pub workspace: PathBuf,
    pub home: PathBuf,
    pub npm_cache: Option<PathBuf>,
}

/// Files generated for the sandbox's `/etc`.
fn etc_files(network: bool) -> Vec<(&'static str, String)> {
    let uid = SANDBOX_UID;
    vec![
        (
            "/etc/passwd",
            format!(
                "root:x:0:0:root:/root:/usr/sbin/nologin\n{SANDBOX_USER}:x:{uid}:{uid}:Rivet sandbox:{SANDBOX_HOME}:/bin/bash\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n"
            ),
        ),
        ("/etc/group", format!("root:x:0:\n{SANDBOX_USER}:x:{uid}:\nnogroup:x:65534:\n")),
        (
            "/etc/hosts",
            format!("127.0.0.1 localhost {SANDBOX_HOSTNAME}\n::1 localhost ip6-localhost ip6-loopback\n"),
        ),
        ("/etc/hostname", format!("{SANDBOX_HOSTNAME}\n")),
        (
            "/etc/nsswitch.conf",
            "passwd: files\ngroup: files\nshadow: files\nhosts: files dns\nnetworks: files\nprotocols: files\nservices: files\n".to_owned(),
        ),
        (
            "/etc/resolv.conf",
            // slirp4netns answers DNS at 10.0.2.3.
            if network { "nameserver 10.0.2.3\n" } else { "# no network\n" }.to_owned(),
        ),
    ]
}

/// Everything `bwrap` is told, apart from the descriptors' numbers.
pub struct BwrapPlan<'a> {
    pub dirs: &'a ProjectDirs,
    pub agent: &'a Path,
    pub tmp_bytes: u64,
    pub disable_userns: bool,
    pub socket_fd: RawFd,
    pub info_fd: RawFd,
    /// Generated files: descriptor to read from, path inside.
    pub files: &'a [(RawFd, &'static str)],
    /// Entries of `/etc` to bind, as they exist on this host.
    pub etc: &'a [String],
}

pub fn bwrap_args(plan: &BwrapPlan<'_>) -> Vec<String> {
    let mut args = namespace_args(plan.disable_userns);
    args.extend(system_args());
    for entry in plan.etc {
        let path = format!("/etc/{entry}");
        args.extend(["--ro-bind".to_owned(), path.clone(), path]);
    }
    for (fd, dest) in plan.files {
        args.extend([
            "--ro-bind-data".to_owned(),
            fd.to_string(),
            (*dest).to_owned(),
        ]);
    }
    let s = |p: &Path| p.to_string_lossy().into_owned();
    args.extend(["--proc", "/proc", "--dev", "/dev"].map(String::from));
    if plan.tmp_bytes > 0 {
        args.extend(["--size".to_owned(), plan.tmp_bytes.to_string()]);
    }
    args.extend(["--tmpfs", "/tmp"].map(String::from));
    args.extend([
        "--bind".to_owned(),
        s(&plan.dirs.workspace),
        SANDBOX_WORKSPACE.to_owned(),
    ]);
    args.extend([
        "--bind".to_owned(),
        s(&plan.dirs.home),
        SANDBOX_HOME.to_owned(),
    ]);
    if let Some(cache) = &plan.dirs.npm_cache {
        args.extend([
            "--bind".to_owned(),
            s(cache),
            format!("{SANDBOX_HOME}/.npm"),
        ]);
    }
    args.extend(["--ro-bind".to_owned(), s(plan.agent), AGENT_PATH.to_owned()]);
    // The sandbox's own root (a tmpfs holding the mount points) is read-only
    // too: only the project, the home, /tmp and /dev/shm are writable.
    args.extend(["--remount-ro", "/"].map(String::from));
    args.extend(["--chdir".to_owned(), SANDBOX_WORKSPACE.to_owned()]);
    args.extend(["--info-fd".to_owned(), plan.info_fd.to_string()]);
    args.extend(
        [
            "--",
            AGENT_PATH,
            "sandbox-agent",
            "--fd",
            &plan.socket_fd.to_string(),
            "--root",
            SANDBOX_WORKSPACE,
            "--isolated",
        ]
        .map(String::from),
    );
    args
}

/// A child of the IDE, spawned from one long-lived thread: `bwrap
/// --die-with-parent` and slirp4netns die with the *thread* that started them,
/// and tokio's blocking threads come and go.
pub struct Launched {
    pub pid: u32,
    exited: watch::Receiver<bool>,
}

impl Launched {
    pub fn has_exited(&self) -> bool {
        *self.exited.borrow()
    }

    /// SIGKILLs the process if it is still ours (not yet reaped, so its pid
    /// cannot have been reused), then waits for it.
    pub async fn kill(&self, grace: Duration) {
        if !self.has_exited()
            && let Ok(pid) = i32::try_from(self.pid)
        {
            let _ = nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(pid),
                nix::sys::signal::Signal::SIGKILL,
            );
        }
        let mut exited = self.exited.clone();
        let _ = tokio::time::timeout(grace, exited.wait_for(|e| *e)).await;
    }

    pub async fn wait(&self, limit: Duration) -> bool {
        let mut exited = self.exited.clone();
        tokio::time::timeout(limit, exited.wait_for(|e| *e))
            .await
            .is_ok()
    }
}

type Job = Box<dyn FnOnce() + Send>;

fn launcher() -> &'static std::sync::Mutex<std_mpsc::Sender<Job>> {
    static LAUNCHER: OnceLock<std::sync::Mutex<std_mpsc::Sender<Job>>> = OnceLock::new();
    LAUNCHER.get_or_init(|| {
        let (tx, rx) = std_mpsc::channel::<Job>();
        let spawned = std::thread::Builder::new()
            .name("rivet-sandbox-launcher".to_owned())
            .spawn(move || {
                while let Ok(job) = rx.recv() {
                    job();
                }
            });
        if let Err(e) = spawned {
            tracing::error!("cannot start the sandbox launcher thread: {e}");
        }
        std::sync::Mutex::new(tx)
    })
}

/// Spawns `command` from the launcher thread.
pub async fn launch(mut command: std::process::Command) -> std::io::Result<Launched> {
    let (reply, response) = oneshot::channel();
    let job: Job = Box::new(move || {
        let result = command.spawn().map(|mut child| {
            let pid = child.id();
            let (tx, rx) = watch::channel(false);
            // The waiter is not the parent thread, so it may end freely.
            let _ = std::thread::Builder::new()
                .name("rivet-sandbox-wait".to_owned())
                .spawn(move || {
                    let _ = child.wait();
                    tx.send_replace(true);
                });
            Launched { pid, exited: rx }
        });
        let _ = reply.send(result);
    });
    let sent = launcher()
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .send(job);
    if sent.is_err() {
        return Err(std::io::Error::other("the sandbox launcher thread is gone"));
    }
    response
        .await
        .unwrap_or_else(|_| Err(std::io::Error::other("the sandbox launcher thread is gone")))
}

/// A running sandbox.
pub struct Sandbox {
    pub client: Arc<AgentClient>,
    /// `bwrap`, or the agent itself without isolation.
    main: Launched,
    /// slirp4netns, and the pipe whose closing tells it to exit.
    slirp: Option<(Launched, OwnedFd)>,
    pub no_network: Option<String>,
    pub node_options: Option<String>,
    pub isolated: bool,
    /// The workspace as processes inside see it.
    pub workspace_inside: PathBuf,
    pub home_inside: PathBuf,
}

impl Sandbox {
    pub fn is_alive(&self) -> bool {
        !self.client.is_closed() && !self.main.has_exited()
    }

    /// Host pid of `bwrap` (or of the agent without isolation).
    pub fn main_pid(&self) -> u32 {
        self.main.pid
    }

    /// Kills everything in the sandbox and waits for it to be gone.
    pub async fn stop(&self) {
        if !self.client.is_closed() {
            let shutdown = self.client.request(Op::Shutdown, &[], &[]);
            let _ = tokio::time::timeout(Duration::from_secs(2), shutdown).await;
        }
        // The agent exits after a shutdown, and with it the pid namespace.
        if !self.main.wait(Duration::from_secs(1)).await {
            self.main.kill(Duration::from_secs(2)).await;
        }
        if let Some((slirp, _exit)) = &self.slirp {
            slirp.kill(Duration::from_secs(2)).await;
        }
        self.client
            .close("the project's sandbox was closed".to_owned());
    }
}

fn memfd(name: &str, contents: &str) -> std::io::Result<OwnedFd> {
    use nix::sys::memfd::{MFdFlags, memfd_create};
    let fd = memfd_create(name, MFdFlags::MFD_CLOEXEC)?;
    let mut file = std::fs::File::from(fd);
    file.write_all(contents.as_bytes())?;
    file.rewind()?;
    Ok(OwnedFd::from(file))
}

fn pipe() -> std::io::Result<(OwnedFd, OwnedFd)> {
    Ok(nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC)?)
}

/// Makes the listed descriptors survive exec in the child and puts it in
/// a session of its own (no controlling terminal of the IDE's).
fn inherit(command: &mut std::process::Command, fds: Vec<RawFd>) {
    // SAFETY: runs between fork and exec and only calls setsid and fcntl,
    // which are async-signal-safe.
    unsafe {
        command.pre_exec(move || {
            if libc::setsid() < 0 {
                return Err(std::io::Error::last_os_error());
            }
            for &fd in &fds {
                clear_cloexec(fd)?;
            }
            Ok(())
        });
    }
}

/// Logs what a sandbox writes on stderr (bwrap's and the agent's own
/// messages) and keeps the beginning to explain a failed start.
fn log_stderr(project: &str, fd: OwnedFd) -> watch::Receiver<String> {
    let (tx, rx) = watch::channel(String::new());
    let project = project.to_owned();
    tokio::spawn(async move {
        let Ok(mut pipe) = tokio::net::unix::pipe::Receiver::from_owned_fd(fd) else {
            return;
        };
        let mut buf = vec![0u8; 4096];
        loop {
            match pipe.read(&mut buf).await {
                Ok(0) | Err(_) => return,
                Ok(n) => {
                    let text = String::from_utf8_lossy(&buf[..n]).trim().to_owned();
                    tracing::warn!(%project, "sandbox: {text}");
                    tx.send_modify(|all| {
                        if all.len() < 4096 {
                            all.push_str(&text);
                            all.push('\n');
                        }
                    });
                }
            }
        }
    });
    rx
}

fn unavailable(message: String) -> RuntimeError {
    RuntimeError::Unavailable(message)
}

/// Starts a project's sandbox and waits until its agent is ready.
pub async fn start(
    settings: &SandboxSettings,
    host: &Host,
    project: &str,
    dirs: &ProjectDirs,
    events: Arc<ProjectEvents>,
) -> Result<Sandbox, RuntimeError> {
    let io = |what: &str| {
        let what = what.to_owned();
        move |e: std::io::Error| unavailable(format!("cannot start the sandbox: {what}: {e}"))
    };
    let (ide_end, agent_end) = socketpair(
        AddressFamily::Unix,
        SockType::Stream,
        None,
        SockFlag::SOCK_CLOEXEC,
    )
    .map_err(|e| io("socket")(e.into()))?;
    let (err_read, err_write) = pipe().map_err(io("pipe"))?;
    let stderr = log_stderr(project, err_read);

    let (main, slirp, no_network, isolated) = match &host.bwrap {
        None => {
            tracing::warn!(%project, "starting the project WITHOUT a sandbox (--unsafe-no-sandbox)");
            let mut command = std::process::Command::new(&settings.agent_exe);
            command
                .arg("sandbox-agent")
                .arg("--fd")
                .arg(agent_end.as_raw_fd().to_string())
                .arg("--root")
                .arg(&dirs.workspace)
                .current_dir(&dirs.workspace)
                .env_clear()
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::from(err_write));
            inherit(&mut command, vec![agent_end.as_raw_fd()]);
            let main = launch(command).await.map_err(io("agent"))?;
            (main, None, None, false)
        }
        Some(bwrap) => {
            let network = host.slirp.is_some();
            let files: Vec<(OwnedFd, &'static str)> = etc_files(network)
                .into_iter()
                .map(|(dest, text)| memfd("rivet-etc", &text).map(|fd| (fd, dest)))
                .collect::<Result<_, _>>()
                .map_err(io("memfd"))?;
            let (info_read, info_write) = pipe().map_err(io("pipe"))?;
            let etc: Vec<String> = ETC_ALLOWED
                .iter()
                .filter(|e| Path::new("/etc").join(e).exists())
                .map(|e| (*e).to_owned())
                .collect();
            let file_fds: Vec<(RawFd, &'static str)> = files
                .iter()
                .map(|(fd, dest)| (fd.as_raw_fd(), *dest))
                .collect();
            let args = bwrap_args(&BwrapPlan {
                dirs,
                agent: &settings.agent_exe,
                tmp_bytes: settings.config.tmp_mb * 1024 * 1024,
                disable_userns: host.disable_userns,
                socket_fd: agent_end.as_raw_fd(),
                info_fd: info_write.as_raw_fd(),
                files: &file_fds,
                etc: &etc,
            });
            let slirp_stderr = err_write.try_clone().map_err(io("pipe"))?;
            let mut command = std::process::Command::new(bwrap);
            command
                .args(&args)
                .env_clear()
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::from(err_write));
            if let Some((uid, gid)) = host.run_as {
                command.uid(uid).gid(gid);
            }
            let mut keep: Vec<RawFd> = file_fds.iter().map(|(fd, _)| *fd).collect();
            keep.extend([agent_end.as_raw_fd(), info_write.as_raw_fd()]);
            inherit(&mut command, keep);
            let main = launch(command).await.map_err(io("bwrap"))?;
            drop(info_write);
            drop(files);
            let child = match tokio::time::timeout(START_TIMEOUT, read_child_pid(info_read)).await {
                Ok(Ok(pid)) => pid,
                failed => {
                    main.kill(Duration::from_secs(2)).await;
                    let detail = match failed {
                        Ok(Err(e)) => e,
                        _ => "timed out".to_owned(),
                    };
                    let said = stderr.borrow().trim().to_owned();
                    return Err(unavailable(format!(
                        "the sandbox did not start ({detail}): {said}"
                    )));
                }
            };
            let (slirp, no_network) = match &host.slirp {
                Some(slirp) => match start_slirp(slirp, child, host.run_as, slirp_stderr).await {
                    Ok(slirp) => (Some(slirp), None),
                    Err(e) => {
                        tracing::warn!(%project, "no network for this sandbox: {e}");
                        (None, Some(format!("slirp4netns failed: {e}")))
                    }
                },
                None => (None, host.no_network.clone()),
            };
            (main, slirp, no_network, true)
        }
    };
    drop(agent_end);

    let channel = FdChannel::new(ide_end).map_err(io("socket"))?;
    let client = AgentClient::new(channel, events);
    tokio::spawn(client.clone().run());
    let (workspace_inside, home_inside) = if isolated {
        (
            PathBuf::from(SANDBOX_WORKSPACE),
            PathBuf::from(SANDBOX_HOME),
        )
    } else {
        (dirs.workspace.clone(), dirs.home.clone())
    };
    let sandbox = Sandbox {
        client,
        main,
        slirp,
        no_network,
        node_options: host.node_options.clone(),
        isolated,
        workspace_inside,
        home_inside,
    };
    match tokio::time::timeout(START_TIMEOUT, sandbox.client.ready()).await {
        Ok(Ok(_pid)) => Ok(sandbox),
        failed => {
            sandbox.stop().await;
            let detail = match failed {
                Ok(Err(e)) => e,
                _ => "timed out".to_owned(),
            };
            let said = stderr.borrow().trim().to_owned();
            Err(unavailable(format!(
                "the sandbox did not start ({detail}): {said}"
            )))
        }
    }
}

/// Reads bwrap's `--info-fd` JSON for the host pid of the sandbox's init.
async fn read_child_pid(fd: OwnedFd) -> Result<i32, String> {
    let mut pipe =
        tokio::net::unix::pipe::Receiver::from_owned_fd(fd).map_err(|e| e.to_string())?;
    let mut text = Vec::new();
    let mut buf = [0u8; 1024];
    loop {
        let n = pipe.read(&mut buf).await.map_err(|e| e.to_string())?;
        if n == 0 {
            break;
        }
        text.extend_from_slice(&buf[..n]);
        if let Ok(info) = serde_json::from_slice::<serde_json::Value>(&text)
            && let Some(pid) = info.get("child-pid").and_then(|p| p.as_i64())
        {
            return i32::try_from(pid).map_err(|e| e.to_string());
        }
    }
    Err("bwrap exited before the sandbox was set up".to_owned())
}

/// `NS_GET_USERNS` from `linux/nsfs.h`: the user namespace owning a namespace.
const NS_GET_USERNS: libc::c_ulong = 0xb701;

/// Gives the sandbox's network namespace a user-mode network with egress,
/// where the host's loopback (the IDE, other projects) is unreachable.
async fn start_slirp(
    slirp: &Path,
    child: i32,
    run_as: Option<(u32, u32)>,
    stderr: OwnedFd,
) -> Result<(Launched, OwnedFd), String> {
    let netns = nix::fcntl::open(
        format!("/proc/{child}/ns/net").as_str(),
        nix::fcntl::OFlag::O_RDONLY | nix::fcntl::OFlag::O_CLOEXEC,
        nix::sys::stat::Mode::empty(),
    )
    .map_err(|e| format!("cannot open the network namespace: {e}"))?;
    // SAFETY: NS_GET_USERNS takes no argument and returns a new descriptor
    // (close-on-exec), which is owned below.
    let userns = unsafe { libc::ioctl(netns.as_raw_fd(), NS_GET_USERNS) };
    if userns < 0 {
        return Err(format!(
            "cannot find the sandbox's user namespace: {}",
            std::io::Error::last_os_error()
        ));
    }
    // SAFETY: the ioctl just returned this new descriptor.
    let userns = unsafe { <OwnedFd as std::os::fd::FromRawFd>::from_raw_fd(userns) };
    let (ready_read, ready_write) = pipe().map_err(|e| e.to_string())?;
    // slirp4netns exits when this pipe closes: when the IDE dies.
    let (exit_read, exit_write) = pipe().map_err(|e| e.to_string())?;
    let mut command = std::process::Command::new(slirp);
    command
        .args([
            "--configure",
            "--mtu=65520",
            "--disable-host-loopback",
            // Not --enable-sandbox: run without privilege, slirp4netns 1.2
            // fails it (setegid(0)) after configuring, and the network dies.
            "--enable-seccomp",
        ])
        .arg(format!("--ready-fd={}", ready_write.as_raw_fd()))
        .arg(format!("--exit-fd={}", exit_read.as_raw_fd()))
        .arg(format!(
            "--userns-path=/proc/self/fd/{}",
            userns.as_raw_fd()
        ))
        .arg("--netns-type=path")
        .arg(format!("/proc/self/fd/{}", netns.as_raw_fd()))
        .arg("tap0")
        .env_clear()
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::from(stderr));
    // Unprivileged, like the sandbox itself: slirp parses the sandbox's packets.
    if let Some((uid, gid)) = run_as {
        command.uid(uid).gid(gid);
    }
    inherit(
        &mut command,
        vec![
            ready_write.as_raw_fd(),
            exit_read.as_raw_fd(),
            userns.as_raw_fd(),
            netns.as_raw_fd(),
        ],
    );
    let launched = launch(command).await.map_err(|e| e.to_string())?;
    drop((ready_write, exit_read, userns, netns));
    let mut ready =
        tokio::net::unix::pipe::Receiver::from_owned_fd(ready_read).map_err(|e| e.to_string())?;
    let mut byte = [0u8; 1];
    match tokio::time::timeout(Duration::from_secs(5), ready.read(&mut byte)).await {
        Ok(Ok(1)) => Ok((launched, exit_write)),
        _ => {
            launched.kill(Duration::from_secs(1)).await;
            Err("slirp4netns did not configure the network".to_owned())
        }
    }
}

/// Creates a project's directories, private to the user that runs the
/// sandbox. When the IDE is root, that user is `run_as`: it gets the
/// directories, and the way to them must be open to it.
pub fn prepare_dirs(
    data_dir: &Path,
    dirs: &ProjectDirs,
    agent: &Path,
    run_as: Option<(u32, u32)>,
) -> Result<(), RuntimeError> {
    let fail = |path: &Path, e: std::io::Error| {
        unavailable(format!("cannot prepare {}: {e}", path.display()))
    };
    let mut owned = vec![&dirs.workspace, &dirs.home];
    owned.extend(dirs.npm_cache.iter());
    for dir in &owned {
        std::fs::create_dir_all(dir).map_err(|e| fail(dir, e))?;
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))
            .map_err(|e| fail(dir, e))?;
    }
    let Some((uid, gid)) = run_as else {
        return Ok(());
    };
    for dir in &owned {
        chown_tree(dir, uid, gid).map_err(|e| fail(dir, e))?;
        // The directories between the data directory and this one.
        let mut parent = dir.parent();
        while let Some(p) = parent {
            if !p.starts_with(data_dir) {
                break;
            }
            let meta = std::fs::metadata(p).map_err(|e| fail(p, e))?;
            let mode = meta.permissions().mode();
            if mode & 0o001 == 0 {
                std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode | 0o001))
                    .map_err(|e| fail(p, e))?;
            }
            parent = p.parent();
        }
        reachable(dir, uid, gid).map_err(|blocked| {
            unavailable(format!(
                "the sandbox user (uid {uid}, sandbox.host_uid) cannot reach {}: {} is closed to it. \
                 Move the data directory (server.data_dir) somewhere it can reach, or run Rivet as a normal user",
                dir.display(),
                blocked.display()
            ))
        })?;
    }
    reachable(agent, uid, gid).map_err(|blocked| {
        unavailable(format!(
            "the sandbox user (uid {uid}) cannot reach Rivet's own binary {}: {} is closed to it",
            agent.display(),
            blocked.display()
        ))
    })
}

/// Gives `root` and everything below it (not following symlinks) to
/// `uid:gid`, touching only entries that are not theirs yet.
fn chown_tree(root: &Path, uid: u32, gid: u32) -> std::io::Result<()> {
    let mut stack = vec![root.to_owned()];
    while let Some(path) = stack.pop() {
        let meta = std::fs::symlink_metadata(&path)?;
        if meta.uid() != uid || meta.gid() != gid {
            std::os::unix::fs::lchown(&path, Some(uid), Some(gid))?;
        }
        if meta.is_dir() {
            for entry in std::fs::read_dir(&path)? {
                stack.push(entry?.path());
            }
        }
    }
    Ok(())
}

/// Checks that `uid:gid` may search every directory on the way to `path`;
/// returns the first that blocks it.
fn reachable(path: &Path, uid: u32, gid: u32) -> Result<(), PathBuf> {
    let mut ancestors: Vec<&Path> = path.ancestors().skip(1).collect();
    ancestors.reverse();
    for dir in ancestors {
        let Ok(meta) = std::fs::metadata(dir) else {
            return Err(dir.to_owned());
        };
        let mode = meta.permissions().mode();
        let bit = if meta.uid() == uid {
            0o100
        } else if meta.gid() == gid {
            0o010
        } else {
            0o001
        };
        if mode & bit == 0 {
            return Err(dir.to_owned());
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bwrap_hides_the_host_and_binds_only_the_project() {
        let dirs = ProjectDirs {
            workspace: PathBuf::from("/data/projects/p1/workspace"),
            home: PathBuf::from("/data/projects/p1/sandbox-home"),
            npm_cache: Some(PathBuf::from("/data/cache/npm")),
        };
        let args = bwrap_args(&BwrapPlan {
            dirs: &dirs,
            agent: Path::new("/opt/rivet/bin/rivet"),
            tmp_bytes: 1 << 20,
            disable_userns: true,
            socket_fd: 5,
            info_fd: 6,
            files: &[(7, "/etc/passwd")],
            etc: &["ssl/certs".to_owned()],
        });
        let text = args.join(" ");
        for expected in [
            "--unshare-all --unshare-user --die-with-parent --as-pid-1 --uid 1000 --gid 1000",
            "--disable-userns",
            "--ro-bind /usr /usr",
            "--ro-bind /etc/ssl/certs /etc/ssl/certs",
            "--ro-bind-data 7 /etc/passwd",
            "--size 1048576 --tmpfs /tmp",
            "--bind /data/projects/p1/workspace /home/project",
            "--bind /data/projects/p1/sandbox-home /home/user",
            "--bind /data/cache/npm /home/user/.npm",
            "--ro-bind /opt/rivet/bin/rivet /run/rivet/sandbox-agent --remount-ro /",
            "--chdir /home/project --info-fd 6",
            "-- /run/rivet/sandbox-agent sandbox-agent --fd 5 --root /home/project --isolated",
        ] {
            assert!(text.contains(expected), "missing {expected:?} in {text}");
        }
        // Nothing of the host's root, and never the whole of /etc or /data.
        for absent in [
            "--bind / ",
            "--ro-bind / ",
            "--ro-bind /etc /etc",
            "--share-net",
            "/data /",
        ] {
            assert!(!text.contains(absent), "unexpected {absent:?} in {text}");
        }
    }

    #[test]
    fn generated_etc_knows_only_the_sandbox_user() {
        let files = etc_files(true);
        let passwd = &files.iter().find(|(p, _)| *p == "/etc/passwd").unwrap().1;
        assert!(passwd.contains("user:x:1000:1000"));
        assert_eq!(passwd.lines().count(), 3);
        let resolv = &files
            .iter()
            .find(|(p, _)| *p == "/etc/resolv.conf")
            .unwrap()
            .1;
        assert_eq!(resolv, "nameserver 10.0.2.3\n");
        assert!(
            !ETC_ALLOWED
                .iter()
                .any(|e| e.contains("shadow") || *e == "ssl")
        );
    }

    fn test_settings() -> SandboxSettings {
        let config = crate::server::config::Config::defaults();
        SandboxSettings::from_config(&config, false)
    }

    #[test]
    fn a_missing_bwrap_is_refused_with_how_to_install_it() {
        let err = Host::detect_with(&test_settings(), |_| None).unwrap_err();
        assert!(matches!(err, SandboxError::BwrapMissing));
        let message = err.to_string();
        assert!(message.contains("apt-get install bubblewrap"), "{message}");
        assert!(message.contains("--unsafe-no-sandbox"), "{message}");
    }

    #[test]
    fn a_bwrap_that_cannot_create_namespaces_is_refused() {
        // `false` stands for a bwrap the kernel refuses namespaces to.
        let err = Host::detect_with(&test_settings(), |_| find_program("false")).unwrap_err();
        assert!(matches!(err, SandboxError::NoNamespaces(_)), "{err:?}");
        assert!(err.to_string().contains("user namespaces"), "{err}");
    }

    #[test]
    fn reachability_follows_search_bits() {
        let dir = tempfile::tempdir().unwrap();
        let closed = dir.path().join("closed");
        let inner = closed.join("inner");
        std::fs::create_dir_all(&inner).unwrap();
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o711)).unwrap();
        std::fs::set_permissions(&closed, std::fs::Permissions::from_mode(0o700)).unwrap();
        let me = nix::unistd::getuid().as_raw();
        let stranger = me.wrapping_add(4242);
        assert_eq!(reachable(&inner, stranger, stranger), Err(closed.clone()));
        assert_eq!(reachable(&inner, me, stranger), Ok(()));
        std::fs::set_permissions(&closed, std::fs::Permissions::from_mode(0o701)).unwrap();
        assert_eq!(reachable(&inner, stranger, stranger), Ok(()));
    }
}
