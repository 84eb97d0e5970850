//! `/api/v1/projects/{id}/database`: the project's PostgreSQL database,
//! made on first use: its tables, and queries run as the project's role.

use axum::Json;
use axum::extract::rejection::JsonRejection;
use axum::extract::{Path, State};
use serde::{Deserialize, Serialize};

use super::{V1Error, project_id};
use crate::runtime::database::{QueryResult, TableInfo};
use crate::server::session::database;
use crate::server::state::AppState;

/// `GET /api/v1/projects/{id}/database/tables`.
pub async fn tables(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Json<Vec<TableInfo>>, V1Error> {
    Ok(Json(database::tables(&state, &project_id(&id)?).await?))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Query {
    sql: String,
}

/// `POST /api/v1/projects/{id}/database/query` with `{"sql": …}`.
pub async fn query(
    State(state): State<AppState>,
    Path(id): Path<String>,
    body: Result<Json<Query>, JsonRejection>,
) -> Result<Json<QueryResult>, V1Error> {
    let project = project_id(&id)?;
    let Json(Query { sql }) = body?;
    Ok(Json(database::query(&state, &project, &sql).await?))
}

#[derive(Serialize)]
pub struct Rebuilt {
    migrations: Vec<String>,
}

/// `POST /api/v1/projects/{id}/database/rebuild`: an empty database, then
/// every migration file in order; the data goes.
pub async fn rebuild(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Json<Rebuilt>, V1Error> {
    let migrations = database::rebuild(&state, &project_id(&id)?).await?;
    Ok(Json(Rebuilt { migrations }))
}
