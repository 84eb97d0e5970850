//! The state every request handler and server function shares.

use std::sync::Arc;

use axum::extract::FromRef;
use leptos::config::LeptosOptions;

use super::access::Access;
use super::config::Config;
use super::llm::LlmService;
use super::projects::Projects;
use super::sandbox::preview_ports::PreviewPorts;
use super::sandbox::{QuotaExceeded, SandboxManager, SandboxSettings};
use super::session::OpenProjects;
use super::store::Store;

/// Cheap to clone: everything inside is shared.
#[derive(Clone)]
pub struct AppState {
    pub leptos_options: LeptosOptions,
    pub config: Arc<Config>,
    /// Who may use the IDE: the token, the host names, the session cookie.
    pub access: Arc<Access>,
    pub projects: Projects,
    pub llm: Arc<LlmService>,
    /// Every project's sandbox: files, processes, terminals, previews.
    pub sandbox: Arc<SandboxManager>,
    /// The projects opened since start: sessions, runners, conversations.
    pub open_projects: Arc<OpenProjects>,
    /// The ports previews are framed from.
    pub preview_ports: Arc<PreviewPorts>,
    /// Projects and conversations on disk (`<data_dir>/rivet.db`).
    pub store: Store,
    /// Each project's git remote and its token (`<data_dir>/remotes`).
    pub remotes: crate::server::remote::RemoteStore,
    /// Each project's published versions (`<data_dir>/published`).
    pub sites: crate::server::publish::Sites,
    /// Each project's PostgreSQL database.
    pub databases: Arc<crate::server::database::Databases>,
    /// The owner's MCP servers, their tools for the agent.
    pub mcp: Arc<crate::server::mcp::McpService>,
}

impl AppState {
    pub fn new(leptos_options: LeptosOptions, config: Config) -> AppState {
        let sandbox = SandboxManager::new(SandboxSettings::from_config(&config, false));
        AppState::with_sandbox(leptos_options, config, sandbox)
    }

    pub fn with_sandbox(
        leptos_options: LeptosOptions,
        config: Config,
        sandbox: Arc<SandboxManager>,
    ) -> AppState {
        let config = Arc::new(config);
        let ide = config
            .server
            .addr
            .parse::<std::net::SocketAddr>()
            .unwrap_or_else(|_| std::net::SocketAddr::from(([127, 0, 0, 1], 0)));
        let access = Arc::new(Access::new_or_closed(&config.server));
        let open_projects = Arc::new(OpenProjects::default());
        sandbox.on_quota_exceeded(quota_alert(Arc::downgrade(&open_projects)));
        let databases = crate::server::database::Databases::new(&config);
        if sandbox.settings().isolation == super::sandbox::Isolation::Unsafe {
            databases.without_sandbox();
        }
        let env_of = Arc::clone(&databases);
        sandbox.add_project_env(Box::new(move |project| {
            let env = env_of.env(project);
            env.into_iter()
                .map(|(name, value)| super::sandbox::ServiceVar {
                    secret: crate::server::database::SECRET_VARS.contains(&name.as_str()),
                    name,
                    value,
                })
                .collect()
        }));
        AppState {
            preview_ports: PreviewPorts::new(ide, Arc::clone(&sandbox), Arc::clone(&access)),
            access,
            leptos_options,
            projects: Projects::new(&config.server.data_dir),
            store: Store::new(&config.server.data_dir, config.runtime.default),
            remotes: crate::server::remote::RemoteStore::new(&config.server.data_dir),
            sites: crate::server::publish::Sites::new(&config.server.data_dir),
            databases,
            mcp: Arc::new(crate::server::mcp::McpService::new(
                &config.mcp,
                &config.server.data_dir,
            )),
            llm: Arc::new(LlmService::new(config.clone())),
            config,
            sandbox,
            open_projects,
        }
    }
}

/// A project over its disk quota is stopped like Stop does, and its chat
/// says why.
fn quota_alert(projects: std::sync::Weak<OpenProjects>) -> QuotaExceeded {
    Box::new(move |project, message| {
        let Some(handle) = projects.upgrade().and_then(|p| p.get(project)) else {
            return;
        };
        super::session::manage::stop_in(&handle);
        handle.runner.alert(
            "Disk quota reached".to_owned(),
            format!("{message}. The project's processes were stopped; its files are kept. Delete files to run commands again."),
            None,
        );
    })
}

impl FromRef<AppState> for LeptosOptions {
    fn from_ref(state: &AppState) -> Self {
        state.leptos_options.clone()
    }
}

/// A state over a fresh temporary data directory, with the defaults as
/// `configure` changes them, for unit tests of code that needs the whole
/// state.
#[cfg(test)]
pub fn for_tests(
    configure: impl FnOnce(&mut crate::server::config::Config),
) -> (AppState, tempfile::TempDir) {
    #[allow(clippy::unwrap_used)]
    let data = tempfile::tempdir().unwrap();
    let mut config = crate::server::config::Config::defaults();
    config.server.data_dir = data.path().to_owned();
    configure(&mut config);
    let options = LeptosOptions::builder()
        .output_name("rivet")
        .site_root("target/site")
        .build();
    (AppState::new(options, config), data)
}

/// A new empty project, recorded as `POST /new` records one, for unit tests.
#[cfg(test)]
#[allow(clippy::unwrap_used)]
pub async fn project_for_tests(
    state: &AppState,
    name: &str,
) -> crate::server::projects::ProjectMeta {
    let row = crate::server::session::manage::create(state, name)
        .await
        .unwrap();
    crate::server::projects::ProjectMeta {
        id: crate::runtime::project::ProjectId::parse(&row.id).unwrap(),
        name: row.name,
        created: u64::try_from(row.created_at).unwrap(),
    }
}

/// A new project (as [`project_for_tests`]) opened on the in-memory
/// runtime, holding `files`: for unit tests of what the session does with
/// files and processes, which the real sandbox cannot run inside a test
/// binary.
#[cfg(test)]
pub async fn project_on_fake_runtime(
    state: &AppState,
    files: &[(&str, &str)],
) -> (
    crate::runtime::project::ProjectId,
    crate::runtime::host::fake::FakeRuntime,
) {
    use crate::server::session::{ProjectHandle, Session};
    let id = project_for_tests(state, "p").await.id;
    let runtime = crate::runtime::host::fake::FakeRuntime::with_files(files.iter().copied());
    let session = std::sync::Arc::new(Session::new(id.clone(), Default::default()));
    let handle = ProjectHandle::new(
        id.clone(),
        session,
        std::sync::Arc::new(runtime.clone()),
        state.databases.for_project(&id),
        state.preview_ports.hooks(&id),
    );
    state.open_projects.insert_for_tests(handle);
    (id, runtime)
}
