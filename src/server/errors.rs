//! One rule for what kind of failure each server error is: the UI's
//! server functions send it as [`RivetError`], the HTTP API derives its
//! status from it (`api_v1::V1Error`).

use crate::runtime::error::{ErrorCode, RivetError};
use crate::runtime::host::RuntimeError;
use crate::runtime::runner::PreviewError;
use crate::server::projects::ProjectError;
use crate::server::session::agent::ApprovalError;
use crate::server::session::api::ApiError;

mod features;

pub fn api_code(error: &ApiError) -> ErrorCode {
    match error {
        ApiError::InvalidProject(_) => ErrorCode::NotFound,
        ApiError::Project(error) => project_code(error),
        ApiError::Runtime(error) => runtime_code(error),
        ApiError::Busy => ErrorCode::Busy,
        ApiError::EmptyMessage
        | ApiError::EmptyName
        | ApiError::NotContinuable(_)
        | ApiError::NotRetryable(_)
        | ApiError::NotText(_)
        | ApiError::InvalidBudget
        | ApiError::DraftTooLong
        | ApiError::InvalidSelection
        | ApiError::TooManyChats => ErrorCode::Invalid,
        ApiError::ChatNotFound(_) => ErrorCode::NotFound,
        ApiError::Publish(error) => features::publish_code(error),
        ApiError::Llm(_) => ErrorCode::Unavailable,
        ApiError::BudgetExceeded { .. } => ErrorCode::BudgetExceeded,
        ApiError::Preview(PreviewError::AllInUse { .. } | PreviewError::NoAddress { .. }) => {
            ErrorCode::Unavailable
        }
        ApiError::Preview(PreviewError::NotListening { .. }) => ErrorCode::Invalid,
        ApiError::Store(_) | ApiError::Settings(_) => ErrorCode::Internal,
        ApiError::Checkpoint(error) => features::checkpoint_code(error),
        ApiError::Approval(ApprovalError::NotFound(_)) => ErrorCode::NotFound,
        ApiError::Approval(ApprovalError::NotWaiting { .. }) => ErrorCode::Busy,
        ApiError::Secret(error) => features::secret_code(error),
        ApiError::Remote(error) => features::remote_code(error),
        ApiError::Sync(error) => features::sync_code(error),
        ApiError::Database(error) => features::database_code(error),
        ApiError::Mcp(error) => features::mcp_code(error),
        ApiError::Image(_) => ErrorCode::Invalid,
        ApiError::ImageNotFound(_) => ErrorCode::NotFound,
        ApiError::ImageIo(_) => ErrorCode::Internal,
    }
}

pub fn project_code(error: &ProjectError) -> ErrorCode {
    match error {
        ProjectError::NotFound(_) => ErrorCode::NotFound,
        ProjectError::Io { .. } | ProjectError::Corrupt { .. } => ErrorCode::Internal,
    }
}

pub fn runtime_code(error: &RuntimeError) -> ErrorCode {
    match error {
        RuntimeError::NotFound { .. } => ErrorCode::NotFound,
        RuntimeError::InvalidPath { .. } | RuntimeError::TooLarge { .. } => ErrorCode::Invalid,
        RuntimeError::Unavailable(_) => ErrorCode::Unavailable,
        RuntimeError::Io { .. } | RuntimeError::InvalidCommand(_) => ErrorCode::Internal,
    }
}

impl From<ApiError> for RivetError {
    fn from(error: ApiError) -> RivetError {
        let code = api_code(&error);
        if code == ErrorCode::Internal {
            tracing::error!(%error, "a server function failed");
        }
        RivetError::new(code, error.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::project::ProjectId;

    fn id() -> ProjectId {
        ProjectId::parse("p1").unwrap()
    }

    #[test]
    fn session_errors_map_to_codes() {
        let cases = [
            (ApiError::Busy, ErrorCode::Busy),
            (ApiError::EmptyMessage, ErrorCode::Invalid),
            (ApiError::EmptyName, ErrorCode::Invalid),
            (ApiError::NotContinuable("m2".into()), ErrorCode::Invalid),
            (ApiError::NotRetryable("m2".into()), ErrorCode::Invalid),
            (ApiError::NotText("a.png".into()), ErrorCode::Invalid),
            (
                ApiError::InvalidProject(ProjectId::parse("Bad!").unwrap_err()),
                ErrorCode::NotFound,
            ),
            (
                ApiError::Project(ProjectError::NotFound(id())),
                ErrorCode::NotFound,
            ),
            (
                ApiError::Preview(PreviewError::AllInUse { port: 5173, max: 2 }),
                ErrorCode::Unavailable,
            ),
            (
                ApiError::Preview(PreviewError::NotListening { port: 5173 }),
                ErrorCode::Invalid,
            ),
            (
                ApiError::Runtime(RuntimeError::Unavailable("no bwrap".into())),
                ErrorCode::Unavailable,
            ),
        ];
        for (error, code) in cases {
            assert_eq!(api_code(&error), code, "{error:?}");
        }
    }

    #[test]
    fn a_session_error_becomes_a_rivet_error_with_its_message() {
        let error = RivetError::from(ApiError::Busy);
        assert!(error.is_busy());
        assert!(
            error.message.contains("still streaming"),
            "{}",
            error.message
        );
    }

    #[test]
    fn project_storage_failures_are_internal() {
        let error = ProjectError::Io {
            path: "/x".into(),
            source: std::io::Error::other("disk"),
        };
        assert_eq!(project_code(&error), ErrorCode::Internal);
        assert_eq!(
            project_code(&ProjectError::NotFound(id())),
            ErrorCode::NotFound
        );
    }
}
