//! `POST /api/v1/projects/{id}/approvals/{step_id}`: the person's decision
//! on an agent step that waits for approval (`approve`, `deny`, or
//! `always`: approve and stop asking for this tool in this project).

use axum::Json;
use axum::extract::rejection::JsonRejection;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use serde::Deserialize;

use super::{V1Error, project_id};
use crate::runtime::session::Decision;
use crate::server::session::api;
use crate::server::state::AppState;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DecisionBody {
    decision: Decision,
}

pub async fn decide(
    State(state): State<AppState>,
    Path((id, step_id)): Path<(String, String)>,
    body: Result<Json<DecisionBody>, JsonRejection>,
) -> Result<StatusCode, V1Error> {
    let Json(DecisionBody { decision }) = body?;
    api::decide_step(&state, &project_id(&id)?, &step_id, decision).await?;
    Ok(StatusCode::NO_CONTENT)
}
