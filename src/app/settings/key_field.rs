//! The API key field: write-only. It shows whether a key is set for the
//! chosen provider, takes a new one, or clears the stored one.

use leptos::prelude::*;

use crate::runtime::llm::{KeyUpdate, PublicLlmSettings};

/// What the user typed into the key field, or asked for.
#[derive(Clone, Copy)]
pub struct KeyInput {
    new_key: RwSignal<String>,
    clear: RwSignal<bool>,
}

impl KeyInput {
    pub fn new() -> KeyInput {
        KeyInput {
            new_key: RwSignal::new(String::new()),
            clear: RwSignal::new(false),
        }
    }

    /// The change to send, and the field emptied: the key is not kept in
    /// the page once sent.
    pub fn take_update(&self) -> KeyUpdate {
        let typed = self.new_key.get_untracked();
        let update = if !typed.trim().is_empty() {
            KeyUpdate::Set(typed)
        } else if self.clear.get_untracked() {
            KeyUpdate::Clear
        } else {
            KeyUpdate::Keep
        };
        self.new_key.set(String::new());
        self.clear.set(false);
        update
    }
}

#[component]
pub fn KeyField(
    settings: PublicLlmSettings,
    provider: RwSignal<String>,
    key: KeyInput,
) -> impl IntoView {
    let presets = StoredValue::new(settings.presets.clone());
    let keys_set = StoredValue::new(settings.keys_set.clone());
    let needs_key = move || {
        let id = provider.get();
        presets.with_value(|p| p.iter().find(|p| p.id == id).map(|p| p.needs_key))
    };
    let has_key = move || keys_set.with_value(|k| k.contains(&provider.get()));
    let env_hint = move || {
        let id = provider.get();
        presets
            .with_value(|p| {
                p.iter()
                    .find(|p| p.id == id)
                    .and_then(|p| p.key_env.clone())
            })
            .map(|var| format!(" It can also come from {var}."))
            .unwrap_or_default()
    };
    let status = move || {
        if key.clear.get() {
            "will be cleared on Save"
        } else if has_key() {
            "set"
        } else if needs_key() == Some(false) {
            "not set (optional)"
        } else {
            "not set"
        }
    };
    // The demo provider takes no key; local servers usually need none.
    let hidden = move || provider.get() == "demo" || provider.get().is_empty();

    view! {
        <label class:hidden=hidden>
            <span>
                "API key: "
                <strong data-testid="settings-key-status">{status}</strong>
            </span>
            <input
                data-testid="settings-api-key"
                type="password"
                autocomplete="off"
                placeholder=move || if has_key() { "Type a new key to replace it" } else { "Paste the key" }
                prop:value=move || key.new_key.get()
                on:input:target=move |ev| key.new_key.set(ev.target().value())
            />
            <small class="settings-hint">
                "The key stays on the server; this page never receives it."
                {env_hint}
            </small>
        </label>
        <Show when=move || has_key() && !hidden()>
            <button
                type="button"
                class="link-button"
                data-testid="settings-clear-key"
                on:click=move |_| key.clear.set(true)
            >
                "Clear the stored key"
            </button>
        </Show>
    }
}
