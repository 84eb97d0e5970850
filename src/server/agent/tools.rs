//! The agent's tools, with the names and argument names of the Gemini coding
//! agent's: files (`files.rs`), listings and globs (`listing.rs`), content
//! search (`search.rs`), and the project's shell (`shell.rs`). They work on
//! any [`Runtime`], so they run in the sandbox and against the in-memory fake
//! alike.
//!
//! Paths are project-relative; `/home/project/...` is accepted as the
//! project's root. `..` out of the project, other absolute paths and `.git`
//! are refused here ([`ProjectPath`]); symbolic links are refused by the
//! runtime's file operations, which never follow them, and listings never
//! enter them. Every failure (bad arguments, a missing file, a pattern that
//! does not compile) is a [`ToolOutput`] the model can read and act on, never
//! an error of the loop.

pub(in crate::server::agent) mod files;
mod listing;
mod search;
pub(in crate::server::agent) mod shell;

pub use shell::{MAX_OUTPUT_CHARS, cap_middle};

#[cfg(test)]
mod tests;

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use ignore::gitignore::{Gitignore, GitignoreBuilder};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use crate::runtime::action::{EditError, PathError, ProjectPath};
use crate::runtime::build_result::BuildResult;
use crate::runtime::host::{Process, Runtime, RuntimeError};
use crate::server::llm::client::{ImagePart, ToolSpec};

/// Where the project's root is inside the runtime, as the model may write it.
pub const PROJECT_ROOT: &str = "/home/project";

/// What `read_build_result` reports: the open failures (`agent::build`).
pub type BuildResults = Arc<dyn Fn() -> Vec<BuildResult> + Send + Sync>;

/// Receives each chunk of a running command's output as it arrives.
pub type OutputSink = Arc<dyn Fn(&[u8]) + Send + Sync>;

/// What the tools run against.
pub struct ToolContext {
    pub runtime: Arc<dyn Runtime>,
    pub build_results: BuildResults,
    /// How long `run_shell_command` waits for a command to end or a server
    /// to open a port before stopping it.
    pub command_timeout: Duration,
    /// Cancelled when the person stops the run: a running command is killed.
    pub cancel: CancellationToken,
    /// Where `run_shell_command` sends its output while the tool waits.
    pub output: Option<OutputSink>,
    /// Servers started by `run_shell_command`, kept running.
    servers: Mutex<Vec<Box<dyn Process>>>,
    /// Tools from elsewhere (the owner's MCP servers), beside the built-in ones.
    pub extra: Option<Arc<dyn ToolSource>>,
}

/// Tools beside the built-in ones (`server::mcp`): the loop offers their
/// specs, asks for approval when they say so, and runs their calls.
#[async_trait::async_trait]
pub trait ToolSource: Send + Sync {
    /// The tools offered to the model.
    fn specs(&self) -> Vec<ToolSpec>;
    fn owns(&self, name: &str) -> bool;
    /// Whether a call waits for the person's approval.
    fn needs_approval(&self, name: &str) -> bool;
    /// What the person approves: where the call goes and its arguments.
    fn describe(&self, name: &str, arguments: &str) -> String;
    /// Runs one call; every failure is an output the model reads.
    async fn call(&self, name: &str, arguments: &str) -> ToolOutput;
}

impl ToolContext {
    pub fn new(runtime: Arc<dyn Runtime>) -> ToolContext {
        ToolContext {
            runtime,
            build_results: Arc::new(Vec::new),
            command_timeout: Duration::from_secs(600),
            cancel: CancellationToken::new(),
            output: None,
            servers: Mutex::new(Vec::new()),
            extra: None,
        }
    }

    pub fn with_extra(mut self, extra: Arc<dyn ToolSource>) -> ToolContext {
        self.extra = Some(extra);
        self
    }

    /// Every tool's spec, the built-in ones first, for the request.
    pub fn specs(&self) -> Vec<ToolSpec> {
        let mut specs = specs();
        if let Some(extra) = &self.extra {
            specs.extend(extra.specs());
        }
        specs
    }

    /// Whether a call of `name` waits for the person's approval.
    pub fn needs_approval(&self, name: &str) -> bool {
        match Tool::from_name(name) {
            Some(tool) => tool.needs_approval(),
            None => self
                .extra
                .as_ref()
                .is_some_and(|extra| extra.owns(name) && extra.needs_approval(name)),
        }
    }

    pub fn with_build_results(mut self, results: BuildResults) -> ToolContext {
        self.build_results = results;
        self
    }

    pub fn with_command_timeout(mut self, timeout: Duration) -> ToolContext {
        self.command_timeout = timeout;
        self
    }

    pub fn with_cancel(mut self, cancel: CancellationToken) -> ToolContext {
        self.cancel = cancel;
        self
    }

    pub fn with_output(mut self, sink: OutputSink) -> ToolContext {
        self.output = Some(sink);
        self
    }

    fn keep_server(&self, process: Box<dyn Process>) {
        self.servers
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(process);
    }

    /// Stops every server the tools started.
    pub async fn stop_servers(&self) {
        let servers =
            std::mem::take(&mut *self.servers.lock().unwrap_or_else(PoisonError::into_inner));
        for server in servers {
            let _ = server.kill().await;
        }
    }
}

/// The tools, by the names the model calls them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Tool {
    ListDirectory,
    ReadFile,
    WriteFile,
    Replace,
    SearchFileContent,
    Glob,
    RunShellCommand,
    ReadBuildResult,
}

impl Tool {
    pub const ALL: [Tool; 8] = [
        Tool::ListDirectory,
        Tool::ReadFile,
        Tool::WriteFile,
        Tool::Replace,
        Tool::SearchFileContent,
        Tool::Glob,
        Tool::RunShellCommand,
        Tool::ReadBuildResult,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Tool::ListDirectory => "list_directory",
            Tool::ReadFile => "read_file",
            Tool::WriteFile => "write_file",
            Tool::Replace => "replace",
            Tool::SearchFileContent => "search_file_content",
            Tool::Glob => "glob",
            Tool::RunShellCommand => "run_shell_command",
            Tool::ReadBuildResult => "read_build_result",
        }
    }

    pub fn from_name(name: &str) -> Option<Tool> {
        Tool::ALL.into_iter().find(|t| t.name() == name)
    }

    /// Whether a step with this tool waits for the person's approval (it
    /// changes files or runs code).
    pub fn needs_approval(self) -> bool {
        matches!(
            self,
            Tool::WriteFile | Tool::Replace | Tool::RunShellCommand
        )
    }

    fn description(self) -> &'static str {
        match self {
            Tool::ListDirectory => {
                "Lists the files and folders directly inside a folder of the project (folders marked [DIR])."
            }
            Tool::ReadFile => {
                "Reads a text file with line numbers, by default its first 2000 lines; use offset and limit for more. Binary files are described, not shown."
            }
            Tool::WriteFile => "Writes a whole file, creating it and its folders if needed.",
            Tool::Replace => {
                "Replaces old_string by new_string in a file. old_string must occur exactly expected_replacements times (default 1); include a few lines around the change so it is unique. An empty old_string creates a new file."
            }
            Tool::SearchFileContent => {
                "Searches file contents with a regular expression; answers `File: path` then `Lnn: line` for each match."
            }
            Tool::Glob => {
                "Finds files whose project-relative path matches a glob pattern such as `src/**/*.jsx`."
            }
            Tool::RunShellCommand => {
                "Runs a bash command in the project's folder and answers its output and exit code. A command that starts a server (npm run dev) keeps running; the answer comes once it listens and names its port."
            }
            Tool::ReadBuildResult => {
                "Reports the failures of the latest build and actions, if any."
            }
        }
    }

    fn parameters(self) -> Value {
        let path = |what: &str| json!({ "type": "string", "description": what });
        let schema = |properties: Value, required: &[&str]| {
            json!({
                "type": "object",
                "properties": properties,
                "required": required,
                "additionalProperties": false,
            })
        };
        match self {
            Tool::ListDirectory => schema(
                json!({
                    "path": path("The folder, relative to the project (`.` for its root)."),
                    "ignore": { "type": "array", "items": { "type": "string" }, "description": "Glob patterns of names to leave out." },
                    "respect_git_ignore": { "type": "boolean", "description": "Leave out what .gitignore ignores (default true)." },
                }),
                &["path"],
            ),
            Tool::ReadFile => schema(
                json!({
                    "path": path("The file, relative to the project."),
                    "offset": { "type": "integer", "minimum": 0, "description": "The 0-based line to start at." },
                    "limit": { "type": "integer", "minimum": 1, "description": "How many lines to read (default and most 2000)." },
                }),
                &["path"],
            ),
            Tool::WriteFile => schema(
                json!({
                    "file_path": path("The file, relative to the project."),
                    "content": { "type": "string", "description": "The whole new content." },
                }),
                &["file_path", "content"],
            ),
            Tool::Replace => schema(
                json!({
                    "file_path": path("The file, relative to the project."),
                    "old_string": { "type": "string", "description": "The exact text to replace, with some lines of context." },
                    "new_string": { "type": "string", "description": "The text to put in its place." },
                    "expected_replacements": { "type": "integer", "minimum": 1, "description": "How many times old_string occurs (default 1)." },
                }),
                &["file_path", "old_string", "new_string"],
            ),
            Tool::SearchFileContent => schema(
                json!({
                    "pattern": { "type": "string", "description": "A regular expression (Rust syntax)." },
                    "path": path("The folder to search (default: the whole project)."),
                    "include": { "type": "string", "description": "A glob of the files to search, e.g. `*.{js,jsx}`." },
                }),
                &["pattern"],
            ),
            Tool::Glob => schema(
                json!({
                    "pattern": { "type": "string", "description": "A glob such as `**/*.css`." },
                    "path": path("The folder to search in (default: the whole project)."),
                    "case_sensitive": { "type": "boolean", "description": "Default false." },
                    "respect_git_ignore": { "type": "boolean", "description": "Default true." },
                }),
                &["pattern"],
            ),
            Tool::RunShellCommand => schema(
                json!({
                    "command": { "type": "string", "description": "The bash command line." },
                    "description": { "type": "string", "description": "What it does, for the person." },
                }),
                &["command"],
            ),
            Tool::ReadBuildResult => schema(json!({}), &[]),
        }
    }

    /// What the model is told about this tool.
    pub fn spec(self) -> ToolSpec {
        ToolSpec {
            name: self.name().to_owned(),
            description: self.description().to_owned(),
            parameters: self.parameters(),
        }
    }
}

/// Every tool's spec, for the request to the model.
pub fn specs() -> Vec<ToolSpec> {
    Tool::ALL.into_iter().map(Tool::spec).collect()
}

/// A tool's answer to the model.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolOutput {
    pub text: String,
    /// Whether the tool did what was asked.
    pub ok: bool,
    /// The port a server started by `run_shell_command` listens on.
    pub port: Option<u16>,
    /// Images for a model that takes them (an MCP tool's screenshot): sent
    /// after the step's results as a user message's image parts.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub images: Vec<ImagePart>,
}

impl ToolOutput {
    pub fn ok(text: impl Into<String>) -> ToolOutput {
        ToolOutput {
            text: text.into(),
            ok: true,
            port: None,
            images: Vec::new(),
        }
    }

    pub fn error(error: &ToolError) -> ToolOutput {
        ToolOutput {
            text: format!("Error: {error}"),
            ok: false,
            port: None,
            images: Vec::new(),
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ToolError {
    #[error("there is no tool named {0:?}; the tools are {names}", names = tool_names())]
    Unknown(String),
    #[error("invalid arguments: {0}")]
    Arguments(String),
    #[error("{path:?}: {source}")]
    Path { path: String, source: PathError },
    #[error("{0}")]
    Runtime(#[from] RuntimeError),
    #[error("{0}")]
    Edit(#[from] EditError),
    #[error("invalid pattern {pattern:?}: {message}")]
    Pattern { pattern: String, message: String },
}

fn tool_names() -> String {
    Tool::ALL.map(Tool::name).join(", ")
}

/// Runs one call: the tool named `name` with the JSON `arguments` the model
/// wrote.
pub async fn run_tool(cx: &ToolContext, name: &str, arguments: &str) -> ToolOutput {
    if let Some(extra) = cx.extra.as_ref().filter(|extra| extra.owns(name)) {
        return tokio::select! {
            output = extra.call(name, arguments) => output,
            _ = cx.cancel.cancelled() => ToolOutput {
                text: "Error: stopped by the user".to_owned(),
                ok: false,
                port: None,
                images: Vec::new(),
            },
        };
    }
    let result = match Tool::from_name(name) {
        None => Err(ToolError::Unknown(name.to_owned())),
        Some(tool) => dispatch(cx, tool, arguments).await,
    };
    result.unwrap_or_else(|e| ToolOutput::error(&e))
}

async fn dispatch(cx: &ToolContext, tool: Tool, arguments: &str) -> Result<ToolOutput, ToolError> {
    match tool {
        Tool::ListDirectory => listing::list_directory(cx, parse_args(arguments)?).await,
        Tool::ReadFile => files::read_file(cx, parse_args(arguments)?).await,
        Tool::WriteFile => files::write_file(cx, parse_args(arguments)?).await,
        Tool::Replace => files::replace(cx, parse_args(arguments)?).await,
        Tool::SearchFileContent => search::search_file_content(cx, parse_args(arguments)?).await,
        Tool::Glob => listing::glob(cx, parse_args(arguments)?).await,
        Tool::RunShellCommand => shell::run_shell_command(cx, parse_args(arguments)?).await,
        Tool::ReadBuildResult => {
            parse_args::<shell::NoArgs>(arguments)?;
            Ok(shell::read_build_result(cx).await)
        }
    }
}

/// Reads the arguments object; an empty string is `{}`.
pub(in crate::server::agent) fn parse_args<T: DeserializeOwned>(
    arguments: &str,
) -> Result<T, ToolError> {
    let arguments = if arguments.trim().is_empty() {
        "{}"
    } else {
        arguments
    };
    serde_json::from_str(arguments).map_err(|e| ToolError::Arguments(e.to_string()))
}

/// `raw` without the runtime's project prefix.
fn strip_root(raw: &str) -> &str {
    match raw.strip_prefix(PROJECT_ROOT) {
        Some("") => "",
        Some(rest) if rest.starts_with('/') => rest.trim_start_matches('/'),
        _ => raw,
    }
}

/// A file path the model wrote, checked.
pub fn file_path(raw: &str) -> Result<ProjectPath, ToolError> {
    ProjectPath::parse(strip_root(raw)).map_err(|source| ToolError::Path {
        path: raw.to_owned(),
        source,
    })
}

/// A folder path the model wrote, checked; `""` for the project's root.
fn dir_path(raw: Option<&str>) -> Result<String, ToolError> {
    let raw = raw.unwrap_or("");
    let stripped = strip_root(raw);
    if stripped.starts_with('/') {
        return Err(ToolError::Path {
            path: raw.to_owned(),
            source: PathError::Absolute,
        });
    }
    let stripped = stripped.trim_end_matches('/');
    if stripped.is_empty() || stripped == "." {
        return Ok(String::new());
    }
    ProjectPath::parse(stripped)
        .map(String::from)
        .map_err(|source| ToolError::Path {
            path: raw.to_owned(),
            source,
        })
}

/// A folder path relative to the project, for messages.
fn shown(dir: &str) -> &str {
    if dir.is_empty() { "." } else { dir }
}

/// The project's root `.gitignore`, when there is one.
async fn gitignore(cx: &ToolContext) -> Option<Gitignore> {
    let bytes = cx.runtime.read_file(".gitignore").await.ok()?;
    let mut builder = GitignoreBuilder::new(".");
    for line in String::from_utf8_lossy(&bytes).lines() {
        // A line that does not parse is skipped, as git does.
        let _ = builder.add_line(None, line);
    }
    builder.build().ok()
}

/// Whether `.gitignore` ignores a project-relative path or a folder above it.
fn ignored(rules: Option<&Gitignore>, path: &str, is_dir: bool) -> bool {
    let Some(rules) = rules else {
        return false;
    };
    let parts: Vec<&str> = path.split('/').collect();
    (1..=parts.len()).any(|n| {
        let prefix = parts[..n].join("/");
        let dir = n < parts.len() || is_dir;
        rules.matched(&prefix, dir).is_ignore()
    })
}

/// Whether bytes look like a binary file: a NUL early on, or not UTF-8.
fn is_binary(bytes: &[u8]) -> bool {
    bytes[..bytes.len().min(8192)].contains(&0) || std::str::from_utf8(bytes).is_err()
}
