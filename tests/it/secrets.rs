//! App secrets through `/api/v1` against a real `rivet serve`: set by name
//! with a raw value, given to the project's processes, and found nowhere
//! else (the model's requests, the events, the exports, the database).
#![cfg(feature = "ssr")]

use std::os::unix::fs::PermissionsExt;
use std::time::Duration;

use futures::StreamExt;
use reqwest::StatusCode;
use serde_json::{Value, json};

use super::api_v1::{Server, server};

const VALUE: &str = "sk_test_51Hx-very-secret";

async fn put(server: &Server, project: &str, name: &str, value: &str) -> (StatusCode, Value) {
    let url = server.url(&format!("/projects/{project}/secrets/{name}"));
    server
        .json(server.http.put(&url).body(value.to_owned()))
        .await
}

/// The terminal text of the project's events, until `done` holds of it.
async fn terminal_until(server: &Server, project: &str, done: impl Fn(&str) -> bool) -> String {
    let url = server.url(&format!("/projects/{project}/events"));
    let response = server.http.get(&url).send().await.unwrap();
    let mut chunks = response.bytes_stream();
    let (mut buffer, mut all, mut text) = (Vec::new(), String::new(), String::new());
    let deadline = tokio::time::Instant::now() + Duration::from_secs(90);
    while !done(&text) {
        let chunk = tokio::time::timeout_at(deadline, chunks.next())
            .await
            .unwrap_or_else(|_| panic!("the terminal never said it: {text}"))
            .unwrap()
            .unwrap();
        buffer.extend_from_slice(&chunk);
        while let Some(end) = buffer.iter().position(|b| *b == b'\n') {
            let line: Vec<u8> = buffer.drain(..=end).collect();
            all.push_str(&String::from_utf8_lossy(&line));
            let event: Value = serde_json::from_slice(&line).unwrap();
            if event["type"] == "terminal" {
                text.push_str(event["text"].as_str().unwrap_or_default());
            }
        }
    }
    assert!(!all.contains(VALUE), "an event holds the value: {all}");
    text
}

/// The first finished line of `text` that starts with "the key is" (the
/// echo's output, not the command line the terminal shows before it).
fn echoed(text: &str) -> Option<&str> {
    let finished = &text[..text.rfind('\n')?];
    finished
        .split('\n')
        .map(|line| line.trim_end_matches('\r'))
        .find(|line| line.starts_with("the key is"))
}

/// Everything `rivet.db` holds on disk, its log included.
fn database_bytes(server: &Server) -> Vec<u8> {
    let mut bytes = Vec::new();
    for name in ["rivet.db", "rivet.db-wal"] {
        bytes.extend(std::fs::read(server.data_dir().join(name)).unwrap_or_default());
    }
    bytes
}

fn holds(haystack: &[u8], needle: &str) -> bool {
    haystack
        .windows(needle.len())
        .any(|w| w == needle.as_bytes())
}

#[tokio::test(flavor = "multi_thread")]
async fn a_secret_reaches_the_projects_processes_and_nothing_else() {
    let (mock, server) = server().await;
    let project = server.create("secrets").await;
    let (status, names) = put(&server, &project, "STRIPE_KEY", VALUE).await;
    assert_eq!(status, StatusCode::OK, "{names}");
    assert_eq!(names, json!({"secrets": ["STRIPE_KEY"]}));
    let file = server.data_dir().join(format!("secrets/{project}.json"));
    let mode = std::fs::metadata(&file).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);

    let messages = server.url(&format!("/projects/{project}/messages"));
    let (status, sent) = server
        .json(
            server
                .http
                .post(&messages)
                .json(&json!({"text": "check the app secret"})),
        )
        .await;
    assert_eq!(status, StatusCode::ACCEPTED, "{sent}");
    let reversed: String = VALUE.chars().rev().collect();
    // The whole line the echo printed: output may arrive in pieces, and a
    // piece that could begin the value is held back until it is known not
    // to. Only a finished line that starts with the words: the terminal
    // shows the command itself first, which holds them too.
    let text = terminal_until(&server, &project, |t| {
        t.contains(&format!("reversed: {reversed}")) && echoed(t).is_some()
    })
    .await;
    assert_eq!(echoed(&text), Some("the key is [STRIPE_KEY]"), "{text}");
    assert!(!text.contains(VALUE), "{text}");

    // The model was told the name, never the value.
    let log = serde_json::to_string(&mock.log().await).unwrap();
    assert!(log.contains("STRIPE_KEY"), "{log}");
    assert!(!log.contains(VALUE));

    // Nor do the exports or the database hold it, once the output is stored.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    while !holds(&database_bytes(&server), "[STRIPE_KEY]") {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the output was never stored"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(!holds(&database_bytes(&server), VALUE));
    for export in ["export.zip", "conversation.json"] {
        let url = server.url(&format!("/projects/{project}/{export}"));
        let response = server.http.get(&url).send().await.unwrap();
        assert_eq!(response.status(), StatusCode::OK, "{export}");
        let body = response.bytes().await.unwrap();
        assert!(!holds(&body, VALUE), "{export} holds the value");
    }

    // Listed by name only; removed for good.
    let url = server.url(&format!("/projects/{project}/secrets"));
    let (status, listed) = server.json(server.http.get(&url)).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(listed, json!({"secrets": ["STRIPE_KEY"]}));
    let one = server.url(&format!("/projects/{project}/secrets/STRIPE_KEY"));
    let (status, left) = server.json(server.http.delete(&one)).await;
    assert_eq!(status, StatusCode::OK, "{left}");
    assert_eq!(left, json!({"secrets": []}));
    let (status, error) = server.json(server.http.delete(&one)).await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{error}");
    assert_eq!(error["code"], "secret_not_found");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_bad_secret_name_or_value_is_refused_with_a_code_and_nothing_is_kept() {
    let (_mock, server) = server().await;
    let project = server.create("bad-secrets").await;
    for name in ["1ABC", "PATH", "NODE_OPTIONS", "A-B"] {
        let (status, error) = put(&server, &project, name, "value").await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{name}: {error}");
        assert_eq!(error["code"], "invalid_secret", "{name}");
    }
    let url = server.url(&format!("/projects/{project}/secrets/KEY"));
    let response = server
        .http
        .put(&url)
        .body(vec![0xff, 0xfe])
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::BAD_REQUEST);
    let url = server.url(&format!("/projects/{project}/secrets"));
    let (_, listed) = server.json(server.http.get(&url)).await;
    assert_eq!(listed, json!({"secrets": []}));
    let url = server.url("/projects/nope/secrets/KEY");
    let (status, error) = server.json(server.http.put(&url).body("v")).await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{error}");
}
