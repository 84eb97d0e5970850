//! The project's own switch for automatic fixes; until the person uses it,
//! it shows the global setting.

use leptos::prelude::*;

use crate::app::context::CurrentProject;
use crate::app::error::RivetError;
use crate::app::session::SessionStore;
use crate::app::settings::auto_fix::get_auto_fix;
use crate::runtime::project::ProjectId;

/// Sets automatic fixes on or off for one project.
#[server(endpoint = "set_project_auto_fix")]
pub async fn set_project_auto_fix(project: ProjectId, enabled: bool) -> Result<(), RivetError> {
    let state = expect_context::<crate::server::state::AppState>();
    Ok(crate::server::session::fix::toggle::set_project(&state, &project, enabled).await?)
}

#[component]
pub fn ProjectAutoFix() -> impl IntoView {
    let store = expect_context::<SessionStore>();
    let project = expect_context::<CurrentProject>().0;
    let global = Resource::new(|| (), |_| get_auto_fix());
    let set = Action::new(move |enabled: &bool| set_project_auto_fix(project.clone(), *enabled));
    let checked = move || {
        store.alerts.track();
        let own = store.with(|s| s.auto_fix);
        own.unwrap_or_else(|| global.get().and_then(Result::ok).unwrap_or(true))
    };
    view! {
        <label class="auto-fix" title="Send failures to the model by itself">
            <input
                type="checkbox"
                data-testid="project-auto-fix"
                prop:checked=checked
                on:change:target=move |ev| {
                    set.dispatch(ev.target().checked());
                }
            />
            "Auto-fix"
        </label>
    }
}
