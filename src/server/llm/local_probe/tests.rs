use axum::http::{StatusCode, header::LOCATION};
use axum::response::IntoResponse;
use axum::routing::get;
use serde_json::json;

use super::*;
use crate::server::llm::provider;

#[test]
fn loopback_addresses_are_accepted() {
    for entry in [
        "http://127.0.0.1:11434",
        "http://127.1.2.3:8080/",
        "http://[::1]:1234",
        "http://localhost:8000",
        "http://LOCALHOST:8000/v1",
        "http://127.0.0.1",
    ] {
        assert!(target(entry).is_ok(), "{entry}: {:?}", target(entry));
    }
}

#[test]
fn anything_off_loopback_is_refused_with_the_reason() {
    for (entry, why) in [
        ("http://10.0.0.1:11434", "not a loopback address"),
        ("http://example.com:11434", "not a loopback address"),
        ("http://0.0.0.0:11434", "not a loopback address"),
        ("http://[::ffff:10.0.0.1]:11434", "not a loopback address"),
        ("https://example.com/v1", "https:// is not http://"),
        ("https://127.0.0.1:1234", "https:// is not http://"),
        ("http://127.0.0.1@evil.example/", "user name or password"),
        ("http://user:pw@127.0.0.1:1234", "user name or password"),
        (
            "http://localhost.evil.example:1234",
            "not a loopback address",
        ),
        ("file:///etc/passwd", "file:// is not http://"),
        ("127.0.0.1:11434", "not a URL"),
        ("http://127.0.0.1:1234/v1?x=1", "query or fragment"),
        ("not a url", "not a URL"),
    ] {
        let got = target(entry);
        assert!(
            matches!(&got, Err(e) if e.contains(why)),
            "{entry}: {got:?}, expected {why:?}"
        );
    }
}

#[test]
fn an_address_gets_its_v1_base_url_label_and_preset() {
    let check = |entry: &str, label: &str, base_url: &str, preset: &str| {
        let got = target(entry).unwrap();
        assert_eq!(
            (got.label, got.base_url.as_str(), got.preset),
            (label, base_url, preset),
            "{entry}"
        );
    };
    check(
        "http://127.0.0.1:11434",
        "Ollama",
        "http://127.0.0.1:11434/v1",
        "ollama",
    );
    check(
        "http://127.0.0.1:11434/v1/",
        "Ollama",
        "http://127.0.0.1:11434/v1",
        "ollama",
    );
    check(
        " http://localhost:8080/ ",
        "llama.cpp",
        "http://localhost:8080/v1",
        "custom",
    );
    check(
        "http://127.0.0.1:5001",
        "Local server",
        "http://127.0.0.1:5001/v1",
        "custom",
    );
}

#[test]
fn the_known_ports_name_presets_that_serve_on_them() {
    for (port, label, preset) in KNOWN {
        let Some(id) = preset else { continue };
        let preset = provider::preset(id).unwrap_or_else(|| panic!("{label}: no preset {id}"));
        let url = Url::parse(preset.base_url).unwrap();
        assert_eq!(url.port(), Some(*port), "{label}");
        assert!(loopback(&url).is_ok(), "{label}");
    }
}

#[test]
fn the_default_list_is_the_four_usual_servers_on_loopback() {
    let config = crate::server::config::Config::defaults();
    let labels: Vec<&str> = config
        .llm
        .local_servers
        .iter()
        .map(|entry| target(entry).map(|t| t.label).unwrap())
        .collect();
    assert_eq!(labels, ["Ollama", "LM Studio", "llama.cpp", "vLLM"]);
}

/// A server on 127.0.0.1 with `app`'s routes; its address.
async fn serve(app: axum::Router) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    format!("http://{addr}")
}

fn models() -> axum::Json<serde_json::Value> {
    axum::Json(json!({"object": "list", "data": [{"id": "qwen2.5-coder"}]}))
}

#[tokio::test]
async fn each_address_is_reported_in_order_with_its_models_or_why_not() {
    let answering =
        serve(axum::Router::new().route("/v1/models", get(|| async { models() }))).await;
    let missing = serve(axum::Router::new()).await;
    let entries = vec![
        answering.clone(),
        missing.clone(),
        "http://192.168.1.10:11434".to_owned(),
    ];
    let found = probe(&entries).await.unwrap();
    let outcomes: Vec<&LocalOutcome> = found.iter().map(|s| &s.outcome).collect();
    assert_eq!(
        outcomes,
        [
            &LocalOutcome::Answered {
                models: vec!["qwen2.5-coder".into()]
            },
            &LocalOutcome::NoAnswer {
                reason: NoAnswer::Status { status: 404 }
            },
            &LocalOutcome::NoAnswer {
                reason: NoAnswer::NotLoopback {
                    detail: "not a loopback address (127.0.0.0/8, [::1] or localhost)".into()
                }
            },
        ]
    );
    assert_eq!(found[0].base_url, format!("{answering}/v1"));
    assert_eq!(found[2].address, "http://192.168.1.10:11434");
    assert_eq!(found[2].base_url, "");
}

#[tokio::test]
async fn a_redirect_is_followed_on_loopback_and_not_off_it() {
    let app = axum::Router::new()
        .route("/v1/models", get(|| async { models() }))
        .route(
            "/elsewhere/v1/models",
            get(|| async {
                (
                    StatusCode::FOUND,
                    [(LOCATION, "http://example.com/v1/models")],
                )
                    .into_response()
            }),
        );
    let server = serve(app).await;
    let here = server.clone();
    let moved = serve(axum::Router::new().route(
        "/v1/models",
        get(move || {
            let to = format!("{here}/v1/models");
            async move { (StatusCode::FOUND, [(LOCATION, to)]).into_response() }
        }),
    ))
    .await;
    let found = probe(&[moved, format!("{server}/elsewhere")])
        .await
        .unwrap();
    assert_eq!(
        found[0].outcome,
        LocalOutcome::Answered {
            models: vec!["qwen2.5-coder".into()]
        }
    );
    assert_eq!(
        found[1].outcome,
        LocalOutcome::NoAnswer {
            reason: NoAnswer::Redirected {
                to: "http://example.com/v1/models".into()
            }
        }
    );
}

#[tokio::test]
async fn all_addresses_are_asked_at_once() {
    // Two servers that never answer: asked one after the other, they would
    // take two timeouts.
    let mut entries = Vec::new();
    let mut held = Vec::new();
    for _ in 0..2 {
        let silent = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        entries.push(format!("http://{}", silent.local_addr().unwrap()));
        held.push(tokio::spawn(async move {
            let mut open = Vec::new();
            while let Ok((socket, _)) = silent.accept().await {
                open.push(socket);
            }
        }));
    }
    let started = std::time::Instant::now();
    let found = probe(&entries).await.unwrap();
    assert!(started.elapsed() < TIMEOUT * 2, "{:?}", started.elapsed());
    for server in &found {
        assert_eq!(
            server.outcome,
            LocalOutcome::NoAnswer {
                reason: NoAnswer::Timeout { ms: 1500 }
            }
        );
    }
    held.iter().for_each(tokio::task::JoinHandle::abort);
}
