//! The conversation JSON (`docs/api.md`, "Conversation JSON"): the
//! project's name, its messages as stored, the session events the UI folds,
//! and its files, so that importing it restores the project.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use serde::{Deserialize, Serialize};

use super::TransferError;
use crate::runtime::attachment::Attachments;
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
    /// The images the messages carry (documents from before images had
    /// none).
    #[serde(default)]
    pub images: Vec<ExportedImage>,
}

/// One image of the messages: its SHA-256 (as the messages name it), its
/// type and its bytes as base64.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct ExportedImage {
    pub sha256: String,
    pub media_type: String,
    pub data: String,
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
    #[serde(default, skip_serializing_if = "Attachments::is_empty")]
    pub attachments: Attachments,
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
            attachments: row.attachments,
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
            attachments: message.attachments,
        }
    }
}

/// A conversation JSON written piece by piece into a file, so that a long
/// record and a large project pass through memory one event and one file
/// at a time: the head with the messages, then [`Streamed::event`] for
/// each event, [`Streamed::files`], [`Streamed::file`] for each file, and
/// [`Streamed::finish`]. The document is the one [`ExportedConversation`]
/// serialises to.
pub struct Streamed {
    out: std::io::BufWriter<std::fs::File>,
    /// Whether the list being written has no item yet.
    empty: bool,
}

fn write_error(source: std::io::Error) -> TransferError {
    TransferError::Io {
        path: "conversation.json".into(),
        source,
    }
}

impl Streamed {
    pub fn begin(
        out: std::fs::File,
        project: &ExportedProject,
        messages: &[ExportedMessage],
    ) -> Result<Streamed, TransferError> {
        use std::io::Write;
        let mut out = std::io::BufWriter::with_capacity(64 * 1024, out);
        write!(
            out,
            "{{\"format\":\"{FORMAT}\",\"version\":{VERSION},\"project\":"
        )
        .map_err(write_error)?;
        serde_json::to_writer(&mut out, project).map_err(|e| write_error(e.into()))?;
        out.write_all(b",\"messages\":").map_err(write_error)?;
        serde_json::to_writer(&mut out, messages).map_err(|e| write_error(e.into()))?;
        out.write_all(b",\"events\":[").map_err(write_error)?;
        Ok(Streamed { out, empty: true })
    }

    fn item(&mut self, item: &impl Serialize) -> Result<(), TransferError> {
        use std::io::Write;
        if !std::mem::replace(&mut self.empty, false) {
            self.out.write_all(b",").map_err(write_error)?;
        }
        serde_json::to_writer(&mut self.out, item).map_err(|e| write_error(e.into()))
    }

    pub fn event(&mut self, event: &Envelope) -> Result<(), TransferError> {
        self.item(event)
    }

    /// Ends the events; the files follow.
    pub fn files(&mut self) -> Result<(), TransferError> {
        use std::io::Write;
        self.empty = true;
        self.out.write_all(b"],\"files\":[").map_err(write_error)
    }

    pub fn file(&mut self, file: &ExportedFile) -> Result<(), TransferError> {
        self.item(file)
    }

    /// Ends the files; the images follow.
    pub fn images(&mut self) -> Result<(), TransferError> {
        use std::io::Write;
        self.empty = true;
        self.out.write_all(b"],\"images\":[").map_err(write_error)
    }

    pub fn image(&mut self, image: &ExportedImage) -> Result<(), TransferError> {
        self.item(image)
    }

    /// Ends the document; the file is rewound, with its length.
    pub fn finish(mut self) -> Result<(std::fs::File, u64), TransferError> {
        use std::io::{Seek, SeekFrom, Write};
        self.out.write_all(b"]}").map_err(write_error)?;
        let mut file = self
            .out
            .into_inner()
            .map_err(|e| write_error(e.into_error()))?;
        let len = file.seek(SeekFrom::End(0)).map_err(write_error)?;
        file.rewind().map_err(write_error)?;
        Ok((file, len))
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

    #[test]
    fn the_streamed_document_is_the_one_the_struct_writes() {
        use std::io::Read;
        let project = ExportedProject {
            name: "shop \"quoted\"".into(),
            created_at: 42,
        };
        let messages = vec![ExportedMessage {
            id: "m1".into(),
            role: Role::User,
            text: "hello".into(),
            asked: None,
            model: None,
            usage: None,
            cost_usd: None,
            finish_reason: None,
            status: MessageStatus::Complete,
            attachments: Attachments::default(),
        }];
        let events: Vec<Envelope> = (1..=3)
            .map(|seq| Envelope {
                seq,
                event: crate::runtime::session::SessionEvent::Terminal {
                    text: format!("line {seq}\n"),
                },
            })
            .collect();
        let files = vec![
            ExportedFile::new("a.txt".into(), b"text".to_vec()),
            ExportedFile::new("b.bin".into(), vec![0, 255]),
        ];
        let whole = ExportedConversation {
            format: FORMAT.into(),
            version: VERSION,
            project: project.clone(),
            messages: messages.clone(),
            events: events.clone(),
            files: files.clone(),
            images: vec![ExportedImage {
                sha256: "ab".repeat(32),
                media_type: "image/png".into(),
                data: "iVBORw0KGgo=".into(),
            }],
        };
        for (events, files) in [(&events[..], &files[..]), (&[][..], &[][..])] {
            let mut doc =
                Streamed::begin(tempfile::tempfile().unwrap(), &project, &messages).unwrap();
            for event in events {
                doc.event(event).unwrap();
            }
            doc.files().unwrap();
            for file in files {
                doc.file(file).unwrap();
            }
            doc.images().unwrap();
            for image in &whole.images {
                doc.image(image).unwrap();
            }
            let (mut file, len) = doc.finish().unwrap();
            let mut written = Vec::new();
            file.read_to_end(&mut written).unwrap();
            assert_eq!(written.len() as u64, len);
            let expected = ExportedConversation {
                events: events.to_vec(),
                files: files.to_vec(),
                ..whole.clone()
            };
            assert_eq!(written, serde_json::to_vec(&expected).unwrap());
            assert_eq!(parse(&written).unwrap(), expected);
        }
    }
}
