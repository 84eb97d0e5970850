//! The conversation JSON (`docs/api.md`, "Conversation JSON"): the
//! project's name, its messages as stored, the session events the UI folds,
//! and its files, so that importing it restores the project.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use serde::{Deserialize, Serialize};

use super::TransferError;
use crate::runtime::llm::{FinishReason, TokenUsage};
use crate::runtime::session::{Envelope, MessageStatus, Role};
use crate::server::store::MessageRow;

/// The value of `format`.
pub const FORMAT: &str = "rivet.conversation";
/// The version this server writes and reads.
pub const VERSION: u32 = 1;

/// The whole document: its format and version, the project, its messages,
/// events and files.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct ExportedConversation {
    pub format: String,
    pub version: u32,
    pub project: ExportedProject,
    pub messages: Vec<ExportedMessage>,
    /// The session events, in order, as `GET .../events` sends them.
    pub events: Vec<Envelope>,
    pub files: Vec<ExportedFile>,
}

#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct ExportedProject {
    pub name: String,
    /// Seconds since the Unix epoch.
    pub created_at: i64,
}

#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct ExportedMessage {
    pub id: String,
    pub role: Role,
    pub text: String,
    #[serde(default)]
    pub asked: Option<String>,
    #[serde(default)]
    pub model: Option<String>,
    #[serde(default)]
    pub usage: Option<TokenUsage>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
    #[serde(default)]
    pub finish_reason: Option<FinishReason>,
    pub status: MessageStatus,
}

#[derive(Serialize, Deserialize, Debug, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Encoding {
    Utf8,
    Base64,
}

#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct ExportedFile {
    pub path: String,
    pub encoding: Encoding,
    pub content: String,
}

impl ExportedFile {
    pub fn new(path: String, bytes: Vec<u8>) -> ExportedFile {
        match String::from_utf8(bytes) {
            Ok(content) => ExportedFile {
                path,
                encoding: Encoding::Utf8,
                content,
            },
            Err(error) => ExportedFile {
                path,
                encoding: Encoding::Base64,
                content: STANDARD.encode(error.into_bytes()),
            },
        }
    }

    pub fn bytes(&self) -> Result<Vec<u8>, TransferError> {
        match self.encoding {
            Encoding::Utf8 => Ok(self.content.clone().into_bytes()),
            Encoding::Base64 => STANDARD.decode(&self.content).map_err(|e| {
                TransferError::Conversation(format!("{} is not valid base64: {e}", self.path))
            }),
        }
    }
}

impl From<MessageRow> for ExportedMessage {
    fn from(row: MessageRow) -> ExportedMessage {
        ExportedMessage {
            id: row.id,
            role: row.role,
            text: row.text,
            asked: row.asked,
            model: row.model,
            usage: row.usage,
            cost_usd: row.cost_usd,
            finish_reason: row.finish_reason,
            status: row.status,
        }
    }
}

impl From<ExportedMessage> for MessageRow {
    fn from(message: ExportedMessage) -> MessageRow {
        MessageRow {
            id: message.id,
            role: message.role,
            text: message.text,
            asked: message.asked,
            model: message.model,
            usage: message.usage,
            cost_usd: message.cost_usd,
            finish_reason: message.finish_reason,
            status: message.status,
        }
    }
}

/// Reads a conversation JSON, refusing other formats and versions.
pub fn parse(bytes: &[u8]) -> Result<ExportedConversation, TransferError> {
    let conversation: ExportedConversation = serde_json::from_slice(bytes)
        .map_err(|e| TransferError::Conversation(format!("unreadable JSON: {e}")))?;
    if conversation.format != FORMAT || conversation.version != VERSION {
        return Err(TransferError::Conversation(format!(
            "format {:?} version {} (expected {FORMAT:?} version {VERSION})",
            conversation.format, conversation.version
        )));
    }
    let mut last = 0;
    for envelope in &conversation.events {
        if envelope.seq <= last {
            return Err(TransferError::Conversation(format!(
                "event {} does not follow event {last}: events must be numbered in increasing order from 1",
                envelope.seq
            )));
        }
        last = envelope.seq;
    }
    for message in &conversation.messages {
        if !message.id.starts_with('m') || message.id[1..].parse::<u64>().is_err() {
            return Err(TransferError::Conversation(format!(
                "message id {:?} is not of the form m<number>",
                message.id
            )));
        }
    }
    Ok(conversation)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn binary_files_travel_as_base64_and_text_as_text() {
        let text = ExportedFile::new("a.txt".into(), b"hello".to_vec());
        assert_eq!(text.encoding, Encoding::Utf8);
        assert_eq!(text.content, "hello");
        let binary = ExportedFile::new("b.bin".into(), vec![0, 159, 146, 150]);
        assert_eq!(binary.encoding, Encoding::Base64);
        assert_eq!(binary.bytes().unwrap(), [0, 159, 146, 150]);
    }

    #[test]
    fn another_format_or_version_is_refused() {
        let json = serde_json::json!({
            "format": FORMAT, "version": 2,
            "project": {"name": "x", "created_at": 0},
            "messages": [], "events": [], "files": []
        });
        let err = parse(json.to_string().as_bytes()).unwrap_err();
        assert!(err.to_string().contains("version 2"), "{err}");
        let mut json = json;
        json["version"] = 1.into();
        json["events"] = serde_json::json!([
            {"seq": 2, "type": "terminal", "text": "a"},
            {"seq": 2, "type": "terminal", "text": "b"}
        ]);
        let err = parse(json.to_string().as_bytes()).unwrap_err();
        assert!(err.to_string().contains("does not follow"), "{err}");
        let err = parse(b"{}").unwrap_err();
        assert!(matches!(err, TransferError::Conversation(_)), "{err:?}");
    }
}
