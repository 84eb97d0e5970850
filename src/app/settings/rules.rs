//! The rules the model is given with every request: the app-wide ones
//! (kept in the settings) and, in a project, its `AGENTS.md`.

use leptos::prelude::*;
use leptos::server_fn::codec::Json;

use crate::app::context::CurrentProject;
use crate::app::error::RivetError;
use crate::runtime::project::ProjectId;
use crate::runtime::session::RulesSettings;

#[server(endpoint = "get_rules")]
pub async fn get_rules(project: Option<ProjectId>) -> Result<RulesSettings, RivetError> {
    let state = expect_context::<crate::server::state::AppState>();
    Ok(crate::server::session::rules::settings(&state, project.as_ref()).await?)
}

/// Saves the app-wide rules and, with a project, its rules file.
#[server(endpoint = "save_rules", input = Json)]
pub async fn save_rules(
    app: String,
    project: Option<(ProjectId, String)>,
) -> Result<RulesSettings, RivetError> {
    let state = expect_context::<crate::server::state::AppState>();
    let project = project.as_ref().map(|(id, text)| (id, text.clone()));
    Ok(crate::server::session::rules::save(&state, &app, project).await?)
}

#[component]
pub fn RulesSetting(open: RwSignal<bool>) -> impl IntoView {
    let project = use_context::<CurrentProject>().map(|p| p.0);
    let save = ServerAction::<SaveRules>::new();
    let asked = project.clone();
    // Read when the panel opens, so a file edited meanwhile is shown as it is.
    let current = Resource::new(
        move || (open.get(), save.version().get()),
        move |(open, _)| {
            let project = asked.clone();
            async move {
                if open {
                    get_rules(project).await.map(Some)
                } else {
                    Ok(None)
                }
            }
        },
    );
    view! {
        <Transition fallback=|| ()>
            {move || {
                current
                    .get()
                    .and_then(Result::ok)
                    .flatten()
                    .map(|rules| view! { <RulesForm rules project=project.clone() save /> })
            }}
        </Transition>
    }
}

#[component]
fn RulesForm(
    rules: RulesSettings,
    project: Option<ProjectId>,
    save: ServerAction<SaveRules>,
) -> impl IntoView {
    let app = RwSignal::new(rules.app);
    let own = RwSignal::new(rules.project.unwrap_or_default());
    let path = rules.project_path.clone();
    let has_project = project.is_some() && path.is_some();
    let project = StoredValue::new(project);
    let submit = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        save.dispatch(SaveRules {
            app: app.get_untracked(),
            project: project.get_value().map(|id| (id, own.get_untracked())),
        });
    };
    let failed = move || {
        save.value()
            .get()
            .and_then(Result::err)
            .map(|e| e.to_string())
    };
    view! {
        <form class="settings-form settings-rules" on:submit=submit>
            <h3>"Rules"</h3>
            <label>
                <span>"Rules for every project"</span>
                <textarea
                    data-testid="settings-app-rules"
                    rows="4"
                    placeholder="e.g. Use TypeScript. Keep components small."
                    prop:value=move || app.get()
                    on:input:target=move |ev| app.set(ev.target().value())
                ></textarea>
            </label>
            {has_project
                .then(|| {
                    view! {
                        <label>
                            <span>{format!("This project's rules ({})", path.clone().unwrap_or_default())}</span>
                            <textarea
                                data-testid="settings-project-rules"
                                rows="6"
                                prop:value=move || own.get()
                                on:input:target=move |ev| own.set(ev.target().value())
                            ></textarea>
                        </label>
                    }
                })}
            <small class="settings-hint">
                "Every request carries them, in every mode; each answer says which it was given."
            </small>
            <div class="settings-actions">
                <button type="submit" data-testid="settings-rules-save">"Save rules"</button>
                <span class="settings-status" role="status" data-testid="settings-rules-status">
                    {move || failed().unwrap_or_else(|| {
                        if save.version().get() > 0 && !save.pending().get() { "Saved".to_owned() } else { String::new() }
                    })}
                </span>
            </div>
        </form>
    }
}
