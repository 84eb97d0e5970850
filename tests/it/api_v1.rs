//! The headless HTTP API (`/api/v1`) against a real `rivet serve`, with the
//! scripted provider answering and the sandbox holding the files.
#![cfg(feature = "ssr")]

use std::time::Duration;

use reqwest::StatusCode;
use serde_json::{Value, json};

use super::llm::Mock;
use super::support::Ide;

/// The one harness ([`Ide`]), with this module's calls; `url` is under `/api/v1`.
pub(crate) struct Server(Ide);

impl std::ops::Deref for Server {
    type Target = Ide;

    fn deref(&self) -> &Ide {
        &self.0
    }
}

impl Server {
    async fn start(mock: &Mock, data: tempfile::TempDir) -> Server {
        Server::start_with(mock, data, &[]).await
    }

    /// A server with more configuration in `env` (`RIVET_…` variables).
    pub(crate) async fn start_with(
        mock: &Mock,
        data: tempfile::TempDir,
        env: &[(&str, &str)],
    ) -> Server {
        Server(
            Ide::on(data)
                .provider(&mock.base_url())
                .envs(env.iter().copied())
                .start()
                .await,
        )
    }

    pub(crate) fn url(&self, path: &str) -> String {
        self.0.api(path)
    }

    /// Kills `rivet serve` with SIGKILL; its data directory.
    pub(crate) async fn kill(self) -> tempfile::TempDir {
        self.0.kill().await
    }

    /// Writes a project's file through `PUT …/files/{path}`.
    pub(crate) async fn put_file(&self, project: &str, path: &str, text: &str) {
        let url = self.url(&format!("/projects/{project}/files/{path}"));
        let response = self
            .http
            .put(&url)
            .body(text.to_owned())
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), StatusCode::NO_CONTENT, "{path}");
    }

    /// Runs `rivet` with `args` against this server, as a person would,
    /// and returns what it printed (it must succeed).
    pub(crate) async fn cli(&self, args: &[&str]) -> String {
        let cli = tokio::process::Command::new(env!("CARGO_BIN_EXE_rivet"))
            .args(args)
            .current_dir(self.data_dir())
            .env("RIVET_SERVER_ADDR", self.addr.to_string())
            .env("RIVET_SERVER_TOKEN", super::support::TOKEN)
            .env("RIVET_SERVER_DATA_DIR", self.data_dir())
            .env_remove("RIVET_URL")
            .output()
            .await
            .unwrap();
        let said = String::from_utf8_lossy(&cli.stdout).trim().to_owned();
        let errors = String::from_utf8_lossy(&cli.stderr);
        assert!(cli.status.success(), "rivet {args:?}: {said} {errors}");
        said
    }
}

pub(crate) async fn server() -> (Mock, Server) {
    let mock = Mock::start(&[]);
    let server = Server::start(&mock, tempfile::tempdir().unwrap()).await;
    (mock, server)
}

#[tokio::test(flavor = "multi_thread")]
async fn projects_are_created_listed_and_fetched() {
    let (_mock, server) = server().await;
    let first = server.create("first").await;
    let second = server.create("second").await;
    let (status, list) = server.json(server.http.get(server.url("/projects"))).await;
    assert_eq!(status, StatusCode::OK);
    let listed: Vec<&str> = list
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["id"].as_str().unwrap())
        .collect();
    assert!(listed.contains(&first.as_str()) && listed.contains(&second.as_str()));
    assert!(list[0]["updated_at"].is_i64(), "{list}");
    let (status, project) = server
        .json(server.http.get(server.url(&format!("/projects/{second}"))))
        .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(project["name"], "second");
    assert_eq!(project["id"], second.as_str());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_project_without_a_name_is_refused_with_a_code() {
    let (_mock, server) = server().await;
    for (body, code) in [
        (json!({"name": "  "}), "invalid_name"),
        (json!({"title": "x"}), "invalid_json"),
    ] {
        let (status, error) = server
            .json(server.http.post(server.url("/projects")).json(&body))
            .await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{error}");
        assert_eq!(error["code"], code, "{error}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn an_unknown_project_or_route_is_a_json_404_with_a_code() {
    let (_mock, server) = server().await;
    for path in [
        "/projects/nosuchproject",
        "/projects/nosuchproject/messages",
        "/projects/..%2F/files/a",
    ] {
        let (status, error) = server.json(server.http.get(server.url(path))).await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{path}: {error}");
        assert_eq!(error["code"], "project_not_found", "{path}: {error}");
    }
    let (status, error) = server
        .json(server.http.get(server.url("/nothing/here")))
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert_eq!(error["code"], "no_route");
}

#[tokio::test(flavor = "multi_thread")]
async fn requests_without_the_token_are_refused() {
    let (mock, server) = server().await;
    let project = server.create("guarded").await;
    let anonymous = reqwest::Client::new();
    let requests = [
        anonymous.get(server.url("/projects")),
        anonymous.get(server.url(&format!("/projects/{project}/secrets"))),
        anonymous
            .put(server.url(&format!("/projects/{project}/secrets/KEY")))
            .body("value"),
        anonymous
            .post(server.url(&format!("/projects/{project}/enhance")))
            .json(&json!({"text": "todo app"})),
        anonymous.get(server.url(&format!("/projects/{project}/chats"))),
        anonymous
            .put(server.url(&format!("/projects/{project}/git/remote")))
            .json(&json!({"url": "http://127.0.0.1:9/x.git", "token": "t"})),
        anonymous.get(server.url(&format!("/projects/{project}/git/remote"))),
        anonymous.post(server.url(&format!("/projects/{project}/git/push"))),
        anonymous.post(server.url(&format!("/projects/{project}/git/pull"))),
        anonymous.get(server.url(&format!("/projects/{project}/git/status"))),
        anonymous.post(server.url(&format!("/projects/{project}/publish"))),
        anonymous.get(server.url(&format!("/projects/{project}/publish"))),
        anonymous.delete(server.url(&format!("/projects/{project}/publish"))),
        anonymous
            .post(server.url(&format!("/projects/{project}/publish/rollback")))
            .json(&json!({"version": 1})),
        anonymous.post(server.url(&format!("/projects/{project}/chats"))),
        anonymous
            .post(server.url(&format!("/projects/{project}/chats/main/messages")))
            .json(&json!({"text": "hello greeting"})),
    ];
    for request in requests {
        let response = request.send().await.unwrap();
        assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
    }
    // Nothing was kept or asked.
    let url = server.url(&format!("/projects/{project}/secrets"));
    let (_, listed) = server.json(server.http.get(&url)).await;
    assert_eq!(listed, json!({"secrets": []}));
    let url = server.url(&format!("/projects/{project}/chats"));
    let (_, chats) = server.json(server.http.get(&url)).await;
    assert_eq!(chats.as_array().map(Vec::len), Some(1), "{chats}");
    let url = server.url(&format!("/projects/{project}/git/remote"));
    let (status, _) = server.json(server.http.get(&url)).await;
    assert_eq!(status, StatusCode::NOT_FOUND, "no remote was kept");
    assert!(mock.log().await.is_empty());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_message_is_accepted_answered_and_listed_in_order() {
    let (_mock, server) = server().await;
    let project = server.create("chat").await;
    let messages = server.url(&format!("/projects/{project}/messages"));
    let (status, sent) = server
        .json(
            server
                .http
                .post(&messages)
                .json(&json!({"text": "show me a snippet sample"})),
        )
        .await;
    assert_eq!(status, StatusCode::ACCEPTED, "{sent}");
    let user = sent["user_message_id"].as_str().unwrap().to_owned();
    let assistant = sent["assistant_message_id"].as_str().unwrap().to_owned();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    let list = loop {
        let (status, list) = server.json(server.http.get(&messages)).await;
        assert_eq!(status, StatusCode::OK, "{list}");
        if list[1]["status"] == "complete" {
            break list;
        }
        assert!(tokio::time::Instant::now() < deadline, "{list}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert_eq!(list.as_array().unwrap().len(), 2, "{list}");
    assert_eq!(list[0]["id"], user.as_str());
    assert_eq!(list[0]["role"], "user");
    assert_eq!(list[0]["text"], "show me a snippet sample");
    assert_eq!(list[0]["status"], "complete");
    assert_eq!(list[1]["id"], assistant.as_str());
    assert_eq!(list[1]["role"], "assistant");
    assert!(
        list[1]["text"]
            .as_str()
            .unwrap()
            .starts_with("Here is a small counter component"),
        "{list}"
    );
}

/// Sends `body` to the project's messages and waits for its answer;
/// returns the whole list then.
pub(crate) async fn answered(server: &Server, project: &str, body: Value) -> Value {
    let messages = server.url(&format!("/projects/{project}/messages"));
    let (status, sent) = server.json(server.http.post(&messages).json(&body)).await;
    assert_eq!(status, StatusCode::ACCEPTED, "{sent}");
    let assistant = sent["assistant_message_id"].clone();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    loop {
        let (_, list) = server.json(server.http.get(&messages)).await;
        let done = list
            .as_array()
            .unwrap()
            .iter()
            .any(|m| m["id"] == assistant && m["status"] == "complete");
        if done {
            return list;
        }
        assert!(tokio::time::Instant::now() < deadline, "{list}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_message_sent_with_a_model_is_answered_by_that_model_and_says_so() {
    let mock = Mock::start(&["--models", "rivet-replay,rivet-other"]);
    let server = Server::start(&mock, tempfile::tempdir().unwrap()).await;
    let project = server.create("models").await;
    let text = "show me a snippet sample";
    let list = answered(
        &server,
        &project,
        json!({"text": text, "model": "rivet-other"}),
    )
    .await;
    assert_eq!(list[1]["model"], "rivet-other", "{list}");
    // The next message without a model goes back to the configured one.
    let list = answered(&server, &project, json!({"text": text})).await;
    assert_eq!(list[3]["model"], "rivet-replay", "{list}");
    assert!(
        list[0].get("model").is_none(),
        "a user message names no model: {list}"
    );
    let models: Vec<String> = mock
        .log()
        .await
        .iter()
        .map(|entry| entry["model"].as_str().unwrap_or_default().to_owned())
        .collect();
    assert_eq!(models, ["rivet-other", "rivet-replay"]);
}

#[tokio::test(flavor = "multi_thread")]
async fn an_empty_message_is_refused_with_a_code() {
    let (_mock, server) = server().await;
    let project = server.create("chat").await;
    let (status, error) = server
        .json(
            server
                .http
                .post(server.url(&format!("/projects/{project}/messages")))
                .json(&json!({"text": " \n"})),
        )
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(error["code"], "empty_message");
}

#[tokio::test(flavor = "multi_thread")]
async fn files_are_written_read_and_deleted() {
    let (_mock, server) = server().await;
    let project = server.create("files").await;
    let file = server.url(&format!("/projects/{project}/files/src/data.bin"));
    let bytes: Vec<u8> = vec![0, 159, 146, 150, b'\n', 255];
    let response = server
        .http
        .put(&file)
        .body(bytes.clone())
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::NO_CONTENT);
    let response = server.http.get(&file).send().await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(response.bytes().await.unwrap().to_vec(), bytes);
    let response = server.http.delete(&file).send().await.unwrap();
    assert_eq!(response.status(), StatusCode::NO_CONTENT);
    let (status, error) = server.json(server.http.get(&file)).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert_eq!(error["code"], "file_not_found");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_folder_is_listed_whole_even_one_the_file_tree_skips() {
    let (_mock, server) = server().await;
    let project = server.create("listing").await;
    server.put_file(&project, "index.html", "<h1>").await;
    server.put_file(&project, "dist/assets/app.js", "app").await;
    let list = |dir: &str| server.url(&format!("/projects/{project}/files?dir={dir}"));
    let (status, root) = server
        .json(
            server
                .http
                .get(server.url(&format!("/projects/{project}/files"))),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{root}");
    let names: Vec<(&str, &str)> = root["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| (e["path"].as_str().unwrap(), e["kind"].as_str().unwrap()))
        .collect();
    assert!(names.contains(&("index.html", "file")), "{root}");
    assert!(names.contains(&("dist", "dir")), "{root}");
    let (status, dist) = server.json(server.http.get(list("dist/assets"))).await;
    assert_eq!(status, StatusCode::OK, "{dist}");
    assert_eq!(dist["entries"][0]["path"], "dist/assets/app.js", "{dist}");
    assert_eq!(dist["entries"][0]["size"], 3, "{dist}");
    let (status, error) = server.json(server.http.get(list("nowhere"))).await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{error}");
    assert_eq!(error["code"], "file_not_found", "{error}");
    let (status, error) = server.json(server.http.get(list("..%2F..%2Fetc"))).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{error}");
    assert_eq!(error["code"], "invalid_path", "{error}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_file_path_leaving_the_project_is_refused_with_a_code() {
    let (_mock, server) = server().await;
    let project = server.create("files").await;
    // One encoded segment, so no client or proxy folds the `..` away.
    let (status, error) = server
        .json(server.http.get(server.url(&format!(
            "/projects/{project}/files/%2E%2E%2F%2E%2E%2Fetc%2Fpasswd"
        ))))
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{error}");
    assert_eq!(error["code"], "invalid_path", "{error}");
}

#[tokio::test(flavor = "multi_thread")]
async fn project_json_files_are_imported_at_start() {
    let data = tempfile::tempdir().unwrap();
    // What versions before the store left: a project.json beside the files.
    let projects = rivet::server::projects::Projects::new(data.path());
    let old = projects.create("made before the store").unwrap();
    let json = serde_json::to_vec(&old).unwrap();
    std::fs::write(projects.dir(&old.id).join("project.json"), json).unwrap();
    let mock = Mock::start(&[]);
    let server = Server::start(&mock, data).await;
    let (status, list) = server.json(server.http.get(server.url("/projects"))).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(list.as_array().unwrap().len(), 1, "{list}");
    assert_eq!(list[0]["id"], old.id.as_str());
    assert_eq!(list[0]["name"], "made before the store");
}
