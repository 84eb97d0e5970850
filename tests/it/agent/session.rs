//! Agent mode through a real `rivet serve`: the conversation is in agent
//! mode (`RIVET_AGENT_DEFAULT_MODE=agent`), the scripted provider plays
//! tool-call transcripts, the tools run in the bubblewrap sandbox, the
//! steps arrive on the same feed the browser reads, and confirmations are
//! answered through `POST /api/v1/projects/{id}/approvals/{step_id}`.

use std::path::Path;
use std::time::Duration;

use rivet::runtime::session::{AgentStep, Message, MessageStatus, Mode, SessionState, StepStatus};
use serde_json::{Value, json};

use super::super::llm::Mock;
use super::super::support::{Feed, Ide};

mod window;

const TIMEOUT: Duration = Duration::from_secs(120);

const SERVER_JS: &str = "const fs = require('fs');\n\
require('http').createServer((q, s) => s.end(fs.readFileSync('index.html'))).listen(4321, '127.0.0.1');\n";

/// Prints a line, then waits for the test to create `go` before it ends.
const SLOW_COMMAND: &str =
    "echo first-line; while [ ! -f go ]; do sleep 0.1; done; echo second-line";

/// The transcripts of these tests, one file each.
fn scripts(dir: &Path) {
    let todo = json!({
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
                 "arguments": {"command": "node --check server.js && cat index.html"}}
            ]},
            {"expect_results": ["<h1>Todos</h1>\n[exit code: 0]"], "tool_calls": [
                {"id": "call_4", "name": "run_shell_command", "arguments": {"command": "node server.js"}}
            ]},
            {"expect_results": ["listening on port 4321"], "content": "The todo app runs on port 4321."}
        ]
    });
    let overwrite = json!({
        "match": "overwrite notes",
        "turns": [
            {"tool_calls": [
                {"id": "call_1", "name": "write_file",
                 "arguments": {"file_path": "notes.txt", "content": "overwritten\n"}}
            ]},
            {"expect_results": ["denied by the user"], "content": "Understood: notes.txt stays as it is."}
        ]
    });
    let again = json!({
        "match": "again notes",
        "turns": [
            {"tool_calls": [
                {"id": "call_1", "name": "write_file",
                 "arguments": {"file_path": "notes.txt", "content": "again\n"}}
            ]},
            {"content": "Written again."}
        ]
    });
    std::fs::write(dir.join("agent-again.json"), again.to_string()).unwrap();
    let slow = json!({
        "match": "slow output",
        "turns": [
            {"tool_calls": [
                {"id": "call_1", "name": "run_shell_command", "arguments": {"command": SLOW_COMMAND}}
            ]},
            {"expect_results": ["first-line\nsecond-line\n[exit code: 0]"], "content": "The command finished."}
        ]
    });
    std::fs::write(dir.join("agent-slow.json"), slow.to_string()).unwrap();
    let greet = "#! match: greet\nHello from Build mode.\n";
    std::fs::write(dir.join("agent-todo.json"), todo.to_string()).unwrap();
    std::fs::write(dir.join("agent-overwrite.json"), overwrite.to_string()).unwrap();
    std::fs::write(dir.join("greet.txt"), greet).unwrap();
}

/// The agent tests' start of the one harness: answers from `mock`, in
/// agent mode, with no fix loop.
async fn agent_ide(mock: &Mock, data: tempfile::TempDir, env: &[(&str, &str)]) -> Ide {
    Ide::on(data)
        .envs(env.iter().copied())
        .provider(&mock.base_url())
        .env("RIVET_AGENT_DEFAULT_MODE", "agent")
        .env("RIVET_FIX_ENABLED", "false")
        .start()
        .await
}

/// The agent tests' own calls.
impl Ide {
    /// Answers a waiting step through the HTTP API; the status and body.
    async fn decide(&self, project: &str, step_id: &str, decision: &str) -> (u16, Value) {
        let url = self.api(&format!("/projects/{project}/approvals/{step_id}"));
        let request = self.http.post(url).json(&json!({"decision": decision}));
        let (status, body) = self.json(request).await;
        (status.as_u16(), body)
    }

    /// A project's file through the HTTP API: its status and text.
    async fn file_text(&self, project: &str, path: &str) -> (u16, String) {
        let url = self.api(&format!("/projects/{project}/files/{path}"));
        let response = self.http.get(url).send().await.unwrap();
        (response.status().as_u16(), response.text().await.unwrap())
    }
}

/// The agent tests' waits on the one feed.
impl Feed {
    /// Waits for the next step that waits for approval.
    async fn waiting(&mut self) -> AgentStep {
        self.until("a step waiting for approval", |s| waiting_step(s).is_some())
            .await;
        waiting_step(&self.state).unwrap()
    }

    async fn finished(&mut self) -> Message {
        self.until("the answer's end", |s| {
            answer(s).is_some_and(|m| m.status.is_final())
        })
        .await;
        answer(&self.state).unwrap()
    }
}

fn answer(state: &SessionState) -> Option<Message> {
    state
        .messages
        .iter()
        .rev()
        .find(|m| m.role == rivet::runtime::session::Role::Assistant)
        .cloned()
}

fn waiting_step(state: &SessionState) -> Option<AgentStep> {
    state
        .messages
        .iter()
        .filter_map(|m| m.agent.as_ref())
        .flat_map(|run| &run.steps)
        .find(|s| s.status == StepStatus::Waiting)
        .cloned()
}

fn steps(message: &Message) -> Vec<(String, StepStatus)> {
    let run = message.agent.as_ref().expect("an agent run");
    run.steps
        .iter()
        .map(|s| (s.tool.clone(), s.status))
        .collect()
}

async fn setup() -> (tempfile::TempDir, Mock, Ide) {
    let dir = tempfile::tempdir().unwrap();
    scripts(dir.path());
    let mock = Mock::start_with(dir.path(), &[]);
    let ide = agent_ide(&mock, tempfile::tempdir().unwrap(), &[]).await;
    (dir, mock, ide)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_agent_builds_the_todo_app_with_each_step_approved_through_the_http_api() {
    let (_scripts, mock, ide) = setup().await;
    let project = ide.create("agent").await;
    let mut feed = ide.feed(&project).await;
    ide.send(&project, "build a todo app").await;

    let mut previews = Vec::new();
    for expected in [
        "write_file",
        "write_file",
        "run_shell_command",
        "run_shell_command",
    ] {
        let step = feed.waiting().await;
        assert_eq!(step.tool, expected);
        previews.push(step.preview.clone().unwrap_or_default());
        let (status, body) = ide.decide(&project, &step.id, "approve").await;
        assert_eq!(status, 204, "{body}");
        feed.until("the step to leave waiting", |s| {
            s.agent_step(&step.id)
                .is_some_and(|(_, st)| st.status != StepStatus::Waiting)
        })
        .await;
    }
    let message = feed.finished().await;
    let log = mock.log().await;
    assert_eq!(message.status, MessageStatus::Complete, "{log:#?}");
    assert!(
        steps(&message).iter().all(|(_, s)| *s == StepStatus::Done),
        "{:?}",
        steps(&message)
    );
    let run = message.agent.clone().unwrap();
    assert_eq!(run.end.as_deref(), Some("Done."));
    assert_eq!(run.steps_used, 4);
    assert!(run.usage.total_tokens > 0);
    assert!(message.text().contains("The todo app runs on port 4321."));
    assert!(
        previews[0].contains("+<h1>Todos</h1>"),
        "the diff: {}",
        previews[0]
    );
    assert_eq!(previews[2], "$ node --check server.js && cat index.html");

    assert_eq!(
        ide.file_text(&project, "index.html").await,
        (200, "<h1>Todos</h1>\n".to_owned())
    );
    assert!(
        feed.state.files.contains("server.js"),
        "the tree shows the file"
    );
    assert!(feed.state.changed_by_last_answer.contains("index.html"));
    assert!(
        feed.state.terminal.contains("$ node --check server.js"),
        "{}",
        feed.state.terminal
    );
    assert!(feed.state.terminal.contains("<h1>Todos</h1>"));
    feed.until("the preview of port 4321", |s| {
        s.previews.iter().any(|p| p.port == 4321)
    })
    .await;

    // A step that ran cannot be decided again; an unknown one is not found.
    let done = &run.steps[0].id;
    let (status, body) = ide.decide(&project, done, "approve").await;
    assert_eq!(
        (status, body["code"].as_str()),
        (409, Some("step_not_waiting"))
    );
    let (status, body) = ide.decide(&project, "m9-1-1", "deny").await;
    assert_eq!(
        (status, body["code"].as_str()),
        (404, Some("step_not_found"))
    );
    let (status, body) = ide.decide(&project, done, "maybe").await;
    assert_eq!((status, body["code"].as_str()), (400, Some("invalid_json")));
    ide.kill().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_denied_write_file_leaves_the_file_untouched_and_the_next_step_sees_the_denial() {
    let (_scripts, mock, ide) = setup().await;
    let project = ide.create("agent").await;
    let put = ide
        .http
        .put(ide.url(&format!("/api/v1/projects/{project}/files/notes.txt")))
        .body("keep me\n")
        .send()
        .await
        .unwrap();
    assert!(put.status().is_success());
    let mut feed = ide.feed(&project).await;
    ide.send(&project, "overwrite notes").await;
    let step = feed.waiting().await;
    assert!(
        step.preview
            .as_deref()
            .unwrap_or_default()
            .contains("-keep me\n+overwritten"),
        "{step:?}"
    );
    let change = step
        .change
        .clone()
        .expect("the whole file, for the diff editor");
    assert_eq!(
        (
            change.path.as_str(),
            change.before.as_str(),
            change.after.as_str()
        ),
        ("notes.txt", "keep me\n", "overwritten\n")
    );
    assert_eq!(ide.decide(&project, &step.id, "deny").await.0, 204);
    let message = feed.finished().await;
    let decided = message
        .agent
        .as_ref()
        .map(|run| run.steps[0].change.clone());
    assert_eq!(
        decided,
        Some(None),
        "the whole file is kept only while it waits"
    );

    // The mock answers 422 if the tool result did not say "denied by the user".
    let log = mock.log().await;
    assert!(log.iter().all(|entry| entry["status"] == 200), "{log:#?}");
    assert_eq!(message.status, MessageStatus::Complete);
    assert_eq!(
        steps(&message),
        [("write_file".to_owned(), StepStatus::Denied)]
    );
    assert!(message.text().contains("notes.txt stays as it is"));
    assert_eq!(
        ide.file_text(&project, "notes.txt").await,
        (200, "keep me\n".to_owned())
    );
    ide.kill().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pending_confirmation_is_shown_to_a_reopened_tab_which_can_answer_it_and_a_restart_keeps_the_steps()
 {
    let (_scripts, mock, ide) = setup().await;
    let project = ide.create("agent").await;
    let mut first = ide.feed(&project).await;
    ide.send(&project, "overwrite notes").await;
    let waiting = first.waiting().await;
    drop(first);

    // A tab opened now starts from the snapshot, with the step waiting.
    let mut reopened = ide.feed(&project).await;
    let step = reopened.waiting().await;
    assert_eq!(step, waiting);
    assert_eq!(ide.decide(&project, &step.id, "always").await.0, 204);
    let message = reopened.finished().await;
    assert_eq!(
        steps(&message),
        [("write_file".to_owned(), StepStatus::Done)]
    );
    assert!(reopened.state.always_allowed.contains("write_file"));
    assert_eq!(
        ide.file_text(&project, "notes.txt").await.1,
        "overwritten\n"
    );

    // After a restart the stored events show the same run, mode and choice.
    let data = ide.kill().await;
    let ide = agent_ide(&mock, data, &[]).await;
    let mut after = ide.feed(&project).await;
    after
        .until("the restored conversation", |s| !s.messages.is_empty())
        .await;
    let restored = answer(&after.state).unwrap();
    assert_eq!(restored.agent, message.agent);
    assert!(after.state.always_allowed.contains("write_file"));

    // Always allowed: the next write runs without asking.
    ide.send(&project, "write the notes again").await;
    after
        .until("the second answer", |s| s.messages.len() >= 4)
        .await;
    let message = after.finished().await;
    assert_eq!(message.status, MessageStatus::Complete);
    assert_eq!(
        steps(&message),
        [("write_file".to_owned(), StepStatus::Done)]
    );
    assert_eq!(ide.file_text(&project, "notes.txt").await.1, "again\n");
    ide.kill().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_model_that_refuses_tools_gets_the_message_in_build_mode_with_a_notice() {
    let (_scripts, mock, ide) = setup().await;
    let project = ide.create("agent").await;
    mock.faults(json!({"status": 400, "message": "this model does not support tools"}))
        .await;
    let mut feed = ide.feed(&project).await;
    ide.send(&project, "greet me").await;
    let message = feed.finished().await;
    assert_eq!(message.status, MessageStatus::Complete);
    assert!(
        message.text().contains("Hello from Build mode."),
        "{message:#?}"
    );
    let end = message.agent.and_then(|run| run.end).unwrap_or_default();
    assert!(end.contains("does not support tools"), "{end}");
    assert!(end.contains("Build mode"), "{end}");
    assert_eq!(feed.state.mode, Some(Mode::Build));
    let (status, body) = ide
        .call("conversation_mode", &[("project", &project)])
        .await;
    assert_eq!((status, body.as_str()), (200, "\"build\""));
    ide.kill().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stop_during_a_pending_confirmation_ends_the_run_without_running_the_step() {
    let (_scripts, _mock, ide) = setup().await;
    let project = ide.create("agent").await;
    let mut feed = ide.feed(&project).await;
    ide.send(&project, "overwrite notes").await;
    let step = feed.waiting().await;
    let (status, body) = ide.call("stop_run", &[("project", &project)]).await;
    assert_eq!(status, 200, "{body}");
    let message = feed.finished().await;
    assert_eq!(message.status, MessageStatus::Stopped);
    assert_eq!(
        steps(&message),
        [("write_file".to_owned(), StepStatus::NotRun)]
    );
    let end = message.agent.and_then(|run| run.end);
    assert_eq!(end.as_deref(), Some("Stopped by the user."));
    assert_eq!(ide.file_text(&project, "notes.txt").await.0, 404);
    let (status, body) = ide.decide(&project, &step.id, "approve").await;
    assert_eq!(
        (status, body["code"].as_str()),
        (409, Some("step_not_waiting"))
    );
    ide.kill().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_mode_is_switched_per_conversation_and_an_unknown_mode_is_refused() {
    let (_scripts, _mock, ide) = setup().await;
    let project = ide.create("agent").await;
    let (_, body) = ide
        .call("conversation_mode", &[("project", &project)])
        .await;
    assert_eq!(body, "\"agent\"", "the configured default");
    let (status, _) = ide
        .call(
            "set_conversation_mode",
            &[("project", &project), ("mode", "build")],
        )
        .await;
    assert_eq!(status, 200);
    let (_, body) = ide
        .call("conversation_mode", &[("project", &project)])
        .await;
    assert_eq!(body, "\"build\"");
    let (status, _) = ide
        .call(
            "set_conversation_mode",
            &[("project", &project), ("mode", "chat")],
        )
        .await;
    assert!(status >= 400, "an unknown mode: {status}");
    // In Build mode the answer is a bolt answer, without steps.
    let mut feed = ide.feed(&project).await;
    ide.send(&project, "greet me").await;
    let message = feed.finished().await;
    assert!(message.agent.is_none());
    assert!(message.text().contains("Hello from Build mode."));
    ide.kill().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_auto_approve_no_step_waits_and_approvals_of_an_unknown_project_are_not_found() {
    let dir = tempfile::tempdir().unwrap();
    scripts(dir.path());
    let mock = Mock::start_with(dir.path(), &[]);
    let env = [("RIVET_AGENT_AUTO_APPROVE", "true")];
    let ide = agent_ide(&mock, tempfile::tempdir().unwrap(), &env).await;
    let project = ide.create("agent").await;
    let mut feed = ide.feed(&project).await;
    ide.send(&project, "write the notes again").await;
    let deadline = tokio::time::Instant::now() + TIMEOUT;
    let mut waited = false;
    while !answer(&feed.state).is_some_and(|m| m.status.is_final()) {
        feed.next("the run's end", deadline).await;
        waited |= waiting_step(&feed.state).is_some();
    }
    assert!(!waited, "a step waited despite agent.auto_approve");
    let message = answer(&feed.state).unwrap();
    assert_eq!(
        steps(&message),
        [("write_file".to_owned(), StepStatus::Done)]
    );
    assert_eq!(
        ide.file_text(&project, "notes.txt").await,
        (200, "again\n".to_owned())
    );
    let (status, body) = ide.decide("nosuchproject", "m2-1-1", "approve").await;
    assert_eq!(
        (status, body["code"].as_str()),
        (404, Some("project_not_found"))
    );
    ide.kill().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_running_commands_output_is_shown_on_its_step_before_the_step_ends() {
    let (_scripts, mock, ide) = setup().await;
    let project = ide.create("agent").await;
    let mut feed = ide.feed(&project).await;
    ide.send(&project, "run the slow output command").await;
    let step = feed.waiting().await;
    assert_eq!(step.tool, "run_shell_command");
    assert_eq!(step.change, None, "a command has no file change");
    assert_eq!(ide.decide(&project, &step.id, "approve").await.0, 204);

    // The command waits for `go`, so the step is still running when its
    // first line shows.
    let shows = |s: &SessionState| {
        s.agent_step(&step.id)
            .and_then(|(_, st)| st.output.clone())
            .is_some_and(|o| o.contains("first-line"))
    };
    feed.until("the first line on the running step", shows)
        .await;
    let (_, running) = feed.state.agent_step(&step.id).unwrap();
    assert_eq!(running.status, StepStatus::Running);
    assert_eq!(running.output.as_deref(), Some("first-line\n"));
    assert_eq!(running.result, None);
    // The Rivet terminal shows the command line (which names both lines)
    // and its output as it runs too.
    let terminal = feed.state.terminal.clone();
    assert!(
        terminal.contains(&format!("$ {SLOW_COMMAND}")),
        "{terminal:?}"
    );
    assert_eq!(terminal.matches("first-line").count(), 2, "{terminal:?}");
    assert_eq!(terminal.matches("second-line").count(), 1, "{terminal:?}");

    let put = ide
        .http
        .put(ide.url(&format!("/api/v1/projects/{project}/files/go")))
        .body("")
        .send()
        .await
        .unwrap();
    assert!(put.status().is_success());
    let message = feed.finished().await;
    let log = mock.log().await;
    assert_eq!(message.status, MessageStatus::Complete, "{log:#?}");
    let (_, done) = feed.state.agent_step(&step.id).unwrap();
    assert_eq!(done.status, StepStatus::Done);
    assert_eq!(done.output, None, "the result replaces the live output");
    assert!(
        done.result
            .as_deref()
            .unwrap_or_default()
            .contains("second-line"),
        "{done:?}"
    );
    // Each line of output reached the terminal once, after the command line.
    let terminal = &feed.state.terminal;
    assert_eq!(terminal.matches("first-line").count(), 2, "{terminal:?}");
    assert_eq!(terminal.matches("second-line").count(), 2, "{terminal:?}");
    ide.kill().await;
}
