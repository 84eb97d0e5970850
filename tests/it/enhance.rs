//! The prompt enhancer through `/api/v1` against a real `rivet serve` and
//! the scripted provider: a draft rewritten, its cost counted, the budget
//! and the provider's failures answered with codes.
#![cfg(feature = "ssr")]

use reqwest::StatusCode;
use serde_json::{Value, json};

use super::api_v1::Server;
use super::llm::Mock;
use super::spend::PRICES;

async fn enhance(server: &Server, project: &str, text: &str) -> (StatusCode, Value) {
    let url = server.url(&format!("/projects/{project}/enhance"));
    server
        .json(server.http.post(&url).json(&json!({ "text": text })))
        .await
}

async fn patch(server: &Server, project: &str, body: Value) -> Value {
    let url = server.url(&format!("/projects/{project}"));
    let (status, changed) = server.json(server.http.patch(&url).json(&body)).await;
    assert_eq!(status, StatusCode::OK, "{changed}");
    changed
}

#[tokio::test(flavor = "multi_thread")]
async fn a_draft_is_rewritten_its_cost_counted_and_the_budget_holds() {
    let mock = Mock::start(&[]);
    let server = Server::start_with(&mock, tempfile::tempdir().unwrap(), &PRICES).await;
    let project = server.create("enhance").await;
    let (status, rewritten) = enhance(&server, &project, "  todo app pls  ").await;
    assert_eq!(status, StatusCode::OK, "{rewritten}");
    let text = rewritten["text"].as_str().unwrap();
    assert!(text.starts_with("Build a todo app with React"), "{text}");
    assert!(!text.ends_with('\n'));
    let log = mock.log().await;
    assert_eq!(log.len(), 1);
    let asked = log[0].to_string();
    assert!(asked.contains("todo app pls"), "{asked}");
    assert!(asked.contains("clearer, more specific request"), "{asked}");

    // What it cost counts toward the project's spend; nothing is added to
    // the conversation.
    let changed = patch(&server, &project, json!({"budget_usd": 0.000001})).await;
    assert!(
        changed["spent_usd"].as_f64().unwrap() > 0.000001,
        "{changed}"
    );
    let messages = server.url(&format!("/projects/{project}/messages"));
    let (_, list) = server.json(server.http.get(&messages)).await;
    assert_eq!(list, json!([]));

    // Past the budget: refused, nothing asked.
    let (status, error) = enhance(&server, &project, "todo app pls").await;
    assert_eq!(status, StatusCode::PAYMENT_REQUIRED, "{error}");
    assert_eq!(error["code"], "budget_exceeded");
    assert_eq!(mock.log().await.len(), 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn an_empty_draft_or_a_failing_provider_is_answered_with_a_code() {
    let mock = Mock::start(&[]);
    let server = Server::start_with(&mock, tempfile::tempdir().unwrap(), &[]).await;
    let project = server.create("enhance faults").await;
    let (status, error) = enhance(&server, &project, "   ").await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{error}");
    assert_eq!(error["code"], "empty_message");
    let (status, error) = enhance(&server, &project, &"x".repeat(17 * 1024)).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{error}");
    assert_eq!(error["code"], "draft_too_long");
    mock.faults(json!({"status": 401})).await;
    let (status, error) = enhance(&server, &project, "todo app pls").await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{error}");
    assert_eq!(error["code"], "llm");
    assert!(
        error["message"].as_str().unwrap().contains("rejected"),
        "{error}"
    );
}
