//! `/api/v1/projects/{id}/checkpoints`, `/restore`, `/redo` and `/fork`:
//! list the checkpoints, go back to an answer's checkpoint, undo that, or
//! start a new project from it.

use axum::Json;
use axum::extract::rejection::JsonRejection;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use serde::Deserialize;

use super::{V1Error, project_id};
use crate::server::checkpoint::CheckpointError;
use crate::server::session::api;
use crate::server::session::checkpoints::{self, Restored};
use crate::server::state::AppState;
use crate::server::store::{CheckpointRow, ProjectRow};

#[derive(Deserialize)]
pub struct MessageRef {
    message_id: String,
}

impl From<CheckpointError> for V1Error {
    fn from(error: CheckpointError) -> V1Error {
        let message = error.to_string();
        let (status, code) = match error {
            CheckpointError::Store(error) => return error.into(),
            CheckpointError::Repo { .. } => {
                tracing::error!(%message, "a checkpoint could not be used");
                (StatusCode::INTERNAL_SERVER_ERROR, "checkpoint_repo")
            }
            CheckpointError::Unavailable => {
                (StatusCode::SERVICE_UNAVAILABLE, "checkpoints_unavailable")
            }
            CheckpointError::MessageNotFound(_) => (StatusCode::NOT_FOUND, "message_not_found"),
            CheckpointError::NotAnAnswer(_) => (StatusCode::BAD_REQUEST, "not_an_answer"),
            CheckpointError::Undone(_) => (StatusCode::CONFLICT, "message_undone"),
            CheckpointError::NoCheckpoint(_) => (StatusCode::NOT_FOUND, "no_checkpoint"),
            CheckpointError::NothingToRedo(_) => (StatusCode::CONFLICT, "nothing_to_redo"),
        };
        V1Error::new(status, code, message)
    }
}

pub async fn restore(
    State(state): State<AppState>,
    Path(id): Path<String>,
    body: Result<Json<MessageRef>, JsonRejection>,
) -> Result<Json<Restored>, V1Error> {
    let Json(MessageRef { message_id }) = body?;
    Ok(Json(
        checkpoints::restore(&state, &project_id(&id)?, &message_id).await?,
    ))
}

pub async fn redo(
    State(state): State<AppState>,
    Path(id): Path<String>,
    body: Result<Json<MessageRef>, JsonRejection>,
) -> Result<Json<Restored>, V1Error> {
    let Json(MessageRef { message_id }) = body?;
    Ok(Json(
        checkpoints::redo(&state, &project_id(&id)?, &message_id).await?,
    ))
}

pub async fn fork(
    State(state): State<AppState>,
    Path(id): Path<String>,
    body: Result<Json<MessageRef>, JsonRejection>,
) -> Result<(StatusCode, Json<ProjectRow>), V1Error> {
    let Json(MessageRef { message_id }) = body?;
    let row = checkpoints::fork(&state, &project_id(&id)?, &message_id).await?;
    Ok((StatusCode::CREATED, Json(row)))
}

/// The project's checkpoints, oldest first.
pub async fn list(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Json<Vec<CheckpointRow>>, V1Error> {
    Ok(Json(api::checkpoints(&state, &project_id(&id)?).await?))
}
