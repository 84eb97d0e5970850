//! `/api/v1/mcp/servers…`: the owner's MCP servers (their variables and
//! headers by name only), and `/api/v1/projects/{id}/mcp`: which of them
//! a project's agent gets.

use axum::Json;
use axum::extract::rejection::JsonRejection;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use serde::{Deserialize, Serialize};

use super::{V1Error, project_id};
use crate::server::config::McpServerSpec;
use crate::server::mcp::{ServerStatus, ServerView};
use crate::server::session::mcp::{self, Choice};
use crate::server::state::AppState;

#[derive(Serialize)]
pub struct Servers {
    servers: Vec<ServerStatus>,
}

/// `GET /api/v1/mcp/servers`.
pub async fn list(State(state): State<AppState>) -> Json<Servers> {
    Json(Servers {
        servers: mcp::servers(&state),
    })
}

/// `PUT /api/v1/mcp/servers/{name}` with `{"command", "args", "env", "run"}`
/// or `{"url", "headers"}` (and `"trusted"`, `"trusted_tools"`).
pub async fn put(
    State(state): State<AppState>,
    Path(name): Path<String>,
    body: Result<Json<McpServerSpec>, JsonRejection>,
) -> Result<Json<ServerView>, V1Error> {
    let Json(spec) = body?;
    Ok(Json(mcp::put(&state, &name, spec)?))
}

/// `DELETE /api/v1/mcp/servers/{name}`.
pub async fn delete(
    State(state): State<AppState>,
    Path(name): Path<String>,
) -> Result<StatusCode, V1Error> {
    mcp::delete(&state, &name)?;
    Ok(StatusCode::NO_CONTENT)
}

/// `PUT /api/v1/projects/{id}/mcp`: `{"servers": [names]}`, or
/// `{"servers": null}` for every server.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ChoiceInput {
    servers: Option<Vec<String>>,
}

pub async fn choose(
    State(state): State<AppState>,
    Path(id): Path<String>,
    body: Result<Json<ChoiceInput>, JsonRejection>,
) -> Result<Json<Choice>, V1Error> {
    let Json(input) = body?;
    Ok(Json(
        mcp::choose(&state, &project_id(&id)?, input.servers).await?,
    ))
}

/// `GET /api/v1/projects/{id}/mcp`.
pub async fn chosen(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Json<Choice>, V1Error> {
    Ok(Json(mcp::of(&state, &project_id(&id)?).await?))
}
