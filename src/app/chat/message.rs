//! One message of the conversation: the person's text, or the model's
//! answer as markdown and artifact cards, with its status and token usage.

use leptos::prelude::*;

use super::answer_text::AnswerText;
use super::artifact::ArtifactCard;
use crate::app::api::{continue_answer, retry_answer};
use crate::app::ide::CurrentProject;
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
    match role {
        Some(Role::User) => view! {
            <li class="message message-user" data-testid="message-user">
                {move || message.get().and_then(|m| m.automatic).map(|fix| view! {
                    <div class="message-automatic" data-testid="message-automatic">
                        {format!(
                            "Sent by Rivet: automatic fix, attempt {} of {} ({} tokens used so far)",
                            fix.attempt, fix.max_attempts, fix.tokens_so_far
                        )}
                    </div>
                })}
                <div class="message-text">{move || message.get().map(|m| m.text()).unwrap_or_default()}</div>
            </li>
        }
        .into_any(),
        _ => view! {
            <li class="message message-assistant" data-testid="message-assistant" data-status=move || message.get().map(|m| status_name(&m.status))>
                {move || message.get().map(|m| view! { <AnswerBody message=m /> })}
            </li>
        }
        .into_any(),
    }
}

fn status_name(status: &MessageStatus) -> &'static str {
    match status {
        MessageStatus::Streaming => "streaming",
        MessageStatus::Complete => "complete",
        MessageStatus::Stopped => "stopped",
        MessageStatus::Interrupted { .. } => "interrupted",
        MessageStatus::Failed { .. } => "failed",
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
            Part::Text { text } => view! { <AnswerText text=text.clone() settled /> }.into_any(),
            Part::Artifact { id } => {
                view! { <ArtifactCard message_id=message_id.clone() artifact_id=id.to_string() /> }
                    .into_any()
            }
        })
        .collect_view();
    view! {
        {parts}
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
    let usage = message.usage.map(|u| {
        format!(
            "{} tokens ({} prompt, {} answer)",
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
                {usage.map(|u| view! { <span class="message-usage" data-testid="message-usage">{u}</span> })}
            </div>
        </div>
    }
}
