//! Agent mode on an open project: a conversation in agent mode answers with
//! [`Agent::run`] on a task of its own (like `turn.rs` for Build mode: a
//! closed tab does not stop it, Stop does), its steps become session events
//! (`board.rs`), steps that change files or run commands wait for the
//! person (`approvals.rs`), and a model that refuses tools on the first
//! request gets the same message in Build mode instead.

mod approvals;
mod board;
mod live;
mod preview;

#[cfg(test)]
mod tests;

use std::sync::{Arc, Mutex, PoisonError};

use async_trait::async_trait;
use tokio_util::sync::CancellationToken;

pub use approvals::{AgentSlot, ApprovalError, decide};

use super::api::ApiError;
use super::project::ProjectHandle;
use super::recording::RecordingRuntime;
use super::saved::SavedAnswer;
use super::turn::{self, Answer};
use crate::runtime::llm::LlmError;
use crate::runtime::llm::TokenUsage;
use crate::runtime::protocol::Parser;
use crate::runtime::session::{MessageStatus, Mode, SessionEvent};
use crate::server::agent::build::latest_failures;
use crate::server::agent::run::{Agent, AgentEnd, AgentSettings, LlmModel, Model, ModelStep};
use crate::server::agent::tools::{OutputSink, ToolContext, ToolSource};
use crate::server::config::AgentConfig;
use crate::server::llm::LlmService;
use crate::server::llm::client::ChatMessage;
use crate::server::llm::prompt::RuntimeDescription;
use crate::server::mcp::McpService;

/// What the model is told in agent mode.
pub const SYSTEM_PROMPT: &str = "You are Rivet's agent. You build and change the web project in \
/home/project step by step with the tools: look before you change (list_directory, glob, \
read_file, search_file_content), write whole files with write_file or change parts of them with \
replace, and run commands such as `npm install` or `npm run dev` with run_shell_command (a dev \
server keeps running and the person sees it in the preview). Paths are relative to the project. \
If a tool answers \"denied by the user\", do not try the same step again: adapt or ask. When the \
task is done, answer without tools with a short summary of what you did.";

/// Everything an agent run needs besides its answer.
pub struct AgentContext {
    pub project: Arc<ProjectHandle>,
    pub llm: Arc<LlmService>,
    /// For the Build-mode fallback.
    pub description: RuntimeDescription,
    pub config: AgentConfig,
    /// The owner's MCP servers.
    pub mcp: Arc<McpService>,
    /// The model takes images (`[llm] vision`).
    pub vision: bool,
}

/// The conversation's mode: the one chosen, else the configured default.
pub fn mode(project: &ProjectHandle, config: &AgentConfig) -> Mode {
    project
        .session
        .read(|s| s.mode)
        .unwrap_or(config.default_mode)
}

/// Sets the conversation's mode; the next message uses it.
pub fn set_mode(project: &ProjectHandle, mode: Mode) {
    if project.session.read(|s| s.mode) != Some(mode) {
        project.publish(SessionEvent::ModeChanged { mode });
    }
}

/// Whether a provider's refusal says the model takes no tools.
pub fn tools_refused(error: &LlmError) -> bool {
    match error {
        LlmError::Rejected { message, .. } => message.to_lowercase().contains("tool"),
        _ => false,
    }
}

/// Runs the answer as an agent run, to its end.
pub async fn run(cx: AgentContext, answer: Answer, cancel: CancellationToken) {
    let AgentContext {
        project,
        llm,
        description,
        config,
        mcp,
        vision,
    } = cx;
    let message_id = answer.message_id.clone();
    let mut saved = SavedAnswer::new(&message_id, None, "");
    let picked = project.conversation().model().map(str::to_owned);
    let resolved = match llm.resolve_for_answer(picked.as_deref()).await {
        Ok(resolved) => resolved,
        Err(error) => {
            let status = MessageStatus::Failed {
                error: error.to_string(),
            };
            return finish(&project, &message_id, saved, "", status);
        }
    };
    turn::record_model(&project, &mut saved, &message_id, &resolved.model);
    let settings = AgentSettings::from(&config);
    project.publish(SessionEvent::AgentStarted {
        message_id: message_id.clone(),
        max_steps: settings.max_steps,
    });
    let board = Arc::new(board::Board::new(Arc::clone(&project), &message_id));
    let window = llm.context_window(&resolved).await;
    let extra = mcp_tools(&project, &mcp, &board, window.prompt_limit(), vision).await;
    let tools = tool_context(&project, &cancel, board.output_sink(), extra);
    project.agent.keep_tools(Arc::clone(&tools)).await;
    let rules = turn::include_rules(&project, &llm, &message_id).await;
    let price = llm.price(&resolved).await;
    let model = Tracked {
        inner: LlmModel {
            llm: resolved,
            system: format!("{SYSTEM_PROMPT}\n{rules}"),
            window,
            cancel: cancel.clone(),
            tools: tools.specs(),
        },
        project: Arc::clone(&project),
        message_id: message_id.clone(),
        seen: Mutex::default(),
        price,
        default_budget: llm.default_budget(),
    };
    let approver = board::SessionApprover {
        board: Arc::clone(&board),
    };
    let agent = Agent {
        model: &model,
        tools: &tools,
        approver: &approver,
        settings,
    };
    let (sendable, images_left_out) = turn::sendable(&llm, &model.inner.llm, &answer.history).await;
    if images_left_out > 0 {
        project.publish(SessionEvent::Notice {
            message_id: message_id.clone(),
            notice: Some(turn::images_left_out_notice(
                &model.inner.llm.model,
                images_left_out,
            )),
        });
    }
    let outcome = agent
        .run(sendable.into_owned(), |event| board.on_event(event))
        .await;
    project.agent.forget_waiting();

    if let Some(error) = model.refused() {
        return fall_back(project, llm, description, answer, cancel, &error).await;
    }
    let text = board.text();
    project.publish(SessionEvent::AgentEnded {
        message_id: message_id.clone(),
        end: outcome.end.to_string(),
    });
    let status = match &outcome.end {
        AgentEnd::Done => MessageStatus::Complete,
        AgentEnd::Stopped => MessageStatus::Stopped,
        AgentEnd::StepLimit { .. } | AgentEnd::Stuck { .. } => {
            project
                .runner
                .alert(outcome.end.to_string(), text_tail(&text), None);
            MessageStatus::Complete
        }
        AgentEnd::Failed { error } => MessageStatus::Failed {
            error: error.to_string(),
        },
    };
    let mut history = answer.history;
    let said = if text.trim().is_empty() {
        outcome.end.to_string()
    } else {
        text.clone()
    };
    history.push(ChatMessage::assistant(said));
    project.conversation().set_history(history);
    saved.usage(outcome.usage);
    if let Some(price) = price {
        saved.cost(price.cost(&outcome.usage));
    }
    finish(&project, &message_id, saved, &text, status);
}

/// The end of what the model said, for an alert.
fn text_tail(text: &str) -> String {
    let start = text.char_indices().rev().nth(400).map_or(0, |(i, _)| i);
    text[start..].trim().to_owned()
}

/// The tools of the project's MCP servers; a server left out (it did not
/// start, or its tools do not fit) is said in the chat.
async fn mcp_tools(
    project: &Arc<ProjectHandle>,
    mcp: &Arc<McpService>,
    board: &board::Board,
    window_tokens: u32,
    vision: bool,
) -> Option<Arc<dyn ToolSource>> {
    let chosen = project.session.read(|s| s.mcp_servers.clone());
    if chosen.as_ref().is_some_and(Vec::is_empty) || mcp.names().is_empty() {
        return None;
    }
    let (tools, notes) = mcp
        .tools_for(
            &project.id,
            &project.runtime,
            chosen.as_deref(),
            window_tokens,
            vision,
        )
        .await;
    for note in notes {
        board.note(&note);
    }
    Some(Arc::new(tools))
}

fn tool_context(
    project: &Arc<ProjectHandle>,
    cancel: &CancellationToken,
    output: OutputSink,
    extra: Option<Arc<dyn ToolSource>>,
) -> Arc<ToolContext> {
    let recording = Arc::new(RecordingRuntime {
        inner: Arc::clone(&project.runtime),
        before: Arc::clone(&project.answer_before),
    });
    let session = Arc::clone(&project.session);
    // Failures after this one come from the run itself.
    let since = super::fix::mark(project);
    let mut tools = ToolContext::new(recording)
        .with_build_results(Arc::new(move || {
            session.read(|s| latest_failures(s, since))
        }))
        .with_cancel(cancel.clone())
        .with_output(output);
    if let Some(extra) = extra {
        tools = tools.with_extra(extra);
    }
    Arc::new(tools)
}

/// The model refused tools on the first request: the message is answered
/// in Build mode, and the conversation stays there.
async fn fall_back(
    project: Arc<ProjectHandle>,
    llm: Arc<LlmService>,
    description: RuntimeDescription,
    answer: Answer,
    cancel: CancellationToken,
    error: &LlmError,
) {
    tracing::info!(project = %project.id.as_str(), %error, "the model takes no tools; answering in Build mode");
    project.publish(SessionEvent::AgentEnded {
        message_id: answer.message_id.clone(),
        end: format!(
            "This model does not support tools ({error}); answered in Build mode instead, and the conversation switched to Build."
        ),
    });
    project.publish(SessionEvent::ModeChanged { mode: Mode::Build });
    let answer = Answer {
        parser: Parser::new(answer.message_id.clone()),
        text: String::new(),
        ..answer
    };
    turn::run(project, llm, description, answer, cancel).await;
}

fn finish(
    project: &ProjectHandle,
    message_id: &str,
    saved: SavedAnswer,
    text: &str,
    status: MessageStatus,
) {
    saved.finish(&project.session, text, &status, None);
    project.publish(SessionEvent::MessageFinished {
        message_id: message_id.to_owned(),
        status,
        finish_reason: None,
    });
}

/// The model, counting steps and tokens live and noting a refusal of tools
/// on the first request.
struct Tracked {
    inner: LlmModel,
    project: Arc<ProjectHandle>,
    message_id: String,
    seen: Mutex<Seen>,
    /// The model's price, when known: the run's cost follows its usage.
    price: Option<crate::runtime::llm::Price>,
    /// The server's budget for a project without its own.
    default_budget: Option<f64>,
}

#[derive(Default)]
struct Seen {
    steps: u32,
    usage: TokenUsage,
    refused: Option<LlmError>,
}

impl Tracked {
    fn refused(&self) -> Option<LlmError> {
        self.seen
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .refused
            .clone()
    }
}

#[async_trait]
impl Model for Tracked {
    async fn step(&self, messages: &[ChatMessage]) -> Result<ModelStep, LlmError> {
        // Every step is a request: a run stops at the budget, not after it.
        if let Err(ApiError::BudgetExceeded { spent, budget }) =
            super::budget::check(&self.project, self.default_budget)
        {
            return Err(LlmError::BudgetSpent {
                spent: crate::runtime::llm::dollars(spent),
                budget: crate::runtime::llm::dollars(budget),
            });
        }
        let result = self.inner.step(messages).await;
        let (steps_used, usage) = {
            let mut seen = self.seen.lock().unwrap_or_else(PoisonError::into_inner);
            seen.steps += 1;
            if let Ok(ModelStep { usage: Some(u), .. }) = &result {
                seen.usage = seen.usage + *u;
            }
            if let Err(error) = &result
                && seen.steps == 1
                && tools_refused(error)
            {
                seen.refused = Some(error.clone());
            }
            (seen.steps, seen.usage)
        };
        self.project.publish(SessionEvent::AgentProgress {
            message_id: self.message_id.clone(),
            steps_used,
            usage,
        });
        if let Some(price) = self.price {
            self.project.publish(SessionEvent::Cost {
                message_id: self.message_id.clone(),
                cost_usd: price.cost(&usage),
            });
        }
        result
    }
}
