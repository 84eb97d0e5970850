//! Starting and stopping one project's sandbox: `bwrap` with the helper as
//! the init of its namespaces, `slirp4netns` or the registry proxy for its
//! network, or, with `--unsafe-no-sandbox`, the helper alone.

use std::io::{Seek, Write};
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use nix::sys::socket::{AddressFamily, SockFlag, SockType, socketpair};
use tokio::io::AsyncReadExt;
use tokio::sync::watch;

use super::SandboxSettings;
use super::bwrap::{
    BwrapPlan, ETC_ALLOWED, Host, SANDBOX_HOME, SANDBOX_WORKSPACE, bwrap_args, etc_files,
};
use super::client::{HelperClient, ProjectEvents};
use super::dirs::ProjectDirs;
use super::egress::{self, Proxy};
use super::launcher::{Launched, launch};
use super::sys::{PidNamespace, clear_cloexec};
use super::wire::{FdChannel, Op};
use crate::runtime::host::RuntimeError;

/// How long a sandbox gets to come up.
const START_TIMEOUT: Duration = Duration::from_secs(15);

/// A running sandbox.
pub struct Sandbox {
    pub client: Arc<HelperClient>,
    /// `bwrap`, or the helper itself without isolation.
    main: Launched,
    /// slirp4netns, and the pipe whose closing tells it to exit.
    slirp: Option<(Launched, OwnedFd)>,
    /// The sandbox's pid namespace, held from the host so that closing can
    /// make sure none of it is left (see [`Sandbox::stop`]).
    namespace: Option<PidNamespace>,
    /// The registry proxy (`sandbox.network = "registry"`).
    proxy: Option<Proxy>,
    /// Variables every sandboxed process gets (the proxy's).
    pub network_env: Vec<(String, String)>,
    /// Why a network access may fail (see `Host::network_note`).
    pub network_note: Option<String>,
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

    /// Host pid of `bwrap` (or of the helper without isolation).
    pub fn main_pid(&self) -> u32 {
        self.main.pid
    }

    /// Kills everything in the sandbox and waits for it to be gone.
    pub async fn stop(&self) {
        if !self.client.is_closed() {
            let shutdown = self.client.request(Op::Shutdown, &[], &[]);
            let _ = tokio::time::timeout(Duration::from_secs(2), shutdown).await;
        }
        // The helper exits after a shutdown, and with it the pid namespace.
        if !self.main.wait(Duration::from_secs(1)).await {
            self.main.kill(Duration::from_secs(2)).await;
        }
        if let Some((slirp, _exit)) = &self.slirp {
            slirp.kill(Duration::from_secs(2)).await;
        }
        if let Some(proxy) = &self.proxy {
            proxy.stop();
        }
        if let Some(namespace) = &self.namespace {
            sweep(namespace).await;
        }
        self.client
            .close("the project's sandbox was closed".to_owned());
    }
}

/// SIGKILLs whatever is left in a stopped sandbox's pid namespace. The
/// helper's shutdown and the namespace's end with its init normally leave
/// nothing; this makes sure from the host, whatever the helper did.
async fn sweep(namespace: &PidNamespace) {
    let proc = Path::new("/proc");
    for _ in 0..200 {
        let left = namespace.members(proc);
        if left.is_empty() {
            return;
        }
        for pid in &left {
            let _ = nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(*pid),
                nix::sys::signal::Signal::SIGKILL,
            );
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let left = namespace.members(proc);
    if !left.is_empty() {
        tracing::error!(?left, "processes of a closed sandbox survived SIGKILL");
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

/// Logs what a sandbox writes on stderr (bwrap's and the helper's own
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

/// Starts a project's sandbox and waits until its helper is ready.
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
    let (ide_end, helper_end) = socketpair(
        AddressFamily::Unix,
        SockType::Stream,
        None,
        SockFlag::SOCK_CLOEXEC,
    )
    .map_err(|e| io("socket")(e.into()))?;
    let (err_read, err_write) = pipe().map_err(io("pipe"))?;
    let stderr = log_stderr(project, err_read);

    // `network` is the sandbox's init and where slirp4netns writes its
    // complaints, once the sandbox is up.
    let (main, network, isolated) = match &host.bwrap {
        None => {
            tracing::warn!(%project, "starting the project WITHOUT a sandbox (--unsafe-no-sandbox)");
            let mut command = std::process::Command::new(&settings.helper_exe);
            command
                .arg("sandbox-agent")
                .arg("--fd")
                .arg(helper_end.as_raw_fd().to_string())
                .arg("--root")
                .arg(&dirs.workspace)
                .current_dir(&dirs.workspace)
                .env_clear()
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::from(err_write));
            inherit(&mut command, vec![helper_end.as_raw_fd()]);
            let main = launch(command).await.map_err(io("agent"))?;
            (main, None, false)
        }
        Some(bwrap) => {
            let network = host.slirp.is_some();
            if let Some(socket) = &settings.database_socket {
                crate::server::database::prepare_socket_dir(socket)
                    .map_err(io("database socket folder"))?;
            }
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
                helper: &settings.helper_exe,
                tmp_bytes: settings.config.tmp_mb * 1024 * 1024,
                disable_userns: host.disable_userns,
                socket_fd: helper_end.as_raw_fd(),
                info_fd: info_write.as_raw_fd(),
                files: &file_fds,
                etc: &etc,
                database_socket: settings.database_socket.as_deref(),
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
            keep.extend([helper_end.as_raw_fd(), info_write.as_raw_fd()]);
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
            (main, Some((child, slirp_stderr)), true)
        }
    };
    let namespace = match &network {
        Some((child, _)) => match PidNamespace::of(*child) {
            Ok(namespace) => Some(namespace),
            Err(e) => {
                tracing::warn!(%project, "cannot hold the sandbox's pid namespace: {e}");
                None
            }
        },
        None => None,
    };
    drop(helper_end);

    let channel = FdChannel::new(ide_end).map_err(io("socket"))?;
    let client = HelperClient::new(channel, events);
    tokio::spawn(client.clone().run());
    let (workspace_inside, home_inside) = if isolated {
        (
            PathBuf::from(SANDBOX_WORKSPACE),
            PathBuf::from(SANDBOX_HOME),
        )
    } else {
        (dirs.workspace.clone(), dirs.home.clone())
    };
    let asked = host.asked().await;
    let mut sandbox = Sandbox {
        client,
        main,
        slirp: None,
        namespace,
        proxy: None,
        network_env: Vec::new(),
        network_note: if isolated {
            host.network_note(asked)
        } else {
            None
        },
        node_options: asked.node_options.clone(),
        isolated,
        workspace_inside,
        home_inside,
    };
    match tokio::time::timeout(START_TIMEOUT, sandbox.client.ready()).await {
        Ok(Ok(_pid)) => {
            // Only now: bwrap has finished configuring the namespace's
            // loopback before it ran the helper, and slirp4netns configuring
            // the same namespace at the same time made bwrap fail
            // ("loopback: Failed RTM_NEWADDR").
            if let (Some(slirp), Some((child, slirp_stderr))) = (&host.slirp, network) {
                match start_slirp(slirp, child, host.run_as, slirp_stderr).await {
                    Ok(slirp) => sandbox.slirp = Some(slirp),
                    Err(e) => {
                        tracing::warn!(%project, "no network for this sandbox: {e}");
                        sandbox.network_note = Some(format!(
                            "the sandbox has no network access: slirp4netns failed: {e}"
                        ));
                    }
                }
            }
            if let (Some(policy), true) = (&asked.egress, isolated) {
                // Before any command runs, so none can take the port.
                match egress::start(&sandbox.client, policy, project).await {
                    Ok(proxy) => {
                        sandbox.network_env = policy.environment(proxy.port);
                        sandbox.proxy = Some(proxy);
                    }
                    Err(e) => {
                        tracing::warn!(%project, "no registry proxy for this sandbox: {e}");
                        sandbox.network_note = Some(format!(
                            "the sandbox has no network access: its registry proxy failed: {e}"
                        ));
                    }
                }
            }
            Ok(sandbox)
        }
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
