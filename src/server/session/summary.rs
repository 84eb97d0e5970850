//! The summary that stands in for a conversation's older turns: asked of
//! the model with one extra request through the same client, kept on the
//! conversation, and published (so stored) as a `ContextSummary` event.

use tokio_util::sync::CancellationToken;

use crate::runtime::session::{ChatId, SessionState};

use crate::server::llm::ResolvedLlm;
use crate::server::llm::budget::fit::{Window, truncate_to};
use crate::server::llm::client::{ChatMessage, ChatRequest, ChatRole, chat};

/// The fixed instruction of the summary request. The scripted provider
/// answers it with a transcript whose `match` words it holds (docs/mock-llm.md).
pub const INSTRUCTION: &str = "Summarize the earlier conversation below briefly, for your own \
     later reference: what the user asked for, what was built and decided, file names and \
     choices that matter, and what is still open. Plain text, at most 150 words.";

/// The summary a conversation has: it covers `history[..covered]`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Summary {
    pub covered: usize,
    pub text: String,
}

/// The text of the summary request: the instruction, the summary so far,
/// and the messages it does not cover yet, cut to fit `window`.
pub fn request_text(previous: Option<&str>, messages: &[ChatMessage], window: Window) -> String {
    let mut out = format!("{INSTRUCTION}\n\n");
    if let Some(previous) = previous {
        out.push_str(&format!("Summary so far:\n{previous}\n\n"));
    }
    out.push_str("Conversation:\n");
    for message in messages {
        let who = match message.role {
            ChatRole::User => "User",
            ChatRole::Assistant => "Assistant",
            ChatRole::Tool => "Tool",
        };
        out.push_str(&format!("{who}: {}\n\n", message.content));
    }
    let room = window
        .prompt_limit()
        .saturating_sub(crate::server::llm::budget::PER_MESSAGE * 2);
    truncate_to(&out, room)
}

/// Asks the model for a summary of `history[..upto]`, building on
/// `previous` (which covers a beginning of it); `None` when the request
/// fails (the older turns are then only left out).
pub async fn summarize(
    llm: &ResolvedLlm,
    window: Window,
    previous: Option<&Summary>,
    history: &[ChatMessage],
    upto: usize,
    cancel: CancellationToken,
) -> Option<Summary> {
    let from = previous.map_or(0, |s| s.covered).min(upto);
    let text = request_text(
        previous.map(|s| s.text.as_str()),
        &history[from..upto],
        window,
    );
    let request = ChatRequest::new(
        "You keep notes of a conversation so that it can go on within a limited context window.",
        vec![ChatMessage::user(text)],
    );
    let outcome = chat(llm, request, cancel, |_| {}).await;
    match outcome.result {
        Ok(_) if !outcome.text.trim().is_empty() => Some(Summary {
            covered: upto,
            text: truncate_to(outcome.text.trim(), window.prompt_limit() / 8),
        }),
        Ok(_) => None,
        Err(error) => {
            tracing::warn!("the conversation's summary failed: {error}");
            None
        }
    }
}

/// The latest summary the session's events kept for `chat`, whose turns
/// rebuilt after a restart are `history_len` messages.
pub fn restored(state: &SessionState, chat: &ChatId, history_len: usize) -> Option<Summary> {
    let kept = state
        .messages
        .iter()
        .rev()
        .filter(|m| m.chat == *chat)
        .find_map(|m| m.context_summary.as_ref())?;
    let covered = usize::try_from(kept.covers).unwrap_or(usize::MAX);
    Some(Summary {
        covered: covered.min(history_len),
        text: kept.text.clone(),
    })
}

/// Whether `history[..keep_from]`, the turns left out, needs a (new)
/// summary: some are not covered by the one there is.
pub fn needed(summary: Option<&Summary>, keep_from: usize) -> bool {
    keep_from > summary.map_or(0, |s| s.covered)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server::llm::budget::estimate_text;

    fn window() -> Window {
        Window::new(8192, None)
    }

    #[test]
    fn a_summary_is_needed_only_for_turns_it_does_not_cover() {
        let covering = |covered| Summary {
            covered,
            text: "s".into(),
        };
        for (summary, keep_from, expect) in [
            (None, 0, false),
            (None, 2, true),
            (Some(covering(4)), 2, false),
            (Some(covering(4)), 4, false),
            (Some(covering(4)), 6, true),
        ] {
            assert_eq!(
                needed(summary.as_ref(), keep_from),
                expect,
                "{summary:?} {keep_from}"
            );
        }
    }

    #[test]
    fn the_latest_kept_summary_is_restored_within_the_history() {
        use crate::runtime::session::{ContextSummary, Message, SessionEvent};
        let mut state = SessionState::default();
        let main = ChatId::main();
        assert_eq!(restored(&state, &main, 10), None);
        for (id, covers, text) in [("m2", 4, "first"), ("m4", 8, "second")] {
            state.apply(&SessionEvent::MessageAdded {
                message: Message::assistant(id),
            });
            state.apply(&SessionEvent::ContextSummary {
                upto_message_id: id.into(),
                summary: ContextSummary {
                    covers,
                    text: text.into(),
                },
            });
        }
        let summary = |covered: usize| Summary {
            covered,
            text: "second".into(),
        };
        assert_eq!(restored(&state, &main, 10), Some(summary(8)));
        // Another chat's summary is its own.
        assert_eq!(restored(&state, &ChatId::numbered(2), 10), None);
        // A shorter rebuilt history is never skipped past its end.
        assert_eq!(restored(&state, &main, 6), Some(summary(6)));
    }

    #[test]
    fn the_summary_request_holds_the_instruction_the_old_summary_and_the_new_turns() {
        let text = request_text(
            Some("earlier: a todo app"),
            &[
                ChatMessage::user("add dark mode"),
                ChatMessage::assistant("done"),
            ],
            window(),
        );
        assert!(text.starts_with(INSTRUCTION));
        assert!(text.contains("Summary so far:\nearlier: a todo app"));
        assert!(text.contains("User: add dark mode") && text.contains("Assistant: done"));
    }

    #[test]
    fn a_summary_request_over_the_window_is_cut_to_fit() {
        let long = ChatMessage::user("word ".repeat(20_000));
        let text = request_text(None, &[long], window());
        assert!(estimate_text(&text) <= window().prompt_limit());
        assert!(text.ends_with("cut to fit the context window]"));
    }
}
