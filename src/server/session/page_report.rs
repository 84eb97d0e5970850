//! Errors of the previewed page: the reporter script the preview proxy puts
//! into the app's pages posts them to the IDE's page, which checks where
//! they come from and sends them here (`report_page_error`). Each becomes a
//! build result of the project (`page_error` for an uncaught exception or an
//! unhandled rejection, `console_error` for `console.error`), which the fix
//! loop reads like any other failure.
//!
//! The page is the app under development, so what it sends is untrusted
//! text: the kind must be one of three, an empty message is refused, a long
//! one is cut, the same error sent again within [`DUPLICATE_MS`] (a page
//! loaded twice at once) is kept once, and a project takes at most
//! [`PER_MINUTE`] of them a minute.

use std::str::FromStr;

use super::api::{ApiError, open_project};
use crate::runtime::build_result::{BuildResult, Stage};
use crate::runtime::mask::mask_text;
use crate::runtime::project::ProjectId;
use crate::server::state::AppState;

/// Longest message kept, in bytes (the build result keeps less).
pub const MAX_MESSAGE: usize = 16 * 1024;
/// Page errors a project records in a minute.
pub const PER_MINUTE: usize = 20;
/// The same error again within this many milliseconds is the same report.
pub const DUPLICATE_MS: u64 = 2_000;

/// What the page's reporter saw.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PageErrorKind {
    /// An uncaught exception.
    Error,
    /// An unhandled promise rejection.
    Rejection,
    /// A `console.error` call.
    Console,
}

impl FromStr for PageErrorKind {
    type Err = ReportError;

    fn from_str(kind: &str) -> Result<Self, ReportError> {
        match kind {
            "error" => Ok(PageErrorKind::Error),
            "rejection" => Ok(PageErrorKind::Rejection),
            "console" => Ok(PageErrorKind::Console),
            other => Err(ReportError::UnknownKind(other.chars().take(40).collect())),
        }
    }
}

impl PageErrorKind {
    pub fn stage(self) -> Stage {
        match self {
            PageErrorKind::Error | PageErrorKind::Rejection => Stage::PageError,
            PageErrorKind::Console => Stage::ConsoleError,
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    #[error("\"{0}\" is not a kind of page error (error, rejection or console)")]
    UnknownKind(String),
    #[error("the page error has no message")]
    Empty,
    #[error(transparent)]
    Project(#[from] ApiError),
}

/// What became of a report.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    Recorded,
    /// The same error was reported a moment ago.
    Duplicate,
    /// The project had [`PER_MINUTE`] page errors in the last minute.
    TooMany,
}

/// The build result a report makes, once checked.
pub fn build_result(kind: &str, message: &str) -> Result<BuildResult, ReportError> {
    let kind: PageErrorKind = kind.parse()?;
    let message = message.trim();
    if message.is_empty() {
        return Err(ReportError::Empty);
    }
    let mut end = message.len().min(MAX_MESSAGE);
    while !message.is_char_boundary(end) {
        end -= 1;
    }
    Ok(BuildResult::new(kind.stage(), None, None, &message[..end]))
}

/// Whether `result` is recorded, given the project's `existing` results.
pub fn admit(existing: &[BuildResult], result: &BuildResult) -> Outcome {
    let from_page = |r: &&BuildResult| matches!(r.stage, Stage::PageError | Stage::ConsoleError);
    let recent = existing
        .iter()
        .filter(from_page)
        .filter(|r| result.at_ms.saturating_sub(r.at_ms) < 60_000);
    if recent.clone().count() >= PER_MINUTE {
        return Outcome::TooMany;
    }
    let signature = result.signature();
    let repeated = recent
        .filter(|r| result.at_ms.saturating_sub(r.at_ms) < DUPLICATE_MS)
        .any(|r| r.signature() == signature);
    if repeated {
        Outcome::Duplicate
    } else {
        Outcome::Recorded
    }
}

/// Records a page error of `project` (the `report_page_error` server
/// function; the request passed `access::guard`).
pub async fn report(
    state: &AppState,
    project: &ProjectId,
    kind: &str,
    message: &str,
) -> Result<Outcome, ReportError> {
    let handle = open_project(state, project).await?;
    let result = build_result(kind, &masked(state, project, message))?;
    let outcome = handle.session.read(|s| admit(&s.build_results, &result));
    if outcome == Outcome::Recorded {
        tracing::info!(project = %handle.id, stage = ?result.stage, "the previewed page reported an error");
        handle.runner.build_result(result, None);
    }
    Ok(outcome)
}

/// The page's message with the project's secret values masked: a page may
/// print what its environment gave it, and the report reaches the model.
fn masked(state: &AppState, project: &ProjectId, message: &str) -> String {
    match state.sandbox.secrets().values(project) {
        Ok(values) => mask_text(
            values.iter().map(|(n, v)| (n.as_str(), v.as_str())),
            message,
        ),
        Err(error) => {
            tracing::warn!(%project, %error, "the project's secrets could not be read to mask a page error");
            message.to_owned()
        }
    }
}

#[cfg(test)]
mod tests;
