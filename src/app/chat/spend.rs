//! What the project's answers cost, beside the composer, and raising its
//! budget when a message was refused for it.

use leptos::prelude::*;

use crate::app::context::CurrentProject;
use crate::app::error::RivetError;
use crate::app::session::SessionStore;
use crate::runtime::llm::dollars;
use crate::runtime::project::ProjectId;

/// Sets the project's own budget in dollars (`None`: the server's default).
#[server(endpoint = "set_budget")]
pub async fn set_budget(project: ProjectId, budget_usd: Option<f64>) -> Result<(), RivetError> {
    let state = expect_context::<crate::server::state::AppState>();
    crate::server::session::budget::set(&state, &project, budget_usd).await?;
    Ok(())
}

/// "$0.0123 spent" (and "of $5.00" with a budget of the project's own),
/// read again when an answer ends or the budget changes.
#[component]
pub fn SpendLine() -> impl IntoView {
    let store = expect_context::<SessionStore>();
    let text = move || {
        store.messages.track();
        store.busy.track();
        let (spent, budget) = store.with(|s| (s.spent_usd(), s.budget_usd));
        match budget {
            Some(budget) => format!("{} of {} spent", dollars(spent), dollars(budget)),
            None if spent > 0.0 => format!("{} spent", dollars(spent)),
            None => String::new(),
        }
    };
    view! {
        <span class="project-spend" data-testid="project-spend" title="What this project's answers cost">
            {text}
        </span>
    }
}

/// The raise, out of the first load (`super::part`): it shows only after a
/// refusal.
pub fn budget_raise(on_raised: Callback<()>) -> AnyView {
    view! { <BudgetRaise on_raised /> }.into_any()
}

/// Under a refusal for the budget: a new budget, then the message can be
/// sent again.
#[component]
pub fn BudgetRaise(on_raised: Callback<()>) -> impl IntoView {
    let project = expect_context::<CurrentProject>().0;
    let store = expect_context::<SessionStore>();
    let proposed = store.with(|s| (s.spent_usd() * 2.0).max(1.0));
    let amount = RwSignal::new(format!("{proposed:.2}"));
    let raise = Action::new(move |usd: &f64| set_budget(project.clone(), Some(*usd)));
    Effect::new(move |_| {
        if let Some(Ok(())) = raise.value().get() {
            on_raised.run(());
        }
    });
    let submit = move || {
        if let Ok(usd) = amount.get_untracked().trim().parse::<f64>() {
            raise.dispatch(usd);
        }
    };
    view! {
        <span class="budget-raise">
            <label>
                "New budget ($) "
                <input
                    type="number"
                    min="0"
                    step="0.5"
                    data-testid="budget-input"
                    prop:value=move || amount.get()
                    on:input:target=move |ev| amount.set(ev.target().value())
                />
            </label>
            <button type="button" class="secondary" data-testid="budget-raise" on:click=move |_| submit()>
                "Raise the budget"
            </button>
        </span>
    }
}
