//! The PostgreSQL server Rivet runs itself: the machine's own installation,
//! its data in `<data_dir>/postgres/data`, listening on a Unix socket in
//! `<data_dir>/postgres/run` and on no TCP port.
//!
//! PostgreSQL refuses to run as root, so a root Rivet runs it as the
//! `postgres` system user (which Debian's package creates); any other
//! Rivet runs it as itself. Either way the data folder is that user's alone
//! (0700), and the sandboxes see only the socket's folder.
//!
//! It is started on first use and stops with Rivet: the server is told to
//! shut down fast when Rivet's process ends, even by `kill -9` (Linux's
//! parent-death signal, which follows the thread that started it: a
//! runtime's worker, never a blocking-pool thread that may end first).

use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use tokio::process::{Child, Command};

use super::DatabaseUnavailable;
use crate::server::host_tools;

/// The superuser Rivet creates its projects' roles and databases with.
pub const ADMIN: &str = "rivet";
/// How long a starting server may take to accept connections.
const READY_TIMEOUT: Duration = Duration::from_secs(60);
/// Longest path of a Unix socket (`sun_path`, with its NUL).
const MAX_SOCKET_PATH: usize = 107;

/// Where the server's files go, under the data directory.
#[derive(Debug, Clone)]
pub struct Layout {
    pub base: PathBuf,
}

impl Layout {
    pub fn new(data_dir: &Path) -> Layout {
        Layout {
            base: data_dir.join("postgres"),
        }
    }

    pub fn data(&self) -> PathBuf {
        self.base.join("data")
    }

    /// The socket's folder, which sandboxes see (read-only) as
    /// `/run/postgresql`.
    pub fn socket_dir(&self) -> PathBuf {
        self.base.join("run")
    }

    fn password_file(&self) -> PathBuf {
        self.base.join("admin.password")
    }

    fn log(&self) -> PathBuf {
        self.base.join("postgres.log")
    }

    /// Makes the folders: the base may be passed through by anyone (so a
    /// sandbox can reach the socket) but not listed.
    pub fn create(&self) -> std::io::Result<()> {
        let mut builder = std::fs::DirBuilder::new();
        builder.recursive(true).mode(0o711);
        builder.create(&self.base)?;
        builder.mode(0o755).create(self.socket_dir())?;
        // As asked, whatever the umask.
        std::fs::set_permissions(&self.base, std::fs::Permissions::from_mode(0o711))?;
        std::fs::set_permissions(self.socket_dir(), std::fs::Permissions::from_mode(0o755))
    }
}

/// A running server and how to reach it as its superuser.
pub struct Cluster {
    pub admin: tokio_postgres::Config,
    child: Child,
}

impl Cluster {
    /// Initialises the data folder the first time, then starts the server
    /// and waits until it accepts connections.
    pub async fn start(layout: &Layout, bin_dir: &str) -> Result<Cluster, DatabaseUnavailable> {
        let bin = find_bin_dir(bin_dir)?;
        let owner = owner()?;
        let socket = layout.socket_dir().join(".s.PGSQL.5432");
        if socket.as_os_str().len() > MAX_SOCKET_PATH {
            return Err(DatabaseUnavailable(format!(
                "the socket path {} is longer than Unix sockets allow ({MAX_SOCKET_PATH} bytes): use a shorter data directory, or set [database] url",
                socket.display()
            )));
        }
        layout.create().map_err(io("create its folders"))?;
        if let Some((uid, gid)) = owner {
            open_the_way(&layout.base).map_err(io("open the way to its folder"))?;
            for dir in [layout.base.clone(), layout.socket_dir()] {
                std::os::unix::fs::chown(&dir, Some(uid), Some(gid))
                    .map_err(io("hand its folders to the postgres user"))?;
            }
        }
        let password = admin_password(layout, owner)?;
        if !layout.data().join("PG_VERSION").exists() {
            init(layout, &bin, owner).await?;
        }
        wait_for_previous(&layout.data()).await;
        let child = spawn(layout, &bin, owner)?;
        let mut admin = tokio_postgres::Config::new();
        admin
            .host_path(layout.socket_dir())
            .user(ADMIN)
            .password(password)
            .dbname("postgres")
            .connect_timeout(Duration::from_secs(5));
        let mut cluster = Cluster { admin, child };
        cluster.wait_ready(layout).await?;
        Ok(cluster)
    }

    async fn wait_ready(&mut self, layout: &Layout) -> Result<(), DatabaseUnavailable> {
        let deadline = tokio::time::Instant::now() + READY_TIMEOUT;
        loop {
            if let Ok(Some(status)) = self.child.try_wait() {
                return Err(DatabaseUnavailable(format!(
                    "PostgreSQL exited as it started ({status}): {}",
                    log_tail(&layout.log())
                )));
            }
            match self.admin.connect(tokio_postgres::NoTls).await {
                Ok(_) => return Ok(()),
                Err(_) if tokio::time::Instant::now() < deadline => {
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
                Err(error) => {
                    return Err(DatabaseUnavailable(format!(
                        "PostgreSQL did not accept connections within {} s ({error}): {}",
                        READY_TIMEOUT.as_secs(),
                        log_tail(&layout.log())
                    )));
                }
            }
        }
    }
}

impl Drop for Cluster {
    /// A fast shutdown: open transactions roll back, what was committed
    /// stays.
    fn drop(&mut self) {
        if let Some(pid) = self.child.id().and_then(|p| i32::try_from(p).ok()) {
            let _ = nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(pid),
                nix::sys::signal::Signal::SIGINT,
            );
        }
    }
}

/// Lets other users pass through (not list) the data directory, as the
/// sandbox's folders need too, so the server's user reaches its own.
fn open_the_way(base: &Path) -> std::io::Result<()> {
    let Some(data_dir) = base.parent() else {
        return Ok(());
    };
    let mode = std::fs::metadata(data_dir)?.permissions().mode();
    if mode & 0o001 == 0 {
        std::fs::set_permissions(data_dir, std::fs::Permissions::from_mode(mode | 0o001))?;
    }
    Ok(())
}

/// The folder of `initdb` and `postgres`: the configured one, else the
/// newest `/usr/lib/postgresql/<version>/bin`, else where `PATH` has them.
pub fn find_bin_dir(configured: &str) -> Result<PathBuf, DatabaseUnavailable> {
    let has_both = |dir: &Path| dir.join("initdb").is_file() && dir.join("postgres").is_file();
    if !configured.is_empty() {
        let dir = PathBuf::from(configured);
        return if has_both(&dir) {
            Ok(dir)
        } else {
            Err(DatabaseUnavailable(format!(
                "[database] bin_dir {configured} has no initdb and postgres"
            )))
        };
    }
    let mut versions: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|entry| {
            let version = entry.file_name().to_str()?.parse::<u32>().ok()?;
            Some((version, entry.path().join("bin")))
        })
        .filter(|(_, dir)| has_both(dir))
        .collect();
    versions.sort();
    if let Some((_, dir)) = versions.pop() {
        return Ok(dir);
    }
    match host_tools::find("initdb") {
        Ok(initdb) => initdb
            .parent()
            .filter(|dir| has_both(dir))
            .map(Path::to_path_buf)
            .ok_or_else(missing),
        Err(_) => Err(missing()),
    }
}

fn missing() -> DatabaseUnavailable {
    DatabaseUnavailable(
        "PostgreSQL is not installed on this machine: install it (`apt-get install postgresql` on Debian and Ubuntu; `scripts/setup.sh` does), set [database] bin_dir to the folder of its initdb and postgres, or set [database] url to an existing server".to_owned(),
    )
}

/// Who the server runs as: `None` for Rivet's own user, else (as root) the
/// `postgres` system user.
fn owner() -> Result<Option<(u32, u32)>, DatabaseUnavailable> {
    if !nix::unistd::geteuid().is_root() {
        return Ok(None);
    }
    match nix::unistd::User::from_name("postgres") {
        Ok(Some(user)) => Ok(Some((user.uid.as_raw(), user.gid.as_raw()))),
        _ => Err(DatabaseUnavailable(
            "PostgreSQL refuses to run as root, and this machine has no `postgres` user to run it as: install Debian's postgresql package (which creates it), run Rivet as another user, or set [database] url".to_owned(),
        )),
    }
}

/// The superuser's password: made once, kept in a file only the server's
/// user (and root) can read.
fn admin_password(
    layout: &Layout,
    owner: Option<(u32, u32)>,
) -> Result<String, DatabaseUnavailable> {
    let file = layout.password_file();
    match std::fs::read_to_string(&file) {
        Ok(text) if !text.trim().is_empty() => return Ok(text.trim().to_owned()),
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(io("read its password")(e)),
    }
    let password = super::random_secret();
    crate::server::atomic::write_private(&file, password.as_bytes())
        .map_err(io("write its password"))?;
    if let Some((uid, gid)) = owner {
        std::os::unix::fs::chown(&file, Some(uid), Some(gid))
            .map_err(io("hand over its password"))?;
    }
    Ok(password)
}

async fn init(
    layout: &Layout,
    bin: &Path,
    owner: Option<(u32, u32)>,
) -> Result<(), DatabaseUnavailable> {
    let data = layout.data();
    let _ = std::fs::remove_dir_all(&data);
    std::fs::DirBuilder::new()
        .mode(0o700)
        .create(&data)
        .map_err(io("create its data folder"))?;
    if let Some((uid, gid)) = owner {
        std::os::unix::fs::chown(&data, Some(uid), Some(gid))
            .map_err(io("hand over its data folder"))?;
    }
    let mut command = command(&bin.join("initdb"), layout, owner);
    command
        .arg("--pgdata")
        .arg(&data)
        .args([
            "--username",
            ADMIN,
            "--auth",
            "scram-sha-256",
            "--encoding",
            "UTF8",
            "--locale",
            "C",
            "--no-instructions",
        ])
        .arg("--pwfile")
        .arg(layout.password_file())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let output = command.output().await.map_err(io("run initdb"))?;
    if !output.status.success() {
        let _ = std::fs::remove_dir_all(&data);
        return Err(DatabaseUnavailable(format!(
            "initdb failed ({}): {}",
            output.status,
            String::from_utf8_lossy(&output.stderr).trim()
        )));
    }
    Ok(())
}

fn spawn(
    layout: &Layout,
    bin: &Path,
    owner: Option<(u32, u32)>,
) -> Result<Child, DatabaseUnavailable> {
    let log = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(layout.log())
        .map_err(io("open its log"))?;
    let log_err = log.try_clone().map_err(io("open its log"))?;
    if let Some((uid, gid)) = owner {
        std::os::unix::fs::chown(layout.log(), Some(uid), Some(gid))
            .map_err(io("hand over its log"))?;
    }
    let socket_dir = layout.socket_dir();
    let mut command = command(&bin.join("postgres"), layout, owner);
    command
        .arg("-D")
        .arg(layout.data())
        .args(["-c", "listen_addresses="])
        .arg("-c")
        .arg(format!("unix_socket_directories={}", socket_dir.display()))
        .args([
            "-c",
            "unix_socket_permissions=0777",
            "-c",
            "max_connections=100",
            "-c",
            "shared_buffers=32MB",
        ])
        .stdin(Stdio::null())
        .stdout(log)
        .stderr(log_err)
        .kill_on_drop(false);
    // SAFETY: between fork and exec only `prctl`, which is async-signal
    // safe, is called.
    unsafe {
        command.pre_exec(|| {
            nix::sys::prctl::set_pdeathsig(nix::sys::signal::Signal::SIGINT)
                .map_err(std::io::Error::from)
        });
    }
    command.spawn().map_err(io("start postgres"))
}

fn command(program: &Path, layout: &Layout, owner: Option<(u32, u32)>) -> Command {
    let mut command = Command::new(program);
    command
        .current_dir(&layout.base)
        .env_clear()
        .env("PATH", host_tools::path_env())
        .env("LANG", "C.UTF-8");
    if let Some((uid, gid)) = owner {
        command.uid(uid).gid(gid);
    }
    command
}

/// Waits (a while) for a server an earlier Rivet started on this data to
/// finish shutting down: it was told to when that Rivet ended, and holds
/// the data until it has.
async fn wait_for_previous(data: &Path) {
    let Ok(text) = std::fs::read_to_string(data.join("postmaster.pid")) else {
        return;
    };
    let Some(pid) = text
        .lines()
        .next()
        .and_then(|l| l.trim().parse::<i32>().ok())
    else {
        return;
    };
    let pid = nix::unistd::Pid::from_raw(pid);
    let deadline = tokio::time::Instant::now() + Duration::from_secs(15);
    while nix::sys::signal::kill(pid, None).is_ok() && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

fn log_tail(log: &Path) -> String {
    let text = std::fs::read_to_string(log).unwrap_or_default();
    let lines: Vec<&str> = text.lines().rev().take(5).collect();
    lines.into_iter().rev().collect::<Vec<_>>().join(" / ")
}

fn io(what: &'static str) -> impl Fn(std::io::Error) -> DatabaseUnavailable {
    move |error| DatabaseUnavailable(format!("Rivet's PostgreSQL could not {what}: {error}"))
}
