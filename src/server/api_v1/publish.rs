//! `/api/v1/projects/{id}/publish`: publish the project as a static site
//! (`POST`), its versions and the live one (`GET`), roll back (`POST
//! …/publish/rollback`) and unpublish (`DELETE`).

use axum::Json;
use axum::extract::rejection::JsonRejection;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use serde::Deserialize;

use super::{V1Error, project_id};
use crate::runtime::ship::Pushed;
use crate::server::session::publish::{self, PublishInput, Published, SiteView};
use crate::server::state::AppState;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RollbackInput {
    version: u32,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BranchInput {
    #[serde(default)]
    branch: Option<String>,
}

pub async fn publish(
    State(state): State<AppState>,
    Path(id): Path<String>,
    body: axum::body::Bytes,
) -> Result<(StatusCode, Json<Published>), V1Error> {
    // No body at all is `{}`.
    let input = if body.iter().all(u8::is_ascii_whitespace) {
        PublishInput::default()
    } else {
        serde_json::from_slice(&body)
            .map_err(|e| V1Error::new(StatusCode::BAD_REQUEST, "invalid_json", e.to_string()))?
    };
    let published = publish::publish(&state, &project_id(&id)?, input).await?;
    Ok((StatusCode::CREATED, Json(published)))
}

pub async fn site(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Json<SiteView>, V1Error> {
    Ok(Json(publish::site(&state, &project_id(&id)?).await?))
}

pub async fn rollback(
    State(state): State<AppState>,
    Path(id): Path<String>,
    body: Result<Json<RollbackInput>, JsonRejection>,
) -> Result<Json<SiteView>, V1Error> {
    let Json(input) = body?;
    Ok(Json(
        publish::rollback(&state, &project_id(&id)?, input.version).await?,
    ))
}

pub async fn unpublish(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Json<SiteView>, V1Error> {
    Ok(Json(publish::unpublish(&state, &project_id(&id)?).await?))
}

pub async fn to_branch(
    State(state): State<AppState>,
    Path(id): Path<String>,
    body: axum::body::Bytes,
) -> Result<Json<Pushed>, V1Error> {
    let input: BranchInput = optional_json(&body)?;
    let project = project_id(&id)?;
    Ok(Json(
        publish::publish_to_branch(&state, &project, input.branch).await?,
    ))
}

/// A JSON body that may be left out (`{}` then).
fn optional_json<T: Default + serde::de::DeserializeOwned>(body: &[u8]) -> Result<T, V1Error> {
    if body.iter().all(u8::is_ascii_whitespace) {
        return Ok(T::default());
    }
    serde_json::from_slice(body)
        .map_err(|e| V1Error::new(StatusCode::BAD_REQUEST, "invalid_json", e.to_string()))
}
