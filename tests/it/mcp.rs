//! Agent tools from real MCP servers, the ones from the npm registry
//! (`tests/mcp-servers/package.json`, installed once into the target
//! folder): `server-everything` over stdio on the host and over streamable
//! HTTP, `server-filesystem` in a project's sandbox. They list their tools
//! with schemas, answer calls (in an agent run through the scripted
//! provider, approved and denied), and fail plainly: a server that does not
//! start, a call past the limit, a server that crashes mid-call (started
//! again on the next call), a read outside the project.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use async_trait::async_trait;
use rivet::runtime::host::Runtime;
use rivet::runtime::llm::ToolCall;
use rivet::runtime::project::ProjectId;
use rivet::server::agent::run::{
    Agent, AgentEnd, AgentSettings, Approval, Approver, LlmModel, Subject,
};
use rivet::server::agent::tools::{ToolContext, ToolSource};
use rivet::server::config::{Config, McpConfig, McpRun, McpServerSpec};
use rivet::server::llm::budget::fit::Window;
use rivet::server::llm::{ChatMessage, ResolvedLlm};
use rivet::server::mcp::{McpService, Status};
use rivet::server::sandbox::SandboxManager;
use serde_json::json;
use tokio_util::sync::CancellationToken;

use super::agent::sandbox;
use super::llm::Mock;

/// The servers' packages, installed from the npm registry once per run of
/// the tests (and kept in the target folder); `None` when the registry
/// cannot be reached.
fn packages() -> Option<&'static Path> {
    static DIR: OnceLock<Option<PathBuf>> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("mcp-servers");
        let manifest = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp-servers/package.json");
        let wanted = std::fs::read(&manifest).unwrap();
        let installed = dir.join("node_modules/@modelcontextprotocol/server-filesystem/package.json");
        if std::fs::read(dir.join("package.json")).ok() == Some(wanted.clone()) && installed.exists() {
            return Some(dir);
        }
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("package.json"), &wanted).unwrap();
        let status = std::process::Command::new("npm")
            .args(["install", "--no-audit", "--no-fund", "--loglevel=error"])
            .current_dir(&dir)
            .status();
        match status {
            Ok(status) if status.success() => Some(dir),
            other => {
                eprintln!("skipped: the MCP servers could not be installed from the npm registry ({other:?})");
                None
            }
        }
    })
    .as_deref()
}

fn script(package: &str) -> PathBuf {
    packages()
        .unwrap()
        .join("node_modules/@modelcontextprotocol")
        .join(package)
        .join("dist/index.js")
}

/// `server-everything` over stdio, on the host.
fn everything(name: &str) -> McpServerSpec {
    McpServerSpec {
        name: name.to_owned(),
        command: Some("node".to_owned()),
        args: vec![
            script("server-everything").display().to_string(),
            "stdio".to_owned(),
        ],
        run: McpRun::Host,
        ..McpServerSpec::default()
    }
}

fn service(data: &Path, servers: Vec<McpServerSpec>, call_timeout_secs: u64) -> Arc<McpService> {
    let config = McpConfig {
        servers,
        call_timeout_secs,
        ..Config::defaults().mcp
    };
    Arc::new(McpService::new(&config, data))
}

/// A project's sandbox, and the service with its MCP tools.
struct Setup {
    _data: tempfile::TempDir,
    manager: Arc<SandboxManager>,
    runtime: Arc<dyn Runtime>,
    project: ProjectId,
    service: Arc<McpService>,
}

impl Setup {
    fn new(servers: Vec<McpServerSpec>, call_timeout_secs: u64) -> Setup {
        let data = tempfile::tempdir().unwrap();
        let manager = sandbox(data.path());
        let project = ProjectId::parse("mcpproject").unwrap();
        let runtime = manager.runtime(&project);
        let service = service(data.path(), servers, call_timeout_secs);
        Setup {
            _data: data,
            manager,
            runtime,
            project,
            service,
        }
    }

    async fn tools(&self) -> (Arc<dyn ToolSource>, Vec<String>) {
        let (tools, notes) = self
            .service
            .tools_for(&self.project, &self.runtime, None, 200_000, false)
            .await;
        (Arc::new(tools), notes)
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_everything_server_over_stdio_lists_its_tools_with_schemas_and_answers_calls() {
    if packages().is_none() {
        return;
    }
    let setup = Setup::new(vec![everything("everything")], 60);
    let (tools, notes) = setup.tools().await;
    assert!(notes.is_empty(), "{notes:?}");
    let specs = tools.specs();
    let echo = specs.iter().find(|s| s.name == "everything__echo").unwrap();
    assert_eq!(echo.parameters["properties"]["message"]["type"], "string");
    assert!(
        echo.description.contains("Echoes back"),
        "{}",
        echo.description
    );
    assert!(specs.iter().any(|s| s.name == "everything__get-sum"));

    let said = tools.call("everything__echo", r#"{"message": "hi"}"#).await;
    assert!(said.ok, "{said:?}");
    assert_eq!(said.text, "Echo: hi");
    let sum = tools
        .call("everything__get-sum", r#"{"a": 2, "b": 3}"#)
        .await;
    assert!(sum.ok && sum.text.contains('5'), "{sum:?}");
    let image = tools.call("everything__get-tiny-image", "{}").await;
    assert!(image.text.contains("[image, image/png"), "{image:?}");
    let wrong = tools.call("everything__get-sum", r#"{"a": "two"}"#).await;
    assert!(!wrong.ok && wrong.text.starts_with("Error:"), "{wrong:?}");

    let listed = setup.service.list();
    assert_eq!(listed[0].status, Status::Ready);
    assert!(
        listed[0]
            .tools
            .iter()
            .any(|t| t.name == "echo" && t.input_schema["type"] == "object")
    );
    setup.manager.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_everything_server_over_streamable_http_answers_calls() {
    if packages().is_none() {
        return;
    }
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut server = tokio::process::Command::new("node")
        .arg(script("server-everything"))
        .arg("streamableHttp")
        .env("PORT", port.to_string())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    while tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .is_err()
    {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the HTTP server never listened"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let remote = McpServerSpec {
        name: "remote".to_owned(),
        url: Some(format!("http://127.0.0.1:{port}/mcp")),
        headers: [("X-Rivet-Test".to_owned(), "yes".to_owned())].into(),
        ..McpServerSpec::default()
    };
    let setup = Setup::new(vec![remote], 60);
    let (tools, notes) = setup.tools().await;
    assert!(notes.is_empty(), "{notes:?}");
    let said = tools
        .call("remote__echo", r#"{"message": "over http"}"#)
        .await;
    assert_eq!(said.text, "Echo: over http", "{said:?}");
    assert_eq!(setup.service.place("remote"), "over HTTP at 127.0.0.1");
    server.kill().await.unwrap();
    setup.manager.shutdown().await;
}

/// Approves every call but `get-sum`'s, and keeps what each card showed.
#[derive(Default)]
struct NoSums {
    shown: Mutex<Vec<String>>,
}

#[async_trait]
impl Approver for NoSums {
    async fn decide(&self, subject: Subject, _call: &ToolCall) -> Approval {
        let Subject::Other { description } = subject else {
            return Approval::Deny;
        };
        let deny = description.contains("tool: get-sum");
        self.shown.lock().unwrap().push(description);
        if deny {
            Approval::Deny
        } else {
            Approval::Approve
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_run_calls_a_real_mcp_tool_through_the_scripted_provider_approved_and_denied() {
    if packages().is_none() {
        return;
    }
    let transcript = json!({
        "match": "echo",
        "turns": [
            {"content": "I will ask the server.", "tool_calls": [
                {"id": "call_1", "name": "everything__echo", "arguments": {"message": "from the agent"}},
                {"id": "call_2", "name": "everything__get-sum", "arguments": {"a": 1, "b": 2}}
            ]},
            {"expect_results": ["Echo: from the agent", "denied by the user"], "content": "The server echoed."}
        ]
    });
    let scripts = tempfile::tempdir().unwrap();
    std::fs::write(scripts.path().join("echo.json"), transcript.to_string()).unwrap();
    let mock = Mock::start_with(scripts.path(), &["--models", "agent-model"]);
    let setup = Setup::new(vec![everything("everything")], 60);
    let (extra, _) = setup.tools().await;
    let cancel = CancellationToken::new();
    let tools = ToolContext::new(setup.runtime.clone())
        .with_cancel(cancel.clone())
        .with_extra(extra);
    let model = LlmModel {
        llm: ResolvedLlm::custom(&mock.base_url(), "agent-model", None),
        system: "You use tools.".to_owned(),
        window: Window::new(200_000, None),
        cancel,
        tools: tools.specs(),
    };
    let approver = NoSums::default();
    let agent = Agent {
        model: &model,
        tools: &tools,
        approver: &approver,
        settings: AgentSettings {
            max_steps: 5,
            auto_approve: false,
        },
    };
    let outcome = agent
        .run(vec![ChatMessage::user("echo something")], |_| {})
        .await;

    let log = mock.log().await;
    assert_eq!(outcome.end, AgentEnd::Done, "{log:#?}");
    assert!(log.iter().all(|entry| entry["status"] == 200), "{log:#?}");
    let offered = log[0]["tools"].as_array().unwrap();
    assert!(
        offered.iter().any(|t| t == "everything__echo"),
        "{offered:?}"
    );
    assert!(offered.iter().any(|t| t == "write_file"), "{offered:?}");
    let shown = approver.shown.lock().unwrap().clone();
    assert_eq!(shown.len(), 2);
    assert!(
        shown[0].starts_with("MCP server: everything (runs on the host, trusted by the owner)\ntool: echo\narguments:\n"),
        "{}",
        shown[0]
    );
    assert!(
        shown[0].contains("\"message\": \"from the agent\""),
        "{}",
        shown[0]
    );
    setup.manager.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_does_not_start_is_a_note_and_its_tools_are_left_out() {
    if packages().is_none() {
        return;
    }
    let on_host = McpServerSpec {
        name: "missing".to_owned(),
        command: Some("/nonexistent/mcp-server".to_owned()),
        run: McpRun::Host,
        ..McpServerSpec::default()
    };
    let in_sandbox = McpServerSpec {
        name: "typo".to_owned(),
        command: Some("no-such-mcp-server".to_owned()),
        ..McpServerSpec::default()
    };
    let setup = Setup::new(vec![on_host, in_sandbox, everything("everything")], 60);
    let (tools, notes) = setup.tools().await;
    assert_eq!(notes.len(), 2, "{notes:?}");
    assert!(
        notes[0].contains("MCP server \"missing\" did not start"),
        "{}",
        notes[0]
    );
    assert!(notes[0].contains("No such file"), "{}", notes[0]);
    assert!(
        notes[1].contains("MCP server \"typo\" did not start"),
        "{}",
        notes[1]
    );
    assert!(
        notes[1].contains("no-such-mcp-server: not found"),
        "the sandbox's stderr is quoted: {}",
        notes[1]
    );
    assert!(
        notes
            .iter()
            .all(|n| n.ends_with("its tools are left out of this run."))
    );
    let names: Vec<String> = tools.specs().into_iter().map(|s| s.name).collect();
    assert!(
        names.iter().all(|n| n.starts_with("everything__")),
        "{names:?}"
    );
    let listed = setup.service.list();
    assert!(
        matches!(&listed[0].status, Status::Failed { error } if error.contains("did not start"))
    );
    setup.manager.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_past_the_limit_times_out_and_the_server_answers_the_next() {
    if packages().is_none() {
        return;
    }
    let setup = Setup::new(vec![everything("everything")], 2);
    let (tools, _) = setup.tools().await;
    let started = std::time::Instant::now();
    let slow = tools
        .call(
            "everything__trigger-long-running-operation",
            r#"{"duration": 30, "steps": 3}"#,
        )
        .await;
    assert!(!slow.ok);
    assert_eq!(
        slow.text,
        "Error: MCP server \"everything\" did not answer within 2 s"
    );
    assert!(started.elapsed() < Duration::from_secs(20));
    let said = tools
        .call("everything__echo", r#"{"message": "still here"}"#)
        .await;
    assert_eq!(said.text, "Echo: still here", "{said:?}");
    setup.manager.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_crashes_mid_call_is_an_error_and_starts_again_on_the_next_call() {
    if packages().is_none() {
        return;
    }
    let flags = tempfile::tempdir().unwrap();
    let crash = flags.path().join("crash");
    // The server, killed when the test says so; its stdin is the wrapper's.
    let wrapper = format!(
        "node {} stdio <&0 & pid=$!; while [ ! -e {} ]; do sleep 0.05; done; echo 'killed by the test' >&2; kill -9 $pid",
        script("server-everything").display(),
        crash.display()
    );
    let fragile = McpServerSpec {
        name: "fragile".to_owned(),
        command: Some("bash".to_owned()),
        args: vec!["-c".to_owned(), wrapper],
        run: McpRun::Host,
        ..McpServerSpec::default()
    };
    let setup = Setup::new(vec![fragile], 60);
    let (tools, notes) = setup.tools().await;
    assert!(notes.is_empty(), "{notes:?}");
    let calling = {
        let tools = Arc::clone(&tools);
        tokio::spawn(async move {
            tools
                .call(
                    "fragile__trigger-long-running-operation",
                    r#"{"duration": 30, "steps": 3}"#,
                )
                .await
        })
    };
    tokio::time::sleep(Duration::from_millis(500)).await;
    std::fs::write(&crash, "").unwrap();
    let crashed = tokio::time::timeout(Duration::from_secs(10), calling)
        .await
        .expect("a crash ends the call at once")
        .unwrap();
    assert!(!crashed.ok);
    assert!(
        crashed
            .text
            .starts_with("Error: MCP server \"fragile\" stopped"),
        "{crashed:?}"
    );
    assert!(
        crashed.text.contains("killed by the test"),
        "its stderr is quoted: {crashed:?}"
    );

    std::fs::remove_file(&crash).unwrap();
    let again = tools.call("fragile__echo", r#"{"message": "back"}"#).await;
    assert_eq!(again.text, "Echo: back", "{again:?}");
    assert_eq!(setup.service.list()[0].status, Status::Ready);
    std::fs::write(&crash, "").unwrap();
    setup.manager.shutdown().await;
}

/// Hard links where the folders share a disk, else a copy.
fn copy_tree(from: &Path, to: &Path) {
    let linked = std::process::Command::new("cp")
        .arg("-al")
        .arg(from)
        .arg(to)
        .status()
        .unwrap();
    if !linked.success() {
        let _ = std::fs::remove_dir_all(to);
        let copied = std::process::Command::new("cp")
            .arg("-r")
            .arg(from)
            .arg(to)
            .status()
            .unwrap();
        assert!(copied.success());
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_filesystem_server_in_the_sandbox_reads_the_project_and_nothing_outside_it() {
    if packages().is_none() {
        return;
    }
    // The server itself allows every path ("/"): the sandbox is what stops it.
    let files = McpServerSpec {
        name: "files".to_owned(),
        command: Some("node".to_owned()),
        args: vec![
            "/home/project/mcp/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js"
                .to_owned(),
            "/".to_owned(),
        ],
        ..McpServerSpec::default()
    };
    let setup = Setup::new(vec![files], 60);
    setup
        .runtime
        .write_file("hello.txt", b"hello from the project\n")
        .await
        .unwrap();
    let workspace = setup.manager.workspace_dir(&setup.project);
    std::fs::create_dir_all(workspace.join("mcp")).unwrap();
    copy_tree(
        &packages().unwrap().join("node_modules"),
        &workspace.join("mcp/node_modules"),
    );
    let outside = tempfile::tempdir().unwrap();
    let secret = outside.path().join("secret.txt");
    std::fs::write(&secret, "the owner's secret").unwrap();

    let (tools, notes) = setup.tools().await;
    assert!(notes.is_empty(), "{notes:?}");
    let inside = tools
        .call(
            "files__read_text_file",
            r#"{"path": "/home/project/hello.txt"}"#,
        )
        .await;
    assert_eq!(inside.text.trim(), "hello from the project", "{inside:?}");
    for path in [
        secret.display().to_string(),
        format!("{}/rivet.db", setup._data.path().display()),
    ] {
        let arguments = json!({"path": path}).to_string();
        let read = tools.call("files__read_text_file", &arguments).await;
        assert!(!read.ok, "{path}: {read:?}");
        assert!(read.text.contains("ENOENT"), "{path}: {read:?}");
        assert!(!read.text.contains("the owner's secret"));
    }
    assert_eq!(
        setup.service.place("files"),
        "runs in the project's sandbox"
    );
    setup.manager.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn the_api_adds_lists_chooses_and_removes_servers_without_showing_a_secret() {
    use std::os::unix::fs::PermissionsExt;
    let (_mock, server) = super::api_v1::server().await;
    let project = server.create("tools").await;
    let url = |path: &str| server.url(path);
    let docs = json!({"command": "npx", "args": ["-y", "docs-server"], "env": {"DOCS_KEY": "sk-docs-secret"}});
    let (status, view) = server
        .json(server.http.put(url("/mcp/servers/docs")).json(&docs))
        .await;
    assert_eq!(status, reqwest::StatusCode::OK, "{view}");
    assert_eq!(view["env"], json!(["DOCS_KEY"]));
    assert_eq!(view["run"], "sandbox");
    let remote = json!({"url": "https://mcp.example.com/mcp", "headers": {"Authorization": "Bearer hdr-secret"}, "trusted": true});
    let (status, _) = server
        .json(server.http.put(url("/mcp/servers/remote")).json(&remote))
        .await;
    assert_eq!(status, reqwest::StatusCode::OK);

    let (status, listed) = server.json(server.http.get(url("/mcp/servers"))).await;
    assert_eq!(status, reqwest::StatusCode::OK);
    let text = listed.to_string();
    assert!(
        !text.contains("sk-docs-secret") && !text.contains("hdr-secret"),
        "{text}"
    );
    let names: Vec<&str> = listed["servers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["docs", "remote"]);
    assert_eq!(listed["servers"][0]["status"]["state"], "not_started");
    assert_eq!(listed["servers"][1]["transport"], "http");
    let file = server.data_dir().join("mcp/servers.json");
    assert_eq!(
        std::fs::metadata(&file).unwrap().permissions().mode() & 0o777,
        0o600
    );

    let choice_url = url(&format!("/projects/{project}/mcp"));
    let (_, all) = server.json(server.http.get(&choice_url)).await;
    assert_eq!(all, json!({"servers": ["docs", "remote"], "all": true}));
    let (status, chosen) = server
        .json(
            server
                .http
                .put(&choice_url)
                .json(&json!({"servers": ["remote"]})),
        )
        .await;
    assert_eq!(status, reqwest::StatusCode::OK);
    assert_eq!(chosen, json!({"servers": ["remote"], "all": false}));
    let (status, refused) = server
        .json(
            server
                .http
                .put(&choice_url)
                .json(&json!({"servers": ["nope"]})),
        )
        .await;
    assert_eq!(status, reqwest::StatusCode::BAD_REQUEST);
    assert_eq!(refused["code"], "unknown_mcp_server");

    for (body, code) in [
        (
            json!({"command": "x", "url": "http://127.0.0.1:1/mcp"}),
            "invalid_mcp_server",
        ),
        (json!({"url": "file:///etc/passwd"}), "invalid_mcp_server"),
        (json!({"command": "x", "surprise": 1}), "invalid_json"),
    ] {
        let (status, error) = server
            .json(server.http.put(url("/mcp/servers/bad")).json(&body))
            .await;
        assert_eq!(status, reqwest::StatusCode::BAD_REQUEST, "{body} {error}");
        if code != "invalid_json" {
            assert_eq!(error["code"], code, "{body}");
        }
    }
    let (status, bad_name) = server
        .json(server.http.put(url("/mcp/servers/a__b")).json(&docs))
        .await;
    assert_eq!(
        (status, bad_name["code"].as_str()),
        (reqwest::StatusCode::BAD_REQUEST, Some("invalid_mcp_server"))
    );

    let deleted = server
        .http
        .delete(url("/mcp/servers/docs"))
        .send()
        .await
        .unwrap();
    assert_eq!(deleted.status(), reqwest::StatusCode::NO_CONTENT);
    let (status, again) = server
        .json(server.http.delete(url("/mcp/servers/docs")))
        .await;
    assert_eq!(
        (status, again["code"].as_str()),
        (reqwest::StatusCode::NOT_FOUND, Some("mcp_server_not_found"))
    );
    let (_, chosen) = server.json(server.http.get(&choice_url)).await;
    assert_eq!(chosen, json!({"servers": ["remote"], "all": false}));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_model_that_takes_images_gets_a_tools_image_byte_exact_after_its_result() {
    if packages().is_none() {
        return;
    }
    let transcript = json!({
        "match": "tiny image",
        "turns": [
            {"tool_calls": [{"id": "call_1", "name": "everything__get-tiny-image", "arguments": {}}]},
            {"expect_results": ["image/png, 4033 bytes: attached below"], "content": "I see a tiny image."}
        ]
    });
    let scripts = tempfile::tempdir().unwrap();
    std::fs::write(scripts.path().join("image.json"), transcript.to_string()).unwrap();
    let mock = Mock::start_with(scripts.path(), &["--models", "vision-model"]);
    let setup = Setup::new(vec![everything("everything")], 60);
    let (extra, _) = setup
        .service
        .tools_for(&setup.project, &setup.runtime, None, 200_000, true)
        .await;
    let extra: Arc<dyn ToolSource> = Arc::new(extra);
    let direct = extra.call("everything__get-tiny-image", "{}").await;
    assert_eq!(direct.images.len(), 1, "{direct:?}");
    let cancel = CancellationToken::new();
    let tools = ToolContext::new(setup.runtime.clone())
        .with_cancel(cancel.clone())
        .with_extra(extra);
    let model = LlmModel {
        llm: ResolvedLlm::custom(&mock.base_url(), "vision-model", None),
        system: "You use tools.".to_owned(),
        window: Window::new(200_000, None),
        cancel,
        tools: tools.specs(),
    };
    let agent = Agent {
        model: &model,
        tools: &tools,
        approver: &NoSums::default(),
        settings: AgentSettings {
            max_steps: 4,
            auto_approve: true,
        },
    };
    let outcome = agent
        .run(vec![ChatMessage::user("show a tiny image")], |_| {})
        .await;
    let log = mock.log().await;
    assert_eq!(outcome.end, AgentEnd::Done, "{log:#?}");
    assert!(log[0]["images"].is_null(), "the first request has none");
    let sent = log[1]["images"].as_array().unwrap();
    assert_eq!(sent.len(), 1);
    assert_eq!(
        sent[0],
        format!("data:image/png;base64,{}", direct.images[0].base64)
    );
    setup.manager.shutdown().await;
}
