//! Pushing a project to a git remote through `/api/v1`, against a real
//! `rivet serve` and a real git server (`git http-backend`): the history
//! arrives, a remote that moved is never overwritten, a wrong token is
//! refused, and the token is kept out of everything but its own file.
#![cfg(feature = "ssr")]

mod pages;
mod pull;
mod server;

use reqwest::StatusCode;
use serde_json::{Value, json};

use self::server::{GitServer, git};
use super::api_v1::{Server, server};

pub(super) const TOKEN: &str = "tok-remote-5a7e1c";

pub(super) async fn set_remote(server: &Server, project: &str, body: Value) -> (StatusCode, Value) {
    let url = server.url(&format!("/projects/{project}/git/remote"));
    server.json(server.http.put(&url).json(&body)).await
}

pub(super) async fn push(server: &Server, project: &str) -> (StatusCode, Value) {
    let url = server.url(&format!("/projects/{project}/git/push"));
    server.json(server.http.post(&url)).await
}

/// Every file under `dir` whose bytes hold `needle`, but those in `except`.
fn files_holding(dir: &std::path::Path, needle: &str, except: &std::path::Path) -> Vec<String> {
    let mut found = Vec::new();
    for entry in walk(dir) {
        if entry.starts_with(except) {
            continue;
        }
        let bytes = std::fs::read(&entry).unwrap_or_default();
        if bytes.windows(needle.len()).any(|w| w == needle.as_bytes()) {
            found.push(entry.display().to_string());
        }
    }
    found
}

fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return out;
    };
    for entry in entries.flatten() {
        let kind = entry.file_type().unwrap();
        if kind.is_dir() {
            out.extend(walk(&entry.path()));
        } else if kind.is_file() {
            out.push(entry.path());
        }
    }
    out
}

#[tokio::test(flavor = "multi_thread")]
async fn a_project_is_pushed_and_a_remote_that_moved_is_never_overwritten() {
    let remote = GitServer::start("me", TOKEN).await;
    let (_mock, server) = server().await;
    let project = server.create("pushed").await;
    server
        .put_file(&project, "index.html", "<h1>hello</h1>\n")
        .await;

    let body = json!({"url": remote.url(), "username": "me", "token": TOKEN});
    let (status, set) = set_remote(&server, &project, body).await;
    assert_eq!(status, StatusCode::OK, "{set}");
    assert_eq!(set["branch"], "main");
    assert_eq!(set["token_set"], true);
    let url = server.url(&format!("/projects/{project}/git/remote"));
    let (_, shown) = server.json(server.http.get(&url)).await;
    assert!(!shown.to_string().contains(TOKEN), "{shown}");
    assert_eq!(shown["url"], remote.url());

    let (status, pushed) = push(&server, &project).await;
    assert_eq!(status, StatusCode::OK, "{pushed}");
    assert_eq!(pushed["branch"], "main");
    let commit = pushed["commit"].as_str().unwrap();
    assert_eq!(
        git(&remote.repo(), &["rev-parse", "refs/heads/main"]),
        commit
    );
    assert_eq!(
        git(&remote.repo(), &["show", "main:index.html"]),
        "<h1>hello</h1>"
    );

    // The command line pushes the same way (nothing new: the same commit).
    let said = server.cli(&["git", "push", "--project", &project]).await;
    assert_eq!(said, format!("pushed {commit} to main"));

    // An edit, pushed again: a fast-forward that keeps the history.
    server
        .put_file(&project, "style.css", "h1 { color: teal; }\n")
        .await;
    let (status, again) = push(&server, &project).await;
    assert_eq!(status, StatusCode::OK, "{again}");
    let second = again["commit"].as_str().unwrap();
    assert_ne!(second, commit);
    assert_eq!(
        git(&remote.repo(), &["rev-parse", "refs/heads/main"]),
        second
    );
    let log = git(&remote.repo(), &["rev-list", "main"]);
    assert!(log.lines().any(|c| c == commit), "{log}");

    // Someone else pushes; the project's next push is refused, and the
    // remote keeps their commit.
    let work = tempfile::tempdir().unwrap();
    let origin = remote.repo().display().to_string();
    git(work.path(), &["clone", "-q", &origin, "clone"]);
    let clone = work.path().join("clone");
    std::fs::write(clone.join("README.md"), "theirs\n").unwrap();
    git(&clone, &["add", "README.md"]);
    git(&clone, &["commit", "-q", "-m", "theirs"]);
    git(&clone, &["push", "-q", "origin", "HEAD:main"]);
    let theirs = git(&remote.repo(), &["rev-parse", "refs/heads/main"]);
    server
        .put_file(&project, "index.html", "<h1>changed</h1>\n")
        .await;
    let (status, error) = push(&server, &project).await;
    assert_eq!(status, StatusCode::CONFLICT, "{error}");
    assert_eq!(error["code"], "pull_first");
    assert_eq!(
        git(&remote.repo(), &["rev-parse", "refs/heads/main"]),
        theirs
    );

    // The token is only in the remote's own file.
    let data = server.data_dir();
    let holding = files_holding(data, TOKEN, &data.join("remotes"));
    assert!(holding.is_empty(), "the token was found in {holding:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_wrong_token_or_a_bad_remote_is_refused_with_a_code() {
    let remote = GitServer::start("me", TOKEN).await;
    let (_mock, server) = server().await;
    let project = server.create("refused").await;
    let (status, error) = push(&server, &project).await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{error}");
    assert_eq!(error["code"], "remote_not_set");

    for url in [
        "http://8.8.8.8/app.git",
        "ssh://git@example.com/app.git",
        "https://me:secret@example.com/app.git",
    ] {
        let (status, error) = set_remote(&server, &project, json!({ "url": url })).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{url}: {error}");
        assert_eq!(error["code"], "invalid_remote", "{url}: {error}");
    }
    let body = json!({"url": remote.url(), "branch": "a..b"});
    let (status, error) = set_remote(&server, &project, body).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{error}");

    server.put_file(&project, "index.html", "hi\n").await;
    let body = json!({"url": remote.url(), "username": "me", "token": "wrong-token"});
    let (status, _) = set_remote(&server, &project, body).await;
    assert_eq!(status, StatusCode::OK);
    let (status, error) = push(&server, &project).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{error}");
    assert_eq!(error["code"], "remote_refused");
    let heads = git(&remote.repo(), &["for-each-ref"]);
    assert!(heads.is_empty(), "{heads}");
}

/// A remote that takes the connection and never answers: the status the
/// settings ask of it waits (up to the fetch's timeout), and the project's
/// checkpoints do not wait with it.
#[tokio::test(flavor = "multi_thread")]
async fn a_remote_that_never_answers_holds_up_no_checkpoint() {
    let silent = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/app.git", silent.local_addr().unwrap());
    let (connected, asked) = tokio::sync::oneshot::channel();
    let held = tokio::spawn(async move {
        let (socket, _) = silent.accept().await.unwrap();
        let _ = connected.send(());
        std::future::pending::<()>().await;
        drop(socket);
    });
    let (_mock, server) = server().await;
    let project = server.create("silent remote").await;
    server
        .put_file(&project, "index.html", "<h1>one</h1>\n")
        .await;
    let (code, set) = set_remote(&server, &project, json!({ "url": url })).await;
    assert_eq!(code, StatusCode::OK, "{set}");
    let status = {
        let request = server
            .http
            .get(server.url(&format!("/projects/{project}/git/status")));
        tokio::spawn(async move { request.send().await.map(|r| r.status()) })
    };
    asked.await.unwrap();

    // An answer now: its checkpoint is taken while the status still waits.
    let answered = async {
        server.send(&project, "hello").await;
        let list = server.url(&format!("/projects/{project}/checkpoints"));
        loop {
            let (_, checkpoints) = server.json(server.http.get(&list)).await;
            let mut taken = checkpoints.as_array().into_iter().flatten();
            if taken.any(|c| c["kind"] == "answer") {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        }
    };
    tokio::time::timeout(std::time::Duration::from_secs(60), answered)
        .await
        .expect("the answer's checkpoint waited for the remote");
    assert!(!status.is_finished(), "the remote never answered");

    // The remote hangs up: the status says it failed, and the project is as it was.
    held.abort();
    let code = status.await.unwrap().unwrap();
    assert!(code.is_client_error() || code.is_server_error(), "{code}");
    let (code, files) = server
        .json(
            server
                .http
                .get(server.url(&format!("/projects/{project}/files"))),
        )
        .await;
    assert_eq!(code, StatusCode::OK);
    assert!(files.to_string().contains("index.html"), "{files}");
}
