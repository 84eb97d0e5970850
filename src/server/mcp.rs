//! Agent tools from the owner's Model Context Protocol servers.
//!
//! The owner configures servers (`[[mcp.servers]]`, or the API and the
//! settings panel, kept by `spec.rs`); each project picks which of them its
//! agent gets (`SessionEvent::McpServersSet`). A server is started on first
//! use and kept: a stdio server inside the project's sandbox by default
//! (one per project, through its [`Runtime`], so it has the sandbox's
//! limits, network policy and files), on the host when the owner says
//! `run = "host"`, or reached over streamable HTTP (`connect.rs`). A server
//! that crashed or whose sandbox stopped is started again on the next call.
//! `tools.rs` offers the tools to the agent as `<server>__<tool>` and turns
//! their results into text.

pub mod connect;
pub mod spec;
pub mod tools;

#[cfg(test)]
mod tests;

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, RwLock};
use std::time::{Duration, Instant};

use rmcp::model::{CallToolResult, JsonObject};

pub use crate::runtime::mcp::{ServerStatus, ServerView, Status, ToolView};
pub use connect::{Connection, McpError};
pub use spec::{Server, SpecError, Transport};

use crate::runtime::host::Runtime;
use crate::runtime::project::ProjectId;
use crate::server::config::{McpConfig, McpRun, McpServerSpec};
use spec::SavedServers;
use tools::{McpTools, Offered, ServerTools};

#[derive(Debug, thiserror::Error)]
pub enum McpSettingsError {
    #[error(transparent)]
    Spec(#[from] SpecError),
    #[error("there is no MCP server named {0:?}")]
    NotFound(String),
    #[error("MCP server {0:?} is set in the configuration file; change it there")]
    FromConfig(String),
    #[error("the MCP servers could not be saved: {0}")]
    Io(String),
    #[error("there is no MCP server named {0:?}; add it in the settings first")]
    UnknownServers(String),
}

#[derive(Default)]
struct Known {
    status: Status,
    tools: Vec<ToolView>,
    last_used: Option<Instant>,
}

/// The servers: the configuration file's, then the saved ones (which may
/// not share a name with them), and the file's that do not check, with why.
#[derive(Default)]
struct Servers {
    list: Vec<Server>,
    broken: Vec<(String, String)>,
}

/// One running server: per project for a sandboxed one.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct Key {
    project: Option<ProjectId>,
    server: String,
}

type Slot = Arc<tokio::sync::Mutex<Option<Arc<Connection>>>>;

pub struct McpService {
    start_timeout: Duration,
    call_timeout: Duration,
    budget_percent: u32,
    saved: SavedServers,
    servers: RwLock<Servers>,
    slots: Mutex<HashMap<Key, Slot>>,
    known: Mutex<HashMap<String, Known>>,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

impl McpService {
    pub fn new(config: &McpConfig, data_dir: &Path) -> McpService {
        let saved = SavedServers::new(data_dir);
        let mut servers = Servers::default();
        let specs = config.servers.iter().map(|s| (s, true));
        let stored = saved.read().unwrap_or_else(|error| {
            tracing::error!(%error, "the saved MCP servers could not be read");
            Vec::new()
        });
        for (spec, from_config) in specs.chain(stored.iter().map(|s| (s, false))) {
            match Server::check(spec, from_config) {
                Ok(server) if servers.list.iter().all(|s| s.name != server.name) => {
                    servers.list.push(server)
                }
                Ok(server) => {
                    tracing::warn!(name = %server.name, "an MCP server is named twice; the first is used")
                }
                Err(error) => {
                    tracing::error!(%error, "an MCP server in the configuration is left out");
                    servers.broken.push((spec.name.clone(), error.to_string()));
                }
            }
        }
        McpService {
            start_timeout: Duration::from_secs(config.start_timeout_secs.max(1)),
            call_timeout: Duration::from_secs(config.call_timeout_secs.max(1)),
            budget_percent: config.tools_budget_percent.min(100),
            saved,
            servers: RwLock::new(servers),
            slots: Mutex::default(),
            known: Mutex::default(),
        }
    }

    fn servers(&self) -> std::sync::RwLockReadGuard<'_, Servers> {
        self.servers.read().unwrap_or_else(PoisonError::into_inner)
    }

    pub fn server(&self, name: &str) -> Option<Server> {
        self.servers().list.iter().find(|s| s.name == name).cloned()
    }

    pub fn names(&self) -> Vec<String> {
        self.servers().list.iter().map(|s| s.name.clone()).collect()
    }

    /// Every server with its status and tools as last seen; never a
    /// variable's or header's value.
    pub fn list(&self) -> Vec<ServerStatus> {
        let known = lock(&self.known);
        let servers = self.servers();
        let mut list: Vec<ServerStatus> = servers
            .list
            .iter()
            .map(|server| {
                let seen = known.get(&server.name);
                ServerStatus {
                    server: server.view(),
                    status: seen.map(|k| k.status.clone()).unwrap_or_default(),
                    tools: seen.map(|k| k.tools.clone()).unwrap_or_default(),
                }
            })
            .collect();
        list.extend(servers.broken.iter().map(|(name, error)| ServerStatus {
            server: ServerView {
                name: name.clone(),
                transport: "invalid".to_owned(),
                command: None,
                args: Vec::new(),
                run: None,
                url: None,
                env: Vec::new(),
                headers: Vec::new(),
                trusted: false,
                trusted_tools: Vec::new(),
                from_config: true,
            },
            status: Status::Failed {
                error: error.clone(),
            },
            tools: Vec::new(),
        }));
        list
    }

    /// Adds or replaces a saved server; a running one is stopped so the
    /// next use starts the new one.
    pub fn put(&self, name: &str, mut spec: McpServerSpec) -> Result<ServerView, McpSettingsError> {
        spec.name = name.to_owned();
        let server = Server::check(&spec, false)?;
        let mut servers = self.servers.write().unwrap_or_else(PoisonError::into_inner);
        if servers.list.iter().any(|s| s.name == name && s.from_config) {
            return Err(McpSettingsError::FromConfig(name.to_owned()));
        }
        let mut list = servers.list.clone();
        match list.iter_mut().find(|s| s.name == name) {
            Some(slot) => *slot = server.clone(),
            None => list.push(server.clone()),
        }
        self.save(&list)?;
        servers.list = list;
        drop(servers);
        self.stop(name);
        tracing::info!(server = name, "MCP server set");
        Ok(server.view())
    }

    /// Removes a saved server and stops it.
    pub fn delete(&self, name: &str) -> Result<(), McpSettingsError> {
        let mut servers = self.servers.write().unwrap_or_else(PoisonError::into_inner);
        let found = servers.list.iter().find(|s| s.name == name);
        match found {
            None => return Err(McpSettingsError::NotFound(name.to_owned())),
            Some(server) if server.from_config => {
                return Err(McpSettingsError::FromConfig(name.to_owned()));
            }
            Some(_) => {}
        }
        let list: Vec<Server> = servers
            .list
            .iter()
            .filter(|s| s.name != name)
            .cloned()
            .collect();
        self.save(&list)?;
        servers.list = list;
        drop(servers);
        self.stop(name);
        lock(&self.known).remove(name);
        tracing::info!(server = name, "MCP server removed");
        Ok(())
    }

    fn save(&self, list: &[Server]) -> Result<(), McpSettingsError> {
        let specs: Vec<McpServerSpec> = list
            .iter()
            .filter(|s| !s.from_config)
            .map(Server::spec)
            .collect();
        self.saved
            .write(&specs)
            .map_err(|e| McpSettingsError::Io(e.to_string()))
    }

    /// Checks a project's choice of servers: each must exist.
    pub fn check_choice(&self, names: &[String]) -> Result<(), McpSettingsError> {
        let known = self.names();
        match names.iter().find(|n| !known.contains(n)) {
            Some(name) => Err(McpSettingsError::UnknownServers(name.clone())),
            None => Ok(()),
        }
    }

    /// Where a server runs, for the approval card.
    pub fn place(&self, name: &str) -> String {
        match self.server(name).map(|s| s.transport) {
            Some(Transport::Stdio {
                run: McpRun::Sandbox,
                ..
            }) => "runs in the project's sandbox".to_owned(),
            Some(Transport::Stdio {
                run: McpRun::Host, ..
            }) => "runs on the host, trusted by the owner".to_owned(),
            Some(Transport::Http { url, .. }) => {
                format!("over HTTP at {}", url.host_str().unwrap_or_default())
            }
            None => "removed".to_owned(),
        }
    }

    /// Stops every running instance of a server.
    fn stop(&self, name: &str) {
        lock(&self.slots).retain(|key, _| key.server != name);
    }

    /// Stops a project's sandboxed servers (the project was deleted).
    pub fn forget_project(&self, project: &ProjectId) {
        lock(&self.slots).retain(|key, _| key.project.as_ref() != Some(project));
    }

    fn slot(&self, key: Key) -> Slot {
        Arc::clone(lock(&self.slots).entry(key).or_default())
    }

    /// The running server, started (again) when it is not running.
    async fn connection(
        &self,
        server: &Server,
        project: &ProjectId,
        runtime: &Arc<dyn Runtime>,
    ) -> Result<Arc<Connection>, McpError> {
        let sandboxed = matches!(
            server.transport,
            Transport::Stdio {
                run: McpRun::Sandbox,
                ..
            }
        );
        let key = Key {
            project: sandboxed.then(|| project.clone()),
            server: server.name.clone(),
        };
        let slot = self.slot(key);
        let mut running = slot.lock().await;
        if let Some(connection) = running.as_ref().filter(|c| !c.is_closed()) {
            return Ok(Arc::clone(connection));
        }
        *running = None;
        let place = sandboxed.then(|| Arc::clone(runtime));
        let opened = Connection::open(server, place, self.start_timeout).await;
        self.seen(&server.name, |known| match &opened {
            Ok(connection) => {
                known.status = Status::Ready;
                known.tools = connection.tools.iter().map(tool_view).collect();
            }
            Err(error) => {
                known.status = Status::Failed {
                    error: error.to_string(),
                }
            }
        });
        let connection = Arc::new(opened?);
        *running = Some(Arc::clone(&connection));
        Ok(connection)
    }

    fn seen(&self, name: &str, change: impl FnOnce(&mut Known)) {
        change(lock(&self.known).entry(name.to_owned()).or_default());
    }

    /// Calls one tool, starting its server when needed.
    pub async fn call(
        &self,
        server: &str,
        tool: &str,
        arguments: Option<JsonObject>,
        project: &ProjectId,
        runtime: &Arc<dyn Runtime>,
    ) -> Result<CallToolResult, McpError> {
        let Some(spec) = self.server(server) else {
            return Err(McpError::Unknown(server.to_owned()));
        };
        self.seen(server, |known| known.last_used = Some(Instant::now()));
        let connection = self.connection(&spec, project, runtime).await?;
        let result = connection.call(tool, arguments, self.call_timeout).await;
        if let Err(error @ McpError::Stopped { .. }) = &result {
            self.seen(server, |known| {
                known.status = Status::Failed {
                    error: error.to_string(),
                }
            });
        }
        result
    }

    /// The tools of a project's servers for one agent run, within
    /// `window_tokens`' share for them, and a note for each server left
    /// out (it did not start, or its tools did not fit). `vision`: the
    /// model takes images, so the tools' images are attached.
    pub async fn tools_for(
        self: &Arc<Self>,
        project: &ProjectId,
        runtime: &Arc<dyn Runtime>,
        chosen: Option<&[String]>,
        window_tokens: u32,
        vision: bool,
    ) -> (McpTools, Vec<String>) {
        let servers: Vec<Server> = self
            .servers()
            .list
            .iter()
            .filter(|s| chosen.is_none_or(|names| names.contains(&s.name)))
            .cloned()
            .collect();
        let opened = futures::future::join_all(
            servers
                .iter()
                .map(|server| self.connection(server, project, runtime)),
        )
        .await;
        let mut notes = Vec::new();
        let mut candidates = Vec::new();
        for (server, opened) in servers.iter().zip(opened) {
            match opened {
                Ok(connection) => candidates.push(ServerTools {
                    server: server.name.clone(),
                    last_used: lock(&self.known)
                        .get(&server.name)
                        .and_then(|k| k.last_used),
                    tools: connection
                        .tools
                        .iter()
                        .map(|tool| Offered::new(server, tool))
                        .collect(),
                }),
                Err(error) => notes.push(format!("{error}; its tools are left out of this run.")),
            }
        }
        let budget = budget(window_tokens, self.budget_percent);
        let (offered, left) = tools::fit(candidates, budget);
        notes.extend(left.iter().map(|name| {
            format!(
                "MCP server {name:?}'s tools are left out of this run: with them the tools would take more than {}% of the context window ([mcp] tools_budget_percent); the least recently used servers are left out first.",
                self.budget_percent
            )
        }));
        let tools = McpTools {
            service: Arc::clone(self),
            project: project.clone(),
            runtime: Arc::clone(runtime),
            offered,
            vision,
        };
        (tools, notes)
    }
}

/// The tokens MCP tools may take of a window of `window_tokens`.
pub fn budget(window_tokens: u32, percent: u32) -> u32 {
    u32::try_from(u64::from(window_tokens) * u64::from(percent) / 100).unwrap_or(u32::MAX)
}

fn tool_view(tool: &rmcp::model::Tool) -> ToolView {
    ToolView {
        name: tool.name.to_string(),
        description: tool.description.as_deref().unwrap_or_default().to_owned(),
        input_schema: serde_json::Value::Object((*tool.input_schema).clone()),
    }
}
