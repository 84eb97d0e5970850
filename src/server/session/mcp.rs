//! The owner's MCP servers and each project's choice of them, as the UI
//! and the HTTP API reach them (see [`crate::server::mcp`]). No answer
//! carries a server's variable or header values.

use super::api::{ApiError, open_project};
pub use crate::runtime::mcp::Choice;
use crate::runtime::project::ProjectId;
use crate::runtime::session::SessionEvent;
use crate::server::config::McpServerSpec;
use crate::server::mcp::{ServerStatus, ServerView};
use crate::server::state::AppState;

/// Every server, with its status and tools as last seen.
pub fn servers(state: &AppState) -> Vec<ServerStatus> {
    state.mcp.list()
}

/// Adds or replaces a server the API manages.
pub fn put(state: &AppState, name: &str, spec: McpServerSpec) -> Result<ServerView, ApiError> {
    Ok(state.mcp.put(name, spec)?)
}

/// Removes a server the API manages.
pub fn delete(state: &AppState, name: &str) -> Result<(), ApiError> {
    Ok(state.mcp.delete(name)?)
}

fn choice(state: &AppState, chosen: Option<Vec<String>>) -> Choice {
    let names = state.mcp.names();
    Choice {
        all: chosen.is_none(),
        servers: names
            .into_iter()
            .filter(|name| chosen.as_ref().is_none_or(|c| c.contains(name)))
            .collect(),
    }
}

/// The project's choice.
pub async fn of(state: &AppState, project: &ProjectId) -> Result<Choice, ApiError> {
    let handle = open_project(state, project).await?;
    Ok(choice(
        state,
        handle.session.read(|s| s.mcp_servers.clone()),
    ))
}

/// Sets the project's choice (`None`: every server); each name must be a
/// configured server's.
pub async fn choose(
    state: &AppState,
    project: &ProjectId,
    servers: Option<Vec<String>>,
) -> Result<Choice, ApiError> {
    if let Some(names) = &servers {
        state.mcp.check_choice(names)?;
    }
    let handle = open_project(state, project).await?;
    handle.publish(SessionEvent::McpServersSet {
        servers: servers.clone(),
    });
    Ok(choice(state, servers))
}

/// Stops the project's sandboxed servers (it was deleted).
pub fn forget(state: &AppState, project: &ProjectId) {
    state.mcp.forget_project(project);
}
