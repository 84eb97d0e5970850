//! What answers cost and a project's budget, through `/api/v1`: the price
//! from the configuration, each answer's cost in its usage, a refusal with
//! no request sent once the budget is spent, and the budget raised or
//! cleared with `PATCH`.

use std::time::Duration;

use reqwest::StatusCode;
use serde_json::{Value, json};

use super::api_v1::Server;
use super::llm::Mock;

/// $1,000 per million prompt tokens and $2,000 per million answer tokens:
/// a scripted answer costs a few dollars.
pub(crate) const PRICES: [(&str, &str); 2] = [
    ("RIVET_LLM_PRICE_INPUT", "1000"),
    ("RIVET_LLM_PRICE_OUTPUT", "2000"),
];

async fn send(server: &Server, project: &str, text: &str) -> (StatusCode, Value) {
    let url = server.url(&format!("/projects/{project}/messages"));
    server
        .json(server.http.post(&url).json(&json!({ "text": text })))
        .await
}

async fn answered(server: &Server, project: &str, count: usize) -> Value {
    let url = server.url(&format!("/projects/{project}/messages"));
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    loop {
        let (_, list) = server.json(server.http.get(&url)).await;
        let done = list.as_array().is_some_and(|l| {
            l.len() == count && l.last().is_some_and(|m| m["status"] == "complete")
        });
        if done {
            return list;
        }
        assert!(tokio::time::Instant::now() < deadline, "{list}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

async fn patch(server: &Server, project: &str, body: Value) -> (StatusCode, Value) {
    let url = server.url(&format!("/projects/{project}"));
    server.json(server.http.patch(&url).json(&body)).await
}

#[tokio::test(flavor = "multi_thread")]
async fn answers_are_costed_and_a_spent_budget_refuses_the_next_message_without_a_request() {
    let mock = Mock::start(&[]);
    let server = Server::start_with(&mock, tempfile::tempdir().unwrap(), &PRICES).await;
    let project = server.create("spend").await;
    let (status, changed) = patch(&server, &project, json!({"budget_usd": 0.000001})).await;
    assert_eq!(status, StatusCode::OK, "{changed}");
    assert_eq!(changed["budget_usd"], 0.000001);
    assert_eq!(changed["spent_usd"], 0.0);
    assert_eq!(changed["name"], "spend");

    let (status, sent) = send(&server, &project, "show me a snippet sample").await;
    assert_eq!(status, StatusCode::ACCEPTED, "{sent}");
    let list = answered(&server, &project, 2).await;
    let usage = &list[1]["usage"];
    let (prompt, completion) = (
        usage["prompt_tokens"].as_f64().unwrap(),
        usage["completion_tokens"].as_f64().unwrap(),
    );
    assert!(prompt > 0.0 && completion > 0.0, "{usage}");
    let cost = usage["cost_usd"].as_f64().unwrap();
    let expected = (prompt * 1000.0 + completion * 2000.0) / 1_000_000.0;
    assert!((cost - expected).abs() < 1e-9, "{cost} against {expected}");

    // Spent: refused, and nothing is sent or recorded.
    let (status, error) = send(&server, &project, "show me a snippet sample").await;
    assert_eq!(status, StatusCode::PAYMENT_REQUIRED, "{error}");
    assert_eq!(error["code"], "budget_exceeded");
    assert!(
        error["message"]
            .as_str()
            .unwrap()
            .contains("raise the budget")
    );
    assert_eq!(mock.log().await.len(), 1);
    let (_, list) = server
        .json(
            server
                .http
                .get(server.url(&format!("/projects/{project}/messages"))),
        )
        .await;
    assert_eq!(list.as_array().unwrap().len(), 2, "{list}");

    let (status, error) = patch(&server, &project, json!({"budget_usd": -1})).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{error}");
    assert_eq!(error["code"], "invalid_budget");

    // Raised: the next message goes.
    let (status, changed) = patch(&server, &project, json!({"budget_usd": 1000})).await;
    assert_eq!(status, StatusCode::OK, "{changed}");
    assert!((changed["spent_usd"].as_f64().unwrap() - cost).abs() < 1e-9);
    let (status, sent) = send(&server, &project, "show me a snippet sample").await;
    assert_eq!(status, StatusCode::ACCEPTED, "{sent}");
    answered(&server, &project, 4).await;

    // Cleared: the server's default, none here.
    let (status, changed) = patch(&server, &project, json!({"budget_usd": null})).await;
    assert_eq!(status, StatusCode::OK, "{changed}");
    assert_eq!(changed["budget_usd"], Value::Null);
}

#[tokio::test(flavor = "multi_thread")]
async fn the_servers_default_budget_applies_to_a_project_without_its_own() {
    let mock = Mock::start(&[]);
    let mut env = PRICES.to_vec();
    env.push(("RIVET_BUDGET_PROJECT_USD", "0.000001"));
    let server = Server::start_with(&mock, tempfile::tempdir().unwrap(), &env).await;
    let project = server.create("default budget").await;
    let (status, _) = send(&server, &project, "show me a snippet sample").await;
    assert_eq!(status, StatusCode::ACCEPTED);
    answered(&server, &project, 2).await;
    // A refused message changes nothing, not even the mode it asked for.
    let url = server.url(&format!("/projects/{project}/messages"));
    let refused = json!({"text": "show me a snippet sample", "mode": "plan"});
    let (status, error) = server.json(server.http.post(&url).json(&refused)).await;
    assert_eq!(status, StatusCode::PAYMENT_REQUIRED, "{error}");
    assert_eq!(error["code"], "budget_exceeded");
    let snapshot = first_event(&server, &project).await;
    assert!(snapshot["state"].get("mode").is_some(), "{snapshot}");
    assert_ne!(snapshot["state"]["mode"], "plan", "{snapshot}");
}

/// The first event of the project's stream: its snapshot.
async fn first_event(server: &Server, project: &str) -> Value {
    use futures::StreamExt;
    let url = server.url(&format!("/projects/{project}/events"));
    let mut chunks = server.http.get(&url).send().await.unwrap().bytes_stream();
    let mut line = Vec::new();
    while !line.contains(&b'\n') {
        line.extend_from_slice(&chunks.next().await.unwrap().unwrap());
    }
    let end = line.iter().position(|b| *b == b'\n').unwrap();
    serde_json::from_slice(&line[..end]).unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn an_agent_run_stops_at_the_budget_before_its_next_request() {
    let mock = Mock::start(&[]);
    let server = Server::start_with(&mock, tempfile::tempdir().unwrap(), &PRICES).await;
    let project = server.create("agent budget").await;
    let (status, _) = patch(&server, &project, json!({"budget_usd": 0.000001})).await;
    assert_eq!(status, StatusCode::OK);
    let url = server.url(&format!("/projects/{project}/messages"));
    let (status, sent) = server
        .json(
            server
                .http
                .post(&url)
                .json(&json!({"text": "list files", "mode": "agent"})),
        )
        .await;
    assert_eq!(status, StatusCode::ACCEPTED, "{sent}");
    // The first step is asked for (nothing was spent yet) and costs more
    // than the budget: the second is never asked for.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    let list = loop {
        let (_, list) = server.json(server.http.get(&url)).await;
        if list[1]["status"].as_str().is_some_and(|s| s != "streaming") {
            break list;
        }
        assert!(tokio::time::Instant::now() < deadline, "{list}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert_eq!(mock.log().await.len(), 1, "{list}");
    let said = list[1].to_string();
    assert_eq!(list[1]["status"], "failed", "{said}");
    assert!(
        list[1]["error"]
            .as_str()
            .unwrap()
            .contains("raise the budget"),
        "{said}"
    );
    assert!(
        list[1]["usage"]["cost_usd"].as_f64().unwrap() > 0.000001,
        "{said}"
    );
}
