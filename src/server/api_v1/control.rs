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

/// `PATCH /api/v1/projects/{id}`: a new name, a budget (`null`: the
/// server's default), or both.
#[derive(Deserialize)]
pub struct Change {
    #[serde(default)]
    name: Option<String>,
    #[serde(default, deserialize_with = "given")]
    budget_usd: Option<Option<f64>>,
}

/// A field that is there, `null` or not: `Some`; left out: `None`.
fn given<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Option<f64>>, D::Error> {
    Option::<f64>::deserialize(d).map(Some)
}

/// The project after a change: its listing, what it spent and its budget.
#[derive(serde::Serialize)]
pub struct Changed {
    #[serde(flatten)]
    listing: ProjectListing,
    #[serde(flatten)]
    spend: crate::server::session::budget::Spend,
}

/// One JSON event per line, for as long as the client reads: a snapshot
/// first (or, with `?after=N`, the events numbered after N), then every
/// new event.
pub async fn events(
    State(state): State<AppState>,
    Path(id): Path<String>,
    query: Result<Query<EventsQuery>, QueryRejection>,
) -> Result<Response, V1Error> {
    let Query(EventsQuery { after }) = query?;
    let events = api::events(&state, &project_id(&id)?, after).await?;
    let lines = events.map(|envelope| {
        Ok::<_, std::convert::Infallible>(bytes::Bytes::from(crate::runtime::session::encode_line(
            &*envelope,
        )))
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

pub async fn change(
    State(state): State<AppState>,
    Path(id): Path<String>,
    body: Result<Json<Change>, JsonRejection>,
) -> Result<Json<Changed>, V1Error> {
    let Json(Change { name, budget_usd }) = body?;
    let id = project_id(&id)?;
    let listing = match name {
        Some(name) => manage::rename(&state, &id, &name).await?,
        None => manage::listing(&state, &id).await?,
    };
    let spend = match budget_usd {
        Some(budget_usd) => crate::server::session::budget::set(&state, &id, budget_usd).await?,
        None => crate::server::session::budget::of(&state, &id).await?,
    };
    Ok(Json(Changed { listing, spend }))
}

pub async fn delete(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<StatusCode, V1Error> {
    let id = project_id(&id)?;
    manage::delete(&state, &id).await?;
    Ok(StatusCode::NO_CONTENT)
}
