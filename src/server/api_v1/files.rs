//! `/api/v1/projects/{id}/files/{path}`: read (raw bytes), write (the raw
//! body) and delete one file of the project; `/api/v1/projects/{id}/files?dir=`
//! lists one folder.

use axum::Json;
use axum::body::Bytes;
use axum::extract::rejection::{BytesRejection, QueryRejection};
use axum::extract::{Path, Query, State};
use axum::http::{StatusCode, header};
use axum::response::IntoResponse;

use super::{V1Error, project_id, project_path};
use crate::server::session::api;
use crate::server::state::AppState;

/// Which folder to list.
#[derive(Debug, serde::Deserialize)]
pub struct DirQuery {
    #[serde(default)]
    dir: String,
}

/// `{"entries": [{"path", "kind", "size", "modified"}]}` for one folder.
pub async fn list(
    State(state): State<AppState>,
    Path(id): Path<String>,
    query: Result<Query<DirQuery>, QueryRejection>,
) -> Result<Json<serde_json::Value>, V1Error> {
    let Query(query) = query?;
    let entries = api::list_dir(&state, &project_id(&id)?, &project_path(&query.dir)?).await?;
    Ok(Json(serde_json::json!({ "entries": entries })))
}

pub async fn read(
    State(state): State<AppState>,
    Path((id, path)): Path<(String, String)>,
) -> Result<impl IntoResponse, V1Error> {
    let bytes = api::read_bytes(&state, &project_id(&id)?, &project_path(&path)?).await?;
    Ok(([(header::CONTENT_TYPE, "application/octet-stream")], bytes))
}

pub async fn write(
    State(state): State<AppState>,
    Path((id, path)): Path<(String, String)>,
    body: Result<Bytes, BytesRejection>,
) -> Result<StatusCode, V1Error> {
    let body = body?;
    let (id, path) = (project_id(&id)?, project_path(&path)?);
    api::write_file(&state, &id, &path, body.to_vec()).await?;
    Ok(StatusCode::NO_CONTENT)
}

pub async fn delete(
    State(state): State<AppState>,
    Path((id, path)): Path<(String, String)>,
) -> Result<StatusCode, V1Error> {
    api::delete(&state, &project_id(&id)?, &project_path(&path)?).await?;
    Ok(StatusCode::NO_CONTENT)
}
