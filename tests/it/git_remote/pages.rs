//! "Publish to a git branch": the live version's files, without the gzip
//! copies publishing makes, as a commit on `gh-pages` of the project's
//! remote, on top of what the branch already holds.

use reqwest::StatusCode;
use serde_json::{Value, json};

use super::server::{GitServer, git};
use super::{TOKEN, set_remote};
use crate::api_v1::{Server, server};

async fn post(server: &Server, route: &str, body: Value) -> (StatusCode, Value) {
    let url = server.url(route);
    server.json(server.http.post(&url).json(&body)).await
}

#[tokio::test(flavor = "multi_thread")]
async fn the_live_version_is_pushed_to_a_pages_branch_keeping_its_history() {
    let remote = GitServer::start("me", TOKEN).await;
    let (_mock, server) = server().await;
    let project = server.create("pages").await;
    let pages = format!("/projects/{project}/publish/git");
    let (status, error) = post(&server, &pages, json!({})).await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{error}");
    assert_eq!(error["code"], "remote_not_set");
    let body = json!({"url": remote.url(), "username": "me", "token": TOKEN});
    let (status, set) = set_remote(&server, &project, body).await;
    assert_eq!(status, StatusCode::OK, "{set}");
    let (status, error) = post(&server, &pages, json!({})).await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{error}");
    assert_eq!(error["code"], "not_published");

    let page = format!("<h1>one</h1>\n{}", "<p>padding</p>\n".repeat(64));
    server.put_file(&project, "index.html", &page).await;
    let publish = format!("/projects/{project}/publish");
    let (status, _) = post(&server, &publish, json!({})).await;
    assert_eq!(status, StatusCode::CREATED);
    let (status, pushed) = post(&server, &pages, json!({})).await;
    assert_eq!(status, StatusCode::OK, "{pushed}");
    assert_eq!(pushed["branch"], "gh-pages");
    let first = pushed["commit"].as_str().unwrap().to_owned();
    let files = git(
        &remote.repo(),
        &["ls-tree", "-r", "--name-only", "gh-pages"],
    );
    assert_eq!(files, "index.html", "no gzip copies: {files}");
    assert_eq!(
        git(&remote.repo(), &["show", "gh-pages:index.html"]),
        page.trim_end()
    );
    let author = git(
        &remote.repo(),
        &["log", "-1", "--format=%an|%s", "gh-pages"],
    );
    assert_eq!(author, "Rivet|Publish version 1");

    server
        .put_file(&project, "index.html", "<h1>two</h1>\n")
        .await;
    let (status, _) = post(&server, &publish, json!({})).await;
    assert_eq!(status, StatusCode::CREATED);
    let (status, pushed) = post(&server, &pages, json!({"branch": "site"})).await;
    assert_eq!(status, StatusCode::OK, "{pushed}");
    assert_eq!(
        git(&remote.repo(), &["show", "site:index.html"]),
        "<h1>two</h1>"
    );
    let (status, again) = post(&server, &pages, json!({})).await;
    assert_eq!(status, StatusCode::OK, "{again}");
    let parents = git(&remote.repo(), &["log", "-1", "--format=%P", "gh-pages"]);
    assert_eq!(parents, first, "the branch's history is kept");
}
