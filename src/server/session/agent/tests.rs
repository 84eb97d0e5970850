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

mod approval_previews {
    use super::super::preview::approval_preview;
    use super::call;
    use crate::runtime::host::fake::FakeRuntime;
    use crate::runtime::session::StepChange;
    use crate::server::agent::run::Subject;
    use crate::server::agent::tools::Tool;

    #[tokio::test]
    async fn a_write_file_preview_carries_the_whole_file_before_and_after() {
        let fake = FakeRuntime::with_files([("src/a.js", "one\ntwo\n")]);
        let write = call(
            "write_file",
            serde_json::json!({"file_path": "/home/project/src/a.js", "content": "one\nthree\n"}),
        );
        let preview = approval_preview(&fake, Subject::Builtin(Tool::WriteFile), &write).await;
        assert!(preview.text.contains("-two\n+three\n"), "{}", preview.text);
        let change = preview.change.expect("the whole file");
        assert_eq!(change.path, "src/a.js");
        assert_eq!(
            (change.before.as_str(), change.after.as_str()),
            ("one\ntwo\n", "one\nthree\n")
        );
    }

    #[tokio::test]
    async fn a_new_file_is_previewed_against_nothing() {
        let fake = FakeRuntime::new();
        let write = call(
            "write_file",
            serde_json::json!({"file_path": "b.txt", "content": "hi\n"}),
        );
        let preview = approval_preview(&fake, Subject::Builtin(Tool::WriteFile), &write).await;
        let change = preview.change.expect("the whole file");
        assert_eq!(
            (change.before.as_str(), change.after.as_str()),
            ("", "hi\n")
        );
    }

    #[tokio::test]
    async fn a_replace_preview_shows_the_file_as_the_replacement_leaves_it() {
        let fake = FakeRuntime::with_files([("a.txt", "head\nold line\ntail\n")]);
        let replace = call(
            "replace",
            serde_json::json!({"file_path": "a.txt", "old_string": "old line", "new_string": "new line"}),
        );
        let preview = approval_preview(&fake, Subject::Builtin(Tool::Replace), &replace).await;
        assert!(
            preview
                .text
                .contains(" head\n-old line\n+new line\n tail\n"),
            "{}",
            preview.text
        );
        let change = preview.change.expect("the whole file");
        assert_eq!(change.after, "head\nnew line\ntail\n");
    }

    #[tokio::test]
    async fn a_replace_that_cannot_apply_previews_the_quoted_text_without_a_change() {
        let fake = FakeRuntime::with_files([("a.txt", "something else\n")]);
        let replace = call(
            "replace",
            serde_json::json!({"file_path": "a.txt", "old_string": "old\n", "new_string": "new\n"}),
        );
        let preview = approval_preview(&fake, Subject::Builtin(Tool::Replace), &replace).await;
        assert!(preview.text.contains("-old\n+new\n"), "{}", preview.text);
        assert_eq!(preview.change, None);
        let missing = call(
            "replace",
            serde_json::json!({"file_path": "gone.txt", "old_string": "a", "new_string": "b"}),
        );
        assert_eq!(
            approval_preview(&fake, Subject::Builtin(Tool::Replace), &missing)
                .await
                .change,
            None
        );
    }

    #[tokio::test]
    async fn a_file_over_the_cap_is_previewed_as_the_unified_diff_only() {
        let big = "x\n".repeat(StepChange::MAX_BYTES / 2 + 1);
        let fake = FakeRuntime::with_files([("big.txt", big.as_str())]);
        let write = call(
            "write_file",
            serde_json::json!({"file_path": "big.txt", "content": "small\n"}),
        );
        let preview = approval_preview(&fake, Subject::Builtin(Tool::WriteFile), &write).await;
        assert_eq!(preview.change, None);
        assert!(preview.text.contains("+small\n"));
    }

    #[tokio::test]
    async fn a_command_preview_is_the_command_without_a_change() {
        let fake = FakeRuntime::new();
        let shell = call(
            "run_shell_command",
            serde_json::json!({"command": "npm test"}),
        );
        let preview =
            approval_preview(&fake, Subject::Builtin(Tool::RunShellCommand), &shell).await;
        assert_eq!(
            (preview.text.as_str(), preview.change),
            ("$ npm test", None)
        );
    }
}
