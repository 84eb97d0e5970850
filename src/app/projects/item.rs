//! One row of the project list: its name (a link to the IDE), the time of
//! its last message, Rename (inline) and Delete (after a confirmation).

use leptos::prelude::*;

use super::api::{ProjectSummary, delete_project, rename_project};
use crate::runtime::time::format_utc;

#[component]
pub fn ProjectItem(project: ProjectSummary, on_deleted: Callback<()>) -> impl IntoView {
    let id = project.id.clone();
    let href = format!("/p/{id}");
    let when = format_utc(project.last_activity());
    let name = RwSignal::new(project.name.clone());
    let draft = RwSignal::new(String::new());
    let editing = RwSignal::new(false);
    let confirming = RwSignal::new(false);
    let error = RwSignal::new(None::<String>);

    let rename = Action::new({
        let id = id.clone();
        move |new: &String| rename_project(id.clone(), new.clone())
    });
    let delete = Action::new({
        let id = id.clone();
        move |_: &()| delete_project(id.clone())
    });
    Effect::new(move |_| match rename.value().get() {
        Some(Ok(renamed)) => {
            name.set(renamed.name);
            editing.set(false);
            error.set(None);
        }
        Some(Err(e)) => error.set(Some(e.message)),
        None => {}
    });
    Effect::new(move |_| match delete.value().get() {
        Some(Ok(())) => on_deleted.run(()),
        Some(Err(e)) => error.set(Some(e.message)),
        None => {}
    });
    let save = move || {
        let new = draft.get_untracked().trim().to_owned();
        if new.is_empty() || new == name.get_untracked() {
            editing.set(false);
        } else {
            rename.dispatch(new);
        }
    };

    view! {
        <li class="project-item" data-testid="project-item" data-project=id.to_string()>
            <Show
                when=move || editing.get()
                fallback=move || {
                    view! {
                        <a class="project-name" href=href.clone() rel="external">
                            {move || name.get()}
                        </a>
                    }
                }
            >
                <input
                    class="project-name-input"
                    data-testid="project-rename-input"
                    aria-label="Project name"
                    prop:value=move || draft.get()
                    on:input:target=move |ev| draft.set(ev.target().value())
                    on:keydown=move |ev| match ev.key().as_str() {
                        "Enter" => save(),
                        "Escape" => editing.set(false),
                        _ => {}
                    }
                    on:blur=move |_| save()
                />
            </Show>
            <time class="project-time" title="Last message (UTC)">
                {when.clone()}
            </time>
            <span class="project-actions">
                <button
                    class="secondary"
                    data-testid="project-rename"
                    on:click=move |_| {
                        draft.set(name.get_untracked());
                        editing.set(true);
                    }
                >
                    "Rename"
                </button>
                <button
                    class="secondary danger"
                    data-testid="project-delete"
                    on:click=move |_| confirming.set(true)
                >
                    "Delete"
                </button>
            </span>
            <Show when=move || confirming.get()>
                <div class="project-confirm" role="alertdialog">
                    <span>"Delete this project with its files and conversation? This cannot be undone."</span>
                    <button
                        class="danger"
                        data-testid="project-delete-confirm"
                        disabled=move || delete.pending().get()
                        on:click=move |_| {
                            delete.dispatch(());
                        }
                    >
                        "Delete for good"
                    </button>
                    <button class="secondary" on:click=move |_| confirming.set(false)>
                        "Cancel"
                    </button>
                </div>
            </Show>
            <Show when=move || error.with(Option::is_some)>
                <p class="project-error" role="alert">
                    {move || error.get().unwrap_or_default()}
                </p>
            </Show>
        </li>
    }
}
