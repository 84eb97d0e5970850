//! `POST /api/v1/projects/{id}/enhance`: a draft request rewritten by the
//! model into a clearer one (the composer's Enhance button), whole.

use axum::Json;
use axum::extract::rejection::JsonRejection;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use futures::StreamExt;
use serde::{Deserialize, Serialize};

use super::{V1Error, project_id};
use crate::runtime::llm::RewriteLine;
use crate::server::session::enhance;
use crate::server::state::AppState;

#[derive(Deserialize)]
pub struct Draft {
    text: String,
}

#[derive(Serialize)]
pub struct Rewritten {
    text: String,
}

pub async fn rewrite(
    State(state): State<AppState>,
    Path(id): Path<String>,
    body: Result<Json<Draft>, JsonRejection>,
) -> Result<Json<Rewritten>, V1Error> {
    let project = project_id(&id)?;
    let Json(Draft { text }) = body?;
    let mut lines = std::pin::pin!(enhance::rewrite(&state, &project, &text).await?);
    let mut rewritten = String::new();
    while let Some(line) = lines.next().await {
        match line {
            RewriteLine::Delta { text } => rewritten.push_str(&text),
            RewriteLine::Failed { error } => {
                return Err(V1Error::new(StatusCode::SERVICE_UNAVAILABLE, "llm", error));
            }
        }
    }
    Ok(Json(Rewritten {
        text: rewritten.trim().to_owned(),
    }))
}
