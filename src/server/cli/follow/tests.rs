//! The follower against scripted session events.

use super::*;
use crate::runtime::protocol::Parser;
use crate::runtime::session::{ActionRef, Message, Preview};

const ANSWER: &str = "Here it is.\n<boltArtifact id=\"app\" title=\"App\">\n\
<boltAction type=\"file\" filePath=\"src/a.js\">let a = 1;\n</boltAction>\n\
<boltAction type=\"shell\">npm test</boltAction>\n</boltArtifact>\nDone.";

/// The events of the answer `m2` streaming `ANSWER` in small pieces.
fn streamed() -> Vec<SessionEvent> {
    let mut events = vec![SessionEvent::MessageAdded {
        message: Message::assistant("m2"),
    }];
    let mut parser = Parser::new("m2");
    let mut protocol = Vec::new();
    for piece in ANSWER.as_bytes().chunks(5) {
        protocol.extend(parser.push(std::str::from_utf8(piece).unwrap()));
    }
    protocol.extend(parser.finish());
    events.extend(protocol.into_iter().map(|event| SessionEvent::Protocol {
        message_id: "m2".into(),
        event,
    }));
    events
}

/// Action ids count from 0 within the message: the file is "0", the
/// shell command "1".
fn status(action: &str, status: ActionStatus) -> SessionEvent {
    SessionEvent::ActionStatus {
        action: ActionRef {
            message_id: "m2".into(),
            action_id: action.into(),
        },
        status,
    }
}

fn finished(status: MessageStatus) -> SessionEvent {
    SessionEvent::MessageFinished {
        message_id: "m2".into(),
        status,
        finish_reason: None,
    }
}

fn run(events: &[SessionEvent]) -> (Follower, Vec<Output>) {
    let mut follower = Follower::new(SessionState::default(), "m2".into());
    let out = events.iter().flat_map(|e| follower.apply(e)).collect();
    (follower, out)
}

fn text(out: &[Output]) -> String {
    out.iter()
        .filter_map(|o| match o {
            Output::Text(t) => Some(t.as_str()),
            Output::Line(_) => None,
        })
        .collect()
}

fn lines(out: &[Output]) -> Vec<&str> {
    out.iter()
        .filter_map(|o| match o {
            Output::Line(l) => Some(l.as_str()),
            Output::Text(_) => None,
        })
        .collect()
}

#[test]
fn the_answer_prose_is_printed_once_as_it_streams() {
    let (follower, out) = run(&streamed());
    assert_eq!(text(&out), "Here it is.\n\nDone.");
    // Not finished: the message still streams.
    assert_eq!(follower.outcome(), None);
}

#[test]
fn a_complete_answer_whose_actions_succeed_is_a_success() {
    let mut events = streamed();
    events.push(finished(MessageStatus::Complete));
    events.push(status("0", ActionStatus::Running));
    events.push(status("0", ActionStatus::Complete));
    events.push(status("1", ActionStatus::Running));
    let (mut follower, out) = run(&events);
    assert_eq!(
        lines(&out),
        [
            "action running: write src/a.js",
            "action complete: write src/a.js",
            "action running: run npm test"
        ]
    );
    // The shell action still runs.
    assert_eq!(follower.outcome(), None);
    follower.apply(&status("1", ActionStatus::Complete));
    assert_eq!(
        follower.outcome(),
        Some(Outcome {
            success: true,
            problems: vec![]
        })
    );
}

#[test]
fn a_failed_action_makes_the_outcome_a_failure_naming_it() {
    let mut events = streamed();
    events.push(finished(MessageStatus::Complete));
    events.push(status("0", ActionStatus::Complete));
    events.push(status(
        "1",
        ActionStatus::Failed {
            reason: "exit code 3\nmore".into(),
        },
    ));
    let (follower, out) = run(&events);
    assert!(lines(&out).contains(&"action failed: run npm test (exit code 3)"));
    let outcome = follower.outcome().unwrap();
    assert!(!outcome.success);
    assert_eq!(
        outcome.problems,
        ["action failed: run npm test (exit code 3)"]
    );
}

#[test]
fn a_failed_answer_is_a_failure() {
    let events = [
        SessionEvent::MessageAdded {
            message: Message::assistant("m2"),
        },
        finished(MessageStatus::Failed {
            error: "401 invalid key".into(),
        }),
    ];
    let (follower, _) = run(&events);
    let outcome = follower.outcome().unwrap();
    assert!(!outcome.success);
    assert_eq!(outcome.problems, ["the answer failed: 401 invalid key"]);
}

#[test]
fn other_messages_and_old_previews_are_not_printed() {
    let mut state = SessionState::default();
    state.apply(&SessionEvent::PreviewOpened {
        preview: Preview {
            port: 3000,
            url: Some("http://old".into()),
        },
    });
    let mut follower = Follower::new(state, "m2".into());
    let mut out = follower.apply(&SessionEvent::MessageAdded {
        message: Message::user("m1", "not printed"),
    });
    out.extend(follower.apply(&SessionEvent::PreviewOpened {
        preview: Preview {
            port: 5173,
            url: Some("http://p1-5173.preview.localhost:3000/".into()),
        },
    }));
    assert_eq!(
        out,
        [Output::Line(
            "preview http://p1-5173.preview.localhost:3000/".into()
        )]
    );
}
