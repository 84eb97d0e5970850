use super::state::TERMINAL_TAIL;
use super::*;
use crate::runtime::protocol::{Event, Parser};

fn user(id: &str, text: &str) -> SessionEvent {
    SessionEvent::MessageAdded {
        message: Message::user(id, text),
    }
}

/// Adds an assistant message and streams `answer` into it in `chunk`-byte pieces.
fn answer(state: &mut SessionState, id: &str, answer: &str, chunk: usize) {
    state.apply(&SessionEvent::MessageAdded {
        message: Message::assistant(id),
    });
    let mut parser = Parser::new(id);
    let mut events: Vec<Event> = Vec::new();
    let mut rest = answer;
    while !rest.is_empty() {
        let mut cut = chunk.min(rest.len());
        while !rest.is_char_boundary(cut) {
            cut += 1;
        }
        events.extend(parser.push(&rest[..cut]));
        rest = &rest[cut..];
    }
    events.extend(parser.finish());
    for event in events {
        state.apply(&SessionEvent::Protocol {
            message_id: id.to_owned(),
            event,
        });
    }
}

const TODO: &str = "Here it is.\n<boltArtifact id=\"todo\" title=\"Todo\">\n\
<boltAction type=\"file\" filePath=\"src/a.js\">let a = 1;\n</boltAction>\n\
<boltAction type=\"shell\">npm install</boltAction>\n</boltArtifact>\nDone.";

fn action(message_id: &str, action_id: &str) -> ActionRef {
    ActionRef {
        message_id: message_id.to_owned(),
        action_id: action_id.into(),
    }
}

#[test]
fn prose_and_artifacts_keep_their_order() {
    for chunk in [1, 3, 7, 1000] {
        let mut state = SessionState::default();
        state.apply(&user("m1", "build"));
        answer(&mut state, "m2", TODO, chunk);
        let message = state.message("m2").unwrap();
        let kinds: Vec<&str> = message
            .parts
            .iter()
            .map(|p| match p {
                Part::Text { .. } => "text",
                Part::Artifact { .. } => "artifact",
                Part::Step { .. } => "step",
            })
            .collect();
        assert_eq!(kinds, ["text", "artifact", "text"], "chunk {chunk}");
        assert_eq!(message.text(), "Here it is.\n\nDone.", "chunk {chunk}");
        let artifact = state.artifact("m2", "todo").unwrap();
        assert!(artifact.closed);
        assert_eq!(artifact.title, "Todo");
        let contents: Vec<&str> = artifact
            .actions
            .iter()
            .map(|a| a.content.as_str())
            .collect();
        assert_eq!(contents, ["let a = 1;\n", "npm install"]);
        assert!(
            artifact
                .actions
                .iter()
                .all(|a| a.closed && a.status == ActionStatus::Pending)
        );
    }
}

#[test]
fn statuses_reach_the_named_action_only() {
    let mut state = SessionState::default();
    answer(&mut state, "m1", TODO, 1000);
    answer(&mut state, "m2", &TODO.replace("todo", "again"), 1000);
    let touched = state.apply(&SessionEvent::ActionStatus {
        action: action("m2", "1"),
        status: ActionStatus::Failed {
            reason: "exit 1".into(),
        },
    });
    assert_eq!(
        touched,
        Touched::Artifact {
            message_id: "m2".into(),
            artifact_id: "again".into()
        }
    );
    assert_eq!(
        state.action(&action("m1", "1")).unwrap().1.status,
        ActionStatus::Pending
    );
    assert!(matches!(
        state.action(&action("m2", "1")).unwrap().1.status,
        ActionStatus::Failed { .. }
    ));
    let missing = state.apply(&SessionEvent::ActionStatus {
        action: action("m9", "0"),
        status: ActionStatus::Complete,
    });
    assert_eq!(missing, Touched::Nothing);
}

#[test]
fn busy_while_streaming_or_running() {
    let mut state = SessionState::default();
    assert!(!state.is_busy());
    answer(&mut state, "m1", TODO, 1000);
    assert!(state.is_busy(), "streaming");
    state.apply(&SessionEvent::MessageFinished {
        message_id: "m1".into(),
        status: MessageStatus::Complete,
        finish_reason: Some(crate::runtime::llm::FinishReason::Stop),
    });
    assert!(state.is_busy(), "actions pending");
    for id in ["0", "1"] {
        state.apply(&SessionEvent::ActionStatus {
            action: action("m1", id),
            status: ActionStatus::Complete,
        });
    }
    assert!(!state.is_busy());
}

#[test]
fn a_new_answer_resets_the_changed_files() {
    let mut state = SessionState::default();
    let written = |path: &str, by_model| SessionEvent::FileWritten {
        path: path.into(),
        by_model,
    };
    state.apply(&written("a.js", true));
    state.apply(&written("b.js", false));
    assert_eq!(state.changed_by_last_answer.len(), 1);
    answer(&mut state, "m1", "ok", 10);
    assert!(state.changed_by_last_answer.is_empty());
    assert_eq!(state.files.len(), 2);
}

#[test]
fn removing_a_folder_removes_its_files() {
    let mut state = SessionState::default();
    for path in ["src/a.js", "src/b/c.js", "srcx.js", "src"] {
        state.apply(&SessionEvent::FileWritten {
            path: path.into(),
            by_model: true,
        });
    }
    state.apply(&SessionEvent::FileRemoved { path: "src".into() });
    assert_eq!(state.files.iter().collect::<Vec<_>>(), ["srcx.js"]);
    assert_eq!(
        state.changed_by_last_answer.iter().collect::<Vec<_>>(),
        ["srcx.js"]
    );
}

#[test]
fn the_terminal_keeps_a_bounded_tail() {
    let mut state = SessionState::default();
    let line = "é output line\n";
    for _ in 0..(2 * TERMINAL_TAIL / line.len()) {
        state.apply(&SessionEvent::Terminal { text: line.into() });
    }
    assert!(state.terminal.len() <= TERMINAL_TAIL);
    assert!(state.terminal.len() > TERMINAL_TAIL / 2);
    assert!(
        state.terminal.starts_with("é output"),
        "cut at a line start"
    );
}

#[test]
fn previews_are_keyed_by_port() {
    let mut state = SessionState::default();
    state.apply(&opened(5173, Some("a")));
    state.apply(&opened(3000, Some("b")));
    state.apply(&opened(5173, Some("c")));
    assert_eq!(previews(&state), [(3000, Some("b")), (5173, Some("c"))]);
    state.apply(&SessionEvent::PreviewClosed { port: 3000 });
    assert_eq!(state.previews.len(), 1);
}

fn opened(port: u16, url: Option<&str>) -> SessionEvent {
    SessionEvent::PreviewOpened {
        preview: Preview {
            port,
            url: url.map(str::to_owned),
        },
    }
}

fn previews(state: &SessionState) -> Vec<(u16, Option<&str>)> {
    state
        .previews
        .iter()
        .map(|p| (p.port, p.url.as_deref()))
        .collect()
}

#[test]
fn a_port_is_listed_at_once_and_gets_its_url_when_asked() {
    let mut state = SessionState::default();
    state.apply(&opened(5173, Some("http://127.0.0.1:41000/")));
    state.apply(&opened(20001, None));
    assert_eq!(
        previews(&state),
        [(5173, Some("http://127.0.0.1:41000/")), (20001, None)]
    );
    let url = |port, url: Option<&str>| SessionEvent::PreviewUrl {
        port,
        url: url.map(str::to_owned),
    };
    assert_eq!(
        state.apply(&url(20001, Some("http://127.0.0.1:41001/"))),
        Touched::Previews
    );
    // Making room for it took the first one's address back.
    state.apply(&url(5173, None));
    assert_eq!(
        previews(&state),
        [(5173, None), (20001, Some("http://127.0.0.1:41001/"))]
    );
    // An address for a port that closed meanwhile does not bring it back.
    state.apply(&SessionEvent::PreviewClosed { port: 20001 });
    assert_eq!(
        state.apply(&url(20001, Some("http://127.0.0.1:41001/"))),
        Touched::Nothing
    );
    assert_eq!(previews(&state), [(5173, None)]);
}

#[test]
fn a_preview_without_url_survives_json() {
    let event = opened(3000, None);
    let json = serde_json::to_value(&event).unwrap();
    assert_eq!(
        json,
        serde_json::json!({"type": "preview_opened", "preview": {"port": 3000, "url": null}})
    );
    let back: SessionEvent = serde_json::from_value(json).unwrap();
    assert_eq!(back, event);
}

#[test]
fn a_snapshot_replaces_the_state_and_survives_json() {
    let mut state = SessionState::default();
    state.apply(&user("m1", "build"));
    answer(&mut state, "m2", TODO, 5);
    let json = serde_json::to_string(&SessionEvent::Snapshot {
        state: Box::new(state.clone()),
    })
    .unwrap();
    let event: SessionEvent = serde_json::from_str(&json).unwrap();
    let mut other = SessionState::default();
    other.apply(&answer_only());
    assert_eq!(other.apply(&event), Touched::All);
    assert_eq!(other, state);
}

fn answer_only() -> SessionEvent {
    SessionEvent::MessageAdded {
        message: Message::assistant("x"),
    }
}

fn failure(output: &str) -> SessionEvent {
    use crate::runtime::build_result::{BuildResult, Stage};
    SessionEvent::BuildResult {
        result: Box::new(BuildResult::new(
            Stage::Install,
            Some("npm install".into()),
            Some(1),
            output,
        )),
    }
}

#[test]
fn build_results_are_kept_per_session_and_bounded() {
    let mut state = SessionState::default();
    assert_eq!(state.apply(&failure("npm error 404")), Touched::Alerts);
    assert_eq!(state.build_results.len(), 1);
    assert_eq!(state.build_results[0].output, "npm error 404");
    for i in 0..(super::state::MAX_BUILD_RESULTS + 5) {
        state.apply(&failure(&format!("error {i}")));
    }
    assert_eq!(state.build_results.len(), super::state::MAX_BUILD_RESULTS);
    let last = format!("error {}", super::state::MAX_BUILD_RESULTS + 4);
    assert_eq!(state.build_results.last().unwrap().output, last);
    // They survive the snapshot a late tab starts from.
    let json = serde_json::to_string(&SessionEvent::Snapshot {
        state: Box::new(state.clone()),
    })
    .unwrap();
    let mut other = SessionState::default();
    other.apply(&serde_json::from_str(&json).unwrap());
    assert_eq!(other, state);
}

#[test]
fn an_automatic_message_keeps_its_attempt_through_json() {
    let mut message = Message::user("m3", "The install failed");
    message.automatic = Some(FixAttempt {
        attempt: 2,
        max_attempts: 3,
        tokens_so_far: 1200,
        reason: FixReason::Format,
    });
    let event = SessionEvent::MessageAdded { message };
    let back: SessionEvent = serde_json::from_str(&serde_json::to_string(&event).unwrap()).unwrap();
    assert_eq!(back, event);
    // A message from before the flag existed reads as typed by the person.
    let old = serde_json::json!({"type": "message_added", "message": {
        "id": "m1", "role": "user", "parts": [], "status": {"state": "complete"},
        "usage": null, "notice": null, "finish_reason": null}});
    let SessionEvent::MessageAdded { message } = serde_json::from_value(old).unwrap() else {
        panic!("not a message")
    };
    assert_eq!(message.automatic, None);
    let SessionEvent::MessageAdded { message } = &back else {
        panic!("not a message")
    };
    let line = message.automatic.map(|a| a.describe()).unwrap_or_default();
    assert_eq!(
        line,
        "Sent by Rivet: the answer had code but nothing to build; format reminder, attempt 2 of \
         3 (1200 tokens used so far)"
    );
    // An attempt from before reasons existed was about a failure.
    let old = serde_json::json!({"attempt": 1, "max_attempts": 3, "tokens_so_far": 0});
    let attempt: FixAttempt = serde_json::from_value(old).unwrap();
    assert_eq!(attempt.reason, FixReason::Failure);
    assert!(
        attempt
            .describe()
            .starts_with("Sent by Rivet: automatic fix, attempt 1 of 3")
    );
}

#[test]
fn an_undone_message_keeps_what_it_was_through_the_reducer_and_json() {
    let mut state = SessionState::default();
    state.apply(&user("m1", "hi"));
    let undone = MessageStatus::Undone {
        was: Box::new(MessageStatus::Complete),
    };
    let event = SessionEvent::MessageStatusChanged {
        message_id: "m1".into(),
        status: undone.clone(),
    };
    let json = serde_json::to_value(&event).unwrap();
    assert_eq!(
        json,
        serde_json::json!({"type": "message_status_changed", "message_id": "m1",
            "status": {"state": "undone", "was": {"state": "complete"}}})
    );
    let back: SessionEvent = serde_json::from_value(json).unwrap();
    assert_eq!(state.apply(&back), Touched::Message("m1".into()));
    assert_eq!(state.messages[0].status, undone);
    assert!(undone.is_final());
}

#[test]
fn the_context_an_answer_used_and_its_summary_land_on_the_answer_and_survive_a_snapshot() {
    let mut state = SessionState::default();
    state.apply(&user("m1", "go on"));
    state.apply(&SessionEvent::MessageAdded {
        message: Message::assistant("m2"),
    });
    let usage = ContextUse {
        used: 5000,
        window: 8192,
    };
    let summary = ContextSummary {
        covers: 6,
        text: "The user asked for a list app.".into(),
    };
    let touched = state.apply(&SessionEvent::ContextUsage {
        message_id: "m2".into(),
        usage,
    });
    assert_eq!(touched, Touched::Message("m2".into()));
    state.apply(&SessionEvent::ContextSummary {
        upto_message_id: "m2".into(),
        summary: summary.clone(),
    });
    // An event for a message that is not there changes nothing.
    state.apply(&SessionEvent::ContextUsage {
        message_id: "m9".into(),
        usage,
    });
    let answer = state.message("m2").unwrap();
    assert_eq!(answer.context, Some(usage));
    assert_eq!(answer.context_summary.as_ref(), Some(&summary));
    assert_eq!(state.message("m1").unwrap().context, None);
    let json = serde_json::to_string(&state).unwrap();
    let again: SessionState = serde_json::from_str(&json).unwrap();
    assert_eq!(again, state);
}

#[test]
fn a_fix_resolves_the_failures_before_it_and_not_those_after() {
    use crate::runtime::build_result::{BuildResult, Stage};
    let mut state = SessionState::default();
    for id in 1..=3 {
        let mut result = BuildResult::new(Stage::Install, None, Some(1), "ERR! 404");
        result.id = id;
        state.apply(&SessionEvent::BuildResult {
            result: Box::new(result),
        });
        state.apply(&SessionEvent::Alert {
            alert: Alert {
                id,
                title: format!("failure {id}"),
                detail: String::new(),
                action: None,
                fix_results: Vec::new(),
                resolved: None,
            },
        });
    }
    let resolve = |alerts_up_to, results_up_to, by: &str| SessionEvent::FailuresResolved {
        alerts_up_to,
        results_up_to,
        by: by.into(),
    };
    assert_eq!(
        state.apply(&resolve(1, 2, "fixed by automatic attempt 1")),
        Touched::Alerts
    );
    state.apply(&resolve(3, 3, "fixed by automatic attempt 2"));
    let alerts: Vec<Option<&str>> = state.alerts.iter().map(|a| a.resolved.as_deref()).collect();
    assert_eq!(
        alerts,
        [
            Some("fixed by automatic attempt 1"),
            Some("fixed by automatic attempt 2"),
            Some("fixed by automatic attempt 2"),
        ]
    );
    let results: Vec<Option<&str>> = state
        .build_results
        .iter()
        .map(|r| r.resolved.as_deref())
        .collect();
    assert_eq!(
        results,
        [
            Some("fixed by automatic attempt 1"),
            Some("fixed by automatic attempt 1"),
            Some("fixed by automatic attempt 2"),
        ]
    );
    // Through JSON, as a late tab's snapshot carries it.
    let json = serde_json::to_string(&SessionEvent::Snapshot {
        state: Box::new(state.clone()),
    })
    .unwrap();
    let mut other = SessionState::default();
    other.apply(&serde_json::from_str(&json).unwrap());
    assert_eq!(other, state);
}

#[test]
fn the_spend_is_the_answers_costs_and_the_side_costs_from_zero() {
    let mut state = SessionState::default();
    assert_eq!(state.spent_usd().to_bits(), 0.0f64.to_bits(), "not -0.0");
    answer(&mut state, "m1", "Hello.", 4);
    state.apply(&SessionEvent::Cost {
        message_id: "m1".into(),
        cost_usd: 0.25,
    });
    state.apply(&SessionEvent::SideCost { cost_usd: 0.5 });
    state.apply(&SessionEvent::SideCost { cost_usd: 0.125 });
    assert_eq!(state.spent_usd(), 0.875);
    // A snapshot carries the side costs.
    let json = serde_json::to_string(&state).unwrap();
    let back: SessionState = serde_json::from_str(&json).unwrap();
    assert_eq!(back.spent_usd(), 0.875);
}
