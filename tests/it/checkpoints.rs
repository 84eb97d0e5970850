//! Checkpoints against a real `rivet serve`: the scripted provider answers,
//! the sandbox writes the files, git keeps the checkpoints, and the HTTP
//! API restores, redoes and forks.
#![cfg(feature = "ssr")]

use std::path::Path;
use std::time::Duration;

use reqwest::StatusCode;
use serde_json::{Value, json};

use super::llm::Mock;
use super::support::Ide;

const FIRST: &str = "#! match: alpha
Here is the first version.

<boltArtifact id=\"first\" title=\"First version\">
<boltAction type=\"file\" filePath=\"index.html\"><h1>v1</h1>
</boltAction>
<boltAction type=\"file\" filePath=\"notes.txt\">one
</boltAction>
</boltArtifact>
";

const SECOND: &str = "#! match: beta
Here is the second version.

<boltArtifact id=\"second\" title=\"Second version\">
<boltAction type=\"file\" filePath=\"index.html\"><h1>v2</h1>
</boltAction>
<boltAction type=\"file\" filePath=\"added.txt\">added later
</boltAction>
</boltArtifact>
";

/// A dev server that copies what it reads of `index.html` into a folder
/// checkpoints leave out, so the test sees what the server sees.
const SERVE: &str = "#! match: gamma
A tiny server.

<boltArtifact id=\"serve\" title=\"Server\">
<boltAction type=\"file\" filePath=\"index.html\"><h1>v1</h1>
</boltAction>
<boltAction type=\"file\" filePath=\"server.js\">const fs = require('fs');
const http = require('http');
fs.mkdirSync('.cache', { recursive: true });
setInterval(() => {
  try { fs.writeFileSync('.cache/seen.txt', fs.readFileSync('index.html')); } catch (e) {}
}, 100);
http.createServer((q, s) => s.end(fs.readFileSync('index.html'))).listen(4321);
</boltAction>
<boltAction type=\"start\">node server.js</boltAction>
</boltArtifact>
";

/// The one harness ([`Ide`]), with this module's calls; `url` is under `/api/v1`.
struct Server(Ide);

impl std::ops::Deref for Server {
    type Target = Ide;

    fn deref(&self) -> &Ide {
        &self.0
    }
}

impl Server {
    async fn start(mock: &Mock) -> Server {
        Server::start_with_path(mock, &std::env::var("PATH").unwrap_or_default()).await
    }

    /// A server whose `PATH` is `path`.
    async fn start_with_path(mock: &Mock, path: &str) -> Server {
        let ide = Ide::fresh().provider(&mock.base_url()).env("PATH", path);
        Server(ide.env("RIVET_FIX_ENABLED", "false").start().await)
    }

    fn url(&self, path: &str) -> String {
        self.0.api(path)
    }

    async fn messages(&self, project: &str) -> Vec<Value> {
        let (status, list) = self
            .json(
                self.http
                    .get(self.url(&format!("/projects/{project}/messages"))),
            )
            .await;
        assert_eq!(status, StatusCode::OK, "{list}");
        list.as_array().unwrap().clone()
    }

    /// Sends `text` and waits until its answer is complete and its
    /// checkpoint taken; returns the answer's id.
    async fn answer(&self, project: &str, text: &str) -> String {
        let (status, sent) = self
            .json(
                self.http
                    .post(self.url(&format!("/projects/{project}/messages")))
                    .json(&json!({"text": text})),
            )
            .await;
        assert_eq!(status, StatusCode::ACCEPTED, "{sent}");
        let id = sent["assistant_message_id"].as_str().unwrap().to_owned();
        let wanted = id.as_str();
        eventually(|| async move {
            let checkpoints = self.checkpoints(project).await;
            checkpoints
                .iter()
                .any(|c| c["kind"] == "answer" && c["message_id"] == wanted)
        })
        .await;
        id
    }

    async fn checkpoints(&self, project: &str) -> Vec<Value> {
        let (status, list) = self
            .json(
                self.http
                    .get(self.url(&format!("/projects/{project}/checkpoints"))),
            )
            .await;
        assert_eq!(status, StatusCode::OK, "{list}");
        list.as_array().unwrap().clone()
    }

    async fn file(&self, project: &str, path: &str) -> Option<String> {
        let response = self
            .http
            .get(self.url(&format!("/projects/{project}/files/{path}")))
            .send()
            .await
            .unwrap();
        if response.status() == StatusCode::NOT_FOUND {
            return None;
        }
        assert_eq!(response.status(), StatusCode::OK);
        Some(response.text().await.unwrap())
    }

    async fn put(&self, project: &str, path: &str, content: &str) {
        let response = self
            .http
            .put(self.url(&format!("/projects/{project}/files/{path}")))
            .body(content.to_owned())
            .send()
            .await
            .unwrap();
        assert!(response.status().is_success());
    }

    async fn post(&self, project: &str, what: &str, message_id: &str) -> (StatusCode, Value) {
        self.json(
            self.http
                .post(self.url(&format!("/projects/{project}/{what}")))
                .json(&json!({"message_id": message_id})),
        )
        .await
    }
}

/// Waits (up to a minute) until `check` holds.
async fn eventually<F, Fut>(check: F)
where
    F: Fn() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    while !check().await {
        assert!(tokio::time::Instant::now() < deadline, "timed out");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

fn scripts() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (name, text) in [
        ("first.txt", FIRST),
        ("second.txt", SECOND),
        ("serve.txt", SERVE),
    ] {
        std::fs::write(dir.path().join(name), text).unwrap();
    }
    dir
}

async fn server() -> (tempfile::TempDir, Mock, Server) {
    let scripts = scripts();
    let mock = Mock::start_with(scripts.path(), &[]);
    let server = Server::start(&mock).await;
    (scripts, mock, server)
}

/// Two answers: the first writes v1, the second v2 and a new file.
async fn two_answers(server: &Server) -> (String, String, String) {
    let project = server.create("checkpoints").await;
    let first = server.answer(&project, "alpha please").await;
    let second = server.answer(&project, "beta please").await;
    assert_eq!(
        server.file(&project, "index.html").await.unwrap(),
        "<h1>v2</h1>\n"
    );
    (project, first, second)
}

fn statuses(messages: &[Value]) -> Vec<(String, String)> {
    messages
        .iter()
        .map(|m| {
            (
                m["id"].as_str().unwrap().to_owned(),
                m["status"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn restore_puts_the_files_back_and_marks_later_messages_undone_and_redo_undoes_it() {
    let (_scripts, _mock, server) = server().await;
    let (project, first, second) = two_answers(&server).await;
    server
        .put(&project, "node_modules/kept.js", "dependency")
        .await;

    let (status, restored) = server.post(&project, "restore", &first).await;
    assert_eq!(status, StatusCode::OK, "{restored}");
    assert_eq!(restored["undone"], json!(["m3", second.as_str()]));
    assert_eq!(
        server.file(&project, "index.html").await.unwrap(),
        "<h1>v1</h1>\n"
    );
    assert_eq!(server.file(&project, "notes.txt").await.unwrap(), "one\n");
    assert_eq!(server.file(&project, "added.txt").await, None);
    assert_eq!(
        server.file(&project, "node_modules/kept.js").await.unwrap(),
        "dependency"
    );
    let messages = server.messages(&project).await;
    assert_eq!(
        statuses(&messages),
        [
            ("m1".into(), "complete".into()),
            (first.clone(), "complete".into()),
            ("m3".into(), "undone".into()),
            (second.clone(), "undone".into()),
        ]
    );

    let (status, redone) = server.post(&project, "redo", &first).await;
    assert_eq!(status, StatusCode::OK, "{redone}");
    assert_eq!(
        server.file(&project, "index.html").await.unwrap(),
        "<h1>v2</h1>\n"
    );
    assert_eq!(
        server.file(&project, "added.txt").await.unwrap(),
        "added later\n"
    );
    let messages = server.messages(&project).await;
    assert!(
        statuses(&messages).iter().all(|(_, s)| s == "complete"),
        "{messages:?}"
    );
    let (status, error) = server.post(&project, "redo", &first).await;
    assert_eq!(status, StatusCode::CONFLICT, "{error}");
    assert_eq!(error["code"], "nothing_to_redo");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_restore_keeps_the_state_it_replaced_including_edits_made_by_hand() {
    let (_scripts, _mock, server) = server().await;
    let (project, first, _) = two_answers(&server).await;
    server.put(&project, "mine.txt", "written by hand").await;
    let (status, _) = server.post(&project, "restore", &first).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(server.file(&project, "mine.txt").await, None);
    let (status, _) = server.post(&project, "redo", &first).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        server.file(&project, "mine.txt").await.unwrap(),
        "written by hand"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn edits_made_by_hand_are_their_own_checkpoint_when_the_next_message_is_sent() {
    let (_scripts, _mock, server) = server().await;
    let project = server.create("edits").await;
    let first = server.answer(&project, "alpha please").await;
    server.put(&project, "index.html", "<h1>by hand</h1>").await;
    server.answer(&project, "beta please").await;
    let checkpoints = server.checkpoints(&project).await;
    let kinds: Vec<&str> = checkpoints
        .iter()
        .map(|c| c["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["answer", "edits", "answer"], "{checkpoints:?}");
    assert_eq!(checkpoints[1]["message_id"], first.as_str());
    let repo = server.project_dir(&project).join("checkpoints.git");
    let commit = checkpoints[1]["commit_id"].as_str().unwrap();
    let shown = std::process::Command::new("git")
        .arg("--git-dir")
        .arg(&repo)
        .args(["show", &format!("{commit}:index.html")])
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&shown.stdout), "<h1>by hand</h1>");
    // Each checkpoint's commit says what it is: an answer's, what the
    // person asked for.
    let subjects = std::process::Command::new("git")
        .arg("--git-dir")
        .arg(&repo)
        .args(["log", "--format=%s", "refs/heads/checkpoints"])
        .output()
        .unwrap();
    let subjects = String::from_utf8_lossy(&subjects.stdout);
    let subjects: Vec<&str> = subjects.lines().collect();
    assert_eq!(
        subjects,
        ["beta please", "Edits since the last answer", "alpha please"]
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn fork_makes_a_project_with_the_files_and_conversation_up_to_the_answer() {
    let (_scripts, _mock, server) = server().await;
    let (project, first, _) = two_answers(&server).await;
    let (status, fork) = server.post(&project, "fork", &first).await;
    assert_eq!(status, StatusCode::CREATED, "{fork}");
    let fork_id = fork["id"].as_str().unwrap().to_owned();
    assert_ne!(fork_id, project);
    assert_eq!(fork["name"], "checkpoints (fork)");
    assert_eq!(
        server.file(&fork_id, "index.html").await.unwrap(),
        "<h1>v1</h1>\n"
    );
    assert_eq!(server.file(&fork_id, "added.txt").await, None);
    let messages = server.messages(&fork_id).await;
    assert_eq!(
        statuses(&messages),
        [
            ("m1".into(), "complete".into()),
            (first.clone(), "complete".into())
        ]
    );
    // The original is as it was.
    assert_eq!(
        server.file(&project, "index.html").await.unwrap(),
        "<h1>v2</h1>\n"
    );
    assert_eq!(server.messages(&project).await.len(), 4);
    let (_, list) = server.json(server.http.get(server.url("/projects"))).await;
    let ids: Vec<&str> = list
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["id"].as_str().unwrap())
        .collect();
    assert!(
        ids.contains(&project.as_str()) && ids.contains(&fork_id.as_str()),
        "{list}"
    );
    // The fork goes on by itself: its own answer and its own restore.
    let third = server.answer(&fork_id, "beta please").await;
    assert_eq!(third, "m4");
    let (status, _) = server.post(&fork_id, "restore", &first).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        server.file(&fork_id, "index.html").await.unwrap(),
        "<h1>v1</h1>\n"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_running_dev_server_sees_the_restored_files() {
    let (_scripts, _mock, server) = server().await;
    let project = server.create("served").await;
    let first = server.answer(&project, "gamma please").await;
    let (server_ref, project_ref) = (&server, project.as_str());
    let seen = move || async move { server_ref.file(project_ref, ".cache/seen.txt").await };
    eventually(|| async move { seen().await.as_deref() == Some("<h1>v1</h1>\n") }).await;
    server.answer(&project, "beta please").await;
    eventually(|| async move { seen().await.as_deref() == Some("<h1>v2</h1>\n") }).await;
    let (status, restored) = server.post(&project, "restore", &first).await;
    assert_eq!(status, StatusCode::OK, "{restored}");
    eventually(|| async move { seen().await.as_deref() == Some("<h1>v1</h1>\n") }).await;
    // Restored files belong to whoever the sandbox writes as.
    let workspace = server.project_dir(&project).join("workspace");
    let owner = |path: &str| {
        use std::os::unix::fs::MetadataExt;
        std::fs::metadata(workspace.join(path)).unwrap().uid()
    };
    assert_eq!(owner("index.html"), owner("server.js"));
}

#[tokio::test(flavor = "multi_thread")]
async fn restore_while_an_answer_streams_is_refused_as_busy() {
    let (_scripts, mock, server) = server().await;
    let (project, first, _) = two_answers(&server).await;
    mock.faults(json!({"chunk-delay-ms": 300})).await;
    let (status, _) = server
        .json(
            server
                .http
                .post(server.url(&format!("/projects/{project}/messages")))
                .json(&json!({"text": "alpha again"})),
        )
        .await;
    assert_eq!(status, StatusCode::ACCEPTED);
    let (status, error) = server.post(&project, "restore", &first).await;
    assert_eq!(status, StatusCode::CONFLICT, "{error}");
    assert_eq!(error["code"], "busy");
    assert_eq!(
        server.file(&project, "added.txt").await.unwrap(),
        "added later\n"
    );
}

/// Restore fails with `checkpoint_repo`, and neither files nor messages change.
async fn assert_refused_and_nothing_lost(server: &Server, project: &str, first: &str) {
    let before = server.messages(project).await;
    let (status, error) = server.post(project, "restore", first).await;
    assert_eq!(status, StatusCode::INTERNAL_SERVER_ERROR, "{error}");
    assert_eq!(error["code"], "checkpoint_repo");
    let message = error["message"].as_str().unwrap();
    assert!(
        message.contains("checkpoints.git") && message.contains("left as they are"),
        "{message}"
    );
    assert_eq!(
        server.file(project, "index.html").await.unwrap(),
        "<h1>v2</h1>\n"
    );
    assert_eq!(
        server.file(project, "added.txt").await.unwrap(),
        "added later\n"
    );
    assert_eq!(statuses(&server.messages(project).await), statuses(&before));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_missing_checkpoint_repository_is_a_clear_error_and_loses_nothing() {
    let (_scripts, _mock, server) = server().await;
    let (project, first, _) = two_answers(&server).await;
    std::fs::remove_dir_all(server.project_dir(&project).join("checkpoints.git")).unwrap();
    assert_refused_and_nothing_lost(&server, &project, &first).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_corrupt_checkpoint_repository_is_a_clear_error_and_loses_nothing() {
    let (_scripts, _mock, server) = server().await;
    let (project, first, _) = two_answers(&server).await;
    let objects = server.project_dir(&project).join("checkpoints.git/objects");
    empty_dir(&objects);
    assert_refused_and_nothing_lost(&server, &project, &first).await;
}

fn empty_dir(dir: &Path) {
    std::fs::remove_dir_all(dir).unwrap();
    std::fs::create_dir_all(dir).unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn restoring_what_cannot_be_restored_is_refused_with_a_code() {
    let (_scripts, _mock, server) = server().await;
    let (project, first, second) = two_answers(&server).await;
    for (message, status, code) in [
        ("m99", StatusCode::NOT_FOUND, "message_not_found"),
        ("m1", StatusCode::BAD_REQUEST, "not_an_answer"),
    ] {
        let (got, error) = server.post(&project, "restore", message).await;
        assert_eq!(got, status, "{error}");
        assert_eq!(error["code"], code, "{error}");
    }
    let (status, _) = server.post(&project, "restore", &first).await;
    assert_eq!(status, StatusCode::OK);
    let (status, error) = server.post(&project, "restore", &second).await;
    assert_eq!(status, StatusCode::CONFLICT, "{error}");
    assert_eq!(error["code"], "message_undone");
    let (status, error) = server
        .json(
            server
                .http
                .post(server.url(&format!("/projects/{project}/restore")))
                .json(&json!({"id": "m2"})),
        )
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{error}");
    assert_eq!(error["code"], "invalid_json");
}

/// An answer that leaves an executable `git` in the project, which creates
/// `marker` (a path only the host has) when run.
fn planted_git(marker: &Path) -> String {
    format!(
        "#! match: plant
A file named git.

<boltArtifact id=\"plant\" title=\"Plant\">
<boltAction type=\"file\" filePath=\"git\">#!/bin/sh
touch '{}'
exit 1
</boltAction>
<boltAction type=\"shell\">chmod +x git</boltAction>
</boltArtifact>
",
        marker.display()
    )
}

#[tokio::test(flavor = "multi_thread")]
async fn a_file_named_git_in_the_project_never_runs_when_a_checkpoint_is_taken() {
    let scripts = tempfile::tempdir().unwrap();
    let host = tempfile::tempdir().unwrap();
    let marker = host.path().join("ran-on-the-host");
    std::fs::write(scripts.path().join("plant.txt"), planted_git(&marker)).unwrap();
    let mock = Mock::start_with(scripts.path(), &[]);
    // `.` and an empty entry first: both name the directory git runs in,
    // the project's workspace.
    let path = format!(".::{}", std::env::var("PATH").unwrap_or_default());
    let server = Server::start_with_path(&mock, &path).await;
    let project = server.create("planted").await;
    server.answer(&project, "plant please").await;
    let checkpoints = server.checkpoints(&project).await;
    assert!(
        checkpoints.iter().any(|c| c["kind"] == "answer"),
        "{checkpoints:?}"
    );
    assert!(!marker.exists(), "the project's `git` ran on the host");
    let repo = server.project_dir(&project).join("checkpoints.git");
    let shown = std::process::Command::new("git")
        .arg("--git-dir")
        .arg(&repo)
        .args(["ls-tree", "-r", "--name-only", "refs/heads/checkpoints"])
        .output()
        .unwrap();
    let files = String::from_utf8_lossy(&shown.stdout);
    assert!(files.lines().any(|f| f == "git"), "{files}");
}
