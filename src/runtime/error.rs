//! The error every server function returns: an [`ErrorCode`] the browser
//! can match on (to show "busy" differently from "not found") and a
//! message for people. The HTTP API derives its statuses from the same
//! codes (`crate::server::errors`), so both speak one rule. How it travels
//! as a server function error is in `crate::app::error`.

use serde::{Deserialize, Serialize};

/// What kind of failure it was, stable across releases.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorCode {
    /// Another answer is streaming; wait for it or stop it.
    Busy,
    /// No such project, message or file.
    NotFound,
    /// The request itself is wrong (an empty message, a path outside the
    /// project, a message that cannot be continued).
    Invalid,
    /// The server cannot do it now (the sandbox cannot run, the connection
    /// dropped); trying again later may work.
    Unavailable,
    /// Something broke on the server.
    Internal,
    /// The project spent its budget: nothing was sent; raise the budget.
    BudgetExceeded,
}

impl ErrorCode {
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::Busy => "busy",
            ErrorCode::NotFound => "not_found",
            ErrorCode::Invalid => "invalid",
            ErrorCode::Unavailable => "unavailable",
            ErrorCode::Internal => "internal",
            ErrorCode::BudgetExceeded => "budget_exceeded",
        }
    }

    /// The HTTP status of an error of this kind.
    pub fn http_status(self) -> u16 {
        match self {
            ErrorCode::Busy => 409,
            ErrorCode::NotFound => 404,
            ErrorCode::Invalid => 400,
            ErrorCode::Unavailable => 503,
            ErrorCode::Internal => 500,
            ErrorCode::BudgetExceeded => 402,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, thiserror::Error)]
#[error("{message}")]
pub struct RivetError {
    pub code: ErrorCode,
    pub message: String,
}

impl RivetError {
    pub fn new(code: ErrorCode, message: impl Into<String>) -> RivetError {
        RivetError {
            code,
            message: message.into(),
        }
    }

    pub fn is_busy(&self) -> bool {
        self.code == ErrorCode::Busy
    }

    pub fn is_budget_exceeded(&self) -> bool {
        self.code == ErrorCode::BudgetExceeded
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_have_stable_names_and_statuses() {
        let names: Vec<_> = [
            ErrorCode::Busy,
            ErrorCode::NotFound,
            ErrorCode::Invalid,
            ErrorCode::Unavailable,
            ErrorCode::Internal,
            ErrorCode::BudgetExceeded,
        ]
        .iter()
        .map(|c| (c.as_str(), c.http_status()))
        .collect();
        assert_eq!(
            names,
            [
                ("busy", 409),
                ("not_found", 404),
                ("invalid", 400),
                ("unavailable", 503),
                ("internal", 500),
                ("budget_exceeded", 402)
            ]
        );
        let json = serde_json::to_value(RivetError::new(ErrorCode::NotFound, "x")).unwrap();
        assert_eq!(
            json,
            serde_json::json!({"code": "not_found", "message": "x"})
        );
    }
}
