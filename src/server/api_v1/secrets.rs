//! `/api/v1/projects/{id}/secrets`: a project's app secrets, by name only.
//! `PUT …/secrets/{NAME}` takes the value as the raw body; no route ever
//! answers a value.

use axum::Json;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use serde::Serialize;

use super::{V1Error, project_id};
use crate::server::session::secrets;
use crate::server::state::AppState;

#[derive(Serialize)]
pub struct Names {
    secrets: Vec<String>,
}

/// `GET /api/v1/projects/{id}/secrets`.
pub async fn list(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Json<Names>, V1Error> {
    let secrets = secrets::names(&state, &project_id(&id)?).await?;
    Ok(Json(Names { secrets }))
}

/// `PUT /api/v1/projects/{id}/secrets/{name}` with the value as the body.
pub async fn set(
    State(state): State<AppState>,
    Path((id, name)): Path<(String, String)>,
    body: Bytes,
) -> Result<Json<Names>, V1Error> {
    let project = project_id(&id)?;
    let value = std::str::from_utf8(&body).map_err(|_| {
        V1Error::new(
            StatusCode::BAD_REQUEST,
            "invalid_secret",
            format!("the value of {name} must be UTF-8 text"),
        )
    })?;
    let secrets = secrets::set(&state, &project, &name, value).await?;
    Ok(Json(Names { secrets }))
}

/// `DELETE /api/v1/projects/{id}/secrets/{name}`.
pub async fn remove(
    State(state): State<AppState>,
    Path((id, name)): Path<(String, String)>,
) -> Result<Json<Names>, V1Error> {
    let secrets = secrets::remove(&state, &project_id(&id)?, &name).await?;
    Ok(Json(Names { secrets }))
}
