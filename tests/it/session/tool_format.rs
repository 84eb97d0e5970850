//! Build mode with tools: the model gets `write_file`, `replace` and
//! `run_shell_command` and its calls run as the bolt actions they stand
//! for; a provider that refuses tools gets the answer asked again in tags.

use std::path::Path;

use rivet::runtime::protocol::{ActionKind, Event, Parser};
use rivet::runtime::session::{ActionStatus, MessageStatus};
use serde_json::{Value, json};

use super::super::llm::Mock;
use super::{Ide, answered, status_of, summary};

const TOOLS: [&str; 3] = ["write_file", "replace", "run_shell_command"];

/// The demo's todo app answer, as one turn of tool calls.
fn todo_as_tool_calls(dir: &Path) {
    let answer = include_str!("../../../src/server/llm/mock/transcripts/todo-react.txt");
    let calls: Vec<Value> = Parser::parse("m", answer)
        .into_iter()
        .filter_map(|event| match event {
            Event::ActionClose { action, .. } => Some(action),
            _ => None,
        })
        .enumerate()
        .map(|(i, action)| {
            let (name, arguments) = match action.kind {
                ActionKind::File { file_path } => (
                    "write_file",
                    json!({"file_path": file_path, "content": action.content}),
                ),
                _ => ("run_shell_command", json!({"command": action.content})),
            };
            json!({"id": format!("call_{i}"), "name": name, "arguments": arguments})
        })
        .collect();
    let script = json!({
        "match": "todo tools",
        "turns": [{"content": "I'll build the todo app with tools.", "tool_calls": calls}],
    });
    std::fs::write(dir.join("todo-tools.json"), script.to_string()).unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_model_answering_with_tool_calls_builds_the_todo_app() {
    let scripts = tempfile::tempdir().unwrap();
    todo_as_tool_calls(scripts.path());
    let mock = Mock::start_with(scripts.path(), &[]);
    let ide = Ide::start_with(&mock, &[("RIVET_LLM_FORMAT", "tools")]).await;
    let project = ide.new_project().await;
    let mut feed = ide.feed(&project).await;
    ide.send(&project, "a todo app with tools").await;
    feed.until("the dev server", |s| {
        status_of(s, "start") == Some(ActionStatus::Complete)
            && s.previews.first().is_some_and(|p| p.url.is_some())
    })
    .await;
    let state = &feed.state;
    assert_eq!(state.messages[1].status, MessageStatus::Complete);
    assert!(state.files.contains("src/App.jsx"), "{:?}", state.files);
    assert_eq!(state.artifacts.len(), 1, "{:#?}", summary(state));
    assert_eq!(state.artifacts[0].title, "From the model's tool calls");
    let kinds: Vec<&str> = state.artifacts[0]
        .actions
        .iter()
        .map(|a| a.kind.type_name())
        .collect();
    assert_eq!(kinds.last(), Some(&"start"), "{kinds:?}");
    assert!(kinds.contains(&"shell"), "{kinds:?}");
    assert!(state.alerts.is_empty(), "{:?}", state.alerts);
    let page = ide
        .http
        .get(state.previews[0].url.clone().unwrap())
        .send()
        .await
        .unwrap();
    assert!(page.text().await.unwrap().contains("<div id=\"root\">"));

    let log = mock.log().await;
    assert_eq!(log[0]["tools"], json!(TOOLS));
    let system = log[0]["system"].as_str().unwrap_or_default();
    assert!(system.contains("Tools instead of tags"), "{system}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_provider_that_refuses_tools_gets_the_answer_asked_in_tags() {
    let scripts = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/nudge");
    let mock = Mock::start_with(&scripts, &[]);
    let ide = Ide::start_with(&mock, &[("RIVET_LLM_FORMAT", "tools")]).await;
    mock.faults(json!({"status": 400, "message": "this model does not support tools"}))
        .await;
    let project = ide.new_project().await;
    let mut feed = ide.feed(&project).await;
    ide.send(&project, "nothing was built: use an artifact")
        .await;
    feed.until("the answer in tags", |s| {
        answered(s) && s.files.contains("src/Counter.jsx")
    })
    .await;
    // The notice said so while it streamed; it ends with the answer.
    assert_eq!(feed.state.messages[1].status, MessageStatus::Complete);

    // The next message goes straight to tags.
    ide.send(&project, "nothing was built: use an artifact")
        .await;
    feed.until("the second answer", |s| {
        s.messages.len() == 4 && answered(s)
    })
    .await;
    let log = mock.log().await;
    let offered: Vec<usize> = log
        .iter()
        .map(|e| e["tools"].as_array().map_or(0, Vec::len))
        .collect();
    assert_eq!(offered, [3, 0, 0]);
    let system = log[1]["system"].as_str().unwrap_or_default();
    assert!(!system.contains("Tools instead of tags"), "{system}");
}
