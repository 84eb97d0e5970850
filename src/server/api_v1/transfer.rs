//! Import and export: `GET /api/v1/projects/{id}/export.zip`,
//! `GET /api/v1/projects/{id}/conversation.json`, and `POST
//! /api/v1/import/{zip,files,git,conversation}`, each answering 201 with the
//! new project. Each route has its own body limit.

use axum::Json;
use axum::body::{Body, Bytes};
use axum::extract::rejection::{BytesRejection, JsonRejection};
use axum::extract::{DefaultBodyLimit, Multipart, Path, Query, State};
use axum::http::{StatusCode, header};
use axum::response::IntoResponse;
use axum::routing::MethodRouter;
use serde::Deserialize;
use tokio_util::io::ReaderStream;

use super::V1Error;
use crate::server::state::AppState;
use crate::server::store::ProjectRow;
use crate::server::transfer::{self, TransferError};

const MIB: usize = 1024 * 1024;
/// The largest zip `POST /api/v1/import/zip` accepts.
pub const ZIP_BODY_LIMIT: usize = 200 * MIB;
/// The largest upload `POST /api/v1/import/files` accepts.
pub const FILES_BODY_LIMIT: usize = 500 * MIB;
/// The largest conversation JSON `POST /api/v1/import/conversation` accepts.
pub const CONVERSATION_BODY_LIMIT: usize = 700 * MIB;
/// The largest body of `POST /api/v1/import/git`.
pub const GIT_BODY_LIMIT: usize = 16 * 1024;

/// The routes of this module, to merge into the API.
pub fn routes() -> axum::Router<AppState> {
    let limited =
        |route: MethodRouter<AppState>, limit: usize| route.layer(DefaultBodyLimit::max(limit));
    axum::Router::new()
        .route(
            "/api/v1/projects/{id}/export.zip",
            axum::routing::get(export_zip),
        )
        .route(
            "/api/v1/projects/{id}/conversation.json",
            axum::routing::get(export_conversation),
        )
        .route(
            "/api/v1/import/zip",
            limited(axum::routing::post(import_zip), ZIP_BODY_LIMIT),
        )
        .route(
            "/api/v1/import/files",
            limited(axum::routing::post(import_files), FILES_BODY_LIMIT),
        )
        .route(
            "/api/v1/import/git",
            limited(axum::routing::post(import_git), GIT_BODY_LIMIT),
        )
        .route(
            "/api/v1/import/conversation",
            limited(
                axum::routing::post(import_conversation),
                CONVERSATION_BODY_LIMIT,
            ),
        )
}

impl From<TransferError> for V1Error {
    fn from(error: TransferError) -> V1Error {
        let message = error.to_string();
        let (status, code) = match error {
            TransferError::UnsafePath { .. } => (StatusCode::BAD_REQUEST, "unsafe_path"),
            TransferError::Symlink { .. } => (StatusCode::BAD_REQUEST, "symlink"),
            TransferError::EntryTooLarge { .. } => {
                (StatusCode::PAYLOAD_TOO_LARGE, "entry_too_large")
            }
            TransferError::TotalTooLarge { .. } => {
                (StatusCode::PAYLOAD_TOO_LARGE, "import_too_large")
            }
            TransferError::TooManyEntries { .. } => {
                (StatusCode::PAYLOAD_TOO_LARGE, "too_many_entries")
            }
            TransferError::ExportTooManyEntries { .. } | TransferError::ExportTooDeep { .. } => {
                (StatusCode::UNPROCESSABLE_ENTITY, "export_too_large")
            }
            TransferError::Archive(_) => (StatusCode::BAD_REQUEST, "invalid_zip"),
            TransferError::Conversation(_) => (StatusCode::BAD_REQUEST, "invalid_conversation"),
            TransferError::GitUrl { .. } => (StatusCode::BAD_REQUEST, "git_url_refused"),
            TransferError::Clone(_) => (StatusCode::BAD_GATEWAY, "git_clone_failed"),
            TransferError::EmptyName => (StatusCode::BAD_REQUEST, "invalid_name"),
            TransferError::UnknownTemplate(_) => (StatusCode::BAD_REQUEST, "unknown_template"),
            TransferError::Io { .. } => (StatusCode::INTERNAL_SERVER_ERROR, "storage"),
            TransferError::Api(error) => return error.into(),
            TransferError::Project(error) => return error.into(),
            TransferError::Runtime(error) => return error.into(),
            TransferError::Store(error) => return error.into(),
            TransferError::Database(error) => {
                return crate::server::session::api::ApiError::from(error).into();
            }
        };
        V1Error::new(status, code, message)
    }
}

fn body_error(rejection: BytesRejection) -> V1Error {
    let status = rejection.status();
    let code = if status == StatusCode::PAYLOAD_TOO_LARGE {
        "body_too_large"
    } else {
        "invalid_body"
    };
    V1Error::new(status, code, rejection.body_text())
}

/// A name safe in a `Content-Disposition` header.
fn file_name(name: &str, extension: &str) -> String {
    let clean: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "-_.".contains(c) {
                c
            } else {
                '-'
            }
        })
        .collect();
    let clean = clean.trim_matches(['-', '.']);
    let clean = if clean.is_empty() { "project" } else { clean };
    format!("attachment; filename=\"{clean}.{extension}\"")
}

/// The zip is written to a temporary file first, then streamed from it in
/// pieces of [`transfer::archive::COPY_BUFFER`].
/// `?data=1`: the database's dump too.
#[derive(Deserialize)]
pub struct ExportOptions {
    #[serde(default)]
    data: Option<String>,
}

pub async fn export_zip(
    State(state): State<AppState>,
    Path(id): Path<String>,
    Query(options): Query<ExportOptions>,
) -> Result<impl IntoResponse, V1Error> {
    let with_data = matches!(options.data.as_deref(), Some("1" | "true"));
    let export = transfer::export_zip(&state, &super::project_id(&id)?, with_data).await?;
    let body = Body::from_stream(ReaderStream::with_capacity(
        export.file,
        transfer::archive::COPY_BUFFER,
    ));
    Ok((
        [
            (header::CONTENT_TYPE, "application/zip".to_owned()),
            (header::CONTENT_DISPOSITION, file_name(&export.name, "zip")),
            (header::CONTENT_LENGTH, export.len.to_string()),
        ],
        body,
    ))
}

pub async fn export_conversation(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<impl IntoResponse, V1Error> {
    let export = transfer::export_conversation(&state, &super::project_id(&id)?).await?;
    let body = Body::from_stream(ReaderStream::with_capacity(
        export.file,
        transfer::archive::COPY_BUFFER,
    ));
    Ok((
        [
            (header::CONTENT_TYPE, "application/json".to_owned()),
            (
                header::CONTENT_DISPOSITION,
                file_name(&export.name, "conversation.json"),
            ),
            (header::CONTENT_LENGTH, export.len.to_string()),
        ],
        body,
    ))
}

#[derive(Deserialize, Default)]
pub struct NameQuery {
    name: Option<String>,
}

type Created = (StatusCode, Json<ProjectRow>);

pub async fn import_zip(
    State(state): State<AppState>,
    Query(query): Query<NameQuery>,
    body: Result<Bytes, BytesRejection>,
) -> Result<Created, V1Error> {
    let body = body.map_err(body_error)?;
    let row = transfer::import_zip(&state, query.name.as_deref(), body).await?;
    Ok((StatusCode::CREATED, Json(row)))
}

pub async fn import_conversation(
    State(state): State<AppState>,
    Query(query): Query<NameQuery>,
    body: Result<Bytes, BytesRejection>,
) -> Result<Created, V1Error> {
    let body = body.map_err(body_error)?;
    let row = transfer::import_conversation(&state, query.name.as_deref(), body).await?;
    Ok((StatusCode::CREATED, Json(row)))
}

#[derive(Deserialize)]
pub struct GitImport {
    git_url: String,
    #[serde(default)]
    name: Option<String>,
}

pub async fn import_git(
    State(state): State<AppState>,
    body: Result<Json<GitImport>, JsonRejection>,
) -> Result<Created, V1Error> {
    let Json(GitImport { git_url, name }) = body.map_err(|rejection| {
        if rejection.status() == StatusCode::PAYLOAD_TOO_LARGE {
            V1Error::new(
                StatusCode::PAYLOAD_TOO_LARGE,
                "body_too_large",
                rejection.body_text(),
            )
        } else {
            rejection.into()
        }
    })?;
    let row = transfer::import_git(&state, name.as_deref(), &git_url).await?;
    Ok((StatusCode::CREATED, Json(row)))
}

fn multipart_error(error: axum::extract::multipart::MultipartError) -> V1Error {
    let status = error.status();
    let code = if status == StatusCode::PAYLOAD_TOO_LARGE {
        "body_too_large"
    } else {
        "invalid_body"
    };
    V1Error::new(status, code, error.body_text())
}

/// A folder uploaded as `multipart/form-data`: each part is one file whose
/// file name is its path in the project.
pub async fn import_files(
    State(state): State<AppState>,
    Query(query): Query<NameQuery>,
    multipart: Result<Multipart, axum::extract::multipart::MultipartRejection>,
) -> Result<Created, V1Error> {
    let mut multipart = multipart.map_err(|rejection| {
        V1Error::new(
            StatusCode::BAD_REQUEST,
            "invalid_body",
            rejection.body_text(),
        )
    })?;
    let mut staged = transfer::staging(&state)?;
    while let Some(field) = multipart.next_field().await.map_err(multipart_error)? {
        let Some(path) = field.file_name().map(str::to_owned) else {
            // Plain form fields carry no file.
            continue;
        };
        let bytes = field.bytes().await.map_err(multipart_error)?;
        staged.add_file(&path, &mut bytes.as_ref(), false)?;
    }
    let name = transfer::project_name(query.name.as_deref(), "imported folder")?;
    let row = transfer::finish(&state, &name, staged).await?;
    Ok((StatusCode::CREATED, Json(row)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn download_names_keep_only_safe_characters() {
        assert_eq!(
            file_name("my \"app\"\r\n", "zip"),
            "attachment; filename=\"my--app.zip\""
        );
        assert_eq!(file_name("", "zip"), "attachment; filename=\"project.zip\"");
    }
}
