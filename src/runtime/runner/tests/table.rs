//! The runner's behaviour as a table: a project, scripted commands and an
//! answer (with Stop, the clock and ports between its parts) → the actions'
//! statuses, the files and the alerts.

use std::time::Duration;

use super::super::fake::{Harness, START_TIMEOUT};
use crate::runtime::host::fake::Script;
use crate::runtime::session::ActionStatus;

/// What the test does, in order.
enum Step {
    /// A piece of the answer.
    Answer(&'static str),
    /// The person presses Stop.
    Stop,
    /// The clock moves on.
    Wait(Duration),
    /// A server in the runtime starts listening.
    Port(u16),
}

/// An action's expected status: `"none"` (not begun), `"complete"`,
/// `"running"`, `"aborted"`, or `"failed: <text the reason contains>"`.
type Status = &'static str;

struct Case {
    name: &'static str,
    files: &'static [(&'static str, &'static str)],
    /// Exact command line → what it does; others exit 0 at once.
    scripts: Vec<(&'static str, Script)>,
    steps: Vec<Step>,
    statuses: &'static [Status],
    /// Commands spawned, in order.
    commands: &'static [&'static str],
    /// Files and their contents afterwards (`None`: absent).
    after: &'static [(&'static str, Option<&'static str>)],
    /// Alert titles, in order.
    alerts: &'static [&'static str],
}

const EDIT: &str = "<boltAction type=\"edit\" filePath=\"src/a.js\">\n<<<<<<< SEARCH\nconst a = 1;\n=======\nconst a = 2;\n>>>>>>> REPLACE\n</boltAction>";

fn cases() -> Vec<Case> {
    use Step::*;
    vec![
        Case {
            name: "actions_run_in_the_answer_order",
            files: &[],
            scripts: vec![],
            steps: vec![Answer(
                "<boltAction type=\"shell\">make a</boltAction><boltAction type=\"file\" filePath=\"b.txt\">b</boltAction><boltAction type=\"shell\">make c</boltAction>",
            )],
            statuses: &["complete", "complete", "complete"],
            commands: &["make a", "make c"],
            after: &[("b.txt", Some("b\n"))],
            alerts: &[],
        },
        Case {
            name: "a_file_waits_for_the_command_before_it",
            files: &[],
            scripts: vec![("make", Script::held())],
            steps: vec![Answer(
                "<boltAction type=\"shell\">make</boltAction><boltAction type=\"file\" filePath=\"b.txt\">b</boltAction>",
            )],
            statuses: &["running", "none"],
            commands: &["make"],
            after: &[("b.txt", None)],
            alerts: &[],
        },
        Case {
            name: "a_later_file_action_replaces_an_earlier_one",
            files: &[("a.txt", "0")],
            scripts: vec![],
            steps: vec![Answer(
                "<boltAction type=\"file\" filePath=\"a.txt\">1</boltAction><boltAction type=\"file\" filePath=\"a.txt\">2</boltAction>",
            )],
            statuses: &["complete", "complete"],
            commands: &[],
            after: &[("a.txt", Some("2\n"))],
            alerts: &[],
        },
        Case {
            name: "an_edit_replaces_its_search_text",
            files: &[("src/a.js", "const a = 1;\nconst b = 1;\n")],
            scripts: vec![],
            steps: vec![Answer(EDIT)],
            statuses: &["complete"],
            commands: &[],
            after: &[("src/a.js", Some("const a = 2;\nconst b = 1;\n"))],
            alerts: &[],
        },
        Case {
            name: "an_edit_whose_search_text_is_missing_fails_and_changes_nothing",
            files: &[("src/a.js", "const b = 1;\n")],
            scripts: vec![],
            steps: vec![Answer(EDIT)],
            statuses: &["failed: "],
            commands: &[],
            after: &[("src/a.js", Some("const b = 1;\n"))],
            alerts: &["A file was not written"],
        },
        Case {
            name: "a_failing_command_fails_with_its_exit_code_and_output",
            files: &[],
            scripts: vec![("npm test", Script::exits(1, "1 failing\n"))],
            steps: vec![Answer("<boltAction type=\"shell\">npm test</boltAction>")],
            statuses: &["failed: `npm test` exited with code 1:\n1 failing"],
            commands: &["npm test"],
            after: &[],
            alerts: &["`npm test` failed"],
        },
        Case {
            name: "stop_kills_the_running_command_and_aborts_what_follows",
            files: &[],
            scripts: vec![("sleep 9", Script::held())],
            steps: vec![
                Answer(
                    "<boltAction type=\"shell\">sleep 9</boltAction><boltAction type=\"file\" filePath=\"b.txt\">b</boltAction>",
                ),
                Stop,
            ],
            statuses: &["aborted", "aborted"],
            commands: &["sleep 9"],
            after: &[("b.txt", None)],
            alerts: &[],
        },
        Case {
            name: "a_start_completes_when_its_port_opens",
            files: &[],
            scripts: vec![("npm run dev", Script::held())],
            steps: vec![
                Answer("<boltAction type=\"start\">npm run dev</boltAction>"),
                Port(5173),
            ],
            statuses: &["complete"],
            commands: &["npm run dev"],
            after: &[],
            alerts: &[],
        },
        Case {
            name: "a_start_without_a_port_keeps_running_until_its_timeout",
            files: &[],
            scripts: vec![("npm run dev", Script::held())],
            steps: vec![
                Answer("<boltAction type=\"start\">npm run dev</boltAction>"),
                Wait(START_TIMEOUT - Duration::from_secs(1)),
            ],
            statuses: &["running"],
            commands: &["npm run dev"],
            after: &[],
            alerts: &[],
        },
        Case {
            name: "a_start_that_opens_no_port_in_time_fails",
            files: &[],
            scripts: vec![("npm run dev", Script::held())],
            steps: vec![
                Answer("<boltAction type=\"start\">npm run dev</boltAction>"),
                Wait(START_TIMEOUT),
            ],
            statuses: &["failed: `npm run dev` opened no port within 60 s"],
            commands: &["npm run dev"],
            after: &[],
            alerts: &["The dev server did not start"],
        },
        Case {
            name: "a_start_whose_server_exits_before_a_port_fails",
            files: &[],
            scripts: vec![("npm run dev", Script::exits(1, "vite: not found\n"))],
            steps: vec![Answer(
                "<boltAction type=\"start\">npm run dev</boltAction>",
            )],
            statuses: &["failed: vite: not found"],
            commands: &["npm run dev"],
            after: &[],
            alerts: &["The dev server exited before it opened a port"],
        },
    ]
}

fn matches(status: &Option<ActionStatus>, expected: Status) -> bool {
    match (status, expected.strip_prefix("failed: ")) {
        (Some(ActionStatus::Failed { reason }), Some(text)) => reason.contains(text),
        (_, Some(_)) => false,
        (Some(ActionStatus::Complete), None) => expected == "complete",
        (Some(ActionStatus::Running), None) => expected == "running",
        (Some(ActionStatus::Aborted), None) => expected == "aborted",
        (None, None) => expected == "none",
        _ => false,
    }
}

fn play(case: &Case) -> Harness {
    let mut h = Harness::new();
    for (path, content) in case.files {
        h.runtime.put(path, content.as_bytes());
    }
    for (command, script) in &case.scripts {
        h.runtime.script_exact(*command, script.clone());
    }
    for step in &case.steps {
        match step {
            Step::Answer(text) => h.stream(text),
            Step::Stop => {
                h.runner.abort();
                h.settle();
            }
            Step::Wait(by) => h.advance(*by),
            Step::Port(port) => {
                h.runtime.set_port(*port, true);
                h.settle();
            }
        }
    }
    h
}

fn check(case: &Case, h: &Harness) {
    let name = case.name;
    let statuses = h.statuses();
    assert_eq!(statuses.len(), case.statuses.len(), "{name}: {statuses:?}");
    for (status, expected) in statuses.iter().zip(case.statuses) {
        assert!(
            matches(status, expected),
            "{name}: {status:?}, not {expected}"
        );
    }
    assert_eq!(h.runtime.commands(), case.commands, "{name}");
    for (path, content) in case.after {
        assert_eq!(h.runtime.text(path).as_deref(), *content, "{name}: {path}");
    }
    let alerts: Vec<String> = h.alerts().into_iter().map(|a| a.title).collect();
    assert_eq!(alerts, case.alerts, "{name}");
}

#[test]
fn the_runner_plays_each_case_of_the_table() {
    for case in cases() {
        let h = play(&case);
        check(&case, &h);
    }
}
