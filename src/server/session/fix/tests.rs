use super::*;
use crate::runtime::build_result::Stage;
use crate::runtime::build_result::report::describe_failures;
use crate::runtime::session::Message;

fn config(max_attempts: u32, token_budget: u32) -> FixConfig {
    FixConfig {
        page_error_ms: 0,
        enabled: true,
        max_attempts,
        token_budget,
        settle_ms: 0,
    }
}

fn failure(output: &str) -> BuildResult {
    BuildResult::new(Stage::Command, Some("npm test".into()), Some(1), output)
}

/// One round after the answer or an attempt: its error, whether it wrote a
/// file, the tokens it used.
struct Round(&'static str, bool, u32);

fn run(config: &FixConfig, rounds: &[Round]) -> Vec<Decision> {
    let mut tally = Tally::default();
    let mut decisions = Vec::new();
    for Round(error, changed, tokens) in rounds {
        tally.tokens += tokens;
        let decision = tally.decide(config, &[failure(error)], *changed);
        let stop = matches!(decision, Decision::Stop(_));
        decisions.push(decision);
        if stop {
            break;
        }
    }
    decisions
}

#[test]
fn the_loop_stops_at_its_limits() {
    use Decision::{Attempt, Stop};
    let cases: Vec<(&str, FixConfig, Vec<Round>, Vec<Decision>)> = vec![
        (
            "different errors: as many attempts as allowed",
            config(3, 0),
            vec![
                Round("error a", true, 10),
                Round("error b", true, 10),
                Round("error c", true, 10),
                Round("error d", true, 10),
            ],
            vec![
                Attempt(1),
                Attempt(2),
                Attempt(3),
                Stop(StopReason::Attempts(3)),
            ],
        ),
        (
            "the same error back twice: two attempts",
            config(3, 0),
            vec![
                Round("error at line 3", true, 10),
                Round("error at line 7", true, 10),
                Round("error at line 9", true, 10),
            ],
            vec![Attempt(1), Attempt(2), Stop(StopReason::Repeated)],
        ),
        (
            "an attempt that writes nothing",
            config(3, 0),
            vec![Round("error a", false, 10), Round("error b", false, 10)],
            vec![Attempt(1), Stop(StopReason::NoChange)],
        ),
        (
            "the token budget",
            config(3, 100),
            vec![Round("error a", true, 60), Round("error b", true, 60)],
            vec![
                Attempt(1),
                Stop(StopReason::Budget {
                    spent: 120,
                    budget: 100,
                }),
            ],
        ),
        (
            "no attempts allowed",
            config(0, 0),
            vec![Round("error a", true, 10)],
            vec![Stop(StopReason::Attempts(0))],
        ),
    ];
    for (name, config, rounds, expected) in cases {
        assert_eq!(run(&config, &rounds), expected, "{name}");
    }
}

#[test]
fn the_request_quotes_the_failure_and_its_files() {
    let results = [BuildResult::new(
        Stage::CompileError,
        None,
        None,
        "\u{1b}[31m/home/project/src/App.jsx:86:9: ERROR: Expected \")\"\u{1b}[0m\n",
    )];
    let files = [("src/App.jsx".to_owned(), "export default 1;".to_owned())];
    let text = describe_failures(&results, &files);
    for part in [
        "## The dev server reported a compile error",
        "/home/project/src/App.jsx:86:9: ERROR: Expected \")\"",
        "Files it names: src/App.jsx",
        "### Current content of src/App.jsx",
        "export default 1;",
    ] {
        assert!(text.contains(part), "{part:?} missing from:\n{text}");
    }
    let install = [BuildResult::new(
        Stage::Install,
        Some("npm install".into()),
        Some(1),
        "npm error 404",
    )];
    let text = describe_failures(&install, &[]);
    assert!(
        text.starts_with("## The install failed: `npm install` (exit code 1)"),
        "{text}"
    );
}

#[test]
fn only_an_answer_that_ended_by_itself_is_followed() {
    use crate::runtime::llm::TokenUsage;
    use crate::runtime::session::{MessageStatus, SessionEvent};
    let mut state = SessionState::default();
    state.apply(&SessionEvent::MessageAdded {
        message: Message::assistant("m2"),
    });
    state.apply(&SessionEvent::Usage {
        message_id: "m2".into(),
        usage: TokenUsage {
            prompt_tokens: 30,
            completion_tokens: 12,
            total_tokens: 42,
        },
    });
    state.apply(&SessionEvent::BuildResult {
        result: Box::new(BuildResult {
            id: 1,
            ..failure("error a")
        }),
    });
    let statuses = [
        (MessageStatus::Complete, true),
        (MessageStatus::Stopped, false),
        (
            MessageStatus::Interrupted {
                reason: "cut".into(),
            },
            false,
        ),
        (
            MessageStatus::Failed {
                error: "401".into(),
            },
            false,
        ),
    ];
    for (status, followed) in statuses {
        state.apply(&SessionEvent::MessageFinished {
            message_id: "m2".into(),
            status: status.clone(),
            finish_reason: None,
        });
        let end = RunEnd::read(&state, "m2", 0);
        assert_eq!(end.complete, followed, "{status:?}");
        assert_eq!(end.tokens, 42);
        assert_eq!(end.failures.len(), 1);
        assert!(RunEnd::read(&state, "m2", 1).failures.is_empty());
    }
}

#[test]
fn a_ready_dev_server_is_watched_for_page_errors_longer() {
    let mut config = config(3, 0);
    config.settle_ms = 3_000;
    config.page_error_ms = 5_000;
    let done = Instant::now();
    let after = |ms| done + Duration::from_millis(ms);
    // (when a dev server was first seen ready) → the end of the watch.
    // (when a dev server was first seen ready, whether one was started)
    // → the end of the watch.
    let cases = [
        (None, false, after(3_000)),
        (Some(done), false, after(5_000)),
        // Ready only while the loop watches (a WebContainer's preview):
        // its page still gets the whole time to report.
        (Some(after(2_900)), true, after(7_900)),
        // Started, not ready yet: it gets the page's time to become ready
        // (a WebContainer's tab reports its preview late).
        (None, true, after(5_000)),
        (Some(after(3_100)), true, after(8_100)),
    ];
    for (ready, starting, until) in cases {
        assert_eq!(
            watch_until(&config, done, ready, starting),
            until,
            "{ready:?} {starting}"
        );
    }
}

#[test]
fn console_errors_alone_call_for_no_attempt() {
    let mut state = SessionState::default();
    let mut console = BuildResult::new(Stage::ConsoleError, None, None, "Warning: key");
    console.id = 1;
    state.build_results.push(console);
    assert!(failures_after(&state, 0).is_empty());
    let mut page = BuildResult::new(Stage::PageError, None, None, "TypeError: boom");
    page.id = 2;
    state.build_results.push(page);
    let failures = failures_after(&state, 0);
    assert_eq!(failures.len(), 2, "the console error goes along");
    assert!(failures_after(&state, 2).is_empty());
}

#[test]
fn the_format_reminder_is_sent_once_within_the_attempts_and_budget() {
    // (attempts and tokens already spent, config) → the reminder's number.
    let cases = [
        (0, 0, config(3, 0), Some(1)),
        (2, 0, config(3, 0), Some(3)),
        (3, 0, config(3, 0), None),
        (0, 100, config(3, 100), None),
        (0, 99, config(3, 100), Some(1)),
    ];
    for (attempts, tokens, config, expected) in cases {
        let mut tally = Tally {
            attempts,
            tokens,
            ..Tally::default()
        };
        assert_eq!(tally.decide_nudge(&config), expected, "{attempts} {tokens}");
        // Never a second time for the same message of the person.
        assert_eq!(tally.decide_nudge(&config), None);
    }
}
