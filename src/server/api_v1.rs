//! The headless HTTP API under `/api/v1` (documented in `docs/api.md`):
//! projects (and the starter templates they can begin from), messages,
//! files as JSON and raw bytes, app secrets (by name) and the owner's MCP
//! servers (their secret values never), for scripts and
//! other tools. It sits behind the same access guard as every IDE route and
//! calls the same session code as the UI's server functions. Errors are
//! JSON with a stable `code`.

mod approvals;
mod checkpoints;
mod control;
mod database;
mod enhance;
mod error;
mod files;
mod git;
mod images;
mod mcp;
mod messages;
mod projects;
mod publish;
mod secrets;
mod transfer;

use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::routing::{any, get, post, put};

pub use error::V1Error;

use super::state::AppState;

/// The largest body of an `/api/v1` request, imports aside (they have
/// limits of their own, `transfer.rs`). A larger one is refused with 413
/// and `"code": "body_too_large"` before anything is written.
pub const BODY_LIMIT: usize = 8 * 1024 * 1024;
/// The largest body of a new message: its images come as base64 in it.
pub const MESSAGE_LIMIT: usize = 32 * 1024 * 1024;

/// A project id from a route's path: one that cannot be is no project.
fn project_id(id: &str) -> Result<crate::runtime::project::ProjectId, V1Error> {
    crate::runtime::project::ProjectId::parse(id)
        .map_err(|e| crate::server::session::api::ApiError::from(e).into())
}

/// A file's path from a route's path, checked as the runtime checks it.
fn project_path(path: &str) -> Result<crate::runtime::action::ProjectPath, V1Error> {
    Ok(crate::runtime::host::checked_path(path)?)
}

pub fn routes() -> Router<AppState> {
    Router::new()
        .route(
            "/api/v1/projects",
            get(projects::list).post(projects::create),
        )
        .route("/api/v1/templates", get(projects::templates))
        .route(
            "/api/v1/projects/{id}",
            get(projects::get)
                .patch(control::change)
                .delete(control::delete),
        )
        .route("/api/v1/projects/{id}/events", get(control::events))
        .route("/api/v1/projects/{id}/stop", post(control::stop))
        .route("/api/v1/projects/{id}/enhance", post(enhance::rewrite))
        .route(
            "/api/v1/projects/{id}/messages",
            get(messages::list)
                .post(messages::send)
                .layer(DefaultBodyLimit::max(MESSAGE_LIMIT)),
        )
        .route("/api/v1/projects/{id}/images", post(images::upload))
        .route("/api/v1/projects/{id}/images/{sha256}", get(images::read))
        .route(
            "/api/v1/projects/{id}/chats",
            get(messages::chats).post(messages::open_chat),
        )
        .route(
            "/api/v1/projects/{id}/chats/{chat}/messages",
            get(messages::list_in_chat)
                .post(messages::send_in_chat)
                .layer(DefaultBodyLimit::max(MESSAGE_LIMIT)),
        )
        .route("/api/v1/projects/{id}/files", get(files::list))
        .route(
            "/api/v1/projects/{id}/files/{*path}",
            get(files::read).put(files::write).delete(files::delete),
        )
        .route("/api/v1/projects/{id}/checkpoints", get(checkpoints::list))
        .route("/api/v1/projects/{id}/restore", post(checkpoints::restore))
        .route("/api/v1/projects/{id}/redo", post(checkpoints::redo))
        .route("/api/v1/projects/{id}/fork", post(checkpoints::fork))
        .route(
            "/api/v1/projects/{id}/git/remote",
            get(git::get_remote).put(git::set_remote),
        )
        .route("/api/v1/projects/{id}/git/push", post(git::push))
        .route("/api/v1/projects/{id}/git/pull", post(git::pull))
        .route("/api/v1/projects/{id}/git/status", get(git::status))
        .route(
            "/api/v1/projects/{id}/publish",
            get(publish::site)
                .post(publish::publish)
                .delete(publish::unpublish),
        )
        .route(
            "/api/v1/projects/{id}/publish/rollback",
            post(publish::rollback),
        )
        .route(
            "/api/v1/projects/{id}/publish/git",
            post(publish::to_branch),
        )
        .route("/api/v1/projects/{id}/secrets", get(secrets::list))
        .route(
            "/api/v1/projects/{id}/database/tables",
            get(database::tables),
        )
        .route(
            "/api/v1/projects/{id}/database/query",
            post(database::query),
        )
        .route(
            "/api/v1/projects/{id}/database/rebuild",
            post(database::rebuild),
        )
        .route(
            "/api/v1/projects/{id}/secrets/{name}",
            put(secrets::set).delete(secrets::remove),
        )
        .route(
            "/api/v1/projects/{id}/approvals/{step_id}",
            post(approvals::decide),
        )
        .route("/api/v1/mcp/servers", get(mcp::list))
        .route(
            "/api/v1/mcp/servers/{name}",
            put(mcp::put).delete(mcp::delete),
        )
        .route(
            "/api/v1/projects/{id}/mcp",
            get(mcp::chosen).put(mcp::choose),
        )
        .layer(DefaultBodyLimit::max(BODY_LIMIT))
        .merge(transfer::routes())
        .route("/api/v1", any(error::no_route))
        .route("/api/v1/{*rest}", any(error::no_route))
}

#[cfg(test)]
mod tests {
    use axum::body::Body;
    use axum::http::{Request, StatusCode};
    use tower::ServiceExt;

    use super::*;

    const TOKEN: &str = "api-v1-test-token-0123456789";

    fn state() -> (AppState, tempfile::TempDir) {
        crate::server::state::for_tests(|config| config.server.token = TOKEN.to_owned())
    }

    async fn send(
        state: &AppState,
        method: &str,
        path: &str,
        body: Vec<u8>,
    ) -> (StatusCode, serde_json::Value) {
        let request = Request::builder()
            .method(method)
            .uri(path)
            .header("host", "127.0.0.1:3000")
            .header("authorization", format!("Bearer {TOKEN}"))
            .header("content-type", "application/json")
            .body(Body::from(body))
            .unwrap();
        let response = crate::server::http::app(state.clone())
            .oneshot(request)
            .await
            .unwrap();
        let status = response.status();
        let bytes = axum::body::to_bytes(response.into_body(), usize::MAX)
            .await
            .unwrap();
        (status, serde_json::from_slice(&bytes).unwrap_or_default())
    }

    #[tokio::test]
    async fn a_file_body_over_the_limit_is_refused_and_nothing_is_written() {
        let (state, _data) = state();
        let project = crate::server::state::project_for_tests(&state, "limits").await;
        let path = format!("/api/v1/projects/{}/files/big.bin", project.id);
        let (status, json) = send(&state, "PUT", &path, vec![b'a'; BODY_LIMIT + 1]).await;
        assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE);
        assert_eq!(json["code"], "body_too_large");
        assert!(
            json["message"].as_str().unwrap().contains("8 MiB"),
            "{json}"
        );
        let workspace = state.sandbox.workspace_dir(&project.id);
        assert!(!workspace.join("big.bin").exists());
    }

    #[tokio::test]
    async fn a_json_body_over_the_limit_is_refused_as_too_large_not_invalid() {
        let (state, _data) = state();
        let project = crate::server::state::project_for_tests(&state, "limits").await;
        // A message may be larger than other bodies (its images), not endless.
        let text = "x".repeat(MESSAGE_LIMIT);
        let body = serde_json::to_vec(&serde_json::json!({ "text": text })).unwrap();
        let path = format!("/api/v1/projects/{}/messages", project.id);
        let (status, json) = send(&state, "POST", &path, body).await;
        assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE);
        assert_eq!(json["code"], "body_too_large");
        let (status, json) = send(
            &state,
            "POST",
            "/api/v1/projects",
            vec![b' '; BODY_LIMIT + 1],
        )
        .await;
        assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE, "{json}");
        assert_eq!(
            state.store.list_projects().await.unwrap().len(),
            1,
            "no project was made"
        );
    }
}
