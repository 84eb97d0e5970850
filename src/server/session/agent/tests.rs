use super::preview::{cap, diff, summary, written_file};
use super::*;
use crate::runtime::llm::ToolCall;

fn call(name: &str, arguments: serde_json::Value) -> ToolCall {
    ToolCall {
        id: "call_1".into(),
        name: name.into(),
        arguments: arguments.to_string(),
    }
}

fn rejected(status: u16, message: &str) -> LlmError {
    LlmError::Rejected {
        provider: "custom".into(),
        status,
        message: message.into(),
    }
}

#[test]
fn a_refusal_that_names_tools_means_the_model_takes_none() {
    assert!(tools_refused(&rejected(
        400,
        "registry.ollama.ai/library/llama2 does not support tools"
    )));
    assert!(tools_refused(&rejected(
        400,
        "'tool_choice' is not supported"
    )));
    assert!(!tools_refused(&rejected(400, "context length exceeded")));
    assert!(!tools_refused(&LlmError::RateLimited {
        provider: "custom".into(),
        retry_after_secs: None,
    }));
}

#[test]
fn a_summary_names_the_file_pattern_or_command() {
    let write = call(
        "write_file",
        serde_json::json!({"file_path": "/home/project/src/a.js", "content": "x"}),
    );
    assert_eq!(summary(&write), "/home/project/src/a.js");
    assert_eq!(written_file(&write).as_deref(), Some("src/a.js"));
    let shell = call(
        "run_shell_command",
        serde_json::json!({"command": "npm install\nnpm test"}),
    );
    assert_eq!(summary(&shell), "npm install");
    assert_eq!(written_file(&shell), None);
    assert_eq!(
        summary(&call("read_build_result", serde_json::json!({}))),
        ""
    );
}

#[test]
fn a_summary_of_unreadable_arguments_is_empty_and_a_path_out_is_no_written_file() {
    let broken = ToolCall {
        id: "c".into(),
        name: "write_file".into(),
        arguments: "{not json".into(),
    };
    assert_eq!(summary(&broken), "");
    assert_eq!(written_file(&broken), None);
    let escape = call(
        "write_file",
        serde_json::json!({"file_path": "../x", "content": ""}),
    );
    assert_eq!(written_file(&escape), None);
}

#[test]
fn long_text_is_capped_at_a_character_boundary() {
    assert_eq!(cap("héllo", 2), "hé…");
    assert_eq!(cap("hi", 2), "hi");
}

#[test]
fn a_new_file_diffs_against_nothing() {
    let text = diff("index.html", "", "<h1>Todos</h1>\n");
    assert!(
        text.starts_with("--- a/index.html\n+++ b/index.html\n"),
        "{text}"
    );
    assert!(text.contains("+<h1>Todos</h1>"), "{text}");
    let change = diff("a.txt", "one\ntwo\n", "one\nthree\n");
    assert!(change.contains("-two\n+three\n"), "{change}");
}
