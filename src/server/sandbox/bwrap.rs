//! The `bwrap` side of a sandbox: finding bwrap and slirp4netns on this
//! host, and the command line that builds a project's sandbox (mounts,
//! namespaces, the generated `/etc` files).

use std::os::fd::RawFd;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;

use super::dirs::ProjectDirs;
use super::egress::{AllowList, EgressPolicy, registry};
use super::{Isolation, SandboxError, SandboxSettings};
use crate::server::config::NetworkMode;
use crate::server::host_tools;

/// The sandbox's user and group inside, and their name and home.
pub const SANDBOX_UID: u32 = 1000;
pub const SANDBOX_USER: &str = "user";
pub const SANDBOX_HOME: &str = "/home/user";
pub const SANDBOX_WORKSPACE: &str = "/home/project";
pub const SANDBOX_HOSTNAME: &str = "rivet";
/// Where the helper's binary appears inside.
const HELPER_PATH: &str = "/run/rivet/sandbox-agent";

/// Files of the host's `/etc` a sandbox sees (when they exist). Everything
/// else of `/etc` is absent: no shadow, no host users, no IDE configuration.
pub const ETC_ALLOWED: &[&str] = &[
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

/// What this host offers, found once at startup (but for what only running
/// node and npm tells: [`Host::asked`]).
#[derive(Debug, Clone)]
pub struct Host {
    pub bwrap: Option<PathBuf>,
    /// slirp4netns, for `sandbox.network = "full"`.
    pub slirp: Option<PathBuf>,
    /// The host user and group that run the sandboxes when the IDE is root.
    pub run_as: Option<(u32, u32)>,
    /// Why a network access may fail, when the network is limited and that
    /// is known at startup (`none`, or `full` without slirp4netns).
    network_note: Option<String>,
    /// Whether this bwrap knows `--disable-userns` (0.8 and later).
    pub disable_userns: bool,
    /// What only running the host's node and npm tells, asked when the
    /// first sandbox starts ([`Host::asked`]).
    ask: Ask,
    asked: Arc<tokio::sync::OnceCell<Asked>>,
}

/// The programs [`Host::asked`] runs, found at startup.
#[derive(Debug, Clone)]
struct Ask {
    /// Node, when the memory limit may need `NODE_OPTIONS` (see [`node_options`]).
    node: Option<PathBuf>,
    /// For `sandbox.network = "registry"`: the policy's parts.
    egress: Option<AskEgress>,
}

/// A `registry` sandbox's policy, less the registry the host's npm names.
#[derive(Debug, Clone)]
struct AskEgress {
    /// `sandbox.registry_hosts`, checked at startup.
    allow: AllowList,
    /// npm, when found: it is asked for its registry.
    npm: Option<PathBuf>,
}

/// What running the host's node and npm told, once.
#[derive(Debug, Clone, Default)]
pub struct Asked {
    /// `NODE_OPTIONS` for sandboxed processes, when the memory limit needs
    /// one (see [`node_options`]).
    pub node_options: Option<String>,
    /// What a `sandbox.network = "registry"` sandbox may reach.
    pub egress: Option<EgressPolicy>,
}

impl Ask {
    /// Runs node and npm: about a fifth of a second of CPU, which a server
    /// that never starts a sandbox does not spend.
    fn run(&self) -> Asked {
        let egress = self.egress.as_ref().map(|ask| {
            let registry = ask
                .npm
                .as_deref()
                .map_or_else(registry::registry_without_npm, registry::ask_npm);
            EgressPolicy::allowing(ask.allow.clone(), registry)
        });
        Asked {
            node_options: self.node.as_deref().and_then(node_options),
            egress,
        }
    }
}

/// V8 reserves 8 GiB or more of address space per WebAssembly memory for its
/// guard pages, which an address-space limit forbids: Vite (and anything
/// using a wasm parser) then dies with "Cannot allocate Wasm memory". Without
/// the trap handler, V8 checks bounds explicitly and reserves only what it
/// uses. Older Node versions refuse the option, so it is tried first.
fn node_options(node: &Path) -> Option<String> {
    const FLAG: &str = "--disable-wasm-trap-handler";
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

impl Host {
    /// Finds bwrap and slirp4netns and checks that bwrap can create the
    /// namespaces a sandbox needs.
    pub fn detect(settings: &SandboxSettings) -> Result<Host, SandboxError> {
        Host::detect_with(settings, |name| host_tools::find(name).ok())
    }

    /// [`Host::detect`] with another way to find programs.
    pub fn detect_with(
        settings: &SandboxSettings,
        find: impl Fn(&str) -> Option<PathBuf>,
    ) -> Result<Host, SandboxError> {
        let run_as = nix::unistd::geteuid()
            .is_root()
            .then_some((settings.config.host_uid, settings.config.host_uid));
        let ask = Ask {
            node: (settings.config.memory_mb > 0)
                .then(|| find("node"))
                .flatten(),
            egress: None,
        };
        if settings.isolation == Isolation::Unsafe {
            if settings.config.network != NetworkMode::Full {
                tracing::warn!(
                    "--unsafe-no-sandbox: sandbox.network = \"{}\" is not enforced, commands use \
                     this machine's network",
                    settings.config.network.as_str()
                );
            }
            return Ok(Host::new(None, None, false, ask));
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
        let mut host = Host::new(Some(bwrap), run_as, disable_userns, ask);
        host.probe()?;
        match settings.config.network {
            NetworkMode::None => {
                host.network_note = Some(
                    "the sandbox has no network access: sandbox.network is \"none\"".to_owned(),
                );
            }
            NetworkMode::Registry => {
                // Parsed now, so a bad entry stops the IDE from starting.
                let allow = AllowList::parse(&settings.config.registry_hosts)
                    .map_err(|e| SandboxError::BadConfig(e.to_string()))?;
                host.ask.egress = Some(AskEgress {
                    allow,
                    npm: find("npm"),
                });
            }
            NetworkMode::Full => match find("slirp4netns") {
                Some(slirp) => host.slirp = Some(slirp),
                None => {
                    let why = "slirp4netns is not installed (apt-get install slirp4netns)";
                    tracing::warn!("commands will run without network access: {why}");
                    host.network_note = Some(format!("the sandbox has no network access: {why}"));
                }
            },
        }
        Ok(host)
    }

    fn new(
        bwrap: Option<PathBuf>,
        run_as: Option<(u32, u32)>,
        disable_userns: bool,
        ask: Ask,
    ) -> Host {
        Host {
            bwrap,
            slirp: None,
            run_as,
            network_note: None,
            disable_userns,
            ask,
            asked: Arc::default(),
        }
    }

    /// What the host's node and npm tell, asked (off the async threads) by
    /// the first sandbox to start.
    pub async fn asked(&self) -> &Asked {
        self.asked
            .get_or_init(|| async {
                let ask = self.ask.clone();
                tokio::task::spawn_blocking(move || ask.run())
                    .await
                    .unwrap_or_default()
            })
            .await
    }

    /// Why a network access may fail in a sandbox, for a failed command's
    /// status: what startup found, else what the registry policy allows.
    pub fn network_note(&self, asked: &Asked) -> Option<String> {
        let registry = asked.egress.as_ref().map(EgressPolicy::note);
        self.network_note.clone().or(registry)
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

/// Files generated for the sandbox's `/etc`; `network` when slirp4netns
/// gives the sandbox a network (and a DNS server).
pub fn etc_files(network: bool) -> Vec<(&'static str, String)> {
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
    pub helper: &'a Path,
    pub tmp_bytes: u64,
    pub disable_userns: bool,
    pub socket_fd: RawFd,
    pub info_fd: RawFd,
    /// Generated files: descriptor to read from, path inside.
    pub files: &'a [(RawFd, &'static str)],
    /// Entries of `/etc` to bind, as they exist on this host.
    pub etc: &'a [String],
    /// The database server's socket folder.
    pub database_socket: Option<&'a Path>,
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
    // /dev/shm is memory like /tmp: bounded the same way (bwrap's /dev
    // alone would leave it an unbounded part of its own tmpfs).
    for dir in ["/tmp", "/dev/shm"] {
        if plan.tmp_bytes > 0 {
            args.extend(["--size".to_owned(), plan.tmp_bytes.to_string()]);
        }
        args.extend(["--tmpfs".to_owned(), dir.to_owned()]);
    }
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
    args.extend([
        "--ro-bind".to_owned(),
        s(plan.helper),
        HELPER_PATH.to_owned(),
    ]);
    // Read-only: a socket in it still accepts connections, and nothing
    // else there can be changed.
    if let Some(socket) = plan.database_socket {
        args.extend([
            "--ro-bind".to_owned(),
            s(socket),
            crate::server::database::SANDBOX_SOCKET_DIR.to_owned(),
        ]);
    }
    // The sandbox's own root (a tmpfs holding the mount points) is read-only
    // too: only the project, the home, /tmp and /dev/shm are writable.
    args.extend(["--remount-ro", "/"].map(String::from));
    args.extend(["--chdir".to_owned(), SANDBOX_WORKSPACE.to_owned()]);
    args.extend(["--info-fd".to_owned(), plan.info_fd.to_string()]);
    args.extend(
        [
            "--",
            HELPER_PATH,
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
            helper: Path::new("/opt/rivet/bin/rivet"),
            tmp_bytes: 1 << 20,
            disable_userns: true,
            socket_fd: 5,
            info_fd: 6,
            files: &[(7, "/etc/passwd")],
            etc: &["ssl/certs".to_owned()],
            database_socket: Some(Path::new("/data/postgres/run")),
        });
        let text = args.join(" ");
        for expected in [
            "--unshare-all --unshare-user --die-with-parent --as-pid-1 --uid 1000 --gid 1000",
            "--disable-userns",
            "--ro-bind /usr /usr",
            "--ro-bind /etc/ssl/certs /etc/ssl/certs",
            "--ro-bind-data 7 /etc/passwd",
            "--size 1048576 --tmpfs /tmp --size 1048576 --tmpfs /dev/shm",
            "--bind /data/projects/p1/workspace /home/project",
            "--bind /data/projects/p1/sandbox-home /home/user",
            "--bind /data/cache/npm /home/user/.npm",
            "--ro-bind /opt/rivet/bin/rivet /run/rivet/sandbox-agent --ro-bind /data/postgres/run /run/postgresql --remount-ro /",
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

    /// A program that notes each run in `log` and prints `says`.
    fn noting(dir: &Path, name: &str, says: &str) -> PathBuf {
        use std::os::unix::fs::PermissionsExt;
        let path = dir.join(name);
        let log = dir.join(format!("{name}.runs"));
        let script = format!(
            "#!/bin/sh\necho \"$*\" >> '{}'\necho '{says}'\n",
            log.display()
        );
        std::fs::write(&path, script).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        path
    }

    #[tokio::test]
    async fn node_and_npm_run_only_when_the_first_sandbox_starts_and_once() {
        let dir = tempfile::tempdir().unwrap();
        let node = noting(dir.path(), "node", "");
        let npm = noting(dir.path(), "npm", "https://mirror.example/npm/");
        let bwrap = host_tools::find("bwrap").unwrap();
        let find = |name: &str| match name {
            "bwrap" => Some(bwrap.clone()),
            "node" => Some(node.clone()),
            "npm" => Some(npm.clone()),
            _ => None,
        };
        let host = Host::detect_with(&test_settings(), find).unwrap();
        let runs = |name: &str| std::fs::read_to_string(dir.path().join(format!("{name}.runs")));
        assert!(
            runs("node").is_err() && runs("npm").is_err(),
            "run at startup"
        );

        let asked = host.asked().await;
        assert_eq!(runs("npm").unwrap(), "config get registry\n");
        assert_eq!(runs("node").unwrap(), "--disable-wasm-trap-handler -e 0\n");
        assert_eq!(
            asked.node_options.as_deref(),
            Some("--disable-wasm-trap-handler")
        );
        let egress = asked.egress.as_ref().unwrap();
        assert_eq!(
            egress.npm_registry.as_deref(),
            Some("https://mirror.example/npm/")
        );
        let note = host.network_note(asked).unwrap();
        assert!(note.contains("mirror.example"), "{note}");

        host.clone().asked().await;
        assert_eq!(runs("npm").unwrap().lines().count(), 1);
        assert_eq!(runs("node").unwrap().lines().count(), 1);
    }

    #[test]
    fn a_bad_registry_host_is_refused_at_startup() {
        let mut settings = test_settings();
        settings.config.registry_hosts = vec!["*.example".to_owned()];
        let bwrap = host_tools::find("bwrap").unwrap();
        let err = Host::detect_with(&settings, |name| (name == "bwrap").then(|| bwrap.clone()))
            .unwrap_err();
        assert!(matches!(err, SandboxError::BadConfig(_)), "{err:?}");
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
        let err =
            Host::detect_with(&test_settings(), |_| host_tools::find("false").ok()).unwrap_err();
        assert!(matches!(err, SandboxError::NoNamespaces(_)), "{err:?}");
        assert!(err.to_string().contains("user namespaces"), "{err}");
    }
}
