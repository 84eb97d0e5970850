//! Steps waiting for the person, and the project's agent tools kept
//! between runs (servers started by `run_shell_command` keep running until
//! the next run starts).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use tokio::sync::oneshot;

use super::super::project::ProjectHandle;
use crate::runtime::session::{Decision, SessionEvent, StepStatus};
use crate::server::agent::tools::ToolContext;

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ApprovalError {
    #[error("no agent step {0} in this project")]
    NotFound(String),
    #[error("agent step {id} does not wait for approval (it is {status})")]
    NotWaiting { id: String, status: &'static str },
}

/// The agent's share of a project: who waits for which decision.
#[derive(Default)]
pub struct AgentSlot {
    waiting: Mutex<HashMap<String, oneshot::Sender<Decision>>>,
    tools: tokio::sync::Mutex<Option<Arc<ToolContext>>>,
}

impl AgentSlot {
    fn waiting(&self) -> MutexGuard<'_, HashMap<String, oneshot::Sender<Decision>>> {
        self.waiting.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Waits for the decision on `step_id`; a dropped wait is a denial.
    pub(super) fn wait(&self, step_id: &str) -> oneshot::Receiver<Decision> {
        let (tx, rx) = oneshot::channel();
        self.waiting().insert(step_id.to_owned(), tx);
        rx
    }

    /// Forgets every wait (the run ended).
    pub(super) fn forget_waiting(&self) {
        self.waiting().clear();
    }

    /// Keeps the run's tools (and the servers they start); the previous
    /// run's servers are stopped.
    pub(super) async fn keep_tools(&self, tools: Arc<ToolContext>) {
        let previous = self.tools.lock().await.replace(tools);
        if let Some(previous) = previous {
            previous.stop_servers().await;
        }
    }

    /// Stops the servers the agent started (the project closes).
    pub async fn stop_servers(&self) {
        if let Some(tools) = self.tools.lock().await.take() {
            tools.stop_servers().await;
        }
    }
}

/// The person's decision on a waiting step. `Always` also approves the
/// step's tool for the rest of the project's life.
pub fn decide(
    project: &ProjectHandle,
    step_id: &str,
    decision: Decision,
) -> Result<(), ApprovalError> {
    let step = project
        .session
        .read(|s| s.agent_step(step_id).map(|(_, step)| step.clone()))
        .ok_or_else(|| ApprovalError::NotFound(step_id.to_owned()))?;
    let not_waiting = |status: StepStatus| ApprovalError::NotWaiting {
        id: step_id.to_owned(),
        status: status.label(),
    };
    if step.status != StepStatus::Waiting {
        return Err(not_waiting(step.status));
    }
    let sender = project
        .agent
        .waiting()
        .remove(step_id)
        .ok_or_else(|| not_waiting(StepStatus::NotRun))?;
    if decision == Decision::Always {
        project.publish(SessionEvent::AlwaysAllowed { tool: step.tool });
    }
    // The run may have ended meanwhile; then nothing waits any more.
    sender
        .send(decision)
        .map_err(|_| not_waiting(StepStatus::NotRun))
}
