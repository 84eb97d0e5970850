//! One message of the conversation: the person's text, or the model's
//! answer as markdown and artifact cards, with its status and token usage.

use leptos::either::{Either, EitherOf3};
use leptos::prelude::*;

use super::answer_text::AnswerText;
use super::context::{ContextSummaryBlock, ContextUsageBadge, RulesBadge};
use super::part::{ChatPart, chat_part};
use crate::app::api::{continue_answer, retry_answer, stop_run};
use crate::app::context::CurrentProject;
use crate::app::session::SessionStore;
use crate::runtime::session::{Message, MessageStatus, Part, Role};

#[component]
pub fn MessageView(id: String) -> impl IntoView {
    let store = expect_context::<SessionStore>();
    let version = store.message_version(&id);
    let message = Signal::derive({
        let id = id.clone();
        move || {
            version.track();
            store.with(|s| s.message(&id).cloned())
        }
    });
    let role = store.with(|s| s.message(&id).map(|m| m.role));
    // What a person's message carried never changes.
    let carried = store.with(|s| {
        s.message(&id)
            .map(|m| m.attachments.clone())
            .filter(|a| !a.is_empty())
    });
    match role {
        Some(Role::User) => Either::Left(view! {
            <li class="message message-user" data-testid="message-user" class:undone=move || message.get().is_some_and(|m| is_undone(&m.status))>
                {move || message.get().and_then(|m| m.automatic).map(|fix| view! {
                    <div class="message-automatic" data-testid="message-automatic">
                        {fix.describe()}
                        <CancelFix id=id.clone() />
                    </div>
                })}
                <div class="message-text">{move || message.get().map(|m| m.text()).unwrap_or_default()}</div>
                {carried.map(|attachments| {
                    chat_part(ChatPart::Attachments(attachments))
                })}
            </li>
        }),
        _ => Either::Right(view! {
            <li class="message message-assistant" data-testid="message-assistant" data-status=move || message.get().map(|m| status_name(&m.status))
                class:undone=move || message.get().is_some_and(|m| is_undone(&m.status))>
                {move || message.get().map(|m| view! { <AnswerBody message=m /> })}
            </li>
        }),
    }
}

fn is_undone(status: &MessageStatus) -> bool {
    matches!(status, MessageStatus::Undone { .. })
}

fn status_name(status: &MessageStatus) -> &'static str {
    match status {
        MessageStatus::Streaming => "streaming",
        MessageStatus::Complete => "complete",
        MessageStatus::Stopped => "stopped",
        MessageStatus::Interrupted { .. } => "interrupted",
        MessageStatus::Failed { .. } => "failed",
        MessageStatus::Undone { .. } => "undone",
    }
}

#[component]
fn AnswerBody(message: Message) -> impl IntoView {
    let message_id = message.id.clone();
    let settled = message.status != MessageStatus::Streaming;
    let parts = message
        .parts
        .iter()
        .map(|part| match part {
            Part::Text { text } => EitherOf3::A(view! { <AnswerText text=text.clone() settled /> }),
            Part::Artifact { id } => EitherOf3::B({
                let (message_id, artifact_id) = (message_id.clone(), id.to_string());
                chat_part(ChatPart::ArtifactCard {
                    message_id,
                    artifact_id,
                })
            }),
            Part::Step { id } => {
                let step = message.agent.as_ref().and_then(|run| run.step(id)).cloned();
                EitherOf3::C(step.map(|step| chat_part(ChatPart::StepCard(step))))
            }
        })
        .collect_view();
    let run = message.agent.clone();
    let cost_usd = message.cost_usd;
    let summary = message.context_summary.as_ref().map(|s| s.text.clone());
    view! {
        {summary.map(|text| view! { <ContextSummaryBlock text /> })}
        {parts}
        {run.map(|run| {
            chat_part(ChatPart::RunFooter { run, cost_usd })
        })}
        <AnswerFooter message />
    }
}

#[component]
fn AnswerFooter(message: Message) -> impl IntoView {
    let project = expect_context::<CurrentProject>().0;
    let id = message.id.clone();
    let retry = Action::new({
        let (project, id) = (project.clone(), id.clone());
        move |_: &()| retry_answer(project.clone(), id.clone())
    });
    let resume = Action::new(move |_: &()| continue_answer(project.clone(), id.clone()));
    let cost = message
        .cost_usd
        .map(|usd| format!(" · {}", crate::runtime::llm::dollars(usd)))
        .unwrap_or_default();
    let usage = message.usage.map(|u| {
        format!(
            "{} tokens ({} prompt, {} answer){cost}",
            u.total_tokens, u.prompt_tokens, u.completion_tokens
        )
    });
    let (status_class, status_text, can_continue, can_retry) = match &message.status {
        MessageStatus::Streaming => ("streaming", "Writing…".to_owned(), false, false),
        MessageStatus::Complete => ("complete", String::new(), false, false),
        MessageStatus::Stopped => ("stopped", "Stopped.".to_owned(), false, true),
        MessageStatus::Interrupted { reason } => {
            ("interrupted", format!("Interrupted: {reason}"), true, true)
        }
        MessageStatus::Failed { error } => ("failed", error.clone(), false, true),
        MessageStatus::Undone { .. } => (
            "undone",
            "Undone: the files were restored to an earlier answer.".to_owned(),
            false,
            false,
        ),
    };
    view! {
        <div class="message-footer">
            {message.notice.map(|n| view! { <p class="message-notice">{n}</p> })}
            <Show when={
                let empty = status_text.is_empty();
                move || !empty
            }>
                <p class=format!("message-status {status_class}") data-testid="message-status">
                    {status_text.clone()}
                </p>
            </Show>
            <div class="message-actions">
                {(message.plan && message.status == MessageStatus::Complete)
                    .then(|| view! { <super::plan::BuildPlan /> })}
                {can_continue
                    .then(|| {
                        view! {
                            <button class="secondary" data-testid="message-continue" on:click=move |_| {
                                resume.dispatch(());
                            }>"Continue"</button>
                        }
                    })}
                {can_retry
                    .then(|| {
                        view! {
                            <button class="secondary" data-testid="message-retry" on:click=move |_| {
                                retry.dispatch(());
                            }>"Retry"</button>
                        }
                    })}
                {
                    let id = message.id.clone();
                    chat_part(ChatPart::CheckpointButtons(id))
                }
                {usage.map(|u| view! { <span class="message-usage" data-testid="message-usage">{u}</span> })}
                {message.context.map(|usage| view! { <ContextUsageBadge usage /> })}
                {(!message.rules.is_empty()).then(|| view! { <RulesBadge sources=message.rules.clone() /> })}
                {message.model.clone().map(|model| view! { <span class="context-usage" data-testid="message-model" title="The model that answered">{model}</span> })}
            </div>
        </div>
    }
}

/// Cancels the automatic attempt `id` (and the fix loop) while it runs: the
/// same as Stop.
#[component]
fn CancelFix(id: String) -> impl IntoView {
    let store = expect_context::<SessionStore>();
    let project = expect_context::<CurrentProject>().0;
    let stop = Action::new(move |_: &()| stop_run(project.clone()));
    let running = move || {
        store.messages.track();
        let latest = store.with(|s| {
            s.messages
                .iter()
                .rev()
                .find(|m| m.role == Role::User)
                .is_some_and(|m| m.id == id)
        });
        latest && store.busy.get()
    };
    view! {
        <Show when=running>
            <button
                type="button"
                class="secondary"
                data-testid="fix-cancel"
                on:click=move |_| {
                    stop.dispatch(());
                }
            >
                "Cancel"
            </button>
        </Show>
    }
}
