//! The composer's model picker: the next message is answered by the model
//! picked here, from the provider's list, or by the configured one. The
//! list is asked for when the picker is first opened, not on page load.

use leptos::prelude::*;

use crate::app::api::answer_models;

#[component]
pub fn ModelPick(
    /// The picked model; empty for the configured one.
    model: RwSignal<String>,
) -> impl IntoView {
    let load = Action::new(|_: &()| answer_models());
    let ask_once = move || {
        if load.version().get_untracked() == 0 && !load.pending().get_untracked() {
            load.dispatch(());
        }
    };
    let listed = move || load.value().get().and_then(Result::ok).unwrap_or_default();
    view! {
        <select
            class="composer-model"
            data-testid="composer-model"
            aria-label="Model for the next message"
            title="Model for the next message"
            on:focus=move |_| ask_once()
            on:pointerdown=move |_| ask_once()
            on:change:target=move |ev| model.set(ev.target().value())
        >
            <option value="" selected=move || model.get().is_empty()>
                "Configured model"
            </option>
            {move || {
                listed()
                    .into_iter()
                    .map(|name| {
                        let selected = {
                            let name = name.clone();
                            move || model.get() == name
                        };
                        view! { <option value=name.clone() selected=selected>{name.clone()}</option> }
                    })
                    .collect_view()
            }}
        </select>
    }
}
