//! Fitting an agent run's growing history of tool calls into the window:
//! pure decisions, tested on their own; the agent's model
//! (`agent::run::model`) applies them before each step's request.
//!
//! The task (the person's request) and the latest step (the model's last
//! calls and their results) are kept. Until the history fits, in order:
//! older tool results become "[output of <tool> omitted to fit the context
//! window]"; older calls' arguments are left out; the conversation before
//! the task is dropped; the oldest steps after the task are dropped, each
//! with its results; and last, the longest remaining texts are cut.

use super::PER_MESSAGE;
use super::fit::{message_tokens, messages_tokens, truncate_to};
use crate::server::llm::client::{ChatMessage, ChatRole};

/// Stands in for an older call's arguments (still a JSON object).
pub const ARGUMENTS_OMITTED: &str = r#"{"omitted":"to fit the context window"}"#;

/// Stands in for an older result of `tool`.
pub fn omitted(tool: &str) -> String {
    format!("[output of {tool} omitted to fit the context window]")
}

/// `messages`, made to fit `room` estimated tokens.
pub fn fit_steps(messages: &[ChatMessage], room: u32) -> Vec<ChatMessage> {
    let mut out = messages.to_vec();
    let fits = |m: &[ChatMessage]| messages_tokens(m) <= room;
    if fits(&out) {
        return out;
    }
    let latest = latest_step(&out);
    if omit_results(&mut out, latest, room) || omit_arguments(&mut out, latest, room) {
        return out;
    }
    let task = task_index(&out);
    out.drain(..task);
    if fits(&out) {
        return out;
    }
    drop_old_steps(&mut out, latest.saturating_sub(task), room);
    cut_longest(&mut out, room);
    out
}

/// Where the latest step starts: the last assistant message.
fn latest_step(messages: &[ChatMessage]) -> usize {
    messages
        .iter()
        .rposition(|m| m.role == ChatRole::Assistant)
        .unwrap_or(messages.len())
}

/// The person's request: the last user message before the first tool
/// result (the run's nudges come later), else the last user message.
fn task_index(messages: &[ChatMessage]) -> usize {
    let first_tool = messages
        .iter()
        .position(|m| m.role == ChatRole::Tool)
        .unwrap_or(messages.len());
    messages[..first_tool]
        .iter()
        .rposition(|m| m.role == ChatRole::User)
        .or_else(|| messages.iter().rposition(|m| m.role == ChatRole::User))
        .unwrap_or(0)
}

/// The name of the tool the call `id` went to.
fn tool_name(messages: &[ChatMessage], id: &str) -> String {
    messages
        .iter()
        .flat_map(|m| &m.tool_calls)
        .find(|c| c.id == id)
        .map_or_else(|| "a tool".to_owned(), |c| c.name.clone())
}

/// Replaces tool results before `latest`, oldest first, until the whole
/// fits `room`; whether it does.
fn omit_results(messages: &mut [ChatMessage], latest: usize, room: u32) -> bool {
    for i in 0..latest {
        if messages_tokens(messages) <= room {
            return true;
        }
        if messages[i].role != ChatRole::Tool {
            continue;
        }
        let id = messages[i].tool_call_id.clone().unwrap_or_default();
        let placeholder = omitted(&tool_name(messages, &id));
        if messages[i].content.len() > placeholder.len() {
            messages[i].content = placeholder;
        }
    }
    messages_tokens(messages) <= room
}

/// Replaces the arguments of calls before `latest`, oldest first, until
/// the whole fits `room`; whether it does.
fn omit_arguments(messages: &mut [ChatMessage], latest: usize, room: u32) -> bool {
    for i in 0..latest {
        if messages_tokens(messages) <= room {
            return true;
        }
        for call in &mut messages[i].tool_calls {
            if call.arguments.len() > ARGUMENTS_OMITTED.len() {
                call.arguments = ARGUMENTS_OMITTED.to_owned();
            }
        }
    }
    messages_tokens(messages) <= room
}

/// Drops the oldest steps between the task (the first message) and the
/// latest step at `latest` (each step an assistant message and what follows
/// it up to the next one) until the whole fits `room`.
fn drop_old_steps(messages: &mut Vec<ChatMessage>, mut latest: usize, room: u32) {
    const FIRST: usize = 1;
    while FIRST < latest && messages_tokens(messages) > room {
        let end = messages[FIRST + 1..latest]
            .iter()
            .position(|m| m.role == ChatRole::Assistant)
            .map_or(latest, |p| FIRST + 1 + p);
        messages.drain(FIRST..end);
        latest -= end - FIRST;
    }
}

/// Cuts the longest texts until the whole fits `room` (or nothing is left
/// to cut).
fn cut_longest(messages: &mut [ChatMessage], room: u32) {
    loop {
        let total = messages_tokens(messages);
        if total <= room {
            return;
        }
        let Some((i, tokens)) = messages
            .iter()
            .map(message_tokens)
            .enumerate()
            .max_by_key(|&(_, t)| t)
        else {
            return;
        };
        let over = total - room;
        let keep = tokens.saturating_sub(over + PER_MESSAGE);
        let cut = truncate_to(&messages[i].content, keep);
        if cut.len() >= messages[i].content.len() {
            return;
        }
        messages[i].content = cut;
    }
}

#[cfg(test)]
mod tests;
