//! The provider, base URL and model fields, and saving them.

use leptos::prelude::*;

use super::LlmSettings;
use super::api::ListModels;
use super::format_field::FormatField;
use super::key_field::{KeyField, KeyInput};
use super::local_models::{LocalModels, LocalPick};
use crate::runtime::llm::{LlmSettingsUpdate, PresetInfo, PublicLlmSettings};

fn preset_url(presets: &[PresetInfo], id: &str) -> String {
    presets
        .iter()
        .find(|p| p.id == id)
        .map(|p| p.base_url.clone())
        .unwrap_or_default()
}

#[component]
pub fn LlmForm(settings: PublicLlmSettings, open: RwSignal<bool>) -> impl IntoView {
    let llm = LlmSettings::expect();
    let presets = StoredValue::new(settings.presets.clone());
    let provider = RwSignal::new(settings.provider.clone());
    // The field shows an override only; the preset's own URL is its placeholder.
    let own_url = if settings.base_url == preset_url(&settings.presets, &settings.provider) {
        String::new()
    } else {
        settings.base_url.clone()
    };
    let base_url = RwSignal::new(own_url.clone());
    // What the model list was asked for: the URL once edited, not each keystroke.
    let listed_url = RwSignal::new(own_url);
    let model = RwSignal::new(settings.model.clone());
    let key = KeyInput::new();
    let format = RwSignal::new(settings.format);
    let models = ServerAction::<ListModels>::new();
    // Effects run in the browser only, so the provider is asked for its models
    // when someone looks, never while the page renders on the server.
    Effect::new(move |_| {
        if open.get() && !provider.get().is_empty() {
            models.dispatch(ListModels {
                provider: provider.get(),
                base_url: listed_url.get(),
            });
        }
    });
    let url_placeholder = move || {
        let url = presets.with_value(|p| preset_url(p, &provider.get()));
        if url.is_empty() {
            "https://host/v1".to_owned()
        } else {
            url
        }
    };
    let on_provider = move |id: String| {
        provider.set(id);
        base_url.set(String::new());
        listed_url.set(String::new());
        // A model name belongs to its provider.
        model.set(String::new());
    };
    // A model found on this machine: its preset (or custom) and address, as
    // choosing them by hand would set them.
    let on_pick = Callback::new(move |pick: LocalPick| {
        let own = if presets.with_value(|p| preset_url(p, &pick.provider)) == pick.base_url {
            String::new()
        } else {
            pick.base_url
        };
        provider.set(pick.provider);
        base_url.set(own.clone());
        listed_url.set(own);
        model.set(pick.model);
    });
    let search_at_once = !settings.configured && !settings.demo;
    let submit = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        llm.dispatch(LlmSettingsUpdate {
            provider: provider.get_untracked(),
            base_url: base_url.get_untracked(),
            model: model.get_untracked(),
            key: key.take_update(),
            format: format.get_untracked(),
        });
    };
    let is_demo = move || provider.get() == "demo";
    let saved = settings.clone();
    let saved_notice = settings.key_notice.clone();

    view! {
        <form class="settings-form" on:submit=submit>
            <Show when=move || saved.demo>
                <p class="settings-note" data-testid="settings-demo-note">
                    "Demo: replayed answers, not a live model."
                </p>
            </Show>
            {settings
                .problem
                .clone()
                .map(|problem| view! { <p class="settings-problem" role="status">{problem}</p> })}
            // Said once: for a provider that needs a key it is already the problem.
            {settings
                .key_notice
                .clone()
                .filter(|notice| settings.problem.as_ref() != Some(notice))
                .map(|notice| view! { <p class="settings-problem" role="status">{notice}</p> })}
            <LocalModels open search_at_once on_pick />
            <label>
                <span>"Provider"</span>
                <select
                    data-testid="settings-provider"
                    on:change:target=move |ev| on_provider(ev.target().value())
                >
                    <option value="" selected=move || provider.get().is_empty()>
                        "Choose a provider…"
                    </option>
                    {settings
                        .presets
                        .iter()
                        .map(|p| {
                            let id = p.id.clone();
                            let selected = move || provider.get() == id;
                            view! {
                                <option value=p.id.clone() selected=selected>
                                    {p.label.clone()}
                                </option>
                            }
                        })
                        .collect_view()}
                </select>
            </label>
            <label class:hidden=is_demo>
                <span>"Base URL"</span>
                <input
                    data-testid="settings-base-url"
                    type="url"
                    placeholder=url_placeholder
                    prop:value=move || base_url.get()
                    on:input:target=move |ev| base_url.set(ev.target().value())
                    on:change:target=move |ev| listed_url.set(ev.target().value())
                />
                // For the URL as typed, before it is saved.
                {move || {
                    models
                        .value()
                        .get()
                        .and_then(Result::ok)
                        .and_then(|list| list.key_notice)
                        .filter(|notice| saved_notice.as_ref() != Some(notice))
                        .map(|notice| {
                            view! {
                                <small class="settings-problem" data-testid="settings-key-notice">
                                    {notice}
                                </small>
                            }
                        })
                }}
            </label>
            <label class:hidden=is_demo>
                <span>"Model"</span>
                <input
                    data-testid="settings-model"
                    list="settings-models"
                    placeholder="The first model the provider lists"
                    prop:value=move || model.get()
                    on:input:target=move |ev| model.set(ev.target().value())
                />
                <datalist id="settings-models">
                    {move || {
                        models
                            .value()
                            .get()
                            .and_then(Result::ok)
                            .unwrap_or_default()
                            .models
                            .into_iter()
                            .map(|m| view! { <option value=m.clone()></option> })
                            .collect_view()
                    }}
                </datalist>
            </label>
            <KeyField settings=settings.clone() provider key />
            <FormatField format default_format=settings.default_format />
            <div class="settings-actions">
                <button type="submit" data-testid="settings-save" disabled=move || llm.save.pending().get()>
                    "Save"
                </button>
                <span class="settings-status" data-testid="settings-status" role="status">
                    {move || match llm.save.value().get() {
                        Some(Ok(_)) => "Saved.".to_owned(),
                        Some(Err(e)) => e.to_string(),
                        None => String::new(),
                    }}
                </span>
            </div>
        </form>
    }
}
