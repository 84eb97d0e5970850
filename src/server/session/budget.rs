//! A project's budget in dollars: its own (a `BudgetSet` event, kept with
//! its events) or the server's default (`[budget] project_usd`). Before an
//! answer is asked for (the person's message, Retry, Continue, an automatic
//! fix attempt), what the project's answers cost so far is compared with
//! it: at or past it, nothing is sent.

use super::api::{ApiError, open_project};
use super::project::ProjectHandle;
use crate::runtime::project::ProjectId;
use crate::runtime::session::SessionEvent;
use crate::server::state::AppState;

/// What a project spent and may spend.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Spend {
    pub spent_usd: f64,
    /// `None`: no limit.
    pub budget_usd: Option<f64>,
}

/// The project's spend, with `default` the server's budget.
pub fn spend(handle: &ProjectHandle, default: Option<f64>) -> Spend {
    let (spent_usd, own) = handle.session.read(|s| (s.spent_usd(), s.budget_usd));
    Spend {
        spent_usd,
        budget_usd: own.or(default),
    }
}

/// Refuses a new request when the project spent its budget.
pub fn check(handle: &ProjectHandle, default: Option<f64>) -> Result<(), ApiError> {
    let Spend {
        spent_usd,
        budget_usd,
    } = spend(handle, default);
    match budget_usd {
        Some(budget) if spent_usd >= budget => Err(ApiError::BudgetExceeded {
            spent: spent_usd,
            budget,
        }),
        _ => Ok(()),
    }
}

/// Sets the project's own budget (`None`: back to the server's default).
pub async fn set(
    state: &AppState,
    project: &ProjectId,
    budget_usd: Option<f64>,
) -> Result<Spend, ApiError> {
    if budget_usd.is_some_and(|usd| !usd.is_finite() || usd < 0.0) {
        return Err(ApiError::InvalidBudget);
    }
    let handle = open_project(state, project).await?;
    handle.publish(SessionEvent::BudgetSet { budget_usd });
    Ok(spend(&handle, state.llm.default_budget()))
}

/// The project's spend as the chat shows it.
pub async fn of(state: &AppState, project: &ProjectId) -> Result<Spend, ApiError> {
    let handle = open_project(state, project).await?;
    Ok(spend(&handle, state.llm.default_budget()))
}
