//! `/api/v1/projects/{id}/events` (the session's events as NDJSON),
//! `/stop`, and renaming and deleting a project.

use axum::Json;
use axum::body::Body;
use axum::extract::rejection::{JsonRejection, QueryRejection};
use axum::extract::{Path, Query, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use futures::StreamExt;
use serde::Deserialize;

use super::{V1Error, project_id};
use crate::server::session::{api, manage};
use crate::server::state::AppState;
use crate::server::store::ProjectListing;

#[derive(Deserialize)]
pub struct EventsQuery {
    /// Resume after the event with this number.
    after: Option<u64>,
}

#[derive(Deserialize)]
pub struct Rename {
    name: String,
}

/// One JSON event per line, for as long as the client reads: a snapshot
/// first (or, with `?after=N`, the events numbered after N), then every
/// new event.
pub async fn events(
    State(state): State<AppState>,
    Path(id): Path<String>,
    query: Result<Query<EventsQuery>, QueryRejection>,
) -> Result<Response, V1Error> {
    let Query(EventsQuery { after }) = query.map_err(|rejection| {
        V1Error::new(
            StatusCode::BAD_REQUEST,
            "invalid_query",
            rejection.body_text(),
        )
    })?;
    let events = api::events(&state, &project_id(&id)?, after).await?;
    let lines = events.map(|envelope| {
        // Serialising our own types cannot fail.
        let mut line = serde_json::to_vec(&*envelope).unwrap_or_default();
        line.push(b'\n');
        Ok::<_, std::convert::Infallible>(bytes::Bytes::from(line))
    });
    Ok((
        [
            (header::CONTENT_TYPE, "application/x-ndjson"),
            (header::CACHE_CONTROL, "no-cache"),
        ],
        Body::from_stream(lines),
    )
        .into_response())
}

pub async fn stop(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<StatusCode, V1Error> {
    api::stop(&state, &project_id(&id)?).await?;
    Ok(StatusCode::NO_CONTENT)
}

pub async fn rename(
    State(state): State<AppState>,
    Path(id): Path<String>,
    body: Result<Json<Rename>, JsonRejection>,
) -> Result<Json<ProjectListing>, V1Error> {
    let Json(Rename { name }) = body?;
    let id = project_id(&id)?;
    Ok(Json(manage::rename(&state, &id, &name).await?))
}

pub async fn delete(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<StatusCode, V1Error> {
    let id = project_id(&id)?;
    manage::delete(&state, &id).await?;
    Ok(StatusCode::NO_CONTENT)
}
