use serde_json::json;

use super::*;

const ORIGIN: &str = "https://abc--5173--123.local-credentialless.webcontainer-api.io";

fn report(message: Value) -> Option<(String, String)> {
    PreviewMessage::parse(&message.to_string())?
        .report(Some(ORIGIN))
        .map(|r| (r.kind, r.message))
}

fn base(kind: &str) -> serde_json::Map<String, Value> {
    let mut message = serde_json::Map::new();
    message.insert("type".into(), kind.into());
    message.insert("previewId".into(), "abc".into());
    message.insert("port".into(), 5173.into());
    message.insert("pathname".into(), "/".into());
    message.insert("search".into(), "".into());
    message.insert("hash".into(), "".into());
    message
}

fn with(kind: &str, fields: Value) -> Value {
    let mut message = base(kind);
    if let Value::Object(fields) = fields {
        message.extend(fields);
    }
    Value::Object(message)
}

#[test]
fn an_uncaught_exception_is_an_error_with_its_stack() {
    let stack = format!(
        "TypeError: Cannot read properties of undefined (reading 'map')\n    at {ORIGIN}/app.js:2:58"
    );
    let message = with(
        "PREVIEW_UNCAUGHT_EXCEPTION",
        json!({"message": "Uncaught TypeError: Cannot read properties of undefined (reading 'map')", "stack": stack}),
    );
    assert_eq!(
        report(message),
        Some((
            "error".into(),
            "TypeError: Cannot read properties of undefined (reading 'map')\n    at app.js:2:58"
                .into()
        ))
    );
}

#[test]
fn an_uncaught_exception_without_a_stack_is_its_message() {
    let message = with(
        "PREVIEW_UNCAUGHT_EXCEPTION",
        json!({"message": "Script error.", "stack": null}),
    );
    assert_eq!(
        report(message),
        Some(("error".into(), "Script error.".into()))
    );
}

#[test]
fn a_message_its_stack_does_not_hold_comes_before_the_frames() {
    let message = with(
        "PREVIEW_UNCAUGHT_EXCEPTION",
        json!({"message": "boom", "stack": "Error: something else\n    at f (src/a.js:1:2)"}),
    );
    assert_eq!(
        report(message),
        Some(("error".into(), "boom\n    at f (src/a.js:1:2)".into()))
    );
}

#[test]
fn an_unhandled_rejection_is_a_rejection() {
    let message = with(
        "PREVIEW_UNHANDLED_REJECTION",
        json!({"message": "Error: no data", "stack": format!("Error: no data\n    at load ({ORIGIN}/src/main.js?t=1712:4:9)")}),
    );
    assert_eq!(
        report(message),
        Some((
            "rejection".into(),
            "Unhandled promise rejection: Error: no data\n    at load (src/main.js:4:9)".into()
        ))
    );
}

#[test]
fn a_console_error_with_several_args_joins_them() {
    let message = with(
        "PREVIEW_CONSOLE_ERROR",
        json!({"args": ["failed to load", 3, {"id": 7}, null, true], "stack": ""}),
    );
    assert_eq!(
        report(message),
        Some((
            "console".into(),
            r#"failed to load 3 {"id":7} null true"#.into()
        ))
    );
}

#[test]
fn a_console_error_gets_the_frames_of_the_call() {
    let stack = format!(
        "Error\n    at console.error (preview-script.js:1:1)\n    at render ({ORIGIN}/src/App.jsx?v=3a2b:12:5)"
    );
    let message = with(
        "PREVIEW_CONSOLE_ERROR",
        json!({"args": ["bad prop"], "stack": stack}),
    );
    assert_eq!(
        report(message),
        Some((
            "console".into(),
            "bad prop\n    at console.error (preview-script.js:1:1)\n    at render (src/App.jsx:12:5)"
                .into()
        ))
    );
}

#[test]
fn a_console_error_whose_args_hold_a_stack_keeps_only_theirs() {
    let message = with(
        "PREVIEW_CONSOLE_ERROR",
        json!({"args": ["Error: x\n    at f (src/a.js:1:2)"], "stack": "Error\n    at g (src/b.js:3:4)"}),
    );
    assert_eq!(
        report(message),
        Some(("console".into(), "Error: x\n    at f (src/a.js:1:2)".into()))
    );
}

#[test]
fn a_long_stack_is_cut_to_its_first_frames() {
    let frames: Vec<String> = (0..40)
        .map(|i| format!("    at f{i} (a.js:{i}:1)"))
        .collect();
    let stack = format!("Error: deep\n{}", frames.join("\n"));
    let message = with(
        "PREVIEW_UNCAUGHT_EXCEPTION",
        json!({"message": "deep", "stack": stack}),
    );
    let (_, text) = report(message).expect("a report");
    assert_eq!(text.lines().count(), 1 + STACK_FRAMES);
    assert!(text.ends_with(&format!(
        "at f{} (a.js:{}:1)",
        STACK_FRAMES - 1,
        STACK_FRAMES - 1
    )));
}

#[test]
fn an_unknown_type_is_ignored() {
    let message = with("PREVIEW_SOMETHING_ELSE", json!({"message": "boom"}));
    assert_eq!(report(message), None);
}

#[test]
fn an_oversized_message_is_ignored() {
    let long = "x".repeat(MAX_MESSAGE + 1);
    let exception = with(
        "PREVIEW_UNCAUGHT_EXCEPTION",
        json!({"message": long, "stack": ""}),
    );
    assert_eq!(report(exception), None);
    let console = with(
        "PREVIEW_CONSOLE_ERROR",
        json!({"args": ["a", long], "stack": ""}),
    );
    assert_eq!(report(console), None);
}

#[test]
fn a_stack_is_cut_to_fit_beside_a_long_message() {
    let long = "x".repeat(MAX_MESSAGE - 10);
    let message = with(
        "PREVIEW_UNCAUGHT_EXCEPTION",
        json!({"message": long, "stack": "Error: other\n    at f (src/a.js:1:2)"}),
    );
    assert_eq!(report(message), Some(("error".into(), long)));
}

#[test]
fn an_empty_message_is_ignored() {
    for message in [
        with(
            "PREVIEW_UNCAUGHT_EXCEPTION",
            json!({"message": "  ", "stack": ""}),
        ),
        with(
            "PREVIEW_UNHANDLED_REJECTION",
            json!({"message": "", "stack": null}),
        ),
        with("PREVIEW_CONSOLE_ERROR", json!({"args": [], "stack": ""})),
        with("PREVIEW_CONSOLE_ERROR", json!({"args": [" "], "stack": ""})),
    ] {
        assert_eq!(report(message.clone()), None, "{message}");
    }
}

#[test]
fn a_message_of_another_shape_is_ignored() {
    for json in [
        "null",
        r#""PREVIEW_UNCAUGHT_EXCEPTION""#,
        r#"{"message":"no type"}"#,
        r#"{"type":"PREVIEW_UNCAUGHT_EXCEPTION","message":42}"#,
        r#"{"type":"PREVIEW_CONSOLE_ERROR","args":"not a list"}"#,
        "not json",
    ] {
        let report = PreviewMessage::parse(json).and_then(|m| m.report(None));
        assert_eq!(report, None, "{json}");
    }
}

#[test]
fn without_the_previews_origin_its_urls_stay() {
    let stack = format!("Error: x\n    at {ORIGIN}/app.js:1:1");
    let message = PreviewMessage::parse(
        &with(
            "PREVIEW_UNCAUGHT_EXCEPTION",
            json!({"message": "x", "stack": stack}),
        )
        .to_string(),
    )
    .expect("a preview message");
    assert_eq!(message.port, Some(5173));
    let report = message.report(None).expect("a report");
    assert!(report.message.contains(&format!("{ORIGIN}/app.js:1:1")));
}

#[test]
fn only_a_version_query_before_a_line_number_is_taken_out() {
    assert_eq!(
        clean(
            "at a.js?t=123:1:2 and b.js?x=1 and ?v=:3 and c.js?v=9z",
            None
        ),
        "at a.js:1:2 and b.js?x=1 and ?v=:3 and c.js?v=9z"
    );
}
