//! The projects page at `/`: every project, the latest changed first, with
//! the time of its last message; search by name or message text, rename,
//! delete (after a confirmation) and "New project", empty or from a
//! starter template.

pub mod api;
mod item;

use leptos::prelude::*;

use api::{ProjectSummary, list_projects};
use item::ProjectItem;

#[component]
pub fn ProjectsPage() -> impl IntoView {
    let search = RwSignal::new(String::new());
    // Bumped to load the list again (after a delete).
    let reloads = RwSignal::new(0_u32);
    let projects = Resource::new(
        move || (search.get(), reloads.get()),
        |(search, _)| list_projects(search),
    );
    let on_deleted = Callback::new(move |()| reloads.update(|n| *n += 1));
    // Effects only run in the browser: marks the page as hydrated for tests.
    Effect::new(|_| {
        if let Some(body) = document().body() {
            let _ = body.set_attribute("data-hydrated", "true");
        }
    });

    view! {
        <main class="projects-page">
            <header class="topbar">
                <a class="brand" href="/" rel="external">"Rivet"</a>
                <span class="spacer"></span>
                // A post, not a link: following a link never creates anything.
                <form class="new-project-form" method="post" action="/new">
                    <TemplateChoice />
                    <button type="submit" class="icon-button primary" data-testid="new-project">
                        "New project"
                    </button>
                </form>
            </header>
            <section class="projects-body">
                <h1>"Projects"</h1>
                <input
                    type="search"
                    class="project-search"
                    data-testid="project-search"
                    aria-label="Search projects"
                    placeholder="Search by name or message…"
                    prop:value=move || search.get()
                    on:input:target=move |ev| search.set(ev.target().value())
                />
                <details class="projects-import" data-testid="projects-import">
                    <summary>"Import a project (zip, folder, git URL or conversation)"</summary>
                    <crate::app::transfer::ImportPanel />
                </details>
                <Transition fallback=|| view! { <p class="muted">"Loading projects…"</p> }>
                    {move || {
                        projects
                            .get()
                            .map(|result| match result {
                                Ok(list) => view! { <ProjectList list on_deleted /> }.into_any(),
                                Err(e) => {
                                    view! { <p class="project-error" role="alert">{e.message}</p> }
                                        .into_any()
                                }
                            })
                    }}
                </Transition>
            </section>
        </main>
    }
}

/// The template "New project" starts from: none (an empty project) or
/// one of `runtime::templates` (only their names reach the browser).
#[component]
fn TemplateChoice() -> impl IntoView {
    view! {
        <select
            name="template"
            class="new-project-template"
            data-testid="new-project-template"
            aria-label="Start from"
        >
            <option value="" selected>
                "Empty project"
            </option>
            {crate::runtime::templates::ALL
                .iter()
                .map(|t| view! { <option value=t.id title=t.description>{t.name}</option> })
                .collect_view()}
        </select>
    }
}

#[component]
fn ProjectList(list: Vec<ProjectSummary>, on_deleted: Callback<()>) -> impl IntoView {
    if list.is_empty() {
        return view! {
            <p class="muted" data-testid="project-list">
                "No projects yet. Start one with “New project”."
            </p>
        }
        .into_any();
    }
    view! {
        <ul class="project-list" data-testid="project-list">
            {list
                .into_iter()
                .map(|project| view! { <ProjectItem project on_deleted /> })
                .collect_view()}
        </ul>
    }
    .into_any()
}
