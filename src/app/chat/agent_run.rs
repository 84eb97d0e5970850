//! An agent run's footer: steps and tokens used (live), and how it ended.

use leptos::prelude::*;

use crate::runtime::session::AgentRun;

/// An agent run's footer, out of the first load (`super::part`).
pub fn agent_run_footer(run: AgentRun, cost_usd: Option<f64>) -> AnyView {
    view! { <AgentRunFooter run cost_usd /> }.into_any()
}

#[component]
pub fn AgentRunFooter(
    run: AgentRun,
    /// What the run's requests cost so far, when the model's price is known.
    cost_usd: Option<f64>,
) -> impl IntoView {
    let cost = cost_usd
        .map(|usd| format!(" · {}", crate::runtime::llm::dollars(usd)))
        .unwrap_or_default();
    let usage = format!(
        "Agent: step {} of {} · {} tokens ({} prompt, {} answer){cost}",
        run.steps_used,
        run.max_steps,
        run.usage.total_tokens,
        run.usage.prompt_tokens,
        run.usage.completion_tokens
    );
    let ended = run.end.clone().map(|end| {
        let class = if end == "Done." {
            "agent-end done"
        } else {
            "agent-end stopped"
        };
        view! { <p class=class data-testid="agent-end">{end}</p> }
    });
    view! {
        <div class="agent-run">
            <p class="agent-usage" data-testid="agent-usage">{usage}</p>
            {ended}
        </div>
    }
}
