//! `/api/v1/projects/{id}/git/…`: the project's remote (set, read without
//! its token), pushing its checkpoints there, pulling from it, and how far
//! apart the two are.

use axum::Json;
use axum::extract::rejection::JsonRejection;
use axum::extract::{Path, State};

use super::{V1Error, project_id};
use crate::server::remote::{RemoteInput, RemoteView};
use crate::server::session::remote::{self, GitStatus, Pulled, Pushed};
use crate::server::state::AppState;

pub async fn set_remote(
    State(state): State<AppState>,
    Path(id): Path<String>,
    body: Result<Json<RemoteInput>, JsonRejection>,
) -> Result<Json<RemoteView>, V1Error> {
    let Json(input) = body?;
    Ok(Json(
        remote::set_remote(&state, &project_id(&id)?, input).await?,
    ))
}

pub async fn get_remote(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Json<RemoteView>, V1Error> {
    Ok(Json(remote::remote(&state, &project_id(&id)?).await?))
}

pub async fn push(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Json<Pushed>, V1Error> {
    Ok(Json(remote::push(&state, &project_id(&id)?).await?))
}

pub async fn pull(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Json<Pulled>, V1Error> {
    Ok(Json(remote::pull(&state, &project_id(&id)?).await?))
}

pub async fn status(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Json<GitStatus>, V1Error> {
    Ok(Json(remote::status(&state, &project_id(&id)?).await?))
}
