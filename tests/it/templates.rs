//! Starter templates through the HTTP API against a real `rivet serve`:
//! the listing, a project made from one (its files there at once, no
//! request to the model) and an unknown id refused with nothing left.
#![cfg(feature = "ssr")]

use reqwest::StatusCode;
use serde_json::{Value, json};

use super::api_v1::{Server, server};

async fn project_ids(server: &Server) -> Vec<String> {
    let (status, list) = server.json(server.http.get(server.url("/projects"))).await;
    assert_eq!(status, StatusCode::OK, "{list}");
    let mut ids: Vec<String> = list
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["id"].as_str().unwrap().to_owned())
        .collect();
    ids.sort();
    ids
}

#[tokio::test(flavor = "multi_thread")]
async fn the_five_templates_are_listed_with_names_and_descriptions() {
    let (_mock, server) = server().await;
    let (status, list) = server.json(server.http.get(server.url("/templates"))).await;
    assert_eq!(status, StatusCode::OK, "{list}");
    let ids: Vec<&str> = list
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["react-ts", "vue", "svelte", "vanilla", "node-api"]);
    assert_eq!(list[0]["name"], "Vite + React + TypeScript");
    for template in list.as_array().unwrap() {
        assert!(!template["description"].as_str().unwrap().is_empty());
        assert!(template.get("files").is_none(), "{template}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_project_from_a_template_has_its_files_at_once_and_asks_no_model() {
    let (mock, server) = server().await;
    let (status, project) = server
        .json(
            server
                .http
                .post(server.url("/projects"))
                .json(&json!({"name": "x", "template": "react-ts"})),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{project}");
    assert_eq!(project["name"], "x");
    let id = project["id"].as_str().unwrap();
    let file = |path: &str| server.url(&format!("/projects/{id}/files/{path}"));
    let response = server.http.get(file("package.json")).send().await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let package: Value = serde_json::from_slice(&response.bytes().await.unwrap()).unwrap();
    assert_eq!(package["scripts"]["dev"], "vite");
    let app = server.http.get(file("src/App.tsx")).send().await.unwrap();
    assert_eq!(app.status(), StatusCode::OK);
    let (status, messages) = server
        .json(
            server
                .http
                .get(server.url(&format!("/projects/{id}/messages"))),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{messages}");
    assert_eq!(messages, json!([]));
    assert!(mock.log().await.is_empty(), "the model was asked");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_template_project_without_a_name_is_named_after_its_template() {
    let (_mock, server) = server().await;
    let (status, project) = server
        .json(
            server
                .http
                .post(server.url("/projects"))
                .json(&json!({"template": "node-api"})),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{project}");
    assert_eq!(project["name"], "Node API server");
}

#[tokio::test(flavor = "multi_thread")]
async fn an_unknown_template_is_refused_and_leaves_no_project() {
    let (_mock, server) = server().await;
    server.create("already here").await;
    let before = project_ids(&server).await;
    let (status, error) = server
        .json(
            server
                .http
                .post(server.url("/projects"))
                .json(&json!({"name": "x", "template": "cobol"})),
        )
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{error}");
    assert_eq!(error["code"], "unknown_template", "{error}");
    assert_eq!(project_ids(&server).await, before);
}
