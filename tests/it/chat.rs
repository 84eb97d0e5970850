//! `rivet chat` and `rivet projects` against a real `rivet serve`, with the
//! scripted provider answering from `tests/fixtures/chat`.
#![cfg(feature = "ssr")]

use std::path::Path;
use std::time::Duration;

use reqwest::StatusCode;

use super::api_v1::Server;
use super::llm::Mock;

struct Run {
    status: std::process::ExitStatus,
    stdout: String,
    stderr: String,
}

async fn server() -> (Mock, Server) {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/chat");
    let mock = Mock::start_with(&script, &[]);
    // No automatic fix after the failing command: the test follows one answer.
    let env = [("RIVET_FIX_ENABLED", "false")];
    let server = Server::start_with(&mock, tempfile::tempdir().unwrap(), &env).await;
    (mock, server)
}

/// Runs `rivet <args>` with the server's address and token in its
/// configuration (environment), as a shell next to `rivet serve` would.
async fn rivet(server: &Server, args: &[&str]) -> Run {
    let output = tokio::process::Command::new(env!("CARGO_BIN_EXE_rivet"))
        .args(args)
        .current_dir(server.data_dir())
        .env("RIVET_SERVER_ADDR", server.addr.to_string())
        .env("RIVET_SERVER_TOKEN", super::support::TOKEN)
        .env("RIVET_SERVER_DATA_DIR", server.data_dir())
        .env_remove("RIVET_URL")
        .env("NO_COLOR", "1")
        .stdin(std::process::Stdio::null())
        .kill_on_drop(true)
        .output();
    let output = tokio::time::timeout(Duration::from_secs(120), output)
        .await
        .expect("rivet chat did not return")
        .unwrap();
    Run {
        status: output.status,
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    }
}

/// The answer's prose in a run's output: the status lines taken out, and
/// every run of white space made one space. A status line comes where its
/// action's status changes, which on a busy machine can be in the middle of
/// the prose that follows the action ("The file is", the line, " written.").
fn prose(stdout: &str) -> String {
    let kept: Vec<&str> = stdout
        .lines()
        .filter(|line| !line.starts_with("action ") && !line.starts_with("preview "))
        .collect();
    kept.join("\n")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

/// The id on the `project <id>` first line.
fn project_of(run: &Run) -> String {
    let first = run.stdout.lines().next().unwrap_or_default();
    first
        .strip_prefix("project ")
        .unwrap_or_else(|| panic!("first line {first:?}\n{}\n{}", run.stdout, run.stderr))
        .to_owned()
}

#[tokio::test(flavor = "multi_thread")]
async fn chat_streams_the_answer_and_its_actions_and_exits_zero() {
    let (_mock, server) = server().await;
    let run = rivet(
        &server,
        &["chat", "--new", "demo", "write", "a", "greeting", "file"],
    )
    .await;
    assert!(run.status.success(), "{}\n{}", run.stdout, run.stderr);
    let project = project_of(&run);
    let prose = prose(&run.stdout);
    assert!(
        prose.contains("I'll write a greeting file and check it."),
        "{}",
        run.stdout
    );
    assert!(prose.contains("The file is written."), "{}", run.stdout);
    assert!(
        run.stdout.contains("action complete: write hello.txt"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains("action complete: run cat hello.txt"),
        "{}",
        run.stdout
    );
    // The actions had finished when it returned: the file is there.
    let file = server.url(&format!("/projects/{project}/files/hello.txt"));
    let response = server.http.get(&file).send().await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(response.text().await.unwrap(), "hello from rivet chat\n");
    let (_, fetched) = server
        .json(server.http.get(server.url(&format!("/projects/{project}"))))
        .await;
    assert_eq!(fetched["name"], "demo");
}

#[tokio::test(flavor = "multi_thread")]
async fn chat_exits_non_zero_when_an_action_fails() {
    let (_mock, server) = server().await;
    let run = rivet(&server, &["chat", "run a failing command"]).await;
    assert!(!run.status.success(), "{}\n{}", run.stdout, run.stderr);
    project_of(&run);
    assert!(
        run.stdout.contains("action failed: run exit 3"),
        "{}",
        run.stdout
    );
    assert!(
        run.stderr.contains("action failed: run exit 3"),
        "{}",
        run.stderr
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn chat_with_project_continues_the_conversation() {
    let (_mock, server) = server().await;
    let first = rivet(&server, &["chat", "write a greeting file"]).await;
    assert!(first.status.success(), "{}\n{}", first.stdout, first.stderr);
    let project = project_of(&first);
    let second = rivet(
        &server,
        &["chat", "--project", &project, "a second question"],
    )
    .await;
    assert!(
        second.status.success(),
        "{}\n{}",
        second.stdout,
        second.stderr
    );
    assert_eq!(project_of(&second), project);
    assert!(
        second.stdout.contains("A plain answer with no actions."),
        "{}",
        second.stdout
    );
    // Only the new answer is printed.
    assert!(!second.stdout.contains("greeting"), "{}", second.stdout);
    let (_, messages) = server
        .json(
            server
                .http
                .get(server.url(&format!("/projects/{project}/messages"))),
        )
        .await;
    let texts: Vec<&str> = messages
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "user")
        .map(|m| m["text"].as_str().unwrap())
        .collect();
    assert_eq!(texts, ["write a greeting file", "a second question"]);
}

#[tokio::test(flavor = "multi_thread")]
async fn chat_with_an_unknown_project_fails_naming_it() {
    let (_mock, server) = server().await;
    let run = rivet(&server, &["chat", "--project", "nosuchproject", "hello"]).await;
    assert!(!run.status.success());
    assert!(
        run.stderr.contains("no project nosuchproject"),
        "{}",
        run.stderr
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn projects_lists_the_projects_latest_first() {
    let (_mock, server) = server().await;
    let older = server.create("older project").await;
    // Times are kept in seconds: the next project is changed a second later.
    tokio::time::sleep(Duration::from_millis(1100)).await;
    let chat = rivet(&server, &["chat", "write a greeting file"]).await;
    let newer = project_of(&chat);
    let run = rivet(&server, &["projects"]).await;
    assert!(run.status.success(), "{}", run.stderr);
    let lines: Vec<Vec<&str>> = run
        .stdout
        .lines()
        .map(|l| l.split('\t').collect())
        .collect();
    assert_eq!(lines.len(), 2, "{}", run.stdout);
    assert_eq!(lines[0][0], newer);
    // Named after its first message.
    assert_eq!(lines[0][2], "write a greeting file");
    assert_eq!(lines[1][0], older);
    assert_eq!(lines[1][2], "older project");
}

#[tokio::test(flavor = "multi_thread")]
async fn chat_without_a_running_server_fails_clearly() {
    let (_mock, server) = server().await;
    let closed = super::support::ClosedPort::new();
    let addr = closed.addr();
    let output = tokio::process::Command::new(env!("CARGO_BIN_EXE_rivet"))
        .args(["chat", "hello"])
        .current_dir(server.data_dir())
        .env("RIVET_SERVER_ADDR", addr.to_string())
        .env("RIVET_SERVER_TOKEN", super::support::TOKEN)
        .output()
        .await
        .unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("cannot reach rivet serve"), "{stderr}");
}
