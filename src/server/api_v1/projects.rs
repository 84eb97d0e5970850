//! `/api/v1/projects`: list (and search), create (empty or from a starter
//! template), get; and `/api/v1/templates`, the templates.

use axum::Json;
use axum::extract::rejection::JsonRejection;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use serde::Deserialize;

use super::V1Error;
use crate::runtime::project::ProjectId;
use crate::runtime::templates::TemplateInfo;
use crate::server::state::AppState;
use crate::server::store::{ProjectListing, ProjectRow};

#[derive(Deserialize)]
pub struct NewProject {
    /// Required unless `template` is given (then it defaults to the
    /// template's name).
    name: Option<String>,
    /// A template's id (`GET /api/v1/templates`): the project starts with
    /// its files.
    template: Option<String>,
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
    let Json(NewProject { name, template }) = body?;
    let row = match (template.as_deref(), name.as_deref()) {
        (Some(template), name) => {
            crate::server::templates::from_template(&state, name, template).await?
        }
        (None, Some(name)) => create_empty(&state, name).await?,
        (None, None) => {
            return Err(V1Error::new(
                StatusCode::BAD_REQUEST,
                "invalid_json",
                "missing field `name` (a project without a template needs one)",
            ));
        }
    };
    Ok((StatusCode::CREATED, Json(row)))
}

/// A project with no files, named `name`.
async fn create_empty(state: &AppState, name: &str) -> Result<ProjectRow, V1Error> {
    let name = name.trim();
    if name.is_empty() {
        return Err(V1Error::new(
            StatusCode::BAD_REQUEST,
            "invalid_name",
            "a project needs a name",
        ));
    }
    Ok(crate::server::session::manage::create(state, name).await?)
}

/// The starter templates a project can be created from.
pub async fn templates() -> Json<&'static [TemplateInfo]> {
    Json(&crate::runtime::templates::ALL)
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
