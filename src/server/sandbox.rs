//! The server sandbox: every project runs in its own bubblewrap sandbox, a
//! small machine of its own (processes, network, files) that sees nothing of
//! the host but the project. See `docs/sandbox.md` for the design and the
//! threat model.
//!
//! [`SandboxManager`] starts a project's sandbox on first use and kills it on
//! [`SandboxManager::close_project`] and [`SandboxManager::shutdown`]. Its
//! [`Runtime`] (from [`SandboxManager::runtime`]) is what actions use;
//! [`routes`] adds the terminal WebSocket and the preview redirect, and
//! [`preview_guard`] serves previews from their own origins.

mod bwrap;
mod client;
mod dirs;
mod egress;
mod fsops;
pub mod helper;
mod launch;
mod launcher;
mod limits;
pub mod ports;
pub(crate) mod preview;
pub mod preview_ports;
mod process;
mod quota;
mod runtime;
mod sys;
mod terminal;
mod watch;
mod wire;

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

use axum::Router;
use axum::routing::get;

pub use bwrap::{SANDBOX_HOME, SANDBOX_WORKSPACE};
pub use helper::HelperArgs;
pub use limits::Limits;
pub use preview::preview_guard;
pub use quota::QuotaExceeded;
pub use runtime::ProjectRuntime;

use self::bwrap::Host;
use self::dirs::ProjectDirs;
use self::launch::Sandbox;
use self::runtime::ProjectEntry;
use crate::runtime::host::{Runtime, RuntimeError};
use crate::runtime::project::ProjectId;
use crate::server::config::{Config, SandboxConfig};
use crate::server::secrets::SecretStore;
use crate::server::state::AppState;

/// Whether commands run in a sandbox, or (`--unsafe-no-sandbox`) directly on
/// the host.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Isolation {
    Bubblewrap,
    Unsafe,
}

#[derive(Debug, Clone)]
pub struct SandboxSettings {
    /// The IDE's data directory; projects live in `projects/<id>/workspace`.
    pub data_dir: PathBuf,
    pub config: SandboxConfig,
    /// Rivet's own binary, which runs as the helper inside each sandbox.
    pub helper_exe: PathBuf,
    pub isolation: Isolation,
    /// The database server's socket folder, mounted read-only at
    /// `/run/postgresql` (`crate::server::database`).
    pub database_socket: Option<PathBuf>,
}

impl SandboxSettings {
    /// Settings for `rivet serve`: the helper is this very binary.
    pub fn from_config(config: &Config, unsafe_no_sandbox: bool) -> SandboxSettings {
        SandboxSettings {
            data_dir: config.server.data_dir.clone(),
            config: config.sandbox.clone(),
            // Empty when Linux cannot say (it always can); starting a
            // sandbox then fails with a message.
            helper_exe: std::env::current_exe().unwrap_or_default(),
            isolation: if unsafe_no_sandbox {
                Isolation::Unsafe
            } else {
                Isolation::Bubblewrap
            },
            database_socket: crate::server::database::socket_dir(config),
        }
    }
}

#[derive(Debug, Clone, thiserror::Error)]
pub enum SandboxError {
    #[error(
        "bubblewrap (bwrap) is not installed, and the sandbox runtime needs it. Install it with \
         `apt-get install bubblewrap` (Debian, Ubuntu), `dnf install bubblewrap` (Fedora) or \
         `pacman -S bubblewrap` (Arch); or start Rivet with `rivet serve --unsafe-no-sandbox` to run \
         commands without any isolation"
    )]
    BwrapMissing,
    #[error(
        "bubblewrap cannot create the sandbox's namespaces on this machine ({0}). Allow unprivileged \
         user namespaces (sysctl user.max_user_namespaces=15000, and kernel.unprivileged_userns_clone=1 \
         or kernel.apparmor_restrict_unprivileged_userns=0 where those exist), or start Rivet with \
         `rivet serve --unsafe-no-sandbox` to run commands without any isolation"
    )]
    NoNamespaces(String),
    #[error("invalid [sandbox] configuration: {0}")]
    BadConfig(String),
}

/// Called with a project that is being closed.
pub type ProjectClosed = Box<dyn Fn(&ProjectId) + Send + Sync>;
/// Variables a host service gives a project's processes (its database's
/// address and password).
pub type ProjectEnv = Box<dyn Fn(&ProjectId) -> Vec<ServiceVar> + Send + Sync>;

/// One variable from a host service; a `secret` one is masked in output
/// like the project's secrets.
pub struct ServiceVar {
    pub name: String,
    pub value: String,
    pub secret: bool,
}

/// What a project's processes get beside the sandbox's own variables, and
/// which values their output is masked for.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct ProjectVars {
    /// The project's secrets, then its services' variables.
    pub env: BTreeMap<String, String>,
    /// The secrets and the services' secret variables.
    pub masked: BTreeMap<String, String>,
}

pub struct SandboxManager {
    settings: SandboxSettings,
    host: OnceLock<Result<Host, SandboxError>>,
    projects: Mutex<HashMap<ProjectId, Arc<ProjectEntry>>>,
    terminals: terminal::Terminals,
    closing: AtomicBool,
    /// What else goes with a project (its preview listeners).
    on_close: Mutex<Vec<ProjectClosed>>,
    /// Who hears of a project going over its disk quota (its session).
    on_quota: Mutex<Vec<QuotaExceeded>>,
    /// The projects' secrets, which every process started gets.
    secrets: SecretStore,
    /// More variables for every process started, from host services.
    project_env: Mutex<Vec<ProjectEnv>>,
}

impl SandboxManager {
    /// A manager that checks the host on first use (see [`Self::check`]).
    pub fn new(settings: SandboxSettings) -> Arc<SandboxManager> {
        Arc::new(SandboxManager {
            secrets: SecretStore::new(&settings.data_dir),
            settings,
            host: OnceLock::new(),
            projects: Mutex::new(HashMap::new()),
            terminals: terminal::Terminals::default(),
            closing: AtomicBool::new(false),
            on_close: Mutex::new(Vec::new()),
            on_quota: Mutex::new(Vec::new()),
            project_env: Mutex::new(Vec::new()),
        })
    }

    /// Has `source`'s variables given to every process a project starts
    /// (the secret ones masked in its output like the project's secrets).
    pub fn add_project_env(&self, source: ProjectEnv) {
        self.project_env
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(source);
    }

    /// The project's secrets, then its services' variables (a secret the
    /// person set wins over a service's variable of the same name, say a
    /// `DATABASE_URL` of their own): what its processes get and what their
    /// output is masked for.
    pub fn project_vars(
        &self,
        project: &ProjectId,
    ) -> Result<ProjectVars, crate::server::secrets::SecretError> {
        let secrets = self.secrets.values(project)?;
        let mut vars = ProjectVars {
            env: secrets.clone(),
            masked: secrets,
        };
        let sources = self.project_env.lock().unwrap_or_else(|e| e.into_inner());
        for var in sources.iter().flat_map(|source| source(project)) {
            if vars.env.contains_key(&var.name) {
                continue;
            }
            if var.secret {
                vars.masked.insert(var.name.clone(), var.value.clone());
            }
            vars.env.insert(var.name, var.value);
        }
        Ok(vars)
    }

    /// Has `hook` called whenever a project is closed (and at shutdown).
    pub fn on_project_closed(&self, hook: ProjectClosed) {
        self.on_close
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(hook);
    }

    /// Checks now that sandboxes can run here: bwrap is installed and can
    /// create namespaces. `rivet serve` refuses to start when this fails.
    pub fn check(&self) -> Result<(), SandboxError> {
        self.host().map(|_| ())
    }

    fn host(&self) -> Result<&Host, SandboxError> {
        self.host
            .get_or_init(|| Host::detect(&self.settings))
            .as_ref()
            .map_err(Clone::clone)
    }

    pub fn settings(&self) -> &SandboxSettings {
        &self.settings
    }

    /// Where the projects' secrets are kept (their processes get them).
    pub fn secrets(&self) -> &SecretStore {
        &self.secrets
    }

    pub fn limits(&self) -> Limits {
        Limits::from(&self.settings.config)
    }

    fn projects(&self) -> MutexGuard<'_, HashMap<ProjectId, Arc<ProjectEntry>>> {
        self.projects.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn entry(&self, project: &ProjectId) -> Arc<ProjectEntry> {
        self.projects()
            .entry(project.clone())
            .or_insert_with(|| Arc::new(ProjectEntry::new(project.clone())))
            .clone()
    }

    /// The project's runtime; its sandbox starts on the first call that
    /// needs it.
    pub fn runtime(self: &Arc<Self>, project: &ProjectId) -> Arc<dyn Runtime> {
        self.project_runtime(project)
    }

    pub fn project_runtime(self: &Arc<Self>, project: &ProjectId) -> Arc<ProjectRuntime> {
        Arc::new(ProjectRuntime {
            manager: self.clone(),
            entry: self.entry(project),
        })
    }

    /// The project's directory on the host.
    pub fn workspace_dir(&self, project: &ProjectId) -> PathBuf {
        self.project_dir(project).join("workspace")
    }

    fn project_dir(&self, project: &ProjectId) -> PathBuf {
        self.settings
            .data_dir
            .join("projects")
            .join(project.as_str())
    }

    fn dirs(&self, project: &ProjectId) -> ProjectDirs {
        ProjectDirs {
            workspace: self.workspace_dir(project),
            home: self.project_dir(project).join("sandbox-home"),
            npm_cache: self
                .settings
                .config
                .shared_npm_cache
                .then(|| self.settings.data_dir.join("cache").join("npm")),
        }
    }

    /// The ports the project's servers listen on now.
    pub fn open_ports(&self, project: &ProjectId) -> Vec<u16> {
        self.projects()
            .get(project)
            .map(|e| e.events.open_ports())
            .unwrap_or_default()
    }

    /// The host pid of the project's sandbox (`bwrap`, or the helper without
    /// isolation), if it runs.
    pub async fn sandbox_pid(&self, project: &ProjectId) -> Option<u32> {
        self.running(project).await.map(|s| s.main_pid())
    }

    async fn running(&self, project: &ProjectId) -> Option<Arc<Sandbox>> {
        let entry = self.projects().get(project).cloned()?;
        let slot = entry.slot.lock().await;
        slot.as_ref().filter(|s| s.is_alive()).cloned()
    }

    /// The running sandbox of a project, started if needed.
    async fn ensure(&self, entry: &ProjectEntry) -> Result<Arc<Sandbox>, RuntimeError> {
        let shutting_down = || RuntimeError::Unavailable("the IDE is shutting down".to_owned());
        if self.closing.load(Ordering::Acquire) {
            return Err(shutting_down());
        }
        let host = self
            .host()
            .map_err(|e| RuntimeError::Unavailable(e.to_string()))?;
        if self.settings.helper_exe.as_os_str().is_empty() {
            return Err(RuntimeError::Unavailable(
                "Rivet cannot find its own binary to run in the sandbox".to_owned(),
            ));
        }
        let mut slot = entry.slot.lock().await;
        if let Some(sandbox) = slot.as_ref().filter(|s| s.is_alive()) {
            return Ok(sandbox.clone());
        }
        if let Some(dead) = slot.take() {
            dead.stop().await;
        }
        if self.closing.load(Ordering::Acquire) {
            return Err(shutting_down());
        }
        let dirs = self.dirs(&entry.id);
        let prepared = {
            let (data_dir, dirs, helper, run_as) = (
                self.settings.data_dir.clone(),
                dirs.clone(),
                self.settings.helper_exe.clone(),
                host.run_as,
            );
            tokio::task::spawn_blocking(move || {
                dirs::prepare_dirs(&data_dir, &dirs, &helper, run_as)
            })
            .await
        };
        prepared.map_err(|e| RuntimeError::Unavailable(e.to_string()))??;
        let sandbox = launch::start(
            &self.settings,
            host,
            entry.id.as_str(),
            &dirs,
            entry.events.clone(),
        )
        .await?;
        let sandbox = Arc::new(sandbox);
        tracing::info!(project = %entry.id, pid = sandbox.main_pid(), "sandbox started");
        *slot = Some(sandbox.clone());
        Ok(sandbox)
    }

    /// Kills everything the project runs (its terminals and previews too).
    /// The next use starts a fresh sandbox.
    pub async fn close_project(&self, project: &ProjectId) {
        for hook in self
            .on_close
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
        {
            hook(project);
        }
        self.terminals.close_project(project).await;
        let Some(entry) = self.projects().get(project).cloned() else {
            return;
        };
        let sandbox = entry.slot.lock().await.take();
        if let Some(sandbox) = sandbox {
            sandbox.stop().await;
            tracing::info!(%project, "sandbox closed");
        }
    }

    /// Kills every sandbox and refuses to start new ones.
    pub async fn shutdown(&self) {
        self.closing.store(true, Ordering::Release);
        let projects: Vec<ProjectId> = self.projects().keys().cloned().collect();
        futures::future::join_all(projects.iter().map(|p| self.close_project(p))).await;
    }
}

/// The sandbox's HTTP routes: the terminal WebSocket and the preview
/// redirect. Previews themselves are served by [`preview_guard`].
pub fn routes() -> Router<AppState> {
    Router::new()
        .route(
            "/api/projects/{project}/terminals/{terminal}/ws",
            get(terminal::websocket),
        )
        .route("/preview/{project}/{port}", get(preview::redirect))
        .route("/preview/{project}/{port}/", get(preview::redirect))
        .route("/preview/{project}/{port}/{*rest}", get(preview::redirect))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_service_s_secret_variables_are_masked_and_the_others_shown() {
        let dir = tempfile::tempdir().unwrap();
        let mut config = Config::defaults();
        config.server.data_dir = dir.path().to_owned();
        let manager = SandboxManager::new(SandboxSettings::from_config(&config, false));
        let project = ProjectId::parse("p1").unwrap();
        manager
            .secrets()
            .set(&project, "API_KEY", "k-123456")
            .unwrap();
        manager
            .secrets()
            .set(&project, "DATABASE_URL", "postgres://elsewhere")
            .unwrap();
        manager.add_project_env(Box::new(|_| {
            vec![
                ServiceVar {
                    name: "PGPASSWORD".into(),
                    value: "pw-123456".into(),
                    secret: true,
                },
                ServiceVar {
                    name: "PGPORT".into(),
                    value: "5432".into(),
                    secret: false,
                },
                ServiceVar {
                    name: "DATABASE_URL".into(),
                    value: "postgresql://project".into(),
                    secret: true,
                },
            ]
        }));
        let vars = manager.project_vars(&project).unwrap();
        let env: Vec<(&str, &str)> = vars
            .env
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        assert_eq!(
            env,
            [
                ("API_KEY", "k-123456"),
                ("DATABASE_URL", "postgres://elsewhere"),
                ("PGPASSWORD", "pw-123456"),
                ("PGPORT", "5432")
            ],
            "the person's own DATABASE_URL wins"
        );
        let masked: Vec<&str> = vars.masked.keys().map(String::as_str).collect();
        assert_eq!(
            masked,
            ["API_KEY", "DATABASE_URL", "PGPASSWORD"],
            "a port is no secret"
        );
    }
}
