//! What goes into a request so that it fits the model's context window:
//! pure decisions, tested on their own; `session::turn` applies them.
//!
//! A request is the system prompt (protocol, runtime, the user's edits, the
//! project's files, and a summary of older turns when there is one) and the
//! conversation. The newest turns are kept whole; what is older than the
//! conversation's share of the window is left to the summary; the files get
//! what remains, most relevant first.

use super::{PER_MESSAGE, estimate_text};
use crate::server::llm::client::{ChatMessage, ChatRole};

/// The model's context window and the room kept for its answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Window {
    pub context_tokens: u32,
    pub answer_tokens: u32,
}

impl Window {
    /// The answer keeps `max_tokens` when set, else a quarter of the window;
    /// never more than half of it.
    pub fn new(context_tokens: u32, max_tokens: Option<u32>) -> Window {
        let half = context_tokens / 2;
        let answer_tokens = max_tokens.unwrap_or(context_tokens / 4).min(half);
        Window {
            context_tokens,
            answer_tokens,
        }
    }

    /// Whether the window is small enough for the compact prompt.
    pub fn wants_compact_prompt(&self) -> bool {
        self.context_tokens <= crate::server::llm::prompt::COMPACT_WINDOW
    }

    /// Tokens the prompt may take.
    pub fn prompt_limit(&self) -> u32 {
        self.context_tokens.saturating_sub(self.answer_tokens)
    }

    /// Tokens the conversation may take before its older turns are left to
    /// a summary: half of what the prompt has beyond its fixed part.
    pub fn conversation_share(&self, fixed: u32) -> u32 {
        self.prompt_limit().saturating_sub(fixed) / 2
    }
}

/// Estimated tokens of one message.
pub fn message_tokens(message: &ChatMessage) -> u32 {
    let calls: String = message
        .tool_calls
        .iter()
        .map(|c| c.arguments.as_str())
        .collect();
    let images = u32::try_from(message.images.len()).unwrap_or(u32::MAX);
    PER_MESSAGE
        .saturating_add(estimate_text(&message.content))
        .saturating_add(estimate_text(&calls))
        .saturating_add(images.saturating_mul(super::IMAGE_TOKENS))
}

/// Estimated tokens of messages.
pub fn messages_tokens(messages: &[ChatMessage]) -> u32 {
    messages
        .iter()
        .map(message_tokens)
        .fold(0, u32::saturating_add)
}

/// The history as a model that takes no images is sent it, and how many
/// images its last message (the one being asked) lost.
pub fn without_images(history: &[ChatMessage]) -> (Vec<ChatMessage>, usize) {
    let lost = history.last().map_or(0, |m| m.images.len());
    let messages = history
        .iter()
        .map(|m| ChatMessage {
            images: Vec::new(),
            ..m.clone()
        })
        .collect();
    (messages, lost)
}

/// Leaves out the images of the oldest messages first until `history`
/// fits `share` (images cost far more than most turns' text, so they go
/// before any turn does); the last message keeps its own.
pub fn drop_old_images(history: &mut [ChatMessage], share: u32) {
    let mut total = messages_tokens(history);
    let Some((_, older)) = history.split_last_mut() else {
        return;
    };
    for message in older.iter_mut().filter(|m| !m.images.is_empty()) {
        if total <= share {
            break;
        }
        let before = message_tokens(message);
        message.images.clear();
        total = total.saturating_sub(before.saturating_sub(message_tokens(message)));
    }
}

/// Where the kept part of `history` starts: the newest messages whose
/// tokens fit `share`, moved forward to a user message so every kept turn
/// is whole. The last message (the question) is always kept.
pub fn keep_from(history: &[ChatMessage], share: u32) -> usize {
    let Some(last) = history.len().checked_sub(1) else {
        return 0;
    };
    let mut used = message_tokens(&history[last]);
    let mut start = last;
    while start > 0 {
        let cost = message_tokens(&history[start - 1]);
        if used.saturating_add(cost) > share {
            break;
        }
        used += cost;
        start -= 1;
    }
    while start < last && history[start].role != ChatRole::User {
        start += 1;
    }
    start
}

/// Cuts `text` to about `tokens` estimated tokens, at a character boundary,
/// saying that it was cut.
pub fn truncate_to(text: &str, tokens: u32) -> String {
    if estimate_text(text) <= tokens {
        return text.to_owned();
    }
    const NOTE: &str = "\n[… cut to fit the context window]";
    let bytes = usize::try_from(tokens).unwrap_or(usize::MAX) * super::BYTES_PER_TOKEN * 10 / 11;
    let mut end = bytes.saturating_sub(NOTE.len() + 8).min(text.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}{NOTE}", &text[..end])
}

/// The largest file budget (for `prompt::system_prompt`'s own count) whose
/// system prompt, with `others` tokens beside it, fits `limit`: `build`
/// makes the system prompt for a budget. Starts from what is left and
/// shrinks by a quarter until it fits, or gives the prompt without files.
pub fn fit_system(limit: u32, others: u32, mut build: impl FnMut(usize) -> String) -> String {
    let left = |system: &str| {
        limit
            .saturating_sub(others)
            .checked_sub(PER_MESSAGE + estimate_text(system))
    };
    let without = build(0);
    let Some(room) = left(&without) else {
        return without;
    };
    let mut budget = usize::try_from(room).unwrap_or(usize::MAX);
    while budget > 0 {
        let system = build(budget);
        if left(&system).is_some() {
            return system;
        }
        budget = budget * 3 / 4;
    }
    without
}

/// The paths the prompt shows first, most relevant first: those `named`
/// by the latest build results, then those `changed` recently (by the
/// latest answer or the person), each once.
pub fn relevant_first(named: &[String], changed: &[String]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for path in named.iter().chain(changed) {
        if !out.contains(path) {
            out.push(path.clone());
        }
    }
    out
}

#[cfg(test)]
mod tests;
