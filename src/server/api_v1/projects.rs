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
    // Projects made by the IDE's "new project" join the store on first sight.
    state.store.import_projects(&state.projects).await?;
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
    let meta = state.projects.create(name)?;
    let row = ProjectRow::from_meta(&meta, state.config.runtime.default);
    state.store.ensure_project(&row).await?;
    Ok((StatusCode::CREATED, Json(row)))
}

pub async fn get(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Json<ProjectRow>, V1Error> {
    Ok(Json(project(&state, &id).await?))
}

/// The project's row, recording it first if only its directory knew it.
pub async fn project(state: &AppState, id: &str) -> Result<ProjectRow, V1Error> {
    let not_found = || {
        V1Error::new(
            StatusCode::NOT_FOUND,
            "project_not_found",
            format!("no project {id}"),
        )
    };
    let id = ProjectId::parse(id).map_err(|_| not_found())?;
    let meta = state.projects.get(&id)?;
    let row = ProjectRow::from_meta(&meta, state.config.runtime.default);
    state.store.ensure_project(&row).await?;
    state.store.project(&row.id).await?.ok_or_else(not_found)
}
