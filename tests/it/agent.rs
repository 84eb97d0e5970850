//! Agent mode end to end: `rivet mock-llm` plays a tool-call transcript over
//! HTTP (async-openai assembles the streamed tool calls), the loop runs the
//! tools in a real sandbox, and the transcript checks every tool result the
//! loop sends back.

use std::path::PathBuf;
use std::sync::Arc;

use rivet::runtime::project::ProjectId;
use rivet::server::agent::run::{Agent, AgentEnd, AgentSettings, AutoApprove, LlmModel};
use rivet::server::agent::tools::ToolContext;
use rivet::server::config::{Config, NetworkMode};
use rivet::server::llm::budget::fit::Window;
use rivet::server::llm::{ChatMessage, ResolvedLlm};
use rivet::server::sandbox::{Isolation, SandboxManager, SandboxSettings};
use serde_json::json;
use tokio_util::sync::CancellationToken;

use super::llm::Mock;

const SERVER_JS: &str = "const fs = require('fs');\n\
require('http').createServer((q, s) => s.end(fs.readFileSync('index.html'))).listen(4321, '127.0.0.1');\n";

/// The model's side of the run, with what each tool result must say.
fn transcript() -> serde_json::Value {
    json!({
        "match": "todo app",
        "turns": [
            {"content": "I will write the app.", "tool_calls": [
                {"id": "call_1", "name": "write_file",
                 "arguments": {"file_path": "index.html", "content": "<h1>Todos</h1>\n"}},
                {"id": "call_2", "name": "write_file",
                 "arguments": {"file_path": "/home/project/server.js", "content": SERVER_JS}}
            ]},
            {"expect_results": ["Created index.html", "Created server.js"], "tool_calls": [
                {"id": "call_3", "name": "run_shell_command",
                 "arguments": {"command": "node --check server.js && cat index.html", "description": "check"}}
            ]},
            {"expect_results": ["<h1>Todos</h1>\n[exit code: 0]"], "tool_calls": [
                {"id": "call_4", "name": "run_shell_command", "arguments": {"command": "node server.js"}}
            ]},
            {"expect_results": ["listening on port 4321"], "content": "The todo app runs on port 4321."}
        ]
    })
}

pub(crate) fn sandbox(data_dir: &std::path::Path) -> Arc<SandboxManager> {
    let mut config = Config::defaults().sandbox;
    config.network = NetworkMode::None;
    let manager = SandboxManager::new(SandboxSettings {
        data_dir: data_dir.to_owned(),
        config,
        helper_exe: PathBuf::from(env!("CARGO_BIN_EXE_rivet")),
        isolation: Isolation::Bubblewrap,
        database_socket: None,
    });
    manager.check().unwrap();
    manager
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_agent_builds_and_starts_a_small_app_through_the_scripted_provider() {
    let scripts = tempfile::tempdir().unwrap();
    std::fs::write(scripts.path().join("todo.json"), transcript().to_string()).unwrap();
    let mock = Mock::start_with(scripts.path(), &["--models", "agent-model"]);
    let data = tempfile::tempdir().unwrap();
    let manager = sandbox(data.path());
    let runtime = manager.runtime(&ProjectId::parse("agenttodo").unwrap());

    let cancel = CancellationToken::new();
    let tools = ToolContext::new(runtime.clone()).with_cancel(cancel.clone());
    let model = LlmModel {
        llm: ResolvedLlm::custom(&mock.base_url(), "agent-model", None),
        system: "You build apps with tools.".to_owned(),
        window: Window::new(32_768, None),
        cancel,
        tools: tools.specs(),
    };
    let agent = Agent {
        model: &model,
        tools: &tools,
        approver: &AutoApprove,
        settings: AgentSettings {
            max_steps: 25,
            auto_approve: true,
        },
    };
    let mut events = Vec::new();
    let outcome = agent
        .run(vec![ChatMessage::user("build a todo app")], |e| {
            events.push(e)
        })
        .await;

    let log = mock.log().await;
    assert_eq!(outcome.end, AgentEnd::Done, "{log:#?}");
    assert_eq!(outcome.steps, 4);
    assert!(log.iter().all(|entry| entry["status"] == 200), "{log:#?}");
    assert_eq!(
        runtime.read_file("index.html").await.unwrap(),
        b"<h1>Todos</h1>\n"
    );
    assert_eq!(
        runtime.read_file("server.js").await.unwrap(),
        SERVER_JS.as_bytes()
    );
    assert!(
        runtime.open_ports().await.contains(&4321),
        "the server keeps running"
    );
    assert_eq!(
        outcome.messages.last().unwrap().content,
        "The todo app runs on port 4321."
    );
    tools.stop_servers().await;
    manager.shutdown().await;
}
mod session;
