//! The error every server function returns: a [`ErrorCode`] the browser
//! can match on (to show "busy" differently from "not found") and a
//! message for people. The HTTP API derives its statuses from the same
//! codes (`crate::server::errors`), so both speak one rule.

use leptos::server_fn::codec::JsonEncoding;
use leptos::server_fn::error::{FromServerFnError, ServerFnErrorErr};
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
}

impl ErrorCode {
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::Busy => "busy",
            ErrorCode::NotFound => "not_found",
            ErrorCode::Invalid => "invalid",
            ErrorCode::Unavailable => "unavailable",
            ErrorCode::Internal => "internal",
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
}

impl FromServerFnError for RivetError {
    type Encoder = JsonEncoding;

    /// Failures of the call itself rather than of Rivet's code.
    fn from_server_fn_error(value: ServerFnErrorErr) -> RivetError {
        let code = match &value {
            ServerFnErrorErr::Request(_) => ErrorCode::Unavailable,
            ServerFnErrorErr::Args(_) | ServerFnErrorErr::MissingArg(_) => ErrorCode::Invalid,
            _ => ErrorCode::Internal,
        };
        RivetError::new(code, value.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_round_trip_through_the_server_fn_encoding() {
        let error = RivetError::new(ErrorCode::Busy, "an answer is still streaming");
        assert_eq!(RivetError::de(error.ser()), error);
        let json = serde_json::to_value(&error).unwrap();
        assert_eq!(json["code"], "busy");
    }

    #[test]
    fn call_failures_get_a_code() {
        let cases = [
            (
                ServerFnErrorErr::Request("down".into()),
                ErrorCode::Unavailable,
            ),
            (ServerFnErrorErr::Args("bad".into()), ErrorCode::Invalid),
            (
                ServerFnErrorErr::MissingArg("project".into()),
                ErrorCode::Invalid,
            ),
            (
                ServerFnErrorErr::Deserialization("x".into()),
                ErrorCode::Internal,
            ),
        ];
        for (error, code) in cases {
            assert_eq!(RivetError::from_server_fn_error(error).code, code);
        }
    }

    #[test]
    fn garbage_from_the_server_is_an_internal_error() {
        let error = RivetError::de(bytes::Bytes::from_static(b"not json"));
        assert_eq!(error.code, ErrorCode::Internal);
    }

    #[test]
    fn codes_have_stable_names_and_statuses() {
        let names: Vec<_> = [
            ErrorCode::Busy,
            ErrorCode::NotFound,
            ErrorCode::Invalid,
            ErrorCode::Unavailable,
            ErrorCode::Internal,
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
                ("internal", 500)
            ]
        );
    }
}
