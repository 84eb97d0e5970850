//! Build mode with tools: the model gets `write_file`, `replace` and
//! `run_shell_command`, and its calls run as the bolt actions they stand
//! for. The answer path is the one tags take (`tests/it/session.rs` runs
//! that on the real sandbox, npm and Vite).

use serde_json::{Value, json};

use super::{Scripted, serving, summary};
use crate::runtime::llm::ActionFormat;
use crate::runtime::protocol::{ActionKind, Event, Parser};
use crate::runtime::session::MessageStatus;
use crate::server::llm::mock::{Transcript, parse};

const TOOLS: [&str; 3] = ["write_file", "replace", "run_shell_command"];

/// The demo's todo app answer, as one turn of tool calls.
fn todo_as_tool_calls() -> Transcript {
    let answer = include_str!("../../llm/mock/transcripts/todo-react.txt");
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
    parse("todo-tools.json", &script.to_string()).unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_model_answering_with_tool_calls_builds_the_todo_app() {
    let scripted = Scripted::start(vec![todo_as_tool_calls()], |config| {
        config.llm.format = ActionFormat::Tools;
    })
    .await;
    let (project, runtime) = scripted.project().await;
    scripted.send(&project, "a todo app with tools").await;
    let state = scripted.until(&project, "the dev server", serving).await;
    assert_eq!(state.messages[1].status, MessageStatus::Complete);
    assert!(runtime.text("src/App.jsx").is_some(), "{:?}", state.files);
    assert_eq!(state.artifacts.len(), 1, "{:#?}", summary(&state));
    assert_eq!(state.artifacts[0].title, "From the model's tool calls");
    let kinds: Vec<&str> = state.artifacts[0]
        .actions
        .iter()
        .map(|a| a.kind.type_name())
        .collect();
    assert_eq!(kinds.last(), Some(&"start"), "{kinds:?}");
    assert!(kinds.contains(&"shell"), "{kinds:?}");
    assert!(state.alerts.is_empty(), "{:?}", state.alerts);
    assert_eq!(runtime.commands(), ["npm install", "npm run dev"]);

    let url = format!("http://{}/mock/log", scripted.mock.addr);
    let log: Vec<Value> = reqwest::get(url).await.unwrap().json().await.unwrap();
    assert_eq!(log[0]["tools"], json!(TOOLS));
    let system = log[0]["system"].as_str().unwrap_or_default();
    assert!(system.contains("Tools instead of tags"), "{system}");
}
