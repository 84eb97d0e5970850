//! The owner's MCP servers as the server, the browser and the API share
//! them: a server as configured ([`McpServerSpec`], the configuration
//! file's `[[mcp.servers]]` and the API's body), as shown ([`ServerView`]:
//! its variables and headers by name, never their values) with its status
//! and tools, and a project's choice of them. The client lives in
//! `server::mcp`.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// One MCP server as configured: a command (stdio) or a URL (streamable
/// HTTP), checked by `server::mcp::spec`.
#[derive(Debug, Clone, Default, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct McpServerSpec {
    #[serde(default)]
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub args: Vec<String>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub env: BTreeMap<String, String>,
    #[serde(default)]
    pub run: McpRun,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub headers: BTreeMap<String, String>,
    #[serde(default)]
    pub trusted: bool,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub trusted_tools: Vec<String>,
}

/// Where a stdio MCP server runs.
#[derive(Debug, Clone, Copy, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum McpRun {
    /// In the project's sandbox, with its limits, network policy and files.
    #[default]
    Sandbox,
    /// On the host, as the IDE's user: for servers the owner trusts.
    Host,
}

/// A server as shown: the names of its variables and headers, never their
/// values.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ServerView {
    pub name: String,
    /// "stdio" or "http".
    pub transport: String,
    pub command: Option<String>,
    pub args: Vec<String>,
    pub run: Option<McpRun>,
    pub url: Option<String>,
    /// The names of its variables.
    pub env: Vec<String>,
    /// The names of its headers.
    pub headers: Vec<String>,
    pub trusted: bool,
    pub trusted_tools: Vec<String>,
    pub from_config: bool,
}

/// How a server is doing, as last seen.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum Status {
    #[default]
    NotStarted,
    Ready,
    Failed {
        error: String,
    },
}

/// A tool as listed for people.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ToolView {
    pub name: String,
    pub description: String,
    pub input_schema: serde_json::Value,
}

/// A server with its status and tools, as last seen (`GET /mcp/servers`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ServerStatus {
    #[serde(flatten)]
    pub server: ServerView,
    pub status: Status,
    pub tools: Vec<ToolView>,
}

/// The servers whose tools a project's agent gets.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Choice {
    /// The servers on, in the configured order.
    pub servers: Vec<String>,
    /// Every configured server is on, including those added later.
    pub all: bool,
}
