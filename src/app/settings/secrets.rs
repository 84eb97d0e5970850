//! The project's app secrets: environment variables its processes get.
//! The panel lists their names; a value is typed once, sent to the server
//! and never shown or sent back again.

use leptos::prelude::*;

use crate::app::context::CurrentProject;
use crate::app::error::RivetError;
use crate::runtime::project::ProjectId;

#[server(endpoint = "list_secrets")]
pub async fn list_secrets(project: ProjectId) -> Result<Vec<String>, RivetError> {
    let state = expect_context::<crate::server::state::AppState>();
    Ok(crate::server::session::secrets::names(&state, &project).await?)
}

#[server(endpoint = "set_secret")]
pub async fn set_secret(
    project: ProjectId,
    name: String,
    value: String,
) -> Result<Vec<String>, RivetError> {
    let state = expect_context::<crate::server::state::AppState>();
    Ok(crate::server::session::secrets::set(&state, &project, &name, &value).await?)
}

#[server(endpoint = "remove_secret")]
pub async fn remove_secret(project: ProjectId, name: String) -> Result<Vec<String>, RivetError> {
    let state = expect_context::<crate::server::state::AppState>();
    Ok(crate::server::session::secrets::remove(&state, &project, &name).await?)
}

/// The secrets section, in a project only.
#[component]
pub fn SecretsSetting(open: RwSignal<bool>) -> impl IntoView {
    use_context::<CurrentProject>().map(|current| view! { <SecretsForm project=current.0 open /> })
}

#[component]
fn SecretsForm(project: ProjectId, open: RwSignal<bool>) -> impl IntoView {
    let set = ServerAction::<SetSecret>::new();
    let remove = ServerAction::<RemoveSecret>::new();
    let project = StoredValue::new(project);
    let names = Resource::new(
        move || (open.get(), set.version().get(), remove.version().get()),
        move |(open, _, _)| async move {
            if open {
                list_secrets(project.get_value()).await
            } else {
                Ok(Vec::new())
            }
        },
    );
    let (name, value) = (RwSignal::new(String::new()), RwSignal::new(String::new()));
    let submit = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        set.dispatch(SetSecret {
            project: project.get_value(),
            name: name.get_untracked().trim().to_owned(),
            value: value.get_untracked(),
        });
    };
    // The value leaves the page once it is kept.
    Effect::new(move || {
        if matches!(set.value().get(), Some(Ok(_))) {
            name.set(String::new());
            value.set(String::new());
        }
    });
    let failed = move || {
        let error = |v: Option<Result<Vec<String>, RivetError>>| v.and_then(Result::err);
        error(set.value().get())
            .or_else(|| error(remove.value().get()))
            .map(|e| e.to_string())
    };
    let listed = move || {
        names.get().and_then(Result::ok).unwrap_or_default().into_iter().map(|secret| {
            let gone = secret.clone();
            let on_remove = move |_| {
                remove.dispatch(RemoveSecret { project: project.get_value(), name: gone.clone() });
            };
            view! {
                <li data-testid="settings-secret">
                    <code>{secret}</code>
                    <button type="button" data-testid="settings-secret-remove" on:click=on_remove>"Remove"</button>
                </li>
            }
        }).collect_view()
    };
    view! {
        <form class="settings-form settings-secrets" on:submit=submit>
            <h3>"Secrets"</h3>
            <ul class="settings-secret-list">
                <Transition fallback=|| ()>{listed}</Transition>
            </ul>
            <label>
                <span>"Name"</span>
                <input data-testid="settings-secret-name" placeholder="STRIPE_KEY" autocomplete="off"
                    prop:value=move || name.get() on:input:target=move |ev| name.set(ev.target().value()) />
            </label>
            <label>
                <span>"Value"</span>
                <input data-testid="settings-secret-value" type="password" autocomplete="off"
                    prop:value=move || value.get() on:input:target=move |ev| value.set(ev.target().value()) />
            </label>
            <small class="settings-hint">
                "The project's commands, terminals and dev servers get these as environment variables. The model is told the names only; values are masked in the output and kept out of exports."
            </small>
            <div class="settings-actions">
                <button type="submit" data-testid="settings-secret-add">"Set secret"</button>
                <span class="settings-status" role="status" data-testid="settings-secrets-status">
                    {move || failed().unwrap_or_default()}
                </span>
            </div>
        </form>
    }
}
