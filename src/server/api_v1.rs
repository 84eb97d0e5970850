//! The headless HTTP API under `/api/v1` (documented in `docs/api.md`):
//! projects, messages and files as JSON and raw bytes, for scripts and
//! other tools. It sits behind the same access guard as every IDE route and
//! calls the same session code as the UI's server functions. Errors are
//! JSON with a stable `code`.

mod approvals;
mod checkpoints;
mod control;
mod error;
mod files;
mod messages;
mod projects;
mod transfer;

use axum::Router;
use axum::routing::{any, get, post};

pub use error::V1Error;

use super::state::AppState;

pub fn routes() -> Router<AppState> {
    Router::new()
        .route(
            "/api/v1/projects",
            get(projects::list).post(projects::create),
        )
        .route(
            "/api/v1/projects/{id}",
            get(projects::get)
                .patch(control::rename)
                .delete(control::delete),
        )
        .route("/api/v1/projects/{id}/events", get(control::events))
        .route("/api/v1/projects/{id}/stop", post(control::stop))
        .route(
            "/api/v1/projects/{id}/messages",
            get(messages::list).post(messages::send),
        )
        .route(
            "/api/v1/projects/{id}/files/{*path}",
            get(files::read).put(files::write).delete(files::delete),
        )
        .route("/api/v1/projects/{id}/checkpoints", get(checkpoints::list))
        .route("/api/v1/projects/{id}/restore", post(checkpoints::restore))
        .route("/api/v1/projects/{id}/redo", post(checkpoints::redo))
        .route("/api/v1/projects/{id}/fork", post(checkpoints::fork))
        .route(
            "/api/v1/projects/{id}/approvals/{step_id}",
            post(approvals::decide),
        )
        .merge(transfer::routes())
        .route("/api/v1", any(error::no_route))
        .route("/api/v1/{*rest}", any(error::no_route))
}
