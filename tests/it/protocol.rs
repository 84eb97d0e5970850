//! The bolt protocol on the recorded transcripts: the parser as a library,
//! the edit applier on real edits, and `rivet parse` end to end.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};

use pretty_assertions::assert_eq;
use rivet::runtime::action::{ValidatedAction, apply_edit, validate};
use rivet::runtime::protocol::{Action, ActionKind, Event, Parser, merge_adjacent};
use serde_json::Value;

const FIXTURES: [&str; 6] = [
    "broken-dep",
    "broken-syntax",
    "edit-app",
    "fix-dep",
    "fix-syntax",
    "todo-react",
];

/// A transcript's answer, without the scripted provider's front matter.
fn fixture(name: &str) -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/transcripts")
        .join(format!("{name}.txt"));
    std::fs::read_to_string(&path)
        .unwrap()
        .split_inclusive('\n')
        .filter(|l| !l.starts_with("#!"))
        .collect()
}

/// Feeds `input` in chunks of `size` characters.
fn parse_chunked(message_id: &str, input: &str, size: usize) -> Vec<Event> {
    let chars: Vec<(usize, char)> = input.char_indices().collect();
    let mut parser = Parser::new(message_id);
    let mut events = Vec::new();
    for piece in chars.chunks(size) {
        let start = piece[0].0;
        let end = piece.last().map(|(i, c)| i + c.len_utf8()).unwrap();
        events.extend(parser.push(&input[start..end]));
    }
    events.extend(parser.finish());
    events
}

fn actions(events: &[Event]) -> Vec<Action> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::ActionClose { action, .. } => Some((**action).clone()),
            _ => None,
        })
        .collect()
}

/// The raw body of each action, found with plain string search: an oracle
/// that knows nothing of the parser, fit for these well-formed transcripts.
fn raw_bodies(input: &str) -> Vec<&str> {
    let mut bodies = Vec::new();
    let mut rest = input;
    while let Some(open) = rest.find("<boltAction ") {
        let after = &rest[open..];
        let start = after.find('>').unwrap() + 1;
        let end = after.find("</boltAction>").unwrap();
        bodies.push(&after[start..end]);
        rest = &after[end..];
    }
    bodies
}

#[test]
fn transcripts_give_their_actions() {
    let events = Parser::parse("m1", &fixture("todo-react"));
    let summary: Vec<(String, Option<String>)> = actions(&events)
        .iter()
        .map(|a| {
            (
                a.kind.type_name().to_owned(),
                a.kind.file_path().map(str::to_owned),
            )
        })
        .collect();
    let file = |p: &str| ("file".to_owned(), Some(p.to_owned()));
    assert_eq!(
        summary,
        [
            file("package.json"),
            file("vite.config.js"),
            file("index.html"),
            file("src/main.jsx"),
            file("src/App.jsx"),
            file("src/App.css"),
            ("shell".to_owned(), None),
            ("start".to_owned(), None),
        ]
    );
    let Some(Event::ArtifactOpen { id, artifact }) = events.get(1) else {
        panic!("no artifact: {events:?}");
    };
    assert_eq!(
        (id.as_str(), artifact.title.as_str()),
        ("todo-app", "React Todo App")
    );
    let Some(Event::Text { text }) = events.last() else {
        panic!("no closing text");
    };
    assert!(text.starts_with("\n\nThe app is starting."), "{text:?}");
}

#[test]
fn transcript_contents_and_deltas_match_the_raw_bodies() {
    for name in FIXTURES {
        let input = fixture(name);
        let events = merge_adjacent(Parser::parse("m1", &input));
        let bodies = raw_bodies(&input);
        let deltas: Vec<&str> = events
            .iter()
            .filter_map(|e| match e {
                Event::ActionDelta { delta, .. } => Some(delta.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(deltas, bodies, "{name}");
        for (action, body) in actions(&events).iter().zip(&bodies) {
            assert!(
                !action.truncated && action.error.is_none(),
                "{name}: {action:?}"
            );
            let expect = match action.kind {
                ActionKind::File { .. } => body.trim_start_matches('\n').to_owned(),
                ActionKind::Edit { .. } => (*body).to_owned(),
                _ => body.trim().to_owned(),
            };
            assert_eq!(action.content, expect, "{name}");
        }
    }
}

#[test]
fn transcripts_parse_the_same_in_any_chunk_size() {
    for name in FIXTURES {
        let input = fixture(name);
        let whole = merge_adjacent(Parser::parse("m1", &input));
        for size in [1, 2, 3, 7, 20, 64, 4096] {
            assert_eq!(
                merge_adjacent(parse_chunked("m1", &input, size)),
                whole,
                "{name} / {size}"
            );
        }
    }
}

fn file_of(transcript: &str, path: &str) -> String {
    actions(&Parser::parse("m", &fixture(transcript)))
        .into_iter()
        .find(|a| a.kind.file_path() == Some(path))
        .unwrap()
        .content
}

fn edit_of(transcript: &str) -> Action {
    actions(&Parser::parse("m", &fixture(transcript)))
        .into_iter()
        .find(|a| matches!(a.kind, ActionKind::Edit { .. }))
        .unwrap()
}

#[test]
fn the_recorded_fixes_repair_the_broken_apps() {
    let broken = file_of("broken-syntax", "src/App.jsx");
    let fixed = apply_edit(&broken, &edit_of("fix-syntax").content).unwrap();
    assert_eq!(fixed, file_of("todo-react", "src/App.jsx"));

    assert_ne!(
        file_of("broken-dep", "package.json"),
        file_of("todo-react", "package.json")
    );
    assert_eq!(
        file_of("fix-dep", "package.json"),
        file_of("todo-react", "package.json")
    );
}

#[test]
fn the_recorded_edit_adds_its_button() {
    let app = file_of("todo-react", "src/App.jsx");
    let edited = apply_edit(&app, &edit_of("edit-app").content).unwrap();
    let added: Vec<&str> = edited.lines().filter(|l| !app.contains(*l)).collect();
    assert_eq!(
        added,
        [
            "  function clearCompleted() {",
            "    setTodos(todos.filter((t) => !t.done));",
            "      <button onClick={clearCompleted}>Clear completed</button>",
        ]
    );
}

#[test]
fn every_transcript_action_validates() {
    for name in FIXTURES {
        for action in actions(&Parser::parse("m", &fixture(name))) {
            let validated = validate(action.clone());
            assert!(validated.is_ok(), "{name}: {action:?}: {validated:?}");
            if let Ok(ValidatedAction::WriteFile { path, .. }) = validated {
                assert_eq!(Some(path.as_str()), action.kind.file_path());
            }
        }
    }
}

/// Runs `rivet parse` with `args` on `input`; returns stdout's lines and the
/// exit status.
fn rivet_parse(args: &[&str], input: &[u8]) -> (Vec<Value>, std::process::Output) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_rivet"))
        .arg("parse")
        .args(args)
        .env("RUST_LOG", "off")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(input).unwrap();
    let output = child.wait_with_output().unwrap();
    let lines = String::from_utf8(output.stdout.clone())
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    (lines, output)
}

/// The keys each event must have, exactly, as `docs/protocol.md` says.
fn check_schema(line: &Value) {
    let object = line.as_object().unwrap();
    let keys: Vec<&str> = object.keys().map(String::as_str).collect();
    let optional = ["file_path", "operation", "project_id", "attributes"];
    let required: &[&str] = match object["event"].as_str().unwrap() {
        "text" => &["event", "text"],
        "artifact_open" => &["event", "id", "title", "type"],
        "action_open" => &["event", "artifact_id", "action_id", "type"],
        "action_delta" => &["event", "artifact_id", "action_id", "delta"],
        "action_close" => &[
            "event",
            "artifact_id",
            "action_id",
            "type",
            "content",
            "truncated",
            "error",
        ],
        "artifact_close" => &["event", "id"],
        other => panic!("unknown event {other}"),
    };
    for key in required {
        assert!(keys.contains(key), "{key} missing in {line}");
    }
    for key in keys {
        assert!(
            required.contains(&key) || optional.contains(&key),
            "unexpected {key} in {line}"
        );
    }
}

#[test]
fn rivet_parse_writes_the_documented_json_lines() {
    for name in FIXTURES {
        let input = fixture(name);
        let expect = merge_adjacent(Parser::parse("message", &input));
        for args in [
            &[][..],
            &["--chunk-size", "1"],
            &["--chunk-size", "5"],
            &["--chunk-size", "20"],
            &["--chunk-size", "4096"],
        ] {
            let (lines, output) = rivet_parse(args, input.as_bytes());
            assert!(output.status.success(), "{name} {args:?}: {output:?}");
            lines.iter().for_each(check_schema);
            let events: Vec<Event> = lines
                .into_iter()
                .map(|l| serde_json::from_value(l).unwrap())
                .collect();
            assert_eq!(merge_adjacent(events), expect, "{name} {args:?}");
        }
    }
}

#[test]
fn rivet_parse_names_artifacts_after_the_message_id() {
    let input =
        "<boltArtifact title=\"x\"><boltAction type=\"shell\">ls</boltAction></boltArtifact>";
    let (lines, _) = rivet_parse(&["--message-id", "msg7"], input.as_bytes());
    assert_eq!(lines[0]["id"], "msg7-0");
    assert_eq!(lines[1]["artifact_id"], "msg7-0");
}

#[test]
fn rivet_parse_closes_a_cut_off_message() {
    let input = fixture("todo-react");
    let cut = &input[..input.find("useEffect(() =>").unwrap()];
    let (lines, output) = rivet_parse(&["--chunk-size", "20"], cut.as_bytes());
    assert!(output.status.success());
    let closes: BTreeMap<String, bool> = lines
        .iter()
        .filter(|l| l["event"] == "action_close")
        .map(|l| {
            (
                l["file_path"].as_str().unwrap().to_owned(),
                l["truncated"].as_bool().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        closes,
        BTreeMap::from([
            ("index.html".to_owned(), false),
            ("package.json".to_owned(), false),
            ("src/App.jsx".to_owned(), true),
            ("src/main.jsx".to_owned(), false),
            ("vite.config.js".to_owned(), false),
        ])
    );
    assert_eq!(lines.last().unwrap()["event"], "artifact_close");

    let (lines, _) = rivet_parse(&[], b"Wait for it <bolt");
    let text: String = lines
        .iter()
        .map(|l| {
            assert_eq!(l["event"], "text");
            l["text"].as_str().unwrap()
        })
        .collect();
    assert_eq!(text, "Wait for it <bolt");
}

#[test]
fn rivet_parse_refuses_input_that_is_not_utf8() {
    let (lines, output) = rivet_parse(&[], b"abc \xff def");
    assert!(!output.status.success());
    assert!(lines.is_empty());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("stdin is not UTF-8 (byte 4)"), "{stderr}");
}
