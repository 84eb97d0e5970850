//! Errors of the HTTP API: a status and `{"code": ..., "message": ...}`,
//! where `code` is stable and `message` is for people.

use crate::server::checkpoint::git::sync::SyncError;
use crate::server::publish::PublishError;
use crate::server::remote::RemoteError;
use axum::Json;
use axum::extract::rejection::{BytesRejection, JsonRejection, QueryRejection};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};

use crate::runtime::database::DatabaseError;
use crate::runtime::error::ErrorCode;
use crate::runtime::host::RuntimeError;
use crate::server::errors;
use crate::server::mcp::McpSettingsError;
use crate::server::projects::ProjectError;
use crate::server::secrets::SecretError;
use crate::server::session::agent::ApprovalError as AgentApprovalError;
use crate::server::session::api::ApiError;
use crate::server::store::StoreError;

#[derive(Debug)]
pub struct V1Error {
    pub status: StatusCode,
    pub code: &'static str,
    pub message: String,
    /// The files an error is about (a merge's conflicts), when there are.
    pub paths: Vec<String>,
}

impl V1Error {
    pub fn new(status: StatusCode, code: &'static str, message: impl Into<String>) -> V1Error {
        V1Error {
            status,
            code,
            message: message.into(),
            paths: Vec::new(),
        }
    }
}

impl IntoResponse for V1Error {
    fn into_response(self) -> Response {
        let mut body = serde_json::json!({"code": self.code, "message": self.message});
        if !self.paths.is_empty() {
            body["paths"] = serde_json::json!(self.paths);
        }
        (self.status, Json(body)).into_response()
    }
}

impl V1Error {
    /// An error whose status follows its kind (`crate::server::errors`),
    /// with `code` the stable, more precise name programs match on.
    fn of(kind: ErrorCode, code: &'static str, message: String) -> V1Error {
        let status =
            StatusCode::from_u16(kind.http_status()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        V1Error::new(status, code, message)
    }
}

impl From<ApiError> for V1Error {
    fn from(error: ApiError) -> V1Error {
        let kind = errors::api_code(&error);
        let paths = match &error {
            ApiError::Sync(SyncError::Conflict(paths)) => paths.clone(),
            _ => Vec::new(),
        };
        let code = match error {
            ApiError::Project(error) => return error.into(),
            ApiError::Runtime(error) => return error.into(),
            ApiError::Store(error) => return error.into(),
            ApiError::Checkpoint(error) => return error.into(),
            ApiError::InvalidProject(_) => "project_not_found",
            ApiError::Busy => "busy",
            ApiError::EmptyMessage => "empty_message",
            ApiError::EmptyName => "invalid_name",
            ApiError::NotContinuable(_) => "not_continuable",
            ApiError::NotRetryable(_) => "not_retryable",
            ApiError::NotText(_) => "not_text",
            ApiError::Preview(_) => "preview",
            ApiError::Settings(_) => "settings",
            ApiError::BudgetExceeded { .. } => "budget_exceeded",
            ApiError::InvalidBudget => "invalid_budget",
            ApiError::DraftTooLong => "draft_too_long",
            ApiError::InvalidSelection => "invalid_selection",
            ApiError::Llm(_) => "llm",
            ApiError::ChatNotFound(_) => "chat_not_found",
            ApiError::Remote(RemoteError::NotSet) => "remote_not_set",
            ApiError::Remote(RemoteError::Io(_)) => "storage",
            ApiError::Remote(_) => "invalid_remote",
            ApiError::Sync(SyncError::PullFirst) => "pull_first",
            ApiError::Sync(SyncError::Conflict(_)) => "merge_conflict",
            ApiError::Sync(SyncError::NoBranch(_)) => "remote_branch_missing",
            ApiError::Sync(SyncError::Refused(_)) => "remote_refused",
            ApiError::Sync(SyncError::Unreachable(_)) => "remote_unreachable",
            ApiError::Sync(SyncError::Failed(_)) => "remote_failed",
            ApiError::Sync(SyncError::NothingToPush) => "nothing_to_push",
            ApiError::Sync(SyncError::Git(_)) => "git",
            ApiError::TooManyChats => "too_many_chats",
            ApiError::Database(DatabaseError::Unavailable(_)) => "database_unavailable",
            ApiError::Database(DatabaseError::Sql(_)) => "sql_error",
            ApiError::Database(DatabaseError::Changed { .. }) => "migration_changed",
            ApiError::Publish(PublishError::NothingToPublish(_)) => "nothing_to_publish",
            ApiError::Publish(PublishError::BuildFailed(_)) => "build_failed",
            ApiError::Publish(PublishError::TooLarge(_)) => "site_too_large",
            ApiError::Publish(PublishError::NeedsTab(_)) => "needs_browser_tab",
            ApiError::Publish(PublishError::NoBuild(_)) => "build_not_found",
            ApiError::Publish(PublishError::NoVersion(_)) => "version_not_found",
            ApiError::Publish(PublishError::NotPublished) => "not_published",
            ApiError::Publish(PublishError::Io(_) | PublishError::Corrupt { .. }) => "storage",
            ApiError::Secret(SecretError::NotFound(_)) => "secret_not_found",
            ApiError::Secret(SecretError::Io(_)) => "storage",
            ApiError::Secret(_) => "invalid_secret",
            ApiError::Approval(AgentApprovalError::NotFound(_)) => "step_not_found",
            ApiError::Approval(AgentApprovalError::NotWaiting { .. }) => "step_not_waiting",
            ApiError::Mcp(McpSettingsError::NotFound(_)) => "mcp_server_not_found",
            ApiError::Mcp(McpSettingsError::FromConfig(_)) => "mcp_server_configured",
            ApiError::Mcp(McpSettingsError::UnknownServers(_)) => "unknown_mcp_server",
            ApiError::Mcp(McpSettingsError::Spec(_)) => "invalid_mcp_server",
            ApiError::Mcp(McpSettingsError::Io(_)) => "storage",
            ApiError::Image(_) => "invalid_image",
            ApiError::ImageNotFound(_) => "image_not_found",
            ApiError::ImageIo(_) => "storage",
        };
        let mut v1 = V1Error::of(kind, code, error.to_string());
        v1.paths = paths;
        v1
    }
}

impl From<ProjectError> for V1Error {
    fn from(error: ProjectError) -> V1Error {
        let code = match error {
            ProjectError::NotFound(_) => "project_not_found",
            ProjectError::Io { .. } | ProjectError::Corrupt { .. } => "storage",
        };
        V1Error::of(errors::project_code(&error), code, error.to_string())
    }
}

impl From<RuntimeError> for V1Error {
    fn from(error: RuntimeError) -> V1Error {
        let code = match error {
            RuntimeError::NotFound { .. } => "file_not_found",
            RuntimeError::InvalidPath { .. } => "invalid_path",
            RuntimeError::Unavailable(_) => "runtime_unavailable",
            RuntimeError::TooLarge { .. } => "listing_too_large",
            RuntimeError::Io { .. } | RuntimeError::InvalidCommand(_) => "runtime",
        };
        V1Error::of(errors::runtime_code(&error), code, error.to_string())
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
        if rejection.status() == StatusCode::PAYLOAD_TOO_LARGE {
            return too_large();
        }
        V1Error::new(
            StatusCode::BAD_REQUEST,
            "invalid_json",
            rejection.body_text(),
        )
    }
}

impl From<QueryRejection> for V1Error {
    fn from(rejection: QueryRejection) -> V1Error {
        V1Error::new(
            StatusCode::BAD_REQUEST,
            "invalid_query",
            rejection.body_text(),
        )
    }
}

impl From<BytesRejection> for V1Error {
    fn from(rejection: BytesRejection) -> V1Error {
        if rejection.status() == StatusCode::PAYLOAD_TOO_LARGE {
            return too_large();
        }
        V1Error::new(rejection.status(), "invalid_body", rejection.body_text())
    }
}

/// A body over [`super::BODY_LIMIT`].
fn too_large() -> V1Error {
    V1Error::new(
        StatusCode::PAYLOAD_TOO_LARGE,
        "body_too_large",
        format!(
            "the request body is larger than {} MiB, the limit of /api/v1 requests; nothing was changed",
            super::BODY_LIMIT / (1024 * 1024)
        ),
    )
}

/// Any other path under `/api/v1`.
pub async fn no_route() -> V1Error {
    V1Error::new(
        StatusCode::NOT_FOUND,
        "no_route",
        "no such route in /api/v1",
    )
}
