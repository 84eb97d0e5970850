//! Several chats on one project through `/api/v1` against a real `rivet
//! serve` and the scripted provider: each chat's requests carry its own
//! turns only, a new chat starts from a note about the project, and the
//! older message routes address the first chat.
#![cfg(feature = "ssr")]

use std::time::Duration;

use reqwest::StatusCode;
use serde_json::{Value, json};

use super::api_v1::{Server, server};

/// Sends `text` to `route` (a messages route) and waits for its answer.
async fn ask(server: &Server, route: &str, text: &str) -> Value {
    ask_with(server, route, json!({ "text": text })).await
}

/// Sends `body` to `route` and waits for its answer.
async fn ask_with(server: &Server, route: &str, body: Value) -> Value {
    let url = server.url(route);
    let (status, sent) = server.json(server.http.post(&url).json(&body)).await;
    assert_eq!(status, StatusCode::ACCEPTED, "{sent}");
    let answer = sent["assistant_message_id"].clone();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    loop {
        let (status, list) = server.json(server.http.get(&url)).await;
        assert_eq!(status, StatusCode::OK, "{list}");
        let done = list
            .as_array()
            .unwrap()
            .iter()
            .any(|m| m["id"] == answer && m["status"] == "complete");
        if done {
            return list;
        }
        assert!(tokio::time::Instant::now() < deadline, "{list}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// The user and assistant messages a logged request carried
/// (`"role: content"`).
fn turns(request: &Value) -> Vec<String> {
    request["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m.as_str().unwrap().to_owned())
        .collect()
}

fn system(request: &Value) -> String {
    request["system"].as_str().unwrap().to_owned()
}

#[tokio::test(flavor = "multi_thread")]
async fn two_chats_on_one_project_keep_their_turns_apart() {
    let (mock, server) = server().await;
    let project = server.create("two chats").await;
    let first = ask(
        &server,
        &format!("/projects/{project}/messages"),
        "hello greeting",
    )
    .await;
    assert_eq!(first.as_array().unwrap().len(), 2, "{first}");

    // A new chat starts from a note about the project.
    let chats = server.url(&format!("/projects/{project}/chats"));
    let (status, opened) = server.json(server.http.post(&chats)).await;
    assert_eq!(status, StatusCode::CREATED, "{opened}");
    assert_eq!(opened["id"], "c2");
    assert_eq!(opened["title"], "Chat 2");
    let opening = opened["opening"].as_str().unwrap();
    assert!(opening.contains("- hello greeting"), "{opening}");
    let (_, listed) = server.json(server.http.get(&chats)).await;
    let ids: Vec<&str> = listed
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["main", "c2"]);

    // Its request carries the note and its own message, not the first
    // chat's turns.
    let second = ask(
        &server,
        &format!("/projects/{project}/chats/c2/messages"),
        "show me a snippet sample",
    )
    .await;
    assert_eq!(second.as_array().unwrap().len(), 2, "{second}");
    assert_ne!(second[0]["id"], first[0]["id"]);
    let log = mock.log().await;
    let asked = log.last().unwrap();
    assert_eq!(turns(asked).len(), 1, "{asked}");
    assert!(turns(asked)[0].contains("snippet sample"), "{asked}");
    assert!(system(asked).contains("This chat is new"), "{asked}");

    // The first chat goes on from its own turns, without the note; its
    // older route and its chat route list the same messages.
    let main = ask(
        &server,
        &format!("/projects/{project}/chats/main/messages"),
        "hello greeting again",
    )
    .await;
    assert_eq!(main.as_array().unwrap().len(), 4, "{main}");
    let (_, old_route) = server
        .json(
            server
                .http
                .get(server.url(&format!("/projects/{project}/messages"))),
        )
        .await;
    assert_eq!(old_route, main);
    let log = mock.log().await;
    let asked = log.last().unwrap();
    let said = turns(asked);
    assert_eq!(said.len(), 3, "{asked}");
    assert!(
        said.iter().all(|t| !t.contains("snippet sample")),
        "{asked}"
    );
    assert!(!system(asked).contains("This chat is new"), "{asked}");

    // An Agent mode request of the second chat carries its note too.
    let agent = ask_with(
        &server,
        &format!("/projects/{project}/chats/c2/messages"),
        json!({"text": "hello greeting", "mode": "agent"}),
    )
    .await;
    assert_eq!(agent.as_array().unwrap().len(), 4, "{agent}");
    let log = mock.log().await;
    let asked = log.last().unwrap();
    assert!(system(asked).contains("This chat is new"), "{asked}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_chat_the_project_does_not_have_is_a_404_and_asks_nothing() {
    let (mock, server) = server().await;
    let project = server.create("no such chat").await;
    for chat in ["c2", "c%2F..", "other"] {
        let url = server.url(&format!("/projects/{project}/chats/{chat}/messages"));
        let (status, error) = server
            .json(
                server
                    .http
                    .post(&url)
                    .json(&json!({"text": "hello greeting"})),
            )
            .await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{chat}: {error}");
        assert_eq!(error["code"], "chat_not_found", "{chat}: {error}");
        let (status, _) = server.json(server.http.get(&url)).await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{chat}");
    }
    assert!(mock.log().await.is_empty());
}
