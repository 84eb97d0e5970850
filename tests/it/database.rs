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
        feed.state.terminal.contains("password: [PGPASSWORD]"),
        "masked like a secret: {}",
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

    // An export has the migration, and with ?data=1 the data too.
    for (query, dumped) in [("", false), ("?data=1", true)] {
        let url = server.url(&format!("/projects/{project}/export.zip{query}"));
        let response = server.http.get(&url).send().await.unwrap();
        assert_eq!(response.status(), StatusCode::OK, "{query}");
        let entries = super::transfer::unzip(&response.bytes().await.unwrap());
        let names: Vec<&str> = entries.iter().map(|(n, _)| n.as_str()).collect();
        assert!(
            names.contains(&"supabase/migrations/001_create_todos.sql"),
            "{names:?}"
        );
        let dump = entries.iter().find(|(n, _)| n == "rivet-database.sql");
        assert_eq!(dump.is_some(), dumped, "{names:?}");
        if let Some((_, sql)) = dump {
            let sql = String::from_utf8_lossy(sql);
            assert!(
                sql.contains("CREATE TABLE public.todos") && sql.contains("eggs"),
                "{sql}"
            );
            assert!(!sql.contains(&password), "the dump carries no password");
        }
    }

    // A kill -9 of Rivet stops its PostgreSQL; the next Rivet finds the data.
    let data = server.kill().await;
    let server = Server::start_with(&mock, data, &[]).await;
    let (status, rows) = query(&server, &project, "select count(*) as n from todos").await;
    assert_eq!(status, StatusCode::OK, "{rows}");
    assert_eq!(rows["columns"], json!(["n"]));
    assert_eq!(rows["rows"], json!([["3"]]));
}

/// Sends `text` through the API and waits for its answer's checkpoint (the
/// answer and its actions are over); the answer's id.
async fn answered(server: &Server, project: &str, text: &str) -> String {
    let url = server.url(&format!("/projects/{project}/messages"));
    let (status, sent) = server
        .json(server.http.post(&url).json(&json!({ "text": text })))
        .await;
    assert_eq!(status, StatusCode::ACCEPTED, "{sent}");
    let answer = sent["assistant_message_id"].as_str().unwrap().to_owned();
    let url = server.url(&format!("/projects/{project}/checkpoints"));
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        let (_, list) = server.json(server.http.get(&url)).await;
        let taken = list.as_array().into_iter().flatten();
        if taken
            .into_iter()
            .any(|c| c["kind"] == "answer" && c["message_id"] == answer.as_str())
        {
            return answer;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "no checkpoint of {answer}: {list}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_restore_says_how_the_database_differs_and_a_rebuild_makes_it_match_the_files() {
    let (_mock, server) = server().await;
    let project = server.create("drift").await;
    let first = answered(&server, &project, "hello greeting").await;
    let second = answered(&server, &project, "keep the todos in the database").await;
    let mut feed = server.feed(&project).await;
    let alerts = |state: &rivet::runtime::session::SessionState| {
        state
            .alerts
            .iter()
            .filter(|a| a.title == "The database did not go back with the files")
            .map(|a| a.detail.clone())
            .collect::<Vec<_>>()
    };
    let post = |what: &str, body: Value| {
        let url = server.url(&format!("/projects/{project}/{what}"));
        server.json(server.http.post(url).json(&body))
    };

    let (status, restored) = post("restore", json!({ "message_id": first })).await;
    assert_eq!(status, StatusCode::OK, "{restored}");
    feed.until("the drift alert", |s| alerts(s).len() == 1)
        .await;
    let said = alerts(&feed.state).remove(0);
    assert!(
        said.contains("has run migrations the files no longer have (or have changed): supabase/migrations/001_create_todos.sql"),
        "{said}"
    );
    // Its data is as it was, until the person rebuilds.
    let (_, rows) = query(&server, &project, "select count(*) from todos").await;
    assert_eq!(rows["rows"], json!([["3"]]));
    let (status, rebuilt) = post("database/rebuild", json!({})).await;
    assert_eq!(status, StatusCode::OK, "{rebuilt}");
    assert_eq!(rebuilt, json!({ "migrations": [] }));
    let url = server.url(&format!("/projects/{project}/database/tables"));
    assert_eq!(server.json(server.http.get(&url)).await.1, json!([]));

    let (status, redone) = post("redo", json!({ "message_id": first })).await;
    assert_eq!(status, StatusCode::OK, "{redone}");
    feed.until("the second drift alert", |s| alerts(s).len() == 2)
        .await;
    let said = alerts(&feed.state).remove(1);
    assert!(
        said.contains("The files have migrations the database has not run: supabase/migrations/001_create_todos.sql"),
        "{said}"
    );
    let (status, rebuilt) = post("database/rebuild", json!({})).await;
    assert_eq!(status, StatusCode::OK, "{rebuilt}");
    assert_eq!(
        rebuilt,
        json!({ "migrations": ["supabase/migrations/001_create_todos.sql"] })
    );
    let (_, rows) = query(&server, &project, "select title from todos order by id").await;
    assert_eq!(
        rows["rows"],
        json!([["milk"], ["bread"]]),
        "made from the migration alone"
    );

    // A fork gets the files, not the data, and says so.
    let (status, fork) = post("fork", json!({ "message_id": second })).await;
    assert_eq!(status, StatusCode::CREATED, "{fork}");
    let mut forked = server.feed(fork["id"].as_str().unwrap()).await;
    forked
        .until("the fork's alert", |s| {
            s.alerts.iter().any(|a| {
                a.title == "The fork's database is empty"
                    && a.detail
                        .contains("supabase/migrations/001_create_todos.sql")
            })
        })
        .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_migration_the_database_refuses_goes_to_the_fix_loop_with_its_words() {
    let (_mock, server) = server().await;
    let project = server.create("broken-migration").await;
    let mut feed = server.feed(&project).await;
    server.send(&project, "broken migration").await;
    let migrations = |s: &rivet::runtime::session::SessionState| {
        s.artifacts
            .iter()
            .flat_map(|a| &a.actions)
            .map(|a| a.status.clone())
            .collect::<Vec<_>>()
    };
    feed.until("the fixed migration", |s| {
        migrations(s).last() == Some(&ActionStatus::Complete) && migrations(s).len() == 2
    })
    .await;
    let state = &feed.state;
    assert!(matches!(migrations(state)[0], ActionStatus::Failed { .. }));
    let result = &state.build_results[0];
    assert_eq!(result.stage, rivet::runtime::build_result::Stage::Database);
    let request = state
        .messages
        .iter()
        .find(|m| m.automatic.is_some())
        .expect("an automatic fix request")
        .text();
    assert!(
        request.contains("syntax error at or near \"tabel\" (line 1)"),
        "{request}"
    );
    let (status, rows) = query(&server, &project, "select count(*) from notes").await;
    assert_eq!(status, StatusCode::OK, "the fixed migration ran: {rows}");
}
