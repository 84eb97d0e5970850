//! Fitting an answer's request into the model's context window: the newest
//! turns whole, older ones as a summary, the files in what is left (the
//! decisions are `llm::budget::fit`'s; this applies them to a project).

use tokio_util::sync::CancellationToken;

use super::project::ProjectHandle;
use super::summary::{self, Summary};
use crate::runtime::session::{ContextSummary, ContextUse, SessionEvent};
use crate::server::llm::ResolvedLlm;
use crate::server::llm::budget::fit::{
    Window, drop_old_images, fit_system, keep_from, messages_tokens, truncate_to,
};
use crate::server::llm::budget::{PER_MESSAGE, estimate_text};
use crate::server::llm::client::{ChatMessage, ChatRole};
use crate::server::llm::prompt::{PromptContext, system_prompt};

/// Tokens the continue prompt and its framing take beside the partial answer.
const CONTINUE_OVERHEAD: u32 = 64;

/// The request's system prompt and messages.
pub struct Fitted {
    pub system: String,
    pub messages: Vec<ChatMessage>,
}

/// What the answer `message_id` is asked with.
pub struct Ask<'a> {
    pub llm: &'a ResolvedLlm,
    pub window: Window,
    pub history: &'a [ChatMessage],
    /// The partial answer a Continue sends along.
    pub continuing: Option<&'a str>,
    pub message_id: &'a str,
}

/// Fits the request, summarizing older turns first when they are left out,
/// and publishes how much of the window it uses.
pub async fn fit(
    project: &ProjectHandle,
    ask: Ask<'_>,
    mut ctx: PromptContext,
    cancel: &CancellationToken,
) -> Fitted {
    let extra = ask
        .continuing
        .map_or(0, |t| estimate_text(t) + CONTINUE_OVERHEAD);
    ctx.summary = None;
    ctx.compact = ctx.compact || ask.window.wants_compact_prompt();
    let bare = system_prompt(&PromptContext {
        token_budget: 0,
        ..ctx.clone()
    });
    let fixed = estimate_text(&bare) + PER_MESSAGE + extra;
    let share = ask.window.conversation_share(fixed);
    let mut history = ask.history.to_vec();
    drop_old_images(&mut history, share);
    let ask = Ask {
        history: &history,
        ..ask
    };
    let keep = keep_from(ask.history, share);
    // A new summary reaches further than needed (the turns past half the
    // share), so the next few turns fit without another.
    let upto = keep.max(keep_from(ask.history, share / 2));
    let summary = current_summary(project, &ask, (keep, upto), cancel).await;
    let keep = start_of_turn(
        ask.history,
        keep.max(summary.as_ref().map_or(0, |s| s.covered)),
    );
    ctx.summary = summary.filter(|_| keep > 0).map(|s| s.text);
    let limit = ask.window.prompt_limit();
    let room = limit.saturating_sub(fixed + estimate_text(ctx.summary.as_deref().unwrap_or("")));
    let messages = within(ask.history[keep..].to_vec(), room);
    let others = messages_tokens(&messages) + extra;
    let system = fit_system(limit, others, |budget| {
        system_prompt(&PromptContext {
            token_budget: budget,
            ..ctx.clone()
        })
    });
    let used = estimate_text(&system) + PER_MESSAGE + others;
    project.publish(SessionEvent::ContextUsage {
        message_id: ask.message_id.to_owned(),
        usage: ContextUse {
            used,
            window: ask.window.context_tokens,
        },
    });
    Fitted { system, messages }
}

/// The summary to send: the one kept, or a new one up to `upto` when turns
/// before `keep` that it does not cover are left out (published, so
/// stored, with the answer's id).
async fn current_summary(
    project: &ProjectHandle,
    ask: &Ask<'_>,
    (keep, upto): (usize, usize),
    cancel: &CancellationToken,
) -> Option<Summary> {
    let kept = project.conversation().summary().cloned();
    if !summary::needed(kept.as_ref(), keep) {
        return kept;
    }
    let made = summary::summarize(
        ask.llm,
        ask.window,
        kept.as_ref(),
        ask.history,
        start_of_turn(ask.history, upto),
        cancel.child_token(),
    )
    .await;
    let Some(made) = made else {
        return kept;
    };
    project.conversation().set_summary(made.clone());
    project.publish(SessionEvent::ContextSummary {
        upto_message_id: ask.message_id.to_owned(),
        summary: ContextSummary {
            covers: u32::try_from(made.covered).unwrap_or(u32::MAX),
            text: made.text.clone(),
        },
    });
    Some(made)
}

/// `at`, moved forward to a user message (never past the last message).
fn start_of_turn(history: &[ChatMessage], mut at: usize) -> usize {
    let last = history.len().saturating_sub(1);
    at = at.min(last);
    while at < last && history[at].role != ChatRole::User {
        at += 1;
    }
    at
}

/// The messages, with the last one cut when even it alone is over `room`.
fn within(mut messages: Vec<ChatMessage>, room: u32) -> Vec<ChatMessage> {
    if messages_tokens(&messages) <= room {
        return messages;
    }
    if let Some((last, earlier)) = messages.split_last_mut() {
        let left = room.saturating_sub(messages_tokens(earlier) + PER_MESSAGE);
        last.content = truncate_to(&last.content, left);
    }
    messages
}
