//! The codes of the errors of the server functions that are not plain
//! session calls (the fix loop, page reports, the runtime choice, the
//! browser runtime and the settings), and of checkpoints, whose errors
//! reach the browser inside an `ApiError`.

use super::{api_code, project_code, runtime_code};
use crate::runtime::database::DatabaseError;
use crate::runtime::error::{ErrorCode, RivetError};
use crate::server::checkpoint::CheckpointError;
use crate::server::checkpoint::git::sync::SyncError;
use crate::server::mcp::McpSettingsError;
use crate::server::publish::PublishError;
use crate::server::remote::RemoteError;
use crate::server::secrets::SecretError;
use crate::server::session::browser::BrowserError;
use crate::server::session::fix::TryAgainError;
use crate::server::session::page_report::ReportError;
use crate::server::session::runtime_choice::RuntimeChoiceError;

pub fn try_again_code(error: &TryAgainError) -> ErrorCode {
    match error {
        TryAgainError::NotAStop(_) => ErrorCode::Invalid,
        TryAgainError::Busy => ErrorCode::Busy,
        TryAgainError::Project(error) => api_code(error),
    }
}

pub fn report_code(error: &ReportError) -> ErrorCode {
    match error {
        ReportError::UnknownKind(_) | ReportError::Empty => ErrorCode::Invalid,
        ReportError::Project(error) => api_code(error),
    }
}

pub fn choice_code(error: &RuntimeChoiceError) -> ErrorCode {
    match error {
        RuntimeChoiceError::Project(error) => project_code(error),
        RuntimeChoiceError::Store(_) => ErrorCode::Internal,
        RuntimeChoiceError::Busy => ErrorCode::Busy,
    }
}

pub fn browser_code(error: &BrowserError) -> ErrorCode {
    match error {
        BrowserError::Choice(error) => choice_code(error),
        BrowserError::Runtime(error) => runtime_code(error),
        BrowserError::NotBrowserProject | BrowserError::Refused(_) => ErrorCode::Invalid,
    }
}

pub fn database_code(error: &DatabaseError) -> ErrorCode {
    match error {
        DatabaseError::Unavailable(_) => ErrorCode::Unavailable,
        DatabaseError::Sql(_) | DatabaseError::Changed { .. } => ErrorCode::Invalid,
    }
}

pub fn secret_code(error: &SecretError) -> ErrorCode {
    match error {
        SecretError::NotFound(_) => ErrorCode::NotFound,
        SecretError::Io(_) => ErrorCode::Internal,
        SecretError::InvalidName(_)
        | SecretError::Reserved(_)
        | SecretError::InvalidValue(_)
        | SecretError::TooMany
        | SecretError::TooLarge => ErrorCode::Invalid,
    }
}

pub fn remote_code(error: &RemoteError) -> ErrorCode {
    match error {
        RemoteError::InvalidUrl(_)
        | RemoteError::InvalidBranch(_)
        | RemoteError::InvalidField(_) => ErrorCode::Invalid,
        RemoteError::NotSet => ErrorCode::NotFound,
        RemoteError::Io(_) => ErrorCode::Internal,
    }
}

pub fn publish_code(error: &PublishError) -> ErrorCode {
    match error {
        PublishError::NothingToPublish(_)
        | PublishError::BuildFailed(_)
        | PublishError::TooLarge(_) => ErrorCode::Invalid,
        PublishError::NeedsTab(_) => ErrorCode::Unavailable,
        PublishError::NoBuild(_) => ErrorCode::NotFound,
        PublishError::NoVersion(_) | PublishError::NotPublished => ErrorCode::NotFound,
        PublishError::Io(_) | PublishError::Corrupt { .. } => ErrorCode::Internal,
    }
}

pub fn sync_code(error: &SyncError) -> ErrorCode {
    match error {
        SyncError::PullFirst | SyncError::Conflict(_) => ErrorCode::Busy,
        SyncError::NoBranch(_) => ErrorCode::NotFound,
        SyncError::Refused(_) | SyncError::NothingToPush => ErrorCode::Invalid,
        SyncError::Unreachable(_) | SyncError::Failed(_) => ErrorCode::Unavailable,
        SyncError::Git(_) => ErrorCode::Internal,
    }
}

pub fn checkpoint_code(error: &CheckpointError) -> ErrorCode {
    match error {
        CheckpointError::Store(_) | CheckpointError::Repo { .. } => ErrorCode::Internal,
        CheckpointError::Unavailable => ErrorCode::Unavailable,
        CheckpointError::MessageNotFound(_) | CheckpointError::NoCheckpoint(_) => {
            ErrorCode::NotFound
        }
        CheckpointError::NotAnAnswer(_)
        | CheckpointError::Undone(_)
        | CheckpointError::NothingToRedo(_) => ErrorCode::Invalid,
    }
}

/// `error` as the browser sees it; internal failures are logged here,
/// since the message the browser gets is all anyone sees of them.
pub fn coded(code: ErrorCode, error: &dyn std::error::Error) -> RivetError {
    if code == ErrorCode::Internal {
        tracing::error!(%error, "a server function failed");
    }
    RivetError::new(code, error.to_string())
}

impl From<TryAgainError> for RivetError {
    fn from(error: TryAgainError) -> RivetError {
        coded(try_again_code(&error), &error)
    }
}

impl From<ReportError> for RivetError {
    fn from(error: ReportError) -> RivetError {
        coded(report_code(&error), &error)
    }
}

impl From<RuntimeChoiceError> for RivetError {
    fn from(error: RuntimeChoiceError) -> RivetError {
        coded(choice_code(&error), &error)
    }
}

impl From<BrowserError> for RivetError {
    fn from(error: BrowserError) -> RivetError {
        coded(browser_code(&error), &error)
    }
}

/// The settings file could not be read or written.
impl From<crate::server::llm::settings_file::SettingsFileError> for RivetError {
    fn from(error: crate::server::llm::settings_file::SettingsFileError) -> RivetError {
        coded(ErrorCode::Internal, &error)
    }
}

/// The search for local model servers could not start.
impl From<crate::server::llm::local_probe::ProbeError> for RivetError {
    fn from(error: crate::server::llm::local_probe::ProbeError) -> RivetError {
        coded(ErrorCode::Internal, &error)
    }
}

pub fn mcp_code(error: &McpSettingsError) -> ErrorCode {
    match error {
        McpSettingsError::NotFound(_) => ErrorCode::NotFound,
        McpSettingsError::Io(_) => ErrorCode::Internal,
        McpSettingsError::Spec(_)
        | McpSettingsError::FromConfig(_)
        | McpSettingsError::UnknownServers(_) => ErrorCode::Invalid,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server::session::api::ApiError;

    #[test]
    fn fix_and_page_report_errors_map_to_codes() {
        assert_eq!(
            try_again_code(&TryAgainError::NotAStop(7)),
            ErrorCode::Invalid
        );
        assert_eq!(try_again_code(&TryAgainError::Busy), ErrorCode::Busy);
        assert_eq!(
            try_again_code(&TryAgainError::Project(ApiError::Busy)),
            ErrorCode::Busy
        );
        assert_eq!(
            report_code(&ReportError::UnknownKind("warning".into())),
            ErrorCode::Invalid
        );
        assert_eq!(report_code(&ReportError::Empty), ErrorCode::Invalid);
    }

    #[test]
    fn runtime_choice_and_browser_errors_map_to_codes() {
        assert_eq!(choice_code(&RuntimeChoiceError::Busy), ErrorCode::Busy);
        assert_eq!(
            browser_code(&BrowserError::NotBrowserProject),
            ErrorCode::Invalid
        );
        assert_eq!(
            browser_code(&BrowserError::Refused("message_added".into())),
            ErrorCode::Invalid
        );
        assert_eq!(
            browser_code(&BrowserError::Choice(RuntimeChoiceError::Busy)),
            ErrorCode::Busy
        );
    }

    #[test]
    fn checkpoint_errors_map_to_codes() {
        let cases = [
            (CheckpointError::Unavailable, ErrorCode::Unavailable),
            (
                CheckpointError::MessageNotFound("m9".into()),
                ErrorCode::NotFound,
            ),
            (
                CheckpointError::NoCheckpoint("m2".into()),
                ErrorCode::NotFound,
            ),
            (
                CheckpointError::NotAnAnswer("m1".into()),
                ErrorCode::Invalid,
            ),
            (CheckpointError::Undone("m2".into()), ErrorCode::Invalid),
            (
                CheckpointError::NothingToRedo("m2".into()),
                ErrorCode::Invalid,
            ),
        ];
        for (error, code) in cases {
            assert_eq!(checkpoint_code(&error), code, "{error:?}");
        }
    }

    #[test]
    fn a_checkpoint_error_reaches_the_browser_with_its_code_and_message() {
        let error = RivetError::from(ApiError::Checkpoint(CheckpointError::Undone("m2".into())));
        assert_eq!(error.code, ErrorCode::Invalid);
        assert_eq!(error.message, "message m2 was undone; redo first");
    }
}
