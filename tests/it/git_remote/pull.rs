//! Pulling from a project's git remote: an outside commit arrives as a
//! fast-forward, diverged histories merge (and push again), a conflict
//! changes nothing and names its files, and the status counts commits
//! both ways. Commits carry the configured author.

use reqwest::StatusCode;
use serde_json::{Value, json};

use super::server::{GitServer, git};
use super::{TOKEN, push, set_remote};
use crate::api_v1::Server;
use crate::llm::Mock;

async fn pull(server: &Server, project: &str) -> (StatusCode, Value) {
    let url = server.url(&format!("/projects/{project}/git/pull"));
    server.json(server.http.post(&url)).await
}

/// The status, which leaves no ref of its fetch behind.
async fn status(server: &Server, project: &str) -> Value {
    let url = server.url(&format!("/projects/{project}/git/status"));
    let (code, body) = server.json(server.http.get(&url)).await;
    assert_eq!(code, StatusCode::OK, "{body}");
    let repo = server.project_dir(project).join("checkpoints.git");
    let left = git(&repo, &["for-each-ref", "refs/rivet/peek"]);
    assert_eq!(left, "", "the status's fetched ref stays");
    body
}

async fn read(server: &Server, project: &str, path: &str) -> Option<String> {
    let url = server.url(&format!("/projects/{project}/files/{path}"));
    let response = server.http.get(&url).send().await.unwrap();
    if response.status() != StatusCode::OK {
        return None;
    }
    Some(response.text().await.unwrap())
}

/// A clone of the remote where someone else commits `path` and pushes.
fn commit_elsewhere(remote: &GitServer, path: &str, text: &str) -> String {
    let work = tempfile::tempdir().unwrap();
    let origin = remote.repo().display().to_string();
    git(work.path(), &["clone", "-q", &origin, "clone"]);
    let clone = work.path().join("clone");
    std::fs::write(clone.join(path), text).unwrap();
    git(&clone, &["add", path]);
    git(&clone, &["commit", "-q", "-m", &format!("theirs: {path}")]);
    git(&clone, &["push", "-q", "origin", "HEAD:main"]);
    git(&remote.repo(), &["rev-parse", "refs/heads/main"])
}

async fn connected() -> (Mock, Server, GitServer, String) {
    let remote = GitServer::start("me", TOKEN).await;
    let mock = Mock::start(&[]);
    let author = [
        ("RIVET_GIT_AUTHOR_NAME", "Ada Lovelace"),
        ("RIVET_GIT_AUTHOR_EMAIL", "ada@example.org"),
    ];
    let server = Server::start_with(&mock, tempfile::tempdir().unwrap(), &author).await;
    let project = server.create("pulled").await;
    server
        .put_file(&project, "index.html", "<h1>one</h1>\n")
        .await;
    let body = json!({"url": remote.url(), "username": "me", "token": TOKEN});
    let (code, set) = set_remote(&server, &project, body).await;
    assert_eq!(code, StatusCode::OK, "{set}");
    (mock, server, remote, project)
}

#[tokio::test(flavor = "multi_thread")]
async fn an_outside_commit_is_pulled_and_diverged_histories_merge() {
    let (_mock, server, remote, project) = connected().await;
    // Before the first push the remote has no branch.
    let (code, error) = pull(&server, &project).await;
    assert_eq!(code, StatusCode::NOT_FOUND, "{error}");
    assert_eq!(error["code"], "remote_branch_missing");
    let (code, pushed) = push(&server, &project).await;
    assert_eq!(code, StatusCode::OK, "{pushed}");
    let author = git(&remote.repo(), &["log", "-1", "--format=%an <%ae>", "main"]);
    assert_eq!(author, "Ada Lovelace <ada@example.org>");

    // Someone else adds a file: the project is one behind, pulls it as a
    // fast-forward, and is even again.
    let theirs = commit_elsewhere(&remote, "README.md", "theirs\n");
    let now = status(&server, &project).await;
    assert_eq!(
        (now["ahead"].as_u64(), now["behind"].as_u64()),
        (Some(0), Some(1)),
        "{now}"
    );
    assert_eq!(now["remote_commit"], theirs.as_str());
    let (code, pulled) = pull(&server, &project).await;
    assert_eq!(code, StatusCode::OK, "{pulled}");
    assert_eq!(pulled["outcome"], "fast_forward");
    assert_eq!(pulled["commit"], theirs.as_str());
    assert_eq!(pulled["written"], json!(["README.md"]));
    assert_eq!(
        read(&server, &project, "README.md").await.as_deref(),
        Some("theirs\n")
    );
    let (code, again) = pull(&server, &project).await;
    assert_eq!(code, StatusCode::OK, "{again}");
    assert_eq!(again["outcome"], "up_to_date");

    // Both sides change different files: the pull merges, keeps the
    // project's edit, and the merge pushes without force.
    let theirs = commit_elsewhere(&remote, "about.html", "<p>about</p>\n");
    server
        .put_file(&project, "index.html", "<h1>two</h1>\n")
        .await;
    let (code, error) = push(&server, &project).await;
    assert_eq!(code, StatusCode::CONFLICT, "{error}");
    assert_eq!(error["code"], "pull_first");
    let now = status(&server, &project).await;
    assert_eq!(
        (now["ahead"].as_u64(), now["behind"].as_u64()),
        (Some(1), Some(1)),
        "{now}"
    );
    let (code, pulled) = pull(&server, &project).await;
    assert_eq!(code, StatusCode::OK, "{pulled}");
    assert_eq!(pulled["outcome"], "merged");
    assert_eq!(
        read(&server, &project, "index.html").await.as_deref(),
        Some("<h1>two</h1>\n")
    );
    assert_eq!(
        read(&server, &project, "about.html").await.as_deref(),
        Some("<p>about</p>\n")
    );
    let (code, pushed) = push(&server, &project).await;
    assert_eq!(code, StatusCode::OK, "{pushed}");
    assert_eq!(pushed["commit"], pulled["commit"]);
    let parents = git(&remote.repo(), &["log", "-1", "--format=%P", "main"]);
    assert!(parents.split(' ').any(|p| p == theirs), "{parents}");
    let now = status(&server, &project).await;
    assert_eq!(
        (now["ahead"].as_u64(), now["behind"].as_u64()),
        (Some(0), Some(0)),
        "{now}"
    );

    // The command line pulls the same way.
    let said = server.cli(&["git", "pull", "--project", &project]).await;
    let commit = pulled["commit"].as_str().unwrap();
    assert_eq!(said, format!("pulled main: up to date, now at {commit}"));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_pull_that_conflicts_changes_nothing_and_names_the_files() {
    let (_mock, server, remote, project) = connected().await;
    server.put_file(&project, "app.js", "let a = 1;\n").await;
    let (code, pushed) = push(&server, &project).await;
    assert_eq!(code, StatusCode::OK, "{pushed}");
    let theirs = commit_elsewhere(&remote, "index.html", "<h1>theirs</h1>\n");
    server
        .put_file(&project, "index.html", "<h1>mine</h1>\n")
        .await;
    server.put_file(&project, "app.js", "let a = 2;\n").await;

    let (code, error) = pull(&server, &project).await;
    assert_eq!(code, StatusCode::CONFLICT, "{error}");
    assert_eq!(error["code"], "merge_conflict");
    assert_eq!(error["paths"], json!(["index.html"]));
    assert!(
        error["message"].as_str().unwrap().contains("index.html"),
        "{error}"
    );
    // The project is as it was, and its edits are a checkpoint.
    assert_eq!(
        read(&server, &project, "index.html").await.as_deref(),
        Some("<h1>mine</h1>\n")
    );
    assert_eq!(
        read(&server, &project, "app.js").await.as_deref(),
        Some("let a = 2;\n")
    );
    let url = server.url(&format!("/projects/{project}/checkpoints"));
    let (_, list) = server.json(server.http.get(&url)).await;
    assert!(list.to_string().contains("edits"), "{list}");
    assert_eq!(
        git(&remote.repo(), &["rev-parse", "refs/heads/main"]),
        theirs
    );
    let now = status(&server, &project).await;
    assert_eq!(
        (now["ahead"].as_u64(), now["behind"].as_u64()),
        (Some(1), Some(1)),
        "{now}"
    );
}
