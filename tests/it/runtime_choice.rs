//! The runtime of each project through the real `rivet serve` and its server
//! functions: chosen from `RIVET_RUNTIME_DEFAULT` at creation, switched, and
//! still switched after a restart.
#![cfg(feature = "ssr")]

use super::support::Ide as Serve;

/// `rivet serve` on the data directory `data`, new projects running on
/// `default`, with `env` on top.
async fn serve(data: tempfile::TempDir, default: &str, env: &[(&str, &str)]) -> Serve {
    let ide = Serve::on(data).env("RIVET_RUNTIME_DEFAULT", default);
    ide.envs(env.iter().copied()).start().await
}

/// The project's runtime, as its server function says.
async fn runtime(serve: &Serve, project: &str) -> String {
    let (status, body) = serve.call("project_runtime", &[("project", project)]).await;
    assert_eq!(status, 200, "{body}");
    serde_json::from_str(&body).unwrap()
}

#[tokio::test]
async fn runtime_switch_to_sandbox_survives_a_restart() {
    let data = tempfile::tempdir().unwrap();
    let (project, data) = {
        let serve = serve(data, "webcontainer", &[]).await;
        let project = serve.new_project().await;
        assert_eq!(runtime(&serve, &project).await, "webcontainer");
        let (status, body) = serve
            .call(
                "set_project_runtime",
                &[("project", &project), ("runtime", "sandbox")],
            )
            .await;
        assert_eq!(status, 200, "{body}");
        assert_eq!(runtime(&serve, &project).await, "sandbox");
        // The HTTP API reports the same runtime.
        let row: serde_json::Value = serve
            .http
            .get(serve.url(&format!("/api/v1/projects/{project}")))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        assert_eq!(row["runtime"], "sandbox");
        (project, serve.kill().await)
    };
    let serve = serve(data, "webcontainer", &[]).await;
    assert_eq!(runtime(&serve, &project).await, "sandbox");
    // A project made after the restart still follows the default.
    let fresh = serve.new_project().await;
    assert_eq!(runtime(&serve, &fresh).await, "webcontainer");
}

#[tokio::test]
async fn runtime_switch_to_unknown_runtime_is_refused() {
    let data = tempfile::tempdir().unwrap();
    let serve = serve(data, "sandbox", &[]).await;
    let project = serve.new_project().await;
    let (status, _) = serve
        .call(
            "set_project_runtime",
            &[("project", &project), ("runtime", "docker")],
        )
        .await;
    assert_ne!(status, 200);
    assert_eq!(runtime(&serve, &project).await, "sandbox");
}

async fn post_json(serve: &Serve, function: &str, body: serde_json::Value) -> u16 {
    let response = serve
        .http
        .post(serve.url(&format!("/api/{function}")))
        .json(&body)
        .send()
        .await
        .unwrap();
    response.status().as_u16()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_webcontainer_answer_is_relayed_to_the_tab_which_reports_back() {
    use futures::StreamExt;
    use rivet::runtime::relay::RelayEvent;
    use rivet::runtime::session::LineDecoder;

    let mock = super::llm::Mock::start(&["--chunk-size", "64"]);
    let data = tempfile::tempdir().unwrap();
    let base_url = mock.base_url();
    let env = [
        ("RIVET_LLM_PROVIDER", "custom"),
        ("RIVET_LLM_BASE_URL", base_url.as_str()),
        ("RIVET_LLM_MODEL", "rivet-replay"),
    ];
    let serve = serve(data, "webcontainer", &env).await;
    let project = serve.new_project().await;

    // The tab follows the relay, then the person sends a message.
    let relay = serve
        .http
        .post(serve.url("/api/browser_answers"))
        .form(&[("project", project.as_str())])
        .send()
        .await
        .unwrap();
    assert_eq!(relay.status(), 200);
    let (status, body) = serve
        .call(
            "send_message",
            &[("project", &project), ("text", "build a todo app")],
        )
        .await;
    assert_eq!(status, 200, "{body}");

    let mut text = String::new();
    let mut lines = LineDecoder::default();
    let mut body = relay.bytes_stream();
    let ended = tokio::time::timeout(std::time::Duration::from_secs(60), async {
        while let Some(Ok(chunk)) = body.next().await {
            for line in lines.push(&chunk) {
                match serde_json::from_slice::<RelayEvent>(&line).unwrap() {
                    RelayEvent::Delta { text: piece, .. } => text.push_str(&piece),
                    RelayEvent::End { stopped, .. } => return stopped,
                    other => panic!("unexpected {other:?}"),
                }
            }
        }
        panic!("the relay ended before the answer did");
    })
    .await
    .unwrap();
    assert!(!ended, "the answer was not stopped");
    assert!(text.contains("<boltArtifact"), "{text}");
    assert!(text.contains("React Todo App"), "{text}");

    // The server ran none of it: the answer's files are the tab's to write.
    let file = |path: &str| serve.url(&format!("/api/v1/projects/{project}/files/{path}"));
    let missing = serve.http.get(file("package.json")).send().await.unwrap();
    assert_eq!(missing.status(), 404);

    // What the tab reports becomes the server's record.
    let change =
        serde_json::json!({"type": "write", "path": "src/App.jsx", "content": "tab wrote this"});
    let status = post_json(
        &serve,
        "mirror_file",
        serde_json::json!({"project": project, "change": change}),
    )
    .await;
    assert_eq!(status, 200);
    let written = serve.http.get(file("src/App.jsx")).send().await.unwrap();
    assert_eq!(written.text().await.unwrap(), "tab wrote this");
    let events = serde_json::json!([{"type": "terminal", "text": "$ npm install\r\n"}]);
    let status = post_json(
        &serve,
        "report_events",
        serde_json::json!({"project": project, "events": events}),
    )
    .await;
    assert_eq!(status, 200);
    let refused = serde_json::json!([{"type": "message_resumed", "message_id": "m2"}]);
    let status = post_json(
        &serve,
        "report_events",
        serde_json::json!({"project": project, "events": refused}),
    )
    .await;
    assert_ne!(status, 200);

    // The answer itself is the server's: stored whole, complete.
    let messages: serde_json::Value = serve
        .http
        .get(serve.url(&format!("/api/v1/projects/{project}/messages")))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let last = messages.as_array().unwrap().last().unwrap().clone();
    assert_eq!(last["status"], "complete", "{last}");
    assert_eq!(last["text"].as_str().unwrap(), text);
}

/// The first bytes of a PNG file: not UTF-8.
const PNG: &[u8] = &[
    0x89, b'P', b'N', b'G', 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0xff, 0xfe,
];

async fn mirror(serve: &Serve, project: &str, change: serde_json::Value) -> u16 {
    let body = serde_json::json!({"project": project, "change": change});
    post_json(serve, "mirror_file", body).await
}

#[tokio::test(flavor = "multi_thread")]
async fn a_binary_file_written_in_the_browser_runtime_is_byte_exact_on_the_server() {
    use rivet::runtime::relay::{FileContent, FileMirror};

    let data = tempfile::tempdir().unwrap();
    let serve = serve(data, "webcontainer", &[]).await;
    let project = serve.new_project().await;
    let change = FileMirror::Write {
        path: "public/logo.png".into(),
        content: FileContent::new(PNG),
    };
    let change = serde_json::to_value(change).unwrap();
    assert_eq!(change["encoding"], "base64", "{change}");
    assert_eq!(mirror(&serve, &project, change).await, 200);
    let file = serve
        .http
        .get(serve.url(&format!("/api/v1/projects/{project}/files/public/logo.png")))
        .send()
        .await
        .unwrap();
    assert_eq!(file.bytes().await.unwrap().as_ref(), PNG);

    let invalid =
        serde_json::json!({"type": "write", "path": "x.png", "content": "!", "encoding": "base64"});
    assert_ne!(mirror(&serve, &project, invalid).await, 200);
    // Removing what is gone already changes nothing.
    let gone = serde_json::json!({"type": "remove", "path": "gone.txt"});
    assert_eq!(mirror(&serve, &project, gone).await, 200);
}

/// A tab boots its WebContainer from the server's copy; a project too large
/// for one listing is refused with the limit named, where the tab once got
/// the first 10,000 entries and nothing said the rest were missing.
#[tokio::test(flavor = "multi_thread")]
async fn a_browser_snapshot_of_a_project_too_large_to_list_is_refused_naming_the_limit() {
    let data = tempfile::tempdir().unwrap();
    let serve = serve(data, "webcontainer", &[]).await;
    let project = serve.new_project().await;
    let first = serde_json::json!({"type": "write", "path": "index.html", "content": "<p>hi</p>"});
    assert_eq!(mirror(&serve, &project, first).await, 200);
    let many = serve.project_dir(&project).join("workspace/many");
    std::fs::create_dir_all(&many).unwrap();
    for i in 0..10_050 {
        std::fs::write(many.join(format!("{i}.txt")), "x").unwrap();
    }
    let (status, body) = serve.call("browser_files", &[("project", &project)]).await;
    let head: String = body.chars().take(300).collect();
    assert_ne!(status, 200, "{head}");
    assert!(body.contains("more than one listing holds"), "{head}");
    assert!(body.contains("10000 files and folders"), "{head}");
}

#[tokio::test(flavor = "multi_thread")]
async fn the_browser_snapshot_returns_a_binary_file_and_its_bytes_round_trip() {
    use rivet::runtime::relay::BrowserSnapshot;

    let data = tempfile::tempdir().unwrap();
    let serve = serve(data, "webcontainer", &[]).await;
    let project = serve.new_project().await;
    let base64 = "iVBORw0KGgoA//4=";
    let too_large = "x".repeat(1024 * 1024 + 1);
    for change in [
        // Today's text-only JSON.
        serde_json::json!({"type": "write", "path": "index.html", "content": "<p>hi</p>"}),
        serde_json::json!({"type": "write", "path": "public/logo.png", "content": base64, "encoding": "base64"}),
        serde_json::json!({"type": "write", "path": "node_modules/react/index.js", "content": "x"}),
        serde_json::json!({"type": "write", "path": "public/huge.txt", "content": too_large}),
    ] {
        assert_eq!(mirror(&serve, &project, change).await, 200);
    }
    let (status, body) = serve.call("browser_files", &[("project", &project)]).await;
    assert_eq!(status, 200, "{body}");
    let snapshot: BrowserSnapshot = serde_json::from_str(&body).unwrap();
    let mut files: Vec<(&str, &[u8])> = snapshot
        .files
        .iter()
        .map(|f| (f.path.as_str(), f.content.as_bytes()))
        .collect();
    files.sort();
    assert_eq!(
        files,
        [
            ("index.html", "<p>hi</p>".as_bytes()),
            ("public/logo.png", PNG)
        ],
        "no skipped folder, nothing over the size cap"
    );
}
