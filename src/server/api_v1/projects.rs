//! `/api/v1/projects`: list (and search), create, get.

use axum::Json;
use axum::extract::rejection::JsonRejection;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use serde::Deserialize;

use super::V1Error;
use crate::runtime::project::ProjectId;
use crate::server::state::AppState;
use crate::server::store::{ProjectListing, ProjectRow};

#[derive(Deserialize)]
pub struct NewProject {
    name: String,
}

#[derive(Deserialize)]
pub struct Search {
    /// Only projects whose name or messages contain this text.
    #[serde(default)]
    q: String,
}

/// Every project (or those `?q=` finds), the latest changed first, each
/// with the time of its last message.
pub async fn list(
    State(state): State<AppState>,
    Query(Search { q }): Query<Search>,
) -> Result<Json<Vec<ProjectListing>>, V1Error> {
    Ok(Json(state.store.find_projects(&q).await?))
}

pub async fn create(
    State(state): State<AppState>,
    body: Result<Json<NewProject>, JsonRejection>,
) -> Result<(StatusCode, Json<ProjectRow>), V1Error> {
    let Json(NewProject { name }) = body?;
    let name = name.trim();
    if name.is_empty() {
        return Err(V1Error::new(
            StatusCode::BAD_REQUEST,
            "invalid_name",
            "a project needs a name",
        ));
    }
    let row = crate::server::session::manage::create(&state, name).await?;
    Ok((StatusCode::CREATED, Json(row)))
}

pub async fn get(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Json<ProjectRow>, V1Error> {
    Ok(Json(project(&state, &id).await?))
}

/// The project's row.
pub async fn project(state: &AppState, id: &str) -> Result<ProjectRow, V1Error> {
    let not_found = || {
        V1Error::new(
            StatusCode::NOT_FOUND,
            "project_not_found",
            format!("no project {id}"),
        )
    };
    let id = ProjectId::parse(id).map_err(|_| not_found())?;
    state
        .store
        .project(id.as_str())
        .await?
        .ok_or_else(not_found)
}
