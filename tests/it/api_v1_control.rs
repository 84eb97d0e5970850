//! The HTTP API's events stream, stop, rename and delete, and the project
//! list's search and naming, against a real `rivet serve`.
#![cfg(feature = "ssr")]

use std::time::Duration;

use futures::StreamExt;
use reqwest::StatusCode;
use serde_json::{Value, json};

use super::api_v1::{Server, server};
use super::llm::Mock;

/// Reads NDJSON events from `response` until `stop` says so (or a minute
/// passes).
async fn read_events(
    response: reqwest::Response,
    mut stop: impl FnMut(&Value) -> bool,
) -> Vec<Value> {
    let mut chunks = response.bytes_stream();
    let mut buffer = Vec::new();
    let mut events = Vec::new();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    loop {
        let chunk = tokio::time::timeout_at(deadline, chunks.next())
            .await
            .unwrap_or_else(|_| panic!("no end after {} events: {events:?}", events.len()))
            .expect("the stream ended")
            .unwrap();
        buffer.extend_from_slice(&chunk);
        while let Some(end) = buffer.iter().position(|b| *b == b'\n') {
            let line: Vec<u8> = buffer.drain(..=end).collect();
            let event: Value = serde_json::from_slice(&line).unwrap();
            let done = stop(&event);
            events.push(event);
            if done {
                return events;
            }
        }
    }
}

fn finished(id: &str) -> impl FnMut(&Value) -> bool + '_ {
    move |event| event["type"] == "message_finished" && event["message_id"] == id
}

async fn send(server: &Server, project: &str, text: &str) -> String {
    let (status, sent) = server
        .json(
            server
                .http
                .post(server.url(&format!("/projects/{project}/messages")))
                .json(&json!({ "text": text })),
        )
        .await;
    assert_eq!(status, StatusCode::ACCEPTED, "{sent}");
    sent["assistant_message_id"].as_str().unwrap().to_owned()
}

async fn events(server: &Server, project: &str, query: &str) -> reqwest::Response {
    let response = server
        .http
        .get(server.url(&format!("/projects/{project}/events{query}")))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(response.headers()["content-type"], "application/x-ndjson");
    response
}

async fn wait_for_status(server: &Server, project: &str, index: usize, status: &str) -> Value {
    let url = server.url(&format!("/projects/{project}/messages"));
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    loop {
        let (_, list) = server.json(server.http.get(&url)).await;
        if list[index]["status"] == status {
            return list;
        }
        assert!(tokio::time::Instant::now() < deadline, "{list}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn events_start_with_a_snapshot_then_follow_the_answer() {
    let (_mock, server) = server().await;
    let project = server.create("events").await;
    let stream = events(&server, &project, "").await;
    let answer = send(&server, &project, "show me a snippet sample").await;
    let events = read_events(stream, finished(&answer)).await;
    assert_eq!(events[0]["type"], "snapshot", "{}", events[0]);
    let seqs: Vec<u64> = events.iter().map(|e| e["seq"].as_u64().unwrap()).collect();
    assert!(seqs.windows(2).all(|w| w[1] == w[0] + 1), "{seqs:?}");
    assert!(events.iter().any(|e| e["type"] == "protocol"));
}

#[tokio::test(flavor = "multi_thread")]
async fn events_after_a_number_resume_without_a_snapshot() {
    let (_mock, server) = server().await;
    let project = server.create("resume").await;
    let stream = events(&server, &project, "").await;
    let answer = send(&server, &project, "show me a snippet sample").await;
    let all = read_events(stream, finished(&answer)).await;
    let middle = all[all.len() / 2]["seq"].as_u64().unwrap();
    let last = all.last().unwrap()["seq"].as_u64().unwrap();
    // As if the connection had dropped after event `middle`.
    let resumed = events(&server, &project, &format!("?after={middle}")).await;
    let again = read_events(resumed, finished(&answer)).await;
    assert_eq!(
        again[0]["seq"].as_u64().unwrap(),
        middle + 1,
        "{}",
        again[0]
    );
    assert!(again.iter().all(|e| e["type"] != "snapshot"));
    assert_eq!(again.last().unwrap()["seq"].as_u64().unwrap(), last);
    // The same events as the first time.
    let expected: Vec<&Value> = all
        .iter()
        .filter(|e| e["seq"].as_u64().unwrap() > middle)
        .collect();
    assert_eq!(again.iter().collect::<Vec<_>>(), expected);
}

#[tokio::test(flavor = "multi_thread")]
async fn events_after_a_number_ahead_of_the_session_start_from_a_snapshot() {
    let (_mock, server) = server().await;
    let project = server.create("ahead").await;
    let stream = events(&server, &project, "?after=999999").await;
    let first = read_events(stream, |_| true).await;
    assert_eq!(first[0]["type"], "snapshot");
}

#[tokio::test(flavor = "multi_thread")]
async fn events_with_an_invalid_after_are_refused_with_a_code() {
    let (_mock, server) = server().await;
    let project = server.create("bad").await;
    let (status, error) = server
        .json(
            server
                .http
                .get(server.url(&format!("/projects/{project}/events?after=minus-one"))),
        )
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(error["code"], "invalid_query");
    let (status, error) = server
        .json(
            server
                .http
                .get(server.url("/projects/nosuchproject/events")),
        )
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert_eq!(error["code"], "project_not_found");
}

/// A server whose answers stream slowly enough to be stopped.
async fn slow_server() -> (Mock, Server) {
    let mock = Mock::start(&["--delay-ms", "100"]);
    let server = Server::start_with(&mock, tempfile::tempdir().unwrap(), &[]).await;
    (mock, server)
}

#[tokio::test(flavor = "multi_thread")]
async fn stop_ends_a_streaming_answer() {
    let (_mock, server) = slow_server().await;
    let project = server.create("stop").await;
    send(&server, &project, "build a todo app").await;
    wait_for_status(&server, &project, 1, "streaming").await;
    let response = server
        .http
        .post(server.url(&format!("/projects/{project}/stop")))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::NO_CONTENT);
    wait_for_status(&server, &project, 1, "interrupted").await;
    // Not busy any more, once the stopped answer has wound down.
    let url = server.url(&format!("/projects/{project}/messages"));
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    loop {
        let request = server
            .http
            .post(&url)
            .json(&json!({"text": "show me a snippet sample"}));
        let (status, body) = server.json(request).await;
        if status == StatusCode::ACCEPTED {
            break;
        }
        assert_eq!(body["code"], "busy", "{body}");
        assert!(tokio::time::Instant::now() < deadline, "still busy");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_second_message_while_one_streams_is_busy() {
    let (_mock, server) = slow_server().await;
    let project = server.create("busy").await;
    send(&server, &project, "build a todo app").await;
    let (status, error) = server
        .json(
            server
                .http
                .post(server.url(&format!("/projects/{project}/messages")))
                .json(&json!({"text": "again"})),
        )
        .await;
    assert_eq!(status, StatusCode::CONFLICT, "{error}");
    assert_eq!(error["code"], "busy");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_project_is_renamed() {
    let (_mock, server) = server().await;
    let project = server.create("before").await;
    let url = server.url(&format!("/projects/{project}"));
    let (status, renamed) = server
        .json(server.http.patch(&url).json(&json!({"name": " after "})))
        .await;
    assert_eq!(status, StatusCode::OK, "{renamed}");
    assert_eq!(renamed["name"], "after");
    assert_eq!(renamed["id"], project.as_str());
    let (_, fetched) = server.json(server.http.get(&url)).await;
    assert_eq!(fetched["name"], "after");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_rename_to_an_empty_name_or_of_an_unknown_project_is_refused() {
    let (_mock, server) = server().await;
    let project = server.create("kept").await;
    let (status, error) = server
        .json(
            server
                .http
                .patch(server.url(&format!("/projects/{project}")))
                .json(&json!({"name": "  "})),
        )
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(error["code"], "invalid_name");
    let (status, error) = server
        .json(
            server
                .http
                .patch(server.url("/projects/nosuchproject"))
                .json(&json!({"name": "x"})),
        )
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert_eq!(error["code"], "project_not_found");
}

#[tokio::test(flavor = "multi_thread")]
async fn delete_stops_the_answer_and_removes_files_and_rows() {
    let (_mock, server) = slow_server().await;
    let project = server.create("doomed").await;
    let keep = server.create("kept").await;
    let file = server.url(&format!("/projects/{project}/files/notes.txt"));
    server.http.put(&file).body("hello").send().await.unwrap();
    send(&server, &project, "build a todo app").await;
    wait_for_status(&server, &project, 1, "streaming").await;
    let url = server.url(&format!("/projects/{project}"));
    let response = server.http.delete(&url).send().await.unwrap();
    assert_eq!(response.status(), StatusCode::NO_CONTENT);
    let (status, error) = server.json(server.http.get(&url)).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert_eq!(error["code"], "project_not_found");
    assert!(!server.data_dir().join("projects").join(&project).exists());
    let (_, list) = server.json(server.http.get(server.url("/projects"))).await;
    let ids: Vec<&str> = list
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, [keep.as_str()]);
    let response = server.http.delete(&url).send().await.unwrap();
    assert_eq!(response.status(), StatusCode::NOT_FOUND);
}

#[tokio::test(flavor = "multi_thread")]
async fn the_first_message_names_an_untitled_project_and_the_list_finds_it() {
    let (_mock, server) = server().await;
    let untitled = server.create("Untitled").await;
    let named = server.create("Named by hand").await;
    send(&server, &untitled, "show me a snippet sample").await;
    wait_for_status(&server, &untitled, 1, "complete").await;
    // Times are kept in seconds: the next message comes a second later.
    tokio::time::sleep(Duration::from_millis(1100)).await;
    send(&server, &named, "show me a snippet sample please").await;
    wait_for_status(&server, &named, 1, "complete").await;
    let (status, list) = server.json(server.http.get(server.url("/projects"))).await;
    assert_eq!(status, StatusCode::OK);
    // The latest changed first, each with its last message time.
    assert_eq!(list[0]["id"], named.as_str(), "{list}");
    assert_eq!(list[1]["id"], untitled.as_str(), "{list}");
    assert_eq!(list[1]["name"], "show me a snippet sample", "{list}");
    assert_eq!(list[0]["name"], "Named by hand", "{list}");
    assert!(list[0]["last_message_at"].is_i64(), "{list}");
    assert!(list[0]["updated_at"].is_i64(), "{list}");
    let (_, found) = server
        .json(server.http.get(server.url("/projects?q=PLEASE")))
        .await;
    let found: Vec<&str> = found
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["id"].as_str().unwrap())
        .collect();
    assert_eq!(found, [named.as_str()]);
}

#[tokio::test(flavor = "multi_thread")]
async fn the_ide_server_functions_report_busy_as_a_typed_error() {
    let (_mock, server) = slow_server().await;
    let project = server.create("typed").await;
    send(&server, &project, "build a todo app").await;
    let refused = server
        .http
        .post(format!("http://{}/api/send_message", server.addr))
        .form(&[("project", project.as_str()), ("text", "again")])
        .send()
        .await
        .unwrap();
    assert!(!refused.status().is_success());
    let error: Value = refused.json().await.unwrap();
    assert_eq!(error["code"], "busy", "{error}");
    assert!(
        error["message"]
            .as_str()
            .unwrap()
            .contains("still streaming"),
        "{error}"
    );
    // A malformed project id is refused before anything runs.
    let invalid = server
        .http
        .post(format!("http://{}/api/stop_run", server.addr))
        .form(&[("project", "Not An Id!")])
        .send()
        .await
        .unwrap();
    let error: Value = invalid.json().await.unwrap();
    assert_eq!(error["code"], "invalid", "{error}");
}

#[tokio::test(flavor = "multi_thread")]
async fn two_messages_sent_at_once_get_one_answer_and_one_busy() {
    let (_mock, server) = slow_server().await;
    let project = server.create("race").await;
    let url = server.url(&format!("/projects/{project}/messages"));
    let post = |text: &str| server.json(server.http.post(&url).json(&json!({ "text": text })));
    let (first, second) = tokio::join!(post("build a todo app"), post("build a todo app too"));
    let mut statuses = [first.0, second.0];
    statuses.sort();
    assert_eq!(
        statuses,
        [StatusCode::ACCEPTED, StatusCode::CONFLICT],
        "{} / {}",
        first.1,
        second.1
    );
    let refused = if first.0 == StatusCode::CONFLICT {
        &first.1
    } else {
        &second.1
    };
    assert_eq!(refused["code"], "busy", "{refused}");
    // The refused message left no trace: one question, one answer.
    let list = wait_for_status(&server, &project, 1, "streaming").await;
    let roles: Vec<&str> = list
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(roles, ["user", "assistant"], "{list}");
}
