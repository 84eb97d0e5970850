//! What the server and the browser say to each other about an answer whose
//! actions run in the browser (a `webcontainer` project): the server relays
//! the model's text, the browser parses and runs it and sends back the
//! session events it made and the files it wrote.

use serde::{Deserialize, Serialize};

use crate::runtime::session::SessionEvent;

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
}

/// A file change the browser made in its runtime, repeated on the
/// server's copy of the project.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum FileMirror {
    Write { path: String, content: String },
    Remove { path: String },
    Rename { from: String, to: String },
}

/// What a browser tab needs to take over a project: its text files and the
/// dev server command of its latest `start` action.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct BrowserSnapshot {
    pub files: Vec<(String, String)>,
    pub start: Option<String>,
}

/// Whether the browser may report `event`: what the parser and the runner
/// make. Messages, their ends and usage are the server's to say.
pub fn reportable(event: &SessionEvent) -> bool {
    matches!(
        event,
        SessionEvent::Protocol { .. }
            | SessionEvent::ActionStatus { .. }
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
