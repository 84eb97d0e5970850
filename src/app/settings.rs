//! The settings panel: how the IDE is configured. API keys stay on the
//! server; the panel only learns whether one is set.

use leptos::prelude::*;
use serde::{Deserialize, Serialize};

/// What the browser may know about the configuration.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PublicSettings {
    pub provider: String,
    pub base_url: String,
    pub model: String,
    pub runtime: String,
    pub data_dir: String,
}

#[server]
pub async fn get_settings() -> Result<PublicSettings, ServerFnError> {
    let state = expect_context::<crate::server::state::AppState>();
    let config = &state.config;
    Ok(PublicSettings {
        provider: config.llm.provider.clone(),
        base_url: config.llm.base_url.clone(),
        model: config.llm.model.clone(),
        runtime: format!("{:?}", config.runtime.default).to_lowercase(),
        data_dir: config.server.data_dir.display().to_string(),
    })
}

#[component]
pub fn SettingsPanel(open: RwSignal<bool>) -> impl IntoView {
    let settings = Resource::new(|| (), |_| get_settings());
    view! {
        <aside class="settings" data-testid="settings" aria-label="Settings" class:open=move || open.get()>
            <h2>"Settings"</h2>
            <Transition fallback=|| view! { <p>"Loading…"</p> }>
                {move || {
                    settings
                        .get()
                        .map(|result| match result {
                            Ok(s) => view! { <SettingsView settings=s /> }.into_any(),
                            Err(e) => view! { <p role="alert">{e.to_string()}</p> }.into_any(),
                        })
                }}
            </Transition>
        </aside>
    }
}

#[component]
fn SettingsView(settings: PublicSettings) -> impl IntoView {
    let or_unset = |value: String| {
        if value.is_empty() {
            "(not set)".to_owned()
        } else {
            value
        }
    };
    view! {
        <dl class="settings-list">
            <dt>"Provider"</dt>
            <dd>{or_unset(settings.provider)}</dd>
            <dt>"Base URL"</dt>
            <dd>{or_unset(settings.base_url)}</dd>
            <dt>"Model"</dt>
            <dd>{or_unset(settings.model)}</dd>
            <dt>"Runtime"</dt>
            <dd>{settings.runtime}</dd>
            <dt>"Data directory"</dt>
            <dd>{settings.data_dir}</dd>
        </dl>
    }
}
