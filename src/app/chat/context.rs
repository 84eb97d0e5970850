//! The context window in the chat: the summary that stands in for older
//! turns (a collapsed block before the first answer asked with it), and how
//! much of the window an answer's request used, and whether it carried the
//! user's rules.

use leptos::prelude::*;

use crate::runtime::session::ContextUse;

/// The model's own summary of the conversation before this answer.
#[component]
pub fn ContextSummaryBlock(text: String) -> impl IntoView {
    view! {
        <details class="context-summary" data-testid="context-summary">
            <summary>"Earlier messages, summarized to fit the model's context window"</summary>
            <p class="context-summary-text">{text}</p>
        </details>
    }
}

/// "38k / 128k tokens" of context the answer's request used.
#[component]
pub fn ContextUsageBadge(usage: ContextUse) -> impl IntoView {
    view! {
        <span
            class="context-usage"
            data-testid="context-usage"
            title="Context window in use by this answer's request"
        >
            {usage.label()}
        </span>
    }
}

/// "Rules: AGENTS.md, settings": the answer's request carried the user's rules.
#[component]
pub fn RulesBadge(sources: Vec<String>) -> impl IntoView {
    view! {
        <span
            class="context-usage message-rules"
            data-testid="message-rules"
            title="The user's rules went with this answer's request"
        >
            {format!("Rules: {}", sources.join(", "))}
        </span>
    }
}
