//! What the search for a local model server found: every loopback address
//! tried, with the models it offers or why it did not answer. The probe
//! lives in `crate::server::llm::local_probe`; the settings panel shows
//! these.

use std::fmt;

use serde::{Deserialize, Serialize};

/// One address the search tried (or refused to try), and what came of it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LocalServer {
    /// The usual server on that port (`Ollama`, `LM Studio`…), else
    /// `Local server`.
    pub label: String,
    /// The address as configured (`[llm] local_servers`).
    pub address: String,
    /// The OpenAI-compatible base URL to ask (`…/v1`); empty when the
    /// address was not tried.
    pub base_url: String,
    /// The preset that fits the server (`ollama`, `lmstudio`), else `custom`.
    pub preset: String,
    pub outcome: LocalOutcome,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum LocalOutcome {
    /// `/v1/models` answered with a list (which may be empty).
    Answered { models: Vec<String> },
    /// No list came back.
    NoAnswer { reason: NoAnswer },
}

/// Why a `/v1/models` request gave no list. The `Display` text completes
/// "http://127.0.0.1:11434: …".
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "why", rename_all = "snake_case")]
pub enum NoAnswer {
    /// The address is not a loopback `http://` address, so it was not tried.
    NotLoopback { detail: String },
    /// Nothing listens there.
    Refused,
    /// No answer within the time allowed.
    Timeout { ms: u64 },
    /// An HTTP status other than success.
    Status { status: u16 },
    /// A redirect that was not followed (it leaves loopback, or there were
    /// too many).
    Redirected { to: String },
    /// An answer, but not an OpenAI-compatible models list.
    NotAModelsList { detail: String },
    /// Any other failure of the request.
    Failed { message: String },
}

impl fmt::Display for NoAnswer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NoAnswer::NotLoopback { detail } => write!(f, "not tried: {detail}"),
            NoAnswer::Refused => write!(f, "no answer: nothing listens there (connection refused)"),
            NoAnswer::Timeout { ms } => write!(f, "no answer within {ms} ms"),
            NoAnswer::Status { status } => {
                write!(f, "answered HTTP {status} instead of a models list")
            }
            NoAnswer::Redirected { to } => write!(f, "redirected to {to}, not followed"),
            NoAnswer::NotAModelsList { detail } => {
                write!(f, "answered, but not with a models list ({detail})")
            }
            NoAnswer::Failed { message } => write!(f, "no answer: {message}"),
        }
    }
}

impl std::error::Error for NoAnswer {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_probe_result_has_a_stable_json_shape() {
        let server = LocalServer {
            label: "Ollama".into(),
            address: "http://127.0.0.1:11434".into(),
            base_url: "http://127.0.0.1:11434/v1".into(),
            preset: "ollama".into(),
            outcome: LocalOutcome::NoAnswer {
                reason: NoAnswer::Timeout { ms: 1500 },
            },
        };
        let json = serde_json::to_value(&server).unwrap();
        assert_eq!(json["outcome"]["kind"], "no_answer");
        assert_eq!(json["outcome"]["reason"]["why"], "timeout");
        assert_eq!(serde_json::from_value::<LocalServer>(json).unwrap(), server);
    }

    #[test]
    fn reasons_read_as_sentences() {
        assert_eq!(
            NoAnswer::Refused.to_string(),
            "no answer: nothing listens there (connection refused)"
        );
        assert_eq!(
            NoAnswer::Status { status: 404 }.to_string(),
            "answered HTTP 404 instead of a models list"
        );
    }
}
