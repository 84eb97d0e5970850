//! Starting a server and speaking MCP with it, through the official SDK
//! (`rmcp`): a child's stdio on the host, a process's pipes in the
//! project's sandbox (any [`Runtime`]), or streamable HTTP. A connection
//! lists the server's tools once and then calls them; what went wrong says
//! which server, and its last words on stderr when it stopped.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use futures::StreamExt;
use rmcp::ServiceExt;
use rmcp::model::{CallToolRequestParams, CallToolResult, JsonObject, Tool};
use rmcp::service::{RoleClient, RunningService, ServiceError};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::TokioChildProcess;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use tokio::io::AsyncReadExt;

use super::spec::{Server, Transport};
use crate::runtime::host::{CommandSpec, Process, Runtime, shell_quote};

/// The most bytes of a server's stderr kept for its error messages.
const STDERR_TAIL: usize = 2048;
/// Where a sandboxed server's stderr goes (its stdout is the protocol).
const SANDBOX_LOG_DIR: &str = "/tmp/rivet-mcp";

#[derive(Debug, Clone, thiserror::Error, PartialEq, Eq)]
pub enum McpError {
    #[error("MCP server {server:?} did not start: {message}")]
    Start { server: String, message: String },
    #[error("MCP server {server:?} did not answer within {secs} s")]
    Timeout { server: String, secs: u64 },
    #[error("MCP server {server:?} stopped{said}", said = said(.stderr))]
    Stopped { server: String, stderr: String },
    #[error("MCP server {server:?}: {message}")]
    Failed { server: String, message: String },
    #[error("there is no MCP server named {0:?}")]
    Unknown(String),
}

fn said(stderr: &str) -> String {
    let stderr = stderr.trim();
    if stderr.is_empty() {
        String::new()
    } else {
        format!("; it said: {stderr}")
    }
}

/// The end of what a server wrote on stderr.
#[derive(Clone, Default)]
struct StderrTail(Arc<Mutex<VecDeque<u8>>>);

impl StderrTail {
    fn push(&self, bytes: &[u8]) {
        let mut tail = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        tail.extend(bytes);
        let extra = tail.len().saturating_sub(STDERR_TAIL);
        tail.drain(..extra);
    }

    fn text(&self) -> String {
        let tail = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        let bytes: Vec<u8> = tail.iter().copied().collect();
        String::from_utf8_lossy(&bytes).into_owned()
    }
}

/// Where the stderr of a server is, to quote when it stops.
enum Stderr {
    Host(StderrTail),
    Sandbox {
        runtime: Arc<dyn Runtime>,
        file: String,
    },
    None,
}

impl Stderr {
    async fn text(&self) -> String {
        match self {
            Stderr::Host(tail) => tail.text(),
            Stderr::Sandbox { runtime, file } => sandbox_stderr(runtime, file).await,
            Stderr::None => String::new(),
        }
    }
}

/// The end of a sandboxed server's stderr file, read by a command in the
/// same sandbox (the file is in its `/tmp`).
async fn sandbox_stderr(runtime: &Arc<dyn Runtime>, file: &str) -> String {
    let spec = CommandSpec::command(format!("tail -c {STDERR_TAIL} {}", shell_quote(file)))
        .with_timeout(Duration::from_secs(10));
    let Ok(process) = runtime.spawn(spec).await else {
        return String::new();
    };
    let mut text = Vec::new();
    if let Some(mut output) = process.take_output() {
        while let Some(chunk) = output.next().await {
            text.extend(chunk);
        }
    }
    process.wait().await;
    String::from_utf8_lossy(&text).into_owned()
}

/// A running server, its tools listed.
pub struct Connection {
    server: String,
    service: RunningService<RoleClient, ()>,
    pub tools: Vec<Tool>,
    stderr: Stderr,
    /// A sandboxed server's process, killed with the connection.
    process: Option<Arc<dyn Process>>,
}

impl Connection {
    /// Starts `server` (in `runtime`'s sandbox when it runs there) and
    /// lists its tools, within `timeout`.
    pub async fn open(
        server: &Server,
        runtime: Option<Arc<dyn Runtime>>,
        timeout: Duration,
    ) -> Result<Connection, McpError> {
        let name = server.name.clone();
        let started = tokio::time::timeout(timeout, async {
            let (service, stderr, process) = start(server, runtime).await?;
            let mut connection = Connection {
                server: name.clone(),
                service,
                tools: Vec::new(),
                stderr,
                process,
            };
            match connection.service.peer().list_all_tools().await {
                Ok(tools) => connection.tools = tools,
                Err(error) => return Err(connection.failure(error).await),
            }
            Ok(connection)
        })
        .await;
        started.unwrap_or_else(|_| {
            Err(McpError::Timeout {
                server: name,
                secs: timeout.as_secs(),
            })
        })
    }

    /// Whether the server has gone (crashed, or its sandbox stopped).
    pub fn is_closed(&self) -> bool {
        self.service.is_transport_closed() || self.service.is_closed()
    }

    /// Calls `tool` with `arguments`, within `timeout`.
    pub async fn call(
        &self,
        tool: &str,
        arguments: Option<JsonObject>,
        timeout: Duration,
    ) -> Result<CallToolResult, McpError> {
        let mut params = CallToolRequestParams::new(tool.to_owned());
        params.arguments = arguments;
        let call = self.service.peer().call_tool(params);
        match tokio::time::timeout(timeout, call).await {
            Ok(Ok(result)) => Ok(result),
            Ok(Err(error)) => Err(self.failure(error).await),
            Err(_) => Err(McpError::Timeout {
                server: self.server.clone(),
                secs: timeout.as_secs(),
            }),
        }
    }

    async fn failure(&self, error: ServiceError) -> McpError {
        match error {
            ServiceError::McpError(error) => McpError::Failed {
                server: self.server.clone(),
                message: error.message.to_string(),
            },
            ServiceError::TransportClosed | ServiceError::TransportSend(_) => {
                // The reader notices the end a moment after the writer.
                tokio::time::sleep(Duration::from_millis(100)).await;
                McpError::Stopped {
                    server: self.server.clone(),
                    stderr: self.stderr.text().await,
                }
            }
            other => McpError::Failed {
                server: self.server.clone(),
                message: other.to_string(),
            },
        }
    }
}

impl Drop for Connection {
    /// A sandboxed server is killed with its connection (a host one by the
    /// SDK, which kills the child it started).
    fn drop(&mut self) {
        if let (Some(process), Ok(handle)) =
            (self.process.take(), tokio::runtime::Handle::try_current())
        {
            handle.spawn(async move {
                let _ = process.kill().await;
            });
        }
    }
}

type Started = (
    RunningService<RoleClient, ()>,
    Stderr,
    Option<Arc<dyn Process>>,
);

async fn start(server: &Server, runtime: Option<Arc<dyn Runtime>>) -> Result<Started, McpError> {
    let name = &server.name;
    let fail = |message: String| McpError::Start {
        server: name.clone(),
        message,
    };
    match (&server.transport, runtime) {
        (
            Transport::Stdio {
                command, args, env, ..
            },
            Some(runtime),
        ) => {
            let file = format!("{SANDBOX_LOG_DIR}/{name}.log");
            let line = format!(
                "mkdir -p {SANDBOX_LOG_DIR} && exec {} 2>{}",
                std::iter::once(command)
                    .chain(args)
                    .map(|word| shell_quote(word))
                    .collect::<Vec<_>>()
                    .join(" "),
                shell_quote(&file)
            );
            let mut spec = CommandSpec::server(line);
            spec.env = env.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
            let process: Arc<dyn Process> =
                Arc::from(runtime.spawn(spec).await.map_err(|e| fail(e.to_string()))?);
            let stderr = Stderr::Sandbox { runtime, file };
            let (reader, writer) = pipes(name, &process)?;
            match ().serve((reader, writer)).await {
                Ok(service) => Ok((service, stderr, Some(process))),
                Err(error) => {
                    let said = stderr.text().await;
                    let _ = process.kill().await;
                    Err(fail(format!("{error}{}", self::said(&said))))
                }
            }
        }
        (
            Transport::Stdio {
                command, args, env, ..
            },
            None,
        ) => {
            let mut child = tokio::process::Command::new(command);
            child.args(args).envs(env).kill_on_drop(true);
            let (transport, stderr) = TokioChildProcess::builder(child)
                .stderr(std::process::Stdio::piped())
                .spawn()
                .map_err(|e| fail(format!("{command}: {e}")))?;
            let tail = StderrTail::default();
            if let Some(mut stderr) = stderr {
                let tail = tail.clone();
                tokio::spawn(async move {
                    let mut buffer = [0u8; 4096];
                    while let Ok(n @ 1..) = stderr.read(&mut buffer).await {
                        tail.push(&buffer[..n]);
                    }
                });
            }
            match ().serve(transport).await {
                Ok(service) => Ok((service, Stderr::Host(tail), None)),
                Err(error) => {
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    Err(fail(format!("{error}{}", said(&tail.text()))))
                }
            }
        }
        (Transport::Http { url, headers }, _) => {
            let transport = http_transport(url, headers).map_err(fail)?;
            let service = ().serve(transport).await.map_err(|e| fail(e.to_string()))?;
            Ok((service, Stderr::None, None))
        }
    }
}

/// A sandboxed process's output and stdin as the byte streams the SDK
/// reads and writes.
fn pipes(
    server: &str,
    process: &Arc<dyn Process>,
) -> Result<(impl tokio::io::AsyncRead + use<>, tokio::io::DuplexStream), McpError> {
    let output = process.take_output().ok_or_else(|| McpError::Start {
        server: server.to_owned(),
        message: "its output was already taken".into(),
    })?;
    let reader = tokio_util::io::StreamReader::new(
        output.map(|chunk| Ok::<_, std::io::Error>(bytes::Bytes::from(chunk))),
    );
    let (writer, mut requests) = tokio::io::duplex(64 * 1024);
    let process = Arc::clone(process);
    tokio::spawn(async move {
        let mut buffer = vec![0u8; 64 * 1024];
        while let Ok(n @ 1..) = requests.read(&mut buffer).await {
            if process.write_stdin(&buffer[..n]).await.is_err() {
                break;
            }
        }
        process.close_stdin().await;
    });
    Ok((reader, writer))
}

/// Streamable HTTP to `url`, its headers sent with every request and
/// redirects not followed (so they go to that host only).
pub(super) fn http_transport(
    url: &url::Url,
    headers: &std::collections::BTreeMap<String, String>,
) -> Result<StreamableHttpClientTransport<reqwest013::Client>, String> {
    let mut custom = HashMap::new();
    for (name, value) in headers {
        let name =
            axum::http::HeaderName::from_bytes(name.as_bytes()).map_err(|e| e.to_string())?;
        let value = axum::http::HeaderValue::from_str(value).map_err(|e| e.to_string())?;
        custom.insert(name, value);
    }
    // reqwest panics when it finds no TLS provider, and an MCP server may be
    // asked before any provider is.
    crate::server::llm::upstream::install_tls_provider();
    let client = reqwest013::Client::builder()
        .redirect(reqwest013::redirect::Policy::none())
        .build()
        .map_err(|e| e.to_string())?;
    let config = StreamableHttpClientTransportConfig::with_uri(url.as_str()).custom_headers(custom);
    Ok(StreamableHttpClientTransport::with_client(client, config))
}
