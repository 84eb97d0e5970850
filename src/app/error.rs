//! How a [`RivetError`] (`crate::runtime::error`) travels as the error of
//! a server function: JSON, with the failures of the call itself given a
//! code too.

use leptos::server_fn::codec::JsonEncoding;
use leptos::server_fn::error::{FromServerFnError, ServerFnErrorErr};

pub use crate::runtime::error::{ErrorCode, RivetError};

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
}
