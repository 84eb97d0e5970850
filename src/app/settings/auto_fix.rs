//! The global switch for automatic fixes (each project can say otherwise
//! in its chat).

use leptos::prelude::*;

use crate::app::error::RivetError;

/// Whether automatic fixes are on for projects that did not choose.
#[server(endpoint = "get_auto_fix")]
pub async fn get_auto_fix() -> Result<bool, RivetError> {
    let state = expect_context::<crate::server::state::AppState>();
    Ok(crate::server::session::fix::toggle::global(
        state.llm.settings_file(),
    ))
}

#[server(endpoint = "set_auto_fix")]
pub async fn set_auto_fix(enabled: bool) -> Result<(), RivetError> {
    let state = expect_context::<crate::server::state::AppState>();
    Ok(crate::server::session::fix::toggle::set_global(
        state.llm.settings_file(),
        enabled,
    )?)
}

#[component]
pub fn AutoFixSetting() -> impl IntoView {
    let save = ServerAction::<SetAutoFix>::new();
    let current = Resource::new(move || save.version().get(), |_| get_auto_fix());
    view! {
        <label class="settings-toggle">
            <input
                type="checkbox"
                data-testid="settings-auto-fix"
                prop:checked=move || current.get().and_then(Result::ok).unwrap_or(true)
                on:change:target=move |ev| {
                    save.dispatch(SetAutoFix { enabled: ev.target().checked() });
                }
            />
            "Fix failures automatically (each project can choose otherwise in its chat)"
        </label>
    }
}
