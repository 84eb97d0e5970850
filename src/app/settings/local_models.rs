//! "Find local models": the loopback addresses of `[llm] local_servers`
//! (Ollama, LM Studio, llama.cpp, vLLM by default) asked for their models,
//! each listed with the models it offers or why it did not answer. Picking
//! a model fills the form as choosing its preset and model would. While no
//! provider is configured, the search runs by itself when the panel opens.

use leptos::prelude::*;

use super::api::FindLocalModels;
use crate::runtime::llm::{LocalOutcome, LocalServer};

/// A model picked from the search: what the form's fields become.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LocalPick {
    pub provider: String,
    pub base_url: String,
    pub model: String,
}

#[component]
pub fn LocalModels(
    open: RwSignal<bool>,
    /// Search once, by itself, the first time the panel is open.
    search_at_once: bool,
    on_pick: Callback<LocalPick>,
) -> impl IntoView {
    let search = ServerAction::<FindLocalModels>::new();
    let searched = StoredValue::new(false);
    let find = move || {
        searched.set_value(true);
        search.dispatch(FindLocalModels {});
    };
    // Effects run in the browser only: the addresses are asked when someone
    // looks, never while the page renders on the server.
    Effect::new(move |_| {
        if search_at_once && open.get() && !searched.get_value() {
            find();
        }
    });
    let results = move || {
        search.value().get().map(|result| match result {
            Ok(servers) => view! { <Found servers on_pick /> }.into_any(),
            Err(e) => {
                view! { <p class="settings-problem" role="alert">{e.to_string()}</p> }.into_any()
            }
        })
    };
    view! {
        <div class="local-models" data-testid="local-models">
            <button
                type="button"
                class="link-button"
                data-testid="find-local-models"
                disabled=move || search.pending().get()
                on:click=move |_| find()
            >
                {move || {
                    if search.pending().get() {
                        "Looking for local models…"
                    } else {
                        "Find local models"
                    }
                }}
            </button>
            {results}
        </div>
    }
}

/// What the search came to, above the list of every address tried.
fn summary(servers: &[LocalServer]) -> &'static str {
    let any_model = servers
        .iter()
        .any(|s| matches!(&s.outcome, LocalOutcome::Answered { models } if !models.is_empty()));
    if any_model {
        "Pick a model, then Save."
    } else {
        "No local model server offered a model. Addresses tried:"
    }
}

/// Every address tried, in the configured order.
#[component]
fn Found(servers: Vec<LocalServer>, on_pick: Callback<LocalPick>) -> impl IntoView {
    let summary = summary(&servers);
    view! {
        <p class="settings-hint" role="status" data-testid="local-models-summary">
            {summary}
        </p>
        <ul class="local-servers">
            {servers
                .into_iter()
                .map(|server| view! { <Server server on_pick /> })
                .collect_view()}
        </ul>
    }
}

#[component]
fn Server(server: LocalServer, on_pick: Callback<LocalPick>) -> impl IntoView {
    let LocalServer {
        label,
        address,
        base_url,
        preset,
        outcome,
    } = server;
    let answered = matches!(outcome, LocalOutcome::Answered { .. });
    let body = match outcome {
        LocalOutcome::Answered { models } if models.is_empty() => {
            view! { <span class="local-server-why">"answered, but lists no model"</span> }
                .into_any()
        }
        LocalOutcome::Answered { models } => view! {
            <ul class="local-server-models">
                {models
                    .into_iter()
                    .map(|model| {
                        let pick = LocalPick {
                            provider: preset.clone(),
                            base_url: base_url.clone(),
                            model: model.clone(),
                        };
                        view! {
                            <li>
                                <button
                                    type="button"
                                    class="link-button"
                                    data-testid="local-model"
                                    on:click=move |_| on_pick.run(pick.clone())
                                >
                                    {model}
                                </button>
                            </li>
                        }
                    })
                    .collect_view()}
            </ul>
        }
        .into_any(),
        LocalOutcome::NoAnswer { reason } => {
            view! { <span class="local-server-why">{reason.to_string()}</span> }.into_any()
        }
    };
    view! {
        <li class="local-server" class:answered=answered data-testid="local-server">
            <span class="local-server-name">{label} " " <code>{address}</code></span>
            {body}
        </li>
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::llm::NoAnswer;

    fn server(outcome: LocalOutcome) -> LocalServer {
        LocalServer {
            label: "Ollama".into(),
            address: "http://127.0.0.1:11434".into(),
            base_url: "http://127.0.0.1:11434/v1".into(),
            preset: "ollama".into(),
            outcome,
        }
    }

    #[test]
    fn the_summary_says_whether_any_model_was_found() {
        let refused = server(LocalOutcome::NoAnswer {
            reason: NoAnswer::Refused,
        });
        let empty = server(LocalOutcome::Answered { models: vec![] });
        let one = server(LocalOutcome::Answered {
            models: vec!["llama3.2".into()],
        });
        assert!(summary(&[refused.clone(), empty.clone()]).starts_with("No local model"));
        assert_eq!(summary(&[refused, empty, one]), "Pick a model, then Save.");
        assert!(summary(&[]).starts_with("No local model"));
    }
}
