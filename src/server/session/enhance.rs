//! The prompt enhancer: the person's draft rewritten by the model into a
//! clearer request, streamed back to the composer (which keeps the draft
//! for Undo). One request beside the conversation: it records nothing in
//! it, but is checked against the project's budget and its cost counts
//! toward the spend (`SessionEvent::SideCost`).

use futures::Stream;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::api::{ApiError, open_project};
use crate::runtime::llm::{LlmEvent, RewriteLine};
use crate::runtime::project::ProjectId;
use crate::runtime::session::SessionEvent;
use crate::server::llm::client::{ChatMessage, ChatRequest, chat};
use crate::server::state::AppState;

/// The instruction of the rewrite (the system prompt). The scripted
/// provider answers the request with a transcript whose `match` words the
/// message holds ([`DRAFT_HEADING`], docs/mock-llm.md).
pub const INSTRUCTION: &str = "You rewrite a person's draft request to an assistant that builds \
     web apps into a clearer, more specific request. Keep its intent, its language and every \
     detail it gives; spell out what it plainly implies (pages, data, behaviour, look); add \
     nothing it did not ask for. Answer with the rewritten request only: no preamble, no \
     quotes, no code.";

/// What precedes the draft in the request's message.
pub const DRAFT_HEADING: &str = "Rewrite this draft request:";

/// Longest draft the enhancer takes, in bytes.
pub const MAX_DRAFT_BYTES: usize = 16 * 1024;

/// Starts rewriting `draft`; its lines arrive as the model writes them.
/// Dropping the stream stops the request.
pub async fn rewrite(
    state: &AppState,
    project: &ProjectId,
    draft: &str,
) -> Result<impl Stream<Item = RewriteLine> + Send + 'static + use<>, ApiError> {
    let draft = draft.trim();
    if draft.is_empty() {
        return Err(ApiError::EmptyMessage);
    }
    if draft.len() > MAX_DRAFT_BYTES {
        return Err(ApiError::DraftTooLong);
    }
    let handle = open_project(state, project).await?;
    super::budget::check(&handle, state.llm.default_budget())?;
    let llm = state.llm.resolve_for_answer(None).await?;
    let price = state.llm.price(&llm).await;
    let asked = format!("{DRAFT_HEADING}\n\n{draft}");
    let request = ChatRequest::new(INSTRUCTION, vec![ChatMessage::user(asked)]);
    let (tx, rx) = mpsc::unbounded_channel();
    tokio::spawn(async move {
        let cancel = CancellationToken::new();
        let stop = cancel.clone();
        let lines = tx.clone();
        let outcome = chat(&llm, request, cancel, move |event| {
            if let LlmEvent::Delta { text } = event
                && lines.send(RewriteLine::Delta { text }).is_err()
            {
                // Nobody reads any more: stop asking.
                stop.cancel();
            }
        })
        .await;
        if let (Some(price), Some(usage)) = (price, outcome.usage) {
            handle.publish(SessionEvent::SideCost {
                cost_usd: price.cost(&usage),
            });
        }
        if let Err(error) = outcome.result {
            let _ = tx.send(RewriteLine::Failed {
                error: error.to_string(),
            });
        }
    });
    Ok(tokio_stream::wrappers::UnboundedReceiverStream::new(rx))
}
