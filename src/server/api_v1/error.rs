//! Errors of the HTTP API: a status and `{"code": ..., "message": ...}`,
//! where `code` is stable and `message` is for people.

use axum::Json;
use axum::extract::rejection::JsonRejection;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};

use crate::runtime::host::RuntimeError;
use crate::server::projects::ProjectError;
use crate::server::session::agent::ApprovalError as AgentApprovalError;
use crate::server::session::api::ApiError;
use crate::server::store::StoreError;

#[derive(Debug)]
pub struct V1Error {
    pub status: StatusCode,
    pub code: &'static str,
    pub message: String,
}

impl V1Error {
    pub fn new(status: StatusCode, code: &'static str, message: impl Into<String>) -> V1Error {
        V1Error {
            status,
            code,
            message: message.into(),
        }
    }
}

impl IntoResponse for V1Error {
    fn into_response(self) -> Response {
        let body = serde_json::json!({"code": self.code, "message": self.message});
        (self.status, Json(body)).into_response()
    }
}

impl From<ApiError> for V1Error {
    fn from(error: ApiError) -> V1Error {
        let message = error.to_string();
        let (status, code) = match error {
            ApiError::InvalidProject(_) => (StatusCode::NOT_FOUND, "project_not_found"),
            ApiError::Project(error) => return error.into(),
            ApiError::Runtime(error) => return error.into(),
            ApiError::Busy => (StatusCode::CONFLICT, "busy"),
            ApiError::EmptyMessage => (StatusCode::BAD_REQUEST, "empty_message"),
            ApiError::NotContinuable(_) => (StatusCode::CONFLICT, "not_continuable"),
            ApiError::NotRetryable(_) => (StatusCode::CONFLICT, "not_retryable"),
            ApiError::NotText(_) => (StatusCode::UNSUPPORTED_MEDIA_TYPE, "not_text"),
            ApiError::Preview(_) => (StatusCode::BAD_REQUEST, "preview"),
            ApiError::Approval(AgentApprovalError::NotFound(_)) => {
                (StatusCode::NOT_FOUND, "step_not_found")
            }
            ApiError::Approval(AgentApprovalError::NotWaiting { .. }) => {
                (StatusCode::CONFLICT, "step_not_waiting")
            }
        };
        V1Error::new(status, code, message)
    }
}

impl From<ProjectError> for V1Error {
    fn from(error: ProjectError) -> V1Error {
        let status = match error {
            ProjectError::NotFound(_) => {
                return V1Error::new(
                    StatusCode::NOT_FOUND,
                    "project_not_found",
                    error.to_string(),
                );
            }
            ProjectError::Io { .. } | ProjectError::Corrupt { .. } => {
                StatusCode::INTERNAL_SERVER_ERROR
            }
        };
        V1Error::new(status, "storage", error.to_string())
    }
}

impl From<RuntimeError> for V1Error {
    fn from(error: RuntimeError) -> V1Error {
        let (status, code) = match error {
            RuntimeError::NotFound { .. } => (StatusCode::NOT_FOUND, "file_not_found"),
            RuntimeError::InvalidPath { .. } => (StatusCode::BAD_REQUEST, "invalid_path"),
            RuntimeError::Unavailable(_) => {
                (StatusCode::SERVICE_UNAVAILABLE, "runtime_unavailable")
            }
            RuntimeError::Io { .. } | RuntimeError::InvalidCommand(_) => {
                (StatusCode::INTERNAL_SERVER_ERROR, "runtime")
            }
        };
        V1Error::new(status, code, error.to_string())
    }
}

impl From<StoreError> for V1Error {
    fn from(error: StoreError) -> V1Error {
        tracing::error!(%error, "the HTTP API could not use the store");
        V1Error::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "storage",
            error.to_string(),
        )
    }
}

impl From<JsonRejection> for V1Error {
    fn from(rejection: JsonRejection) -> V1Error {
        V1Error::new(
            StatusCode::BAD_REQUEST,
            "invalid_json",
            rejection.body_text(),
        )
    }
}

/// Any other path under `/api/v1`.
pub async fn no_route() -> V1Error {
    V1Error::new(
        StatusCode::NOT_FOUND,
        "no_route",
        "no such route in /api/v1",
    )
}
