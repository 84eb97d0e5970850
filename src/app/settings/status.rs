//! The top bar's word on the model provider: which one answers, that the
//! demo only replays answers, or that none is configured, with the way out.

use leptos::either::EitherOf3;
use leptos::prelude::*;

use super::LlmSettings;
use crate::runtime::llm::{KeyUpdate, LlmSettingsUpdate, PublicLlmSettings};

#[component]
pub fn ProviderStatus(settings_open: RwSignal<bool>) -> impl IntoView {
    let llm = LlmSettings::expect();
    let use_demo = move |_| {
        llm.dispatch(LlmSettingsUpdate {
            provider: "demo".to_owned(),
            base_url: String::new(),
            model: String::new(),
            key: KeyUpdate::Keep,
            format: None,
        });
    };
    let view_for = move |s: PublicLlmSettings| {
        if s.demo {
            EitherOf3::A(view! {
                <span class="llm-status demo" data-testid="llm-status">
                    "Demo: replayed answers, not a live model"
                </span>
            })
        } else if s.configured {
            EitherOf3::B(view! {
                <span class="llm-status" data-testid="llm-status" title=s.key_notice.clone()>
                    {format!("{} · {}", s.provider_label, if s.model.is_empty() { "first listed model" } else { &s.model })}
                </span>
            })
        } else {
            EitherOf3::C(view! {
                <span class="llm-status warning" data-testid="llm-status" title=s.problem.clone()>
                    "No model provider is configured"
                </span>
                <button class="icon-button" data-testid="llm-use-demo" on:click=use_demo>
                    "Demo (scripted answers)"
                </button>
                <button class="icon-button" on:click=move |_| settings_open.set(true)>
                    "Choose a provider"
                </button>
            })
        }
    };
    view! { <Transition fallback=|| ()>{move || llm.current().map(view_for)}</Transition> }
}
