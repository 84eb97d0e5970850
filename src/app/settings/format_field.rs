//! How the chosen model gives its files and commands in Build mode: bolt
//! tags, tool calls, or tags until it slips twice; or as configured.

use leptos::prelude::*;

use crate::runtime::llm::ActionFormat;

#[component]
pub fn FormatField(
    /// The choice for the provider and model being saved; `None` follows
    /// the configuration.
    format: RwSignal<Option<ActionFormat>>,
    /// The configuration's format (`[llm] format`).
    default_format: ActionFormat,
) -> impl IntoView {
    let on_change = move |value: String| format.set(ActionFormat::parse(&value));
    view! {
        <label>
            <span>"Answer format for this model"</span>
            <select
                data-testid="settings-format"
                on:change:target=move |ev| on_change(ev.target().value())
            >
                <option value="" selected=move || format.get().is_none()>
                    {format!("As configured: {}", default_format.describe())}
                </option>
                {ActionFormat::ALL
                    .into_iter()
                    .map(|choice| {
                        let selected = move || format.get() == Some(choice);
                        view! {
                            <option value=choice.as_str() selected=selected>
                                {choice.describe()}
                            </option>
                        }
                    })
                    .collect_view()}
            </select>
            <small>
                "Small local models that write code in the chat instead of files often do better with tool calls."
            </small>
        </label>
    }
}
