//! `/api/v1/projects/{id}/images`: keep an image for a message (the raw
//! body, typed by `Content-Type`), and read one back by its SHA-256. The
//! composer uploads what is pasted, dropped or picked here, then sends the
//! message with the answers' references.

use axum::Json;
use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::IntoResponse;
use serde::Serialize;

use super::{V1Error, project_id};
use crate::server::session::images;
use crate::server::state::AppState;

#[derive(Serialize)]
pub struct Kept {
    sha256: String,
    media_type: String,
    url: String,
}

pub async fn upload(
    State(state): State<AppState>,
    Path(id): Path<String>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Result<(StatusCode, Json<Kept>), V1Error> {
    let body = body?;
    let project = project_id(&id)?;
    let declared = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    let image = images::upload(&state, &project, declared, body.to_vec()).await?;
    let url = image.url(&project);
    Ok((
        StatusCode::CREATED,
        Json(Kept {
            sha256: image.sha256,
            media_type: image.media_type,
            url,
        }),
    ))
}

/// The image's bytes, typed by what they are. An image never changes under
/// its name, so it may be kept; it is only ever shown as an image.
pub async fn read(
    State(state): State<AppState>,
    Path((id, sha256)): Path<(String, String)>,
) -> Result<impl IntoResponse, V1Error> {
    let (bytes, media_type) = images::read(&state, &project_id(&id)?, &sha256).await?;
    Ok((
        [
            (header::CONTENT_TYPE, media_type),
            (
                header::CACHE_CONTROL,
                "private, max-age=31536000, immutable",
            ),
            (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
            (
                header::CONTENT_SECURITY_POLICY,
                "default-src 'none'; sandbox",
            ),
        ],
        bytes,
    ))
}
