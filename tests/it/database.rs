//! Each project's PostgreSQL database against a real `rivet serve` and the
//! PostgreSQL it runs: the model's migration and query actions, the
//! project's processes reaching the socket, the tables and query routes,
//! and the data kept across a `kill -9` of Rivet.
#![cfg(feature = "ssr")]

use reqwest::StatusCode;
use serde_json::{Value, json};

use super::api_v1::{Server, server};
use rivet::runtime::session::ActionStatus;

async fn query(server: &Server, project: &str, sql: &str) -> (StatusCode, Value) {
    let url = server.url(&format!("/projects/{project}/database/query"));
    server
        .json(server.http.post(&url).json(&json!({ "sql": sql })))
        .await
}

#[tokio::test(flavor = "multi_thread")]
async fn an_answer_s_migration_and_query_run_in_the_project_s_own_database() {
    let (mock, server) = server().await;
    let project = server.create("todo-db").await;
    let mut feed = server.feed(&project).await;
    server
        .send(&project, "keep the todos in the database")
        .await;
    feed.until("the three actions", |state| {
        let actions: Vec<_> = state.artifacts.iter().flat_map(|a| &a.actions).collect();
        actions.len() == 3 && actions.iter().all(|a| !a.status.is_active())
    })
    .await;
    let actions: Vec<_> = feed
        .state
        .artifacts
        .iter()
        .flat_map(|a| a.actions.clone())
        .collect();
    for action in &actions {
        assert_eq!(
            action.status,
            ActionStatus::Complete,
            "{:#?}",
            super::support::summary(&feed.state)
        );
    }
    let result = actions[2]
        .result
        .as_ref()
        .expect("the query's rows reach its card");
    let titles: Vec<_> = result
        .rows
        .iter()
        .map(|r| r[0].clone().unwrap_or_default())
        .collect();
    assert_eq!(titles, ["milk", "bread", "eggs"]);
    assert!(
        feed.state.terminal.contains("socket: reachable"),
        "{}",
        feed.state.terminal
    );
    assert!(
        feed.state
            .files
            .contains("supabase/migrations/001_create_todos.sql")
    );

    // The model is told of the database, never its password.
    let password =
        std::fs::read_to_string(server.data_dir().join(format!("databases/{project}.json")))
            .unwrap();
    let password: Value = serde_json::from_str(&password).unwrap();
    let password = password["password"].as_str().unwrap().to_owned();
    let log = serde_json::to_string(&mock.log().await).unwrap();
    assert!(log.contains("DATABASE_URL"));
    assert!(!log.contains(&password));

    let url = server.url(&format!("/projects/{project}/database/tables"));
    let (status, tables) = server.json(server.http.get(&url)).await;
    assert_eq!(status, StatusCode::OK, "{tables}");
    assert_eq!(
        tables,
        json!([{"name": "todos", "rows": 3, "columns": [{"name": "id", "type": "integer"}, {"name": "title", "type": "text"}]}])
    );
    let (status, error) = query(&server, &project, "select * from nowhere").await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{error}");
    assert_eq!(error["code"], "sql_error");
    assert!(
        error["message"]
            .as_str()
            .unwrap()
            .contains("\"nowhere\" does not exist"),
        "{error}"
    );
    let (status, error) = query(&server, "nope", "select 1").await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{error}");

    // A kill -9 of Rivet stops its PostgreSQL; the next Rivet finds the data.
    let data = server.kill().await;
    let server = Server::start_with(&mock, data, &[]).await;
    let (status, rows) = query(&server, &project, "select count(*) as n from todos").await;
    assert_eq!(status, StatusCode::OK, "{rows}");
    assert_eq!(rows["columns"], json!(["n"]));
    assert_eq!(rows["rows"], json!([["3"]]));
}
