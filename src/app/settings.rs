//! The settings panel: which model provider the IDE asks, with which model
//! and key. API keys stay on the server; the panel only learns whether one
//! is set.

mod api;
pub mod auto_fix;
mod form;
mod format_field;
mod git_remote;
mod key_field;
mod local_models;
mod mcp;
mod publish;
mod rules;
mod secrets;
mod status;

use leptos::either::Either;
use leptos::prelude::*;

use api::{get_ide_info, get_llm_settings};
pub use status::ProviderStatus;

use crate::runtime::llm::PublicLlmSettings;
use form::LlmForm;

/// The LLM settings as the page knows them, shared by the panel, the top
/// bar's provider status and the chat. Saving (from anywhere) reloads them.
#[derive(Clone, Copy)]
pub struct LlmSettings {
    pub settings: Resource<Result<PublicLlmSettings, crate::app::error::RivetError>>,
    pub save: ServerAction<api::SaveLlmSettings>,
}

impl LlmSettings {
    /// Loads the settings for the page and shares them.
    pub fn provide() -> LlmSettings {
        let save = ServerAction::<api::SaveLlmSettings>::new();
        let this = LlmSettings {
            settings: Resource::new(move || save.version().get(), |_| get_llm_settings()),
            save,
        };
        provide_context(this);
        this
    }

    /// Saves a change; the settings reload when it is done.
    pub fn dispatch(&self, update: crate::runtime::llm::LlmSettingsUpdate) {
        self.save.dispatch(api::SaveLlmSettings { update });
    }

    pub fn expect() -> LlmSettings {
        expect_context()
    }

    /// The settings, once loaded.
    pub fn current(&self) -> Option<PublicLlmSettings> {
        self.settings.get().and_then(Result::ok)
    }
}

#[component]
pub fn SettingsPanel(open: RwSignal<bool>) -> impl IntoView {
    let llm = LlmSettings::expect();
    let info = Resource::new(|| (), |_| get_ide_info());
    view! {
        <aside
            class="settings"
            data-testid="settings"
            aria-label="Settings"
            class:open=move || open.get()
        >
            <h2>"Settings"</h2>
            <super::runtime_choice::RuntimeSetting />
            <Transition fallback=|| view! { <p>"Loading…"</p> }>
                {move || {
                    llm.settings
                        .get()
                        .map(|result| match result {
                            Ok(s) => Either::Left(view! { <LlmForm settings=s open /> <auto_fix::AutoFixSetting /> <rules::RulesSetting open /> <secrets::SecretsSetting open /> <git_remote::GitRemoteSetting open /> <publish::PublishSetting open /> <mcp::McpSetting open /> }),
                            Err(e) => Either::Right(view! { <p role="alert">{e.to_string()}</p> }),
                        })
                }}
                {move || {
                    info.get()
                        .and_then(Result::ok)
                        .map(|info| {
                            view! {
                                <dl class="settings-list">
                                    <dt>"Runtime of new projects"</dt>
                                    <dd>{info.runtime}</dd>
                                    <dt>"Data directory"</dt>
                                    <dd>{info.data_dir}</dd>
                                </dl>
                            }
                        })
                }}
            </Transition>
        </aside>
    }
}
