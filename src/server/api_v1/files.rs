//! `/api/v1/projects/{id}/files/{path}`: read (raw bytes), write (the raw
//! body) and delete one file of the project.

use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{Path, State};
use axum::http::{StatusCode, header};
use axum::response::IntoResponse;

use super::V1Error;
use crate::runtime::session::SessionEvent;
use crate::server::session::api;
use crate::server::state::AppState;

pub async fn read(
    State(state): State<AppState>,
    Path((id, path)): Path<(String, String)>,
) -> Result<impl IntoResponse, V1Error> {
    let handle = api::open_in(&state, &id).await?;
    let bytes = handle.runtime.read_file(&path).await?;
    Ok(([(header::CONTENT_TYPE, "application/octet-stream")], bytes))
}

pub async fn write(
    State(state): State<AppState>,
    Path((id, path)): Path<(String, String)>,
    body: Result<Bytes, BytesRejection>,
) -> Result<StatusCode, V1Error> {
    let body = body?;
    let handle = api::open_in(&state, &id).await?;
    match String::from_utf8(body.to_vec()) {
        // Text goes the editor's way: the model hears of the change.
        Ok(text) => api::write_file_in(&handle, &path, text).await?,
        Err(_) => {
            handle.runtime.write_file(&path, &body).await?;
            handle.publish(SessionEvent::FileWritten {
                path,
                by_model: false,
            });
        }
    }
    Ok(StatusCode::NO_CONTENT)
}

pub async fn delete(
    State(state): State<AppState>,
    Path((id, path)): Path<(String, String)>,
) -> Result<StatusCode, V1Error> {
    let handle = api::open_in(&state, &id).await?;
    api::delete_in(&handle, &path).await?;
    Ok(StatusCode::NO_CONTENT)
}
