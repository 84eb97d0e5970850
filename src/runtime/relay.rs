//! What the server and the browser say to each other about an answer whose
//! actions run in the browser (a `webcontainer` project): the server relays
//! the model's text, the browser parses and runs it and sends back the
//! session events it made and the files it wrote.

use serde::{Deserialize, Serialize};

use crate::runtime::session::SessionEvent;

mod content;
pub mod watch;

pub use content::{FileContent, InvalidBase64};

/// From the server to the browser that runs the project's actions.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum RelayEvent {
    /// More text of the answer `message_id`.
    Delta { message_id: String, text: String },
    /// The answer ended; `stopped` when the person pressed Stop (the
    /// browser then aborts what still runs).
    End { message_id: String, stopped: bool },
    /// The person pressed Stop: abort the running command and every
    /// pending action.
    Stop,
    /// Another tab of the project took over; this one runs no more answers.
    Replaced,
    /// Build the project's site with `command` (each command within
    /// `timeout_secs`), send its files for the build `request` and say how
    /// it ended ([`SiteBuildReport`]).
    BuildSite {
        request: String,
        command: String,
        timeout_secs: u64,
    },
}

/// How a site's build in the browser ended, after its files were sent.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum SiteBuildReport {
    /// Every file of the output (`root`) was sent: `files` of them.
    Built {
        root: String,
        files: u64,
    },
    NothingToPublish {
        reason: String,
    },
    Failed {
        reason: String,
    },
}

/// A file change the browser made in its runtime, repeated on the
/// server's copy of the project. A write's bytes are `content` (text), or
/// base64 with `"encoding": "base64"` when they are not UTF-8:
/// `{"type":"write","path":"logo.png","content":"iVBO…","encoding":"base64"}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum FileMirror {
    Write {
        path: String,
        #[serde(flatten)]
        content: FileContent,
    },
    Remove {
        path: String,
    },
    Rename {
        from: String,
        to: String,
    },
}

/// What a browser tab needs to take over a project: its files (outside
/// skipped folders, up to a size) and the dev server command of its latest
/// `start` action.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct BrowserSnapshot {
    pub files: Vec<MountedFile>,
    pub start: Option<String>,
}

/// A file to mount: `{"path": …, "content": …}`, with `"encoding":
/// "base64"` when its bytes are not UTF-8.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MountedFile {
    pub path: String,
    #[serde(flatten)]
    pub content: FileContent,
}

/// Whether the browser may report `event`: what the parser and the runner
/// make. Messages, their ends and usage are the server's to say.
pub fn reportable(event: &SessionEvent) -> bool {
    matches!(
        event,
        SessionEvent::Protocol { .. }
            | SessionEvent::ActionStatus { .. }
            | SessionEvent::QueryResult { .. }
            | SessionEvent::FileWritten { .. }
            | SessionEvent::FileRemoved { .. }
            | SessionEvent::Terminal { .. }
            | SessionEvent::Alert { .. }
            | SessionEvent::BuildResult { .. }
            | SessionEvent::PreviewOpened { .. }
            | SessionEvent::PreviewUrl { .. }
            | SessionEvent::PreviewClosed { .. }
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::session::{Message, MessageStatus};

    #[test]
    fn relay_events_use_the_documented_json() {
        let delta = RelayEvent::Delta {
            message_id: "m2".into(),
            text: "héllo".into(),
        };
        let json = serde_json::to_string(&delta).unwrap();
        assert_eq!(json, r#"{"type":"delta","message_id":"m2","text":"héllo"}"#);
        assert_eq!(serde_json::from_str::<RelayEvent>(&json).unwrap(), delta);
    }

    fn write(path: &str, bytes: &[u8]) -> FileMirror {
        FileMirror::Write {
            path: path.into(),
            content: FileContent::new(bytes),
        }
    }

    /// The first bytes of a PNG file: not UTF-8.
    const PNG: &[u8] = &[0x89, b'P', b'N', b'G', 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0xff];

    #[test]
    fn todays_text_only_file_mirror_json_is_still_accepted() {
        let json = r#"{"type":"write","path":"src/App.jsx","content":"héllo"}"#;
        let change: FileMirror = serde_json::from_str(json).unwrap();
        assert_eq!(change, write("src/App.jsx", "héllo".as_bytes()));
        assert_eq!(
            serde_json::to_string(&change).unwrap(),
            json,
            "text stays text"
        );
        let explicit = r#"{"type":"write","path":"a","content":"x","encoding":"utf8"}"#;
        let change: FileMirror = serde_json::from_str(explicit).unwrap();
        assert_eq!(change, write("a", b"x"));
    }

    #[test]
    fn file_mirror_of_binary_bytes_travels_as_base64() {
        let change = write("logo.png", PNG);
        let json = serde_json::to_string(&change).unwrap();
        assert_eq!(
            json,
            r#"{"type":"write","path":"logo.png","content":"iVBORw0KGgoA/w==","encoding":"base64"}"#
        );
        assert_eq!(serde_json::from_str::<FileMirror>(&json).unwrap(), change);
    }

    #[test]
    fn file_mirror_with_invalid_base64_is_refused() {
        let json = r#"{"type":"write","path":"a.png","content":"not base64!","encoding":"base64"}"#;
        let err = serde_json::from_str::<FileMirror>(json).unwrap_err();
        assert!(err.to_string().contains("base64"), "{err}");
    }

    #[test]
    fn file_mirror_with_an_unknown_encoding_is_refused() {
        let json = r#"{"type":"write","path":"a","content":"x","encoding":"hex"}"#;
        assert!(serde_json::from_str::<FileMirror>(json).is_err());
        let json = r#"{"type":"write","path":"a"}"#;
        assert!(
            serde_json::from_str::<FileMirror>(json).is_err(),
            "no content"
        );
    }

    #[test]
    fn browser_snapshot_files_keep_their_bytes() {
        let snapshot = BrowserSnapshot {
            files: vec![
                MountedFile {
                    path: "index.html".into(),
                    content: FileContent::new("<p>hi</p>"),
                },
                MountedFile {
                    path: "logo.png".into(),
                    content: FileContent::new(PNG),
                },
            ],
            start: Some("npm run dev".into()),
        };
        let json = serde_json::to_value(&snapshot).unwrap();
        assert_eq!(
            json["files"][0],
            serde_json::json!({"path": "index.html", "content": "<p>hi</p>"})
        );
        assert_eq!(json["files"][1]["encoding"], "base64");
        let back: BrowserSnapshot = serde_json::from_value(json).unwrap();
        assert_eq!(back, snapshot);
    }

    #[test]
    fn browser_report_of_runner_events_is_accepted() {
        assert!(reportable(&SessionEvent::Terminal {
            text: "$ npm i".into()
        }));
        assert!(reportable(&SessionEvent::PreviewClosed { port: 5173 }));
    }

    #[test]
    fn browser_report_of_message_events_is_refused() {
        for event in [
            SessionEvent::MessageAdded {
                message: Message::user("m1", "hi"),
            },
            SessionEvent::MessageFinished {
                message_id: "m2".into(),
                status: MessageStatus::Complete,
                finish_reason: None,
            },
            SessionEvent::MessageResumed {
                message_id: "m2".into(),
            },
        ] {
            assert!(!reportable(&event), "{event:?}");
        }
    }
}
