//! The pure parts: checking a server, what is shown of it, the saved file,
//! the tools' names, their fit to the budget and their results as text.
//! The real servers are started in `tests/it/mcp.rs`.

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;

use rmcp::model::{CallToolResult, ContentBlock as Content, ResourceContents};
use serde_json::json;

use super::tools::{ServerTools, exposed_name, fit, result_text};
use super::*;
use crate::server::config::Config;

fn stdio(name: &str) -> McpServerSpec {
    McpServerSpec {
        name: name.to_owned(),
        command: Some("npx".to_owned()),
        args: vec!["-y".to_owned(), "server".to_owned()],
        env: BTreeMap::from([("API_KEY".to_owned(), "sk-very-secret".to_owned())]),
        ..McpServerSpec::default()
    }
}

fn http(name: &str) -> McpServerSpec {
    McpServerSpec {
        name: name.to_owned(),
        url: Some("https://mcp.example.com/mcp".to_owned()),
        headers: BTreeMap::from([("Authorization".to_owned(), "Bearer hunter2".to_owned())]),
        ..McpServerSpec::default()
    }
}

#[test]
fn a_server_name_must_make_tool_names_providers_take() {
    for good in ["docs", "my-files", "a_b", "x1"] {
        assert_eq!(spec::check_name(good), Ok(()), "{good}");
    }
    for bad in [
        "",
        "a__b",
        "has space",
        "dots.no",
        "é",
        &"x".repeat(spec::MAX_NAME + 1),
    ] {
        assert!(spec::check_name(bad).is_err(), "{bad:?}");
    }
}

#[test]
fn a_server_has_a_command_or_a_url_never_both_or_neither() {
    assert!(matches!(
        Server::check(&stdio("a"), false).unwrap().transport,
        Transport::Stdio { .. }
    ));
    assert!(matches!(
        Server::check(&http("a"), false).unwrap().transport,
        Transport::Http { .. }
    ));
    let both = McpServerSpec {
        url: Some("http://127.0.0.1:1/mcp".to_owned()),
        ..stdio("a")
    };
    assert_eq!(
        Server::check(&both, false),
        Err(SpecError::Transport("a".to_owned()))
    );
    let neither = McpServerSpec {
        name: "a".to_owned(),
        ..McpServerSpec::default()
    };
    assert!(Server::check(&neither, false).is_err());
    for url in ["file:///etc/passwd", "not a url", "ftp://x/"] {
        let spec = McpServerSpec {
            url: Some(url.to_owned()),
            ..http("a")
        };
        assert!(Server::check(&spec, false).is_err(), "{url}");
    }
    let bad_header = McpServerSpec {
        headers: BTreeMap::from([("Bad Header".to_owned(), "x".to_owned())]),
        ..http("a")
    };
    assert!(Server::check(&bad_header, false).is_err());
}

#[test]
fn what_is_shown_of_a_server_names_its_secrets_without_their_values() {
    for spec in [stdio("a"), http("b")] {
        let view = Server::check(&spec, false).unwrap().view();
        let shown = serde_json::to_string(&view).unwrap();
        assert!(!shown.contains("sk-very-secret"), "{shown}");
        assert!(!shown.contains("hunter2"), "{shown}");
    }
    let view = Server::check(&stdio("a"), false).unwrap().view();
    assert_eq!(view.env, ["API_KEY"]);
    assert_eq!(
        view.run,
        Some(McpRun::Sandbox),
        "a stdio server runs in the sandbox by default"
    );
    assert_eq!(
        Server::check(&http("b"), false).unwrap().view().headers,
        ["Authorization"]
    );
}

#[test]
fn saved_servers_are_kept_private_and_come_back_after_a_restart() {
    let data = tempfile::tempdir().unwrap();
    let config = Config::defaults().mcp;
    let service = McpService::new(&config, data.path());
    service.put("docs", http("ignored")).unwrap();
    service.put("files", stdio("files")).unwrap();
    let file = data.path().join("mcp/servers.json");
    let mode = std::fs::metadata(&file).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600);

    let again = McpService::new(&config, data.path());
    assert_eq!(again.names(), ["docs", "files"]);
    assert_eq!(
        again.server("docs").unwrap().transport,
        Server::check(&http("docs"), false).unwrap().transport
    );
    again.delete("docs").unwrap();
    assert_eq!(McpService::new(&config, data.path()).names(), ["files"]);
    assert!(matches!(
        again.delete("docs"),
        Err(McpSettingsError::NotFound(_))
    ));
}

#[test]
fn a_server_from_the_configuration_file_is_changed_there_only() {
    let data = tempfile::tempdir().unwrap();
    let mut config = Config::defaults().mcp;
    config.servers = vec![stdio("docs"), stdio("bad__name")];
    let service = McpService::new(&config, data.path());
    assert!(matches!(
        service.put("docs", http("docs")),
        Err(McpSettingsError::FromConfig(_))
    ));
    assert!(matches!(
        service.delete("docs"),
        Err(McpSettingsError::FromConfig(_))
    ));
    let list = service.list();
    assert_eq!(list[0].server.name, "docs");
    assert!(list[0].server.from_config);
    assert_eq!(list[0].status, Status::NotStarted);
    assert_eq!(list[1].server.name, "bad__name");
    assert!(matches!(&list[1].status, Status::Failed { error } if error.contains("__")));
    assert_eq!(service.check_choice(&["docs".to_owned()]).ok(), Some(()));
    assert!(matches!(
        service.check_choice(&["nope".to_owned()]),
        Err(McpSettingsError::UnknownServers(name)) if name == "nope"
    ));
}

#[test]
fn a_corrupt_saved_servers_file_is_refused_not_emptied() {
    let data = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(data.path().join("mcp")).unwrap();
    std::fs::write(data.path().join("mcp/servers.json"), "{not json").unwrap();
    assert!(spec::SavedServers::new(data.path()).read().is_err());
    let service = McpService::new(&Config::defaults().mcp, data.path());
    assert!(service.names().is_empty());
    assert_eq!(
        std::fs::read_to_string(data.path().join("mcp/servers.json")).unwrap(),
        "{not json",
        "nothing is written over it"
    );
}

#[test]
fn tool_names_are_server_then_tool_in_characters_providers_take() {
    assert_eq!(exposed_name("docs", "get-sum"), "docs__get-sum");
    assert_eq!(exposed_name("docs", "fs.read file"), "docs__fs_read_file");
    assert_eq!(exposed_name("docs", &"t".repeat(100)).len(), 64);
}

fn offered(server: &str, tools: usize, last_used: Option<std::time::Instant>) -> ServerTools {
    let spec = Server::check(&stdio(server), false).unwrap();
    let tool = |i: usize| {
        let schema = json!({"type": "object", "properties": {"text": {"type": "string", "description": "x".repeat(200)}}});
        rmcp::model::Tool::new(
            format!("tool{i}"),
            "Does one thing.",
            std::sync::Arc::new(schema.as_object().unwrap().clone()),
        )
    };
    ServerTools {
        server: server.to_owned(),
        last_used,
        tools: (0..tools).map(|i| Offered::new(&spec, &tool(i))).collect(),
    }
}

#[test]
fn with_many_tools_the_least_recently_used_servers_are_left_out_first() {
    let now = std::time::Instant::now();
    let earlier = now - Duration::from_secs(60);
    let cost = |s: &ServerTools| s.tools.iter().map(Offered::tokens).sum::<u32>();
    let servers = || {
        vec![
            offered("never", 2, None),
            offered("old", 2, Some(earlier)),
            offered("recent", 2, Some(now)),
        ]
    };
    let [never, old, recent] = [0, 1, 2].map(|i| cost(&servers()[i]));
    let (all, left) = fit(servers(), never + old + recent);
    assert_eq!(all.len(), 6);
    assert!(left.is_empty());
    let (kept, left) = fit(servers(), old + recent);
    let kept: Vec<&str> = kept.iter().map(|o| o.server.as_str()).collect();
    assert_eq!(kept, ["recent", "recent", "old", "old"]);
    assert_eq!(left, ["never"]);
    let (kept, left) = fit(servers(), recent);
    assert_eq!(kept.len(), 2);
    assert_eq!(left, ["old", "never"]);
    assert_eq!(budget(32_000, 25), 8_000);
}

#[test]
fn results_reach_the_model_as_text_images_described_and_capped() {
    let text = CallToolResult::success(vec![Content::text("Echo: hi")]);
    assert_eq!(result_text(&text, false), ToolOutputLike::ok("Echo: hi"));

    let image = CallToolResult::success(vec![Content::image("aGVsbG8=", "image/png")]);
    let shown = result_text(&image, false);
    assert!(shown.ok);
    assert!(shown.text.contains("image/png, 5 bytes"), "{}", shown.text);

    let attached = result_text(&image, true);
    assert!(
        attached.text.contains("image/png, 5 bytes: attached below"),
        "{}",
        attached.text
    );
    assert_eq!(attached.images.len(), 1);
    assert_eq!(
        (
            attached.images[0].media_type.as_str(),
            attached.images[0].base64.as_str()
        ),
        ("image/png", "aGVsbG8=")
    );
    assert!(
        shown.images.is_empty(),
        "a model without images is sent none"
    );

    let resource = CallToolResult::success(vec![Content::resource(ResourceContents::text(
        "body { color: red }",
        "file:///style.css",
    ))]);
    assert_eq!(
        result_text(&resource, false).text,
        "[resource file:///style.css]\nbody { color: red }"
    );

    let failed = CallToolResult::error(vec![Content::text("no such page")]);
    assert_eq!(
        result_text(&failed, false),
        ToolOutputLike::failed("Error: no such page")
    );

    let structured = CallToolResult::structured(json!({"sum": 3}));
    assert!(result_text(&structured, false).text.contains("\"sum\":3"));

    let huge = CallToolResult::success(vec![Content::text("y".repeat(100_000))]);
    let capped = result_text(&huge, false).text;
    assert!(capped.len() < 40_000, "{}", capped.len());
}

/// Builds the expected outputs briefly.
struct ToolOutputLike;

impl ToolOutputLike {
    fn ok(text: &str) -> crate::server::agent::tools::ToolOutput {
        crate::server::agent::tools::ToolOutput::ok(text)
    }

    fn failed(text: &str) -> crate::server::agent::tools::ToolOutput {
        crate::server::agent::tools::ToolOutput {
            text: text.to_owned(),
            ok: false,
            port: None,
            images: Vec::new(),
        }
    }
}

#[test]
fn arguments_are_a_json_object_or_nothing() {
    assert_eq!(tools::arguments(""), Ok(None));
    assert_eq!(tools::arguments("null"), Ok(None));
    assert_eq!(
        tools::arguments(r#"{"a": 1}"#).unwrap().unwrap()["a"],
        json!(1)
    );
    assert!(tools::arguments("[1]").is_err());
    assert!(tools::arguments("{").is_err());
}

#[test]
fn the_configuration_file_takes_servers_as_an_array_of_tables() {
    let text = r#"
[[mcp.servers]]
name = "everything"
command = "node"
args = ["server.js", "stdio"]
run = "host"
trusted_tools = ["echo"]

[[mcp.servers]]
name = "remote"
url = "http://127.0.0.1:3001/mcp"
headers = { Authorization = "Bearer x" }
"#;
    let config = Config::from_parts(std::path::Path::new("Leptos.toml"), Some(text), &[]).unwrap();
    let service = McpService::new(&config.mcp, tempfile::tempdir().unwrap().path());
    assert_eq!(service.names(), ["everything", "remote"]);
    let everything = service.server("everything").unwrap();
    assert!(everything.trusts("echo"));
    assert!(!everything.trusts("get-sum"));
    assert!(matches!(
        everything.transport,
        Transport::Stdio {
            run: McpRun::Host,
            ..
        }
    ));
    assert_eq!(service.place("remote"), "over HTTP at 127.0.0.1");
}

/// reqwest panics building a client when the process has no TLS provider,
/// and an MCP server over HTTP may be the first thing a fresh IDE asks
/// (before any model). Checked in a process of its own: in this one, an
/// earlier test may have installed the provider already.
#[tokio::test]
async fn an_mcp_server_over_http_asked_first_in_a_fresh_process_gets_a_client() {
    const NAME: &str =
        "server::mcp::tests::an_mcp_server_over_http_asked_first_in_a_fresh_process_gets_a_client";
    if std::env::var_os("RIVET_TEST_FRESH_PROCESS").is_some() {
        let url = url::Url::parse("http://127.0.0.1:9/mcp").unwrap();
        assert!(super::connect::http_transport(&url, &BTreeMap::new()).is_ok());
        return;
    }
    let child = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", NAME, "--test-threads=1"])
        .env("RIVET_TEST_FRESH_PROCESS", "1")
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&child.stdout);
    assert!(
        child.status.success(),
        "{out}{}",
        String::from_utf8_lossy(&child.stderr)
    );
    assert!(out.contains("1 passed"), "the check did not run: {out}");
}
