//! The IDE page: chat on the left, the workbench on the right, each boundary
//! draggable.

use leptos::prelude::*;

use crate::app::lazy::{self, lazy_view};

use super::chat::ChatPane;
use super::context::CurrentProject;
use super::editor::EditorPane;
use super::file_tree::FileTree;
use super::preview::PreviewPane;
use super::runtime_choice::{RuntimeChoice, RuntimeError, RuntimeStatus};
use super::session::SessionStore;
use super::settings::{LlmSettings, ProviderStatus, SettingsPanel};
use super::splitter::{Axis, Splitter};
use super::terminal::TerminalPane;
use super::transfer::ExportMenu;
use super::workbench::Workbench;
use crate::runtime::project::ProjectId;

/// Pane sizes in pixels; the remaining space goes to the editor.
#[derive(Clone, Copy)]
struct Layout {
    chat: RwSignal<f64>,
    tree: RwSignal<f64>,
    preview: RwSignal<f64>,
    terminal: RwSignal<f64>,
}

#[component]
pub fn Ide(project: ProjectId) -> impl IntoView {
    RuntimeChoice::provide(project.clone());
    provide_context(CurrentProject(project.clone()));
    provide_context(super::context::Attaching::new());
    let workbench = Workbench::new(Some(project.clone()));
    provide_context(workbench);
    let store = SessionStore::new(workbench);
    provide_context(store);
    #[cfg(feature = "hydrate")]
    super::session::follow(store, project);
    view! { <Workspace /> }
}

#[component]
fn Workspace() -> impl IntoView {
    let layout = Layout {
        chat: RwSignal::new(340.0),
        tree: RwSignal::new(190.0),
        preview: RwSignal::new(400.0),
        terminal: RwSignal::new(220.0),
    };
    // Whole pixels, printed as integers: formatting an `f64` would pull the
    // float printing code into the WASM bundle for this one string.
    let px = |size: RwSignal<f64>| size.get().round() as i64;
    let style = move || {
        format!(
            "--chat-w:{}px;--tree-w:{}px;--preview-w:{}px;--terminal-h:{}px",
            px(layout.chat),
            px(layout.tree),
            px(layout.preview),
            px(layout.terminal)
        )
    };
    let settings_open = RwSignal::new(false);
    LlmSettings::provide();
    // The settings' code loads when they are first opened, if the browser has
    // not fetched it yet.
    Effect::new(move |_| {
        if settings_open.get() {
            lazy::load_now();
        }
    });

    view! {
        <div class="ide" style=style>
            <header class="topbar">
                <a class="brand" href="/" rel="external" title="All projects">
                    "Rivet"
                </a>
                <a class="icon-button" href="/" rel="external" data-testid="projects-link">
                    "Projects"
                </a>
                <span class="spacer"></span>
                {ide_part(IdePart::ExportMenu)}
                <RuntimeStatus />
                <ProviderStatus settings_open />
                <button
                    class="icon-button"
                    data-testid="settings-toggle"
                    aria-expanded=move || settings_open.get().to_string()
                    on:click=move |_| settings_open.update(|open| *open = !*open)
                >
                    "Settings"
                </button>
            </header>
            <p
                class="pane-loading settings-loading"
                data-testid="settings-loading"
                hidden=move || !settings_open.get()
            >
                "Loading the settings…"
            </p>
            {ide_part(IdePart::Settings(settings_open))}
            {ide_part(IdePart::RuntimeError)}
            <div class="panes">
                <ChatPane />
                <Splitter axis=Axis::Columns size=layout.chat min=260.0 max=900.0 />
                <section class="workbench" aria-label="Workbench">
                    <p class="pane-loading workbench-loading" data-testid="workbench-loading">
                        "Loading the editor, preview and terminal…"
                    </p>
                    {ide_part(IdePart::Workbench(layout))}
                </section>
            </div>
        </div>
    }
}

/// A part of the IDE page out of the first load. The parts load together
/// once the chat is usable (`lazy.rs`), so they share one split point,
/// [`load_ide_part`], as the chat's do (`chat/part.rs` says why).
enum IdePart {
    ExportMenu,
    Settings(RwSignal<bool>),
    RuntimeError,
    /// The file tree, editor, preview and terminal; Monaco and xterm.js
    /// follow when their panes mount.
    Workbench(Layout),
}

/// Shows `part` where it is placed, once the IDE's module has loaded.
fn ide_part(part: IdePart) -> impl IntoView {
    lazy_view(move || load_ide_part(part))
}

#[leptos::lazy]
fn load_ide_part(part: IdePart) -> AnyView {
    match part {
        IdePart::ExportMenu => view! { <ExportMenu /> }.into_any(),
        IdePart::Settings(open) => view! { <SettingsPanel open /> }.into_any(),
        IdePart::RuntimeError => view! { <RuntimeError /> }.into_any(),
        IdePart::Workbench(layout) => view! { <WorkbenchPanes layout /> }.into_any(),
    }
}

#[component]
fn WorkbenchPanes(layout: Layout) -> impl IntoView {
    // Effects only run in the browser, so this marks the page as hydrated
    // (the chat and, last, the workbench) for tests and scripts that drive
    // the UI.
    Effect::new(|_| {
        if let Some(body) = document().body() {
            let _ = body.set_attribute("data-hydrated", "true");
        }
    });
    view! {
        <div class="workbench-top">
            <FileTree />
            <Splitter axis=Axis::Columns size=layout.tree min=140.0 max=600.0 />
            <EditorPane />
            <Splitter
                axis=Axis::Columns
                size=layout.preview
                min=240.0
                max=1400.0
                inverted=true
            />
            <PreviewPane />
        </div>
        <Splitter
            axis=Axis::Rows
            size=layout.terminal
            min=80.0
            max=900.0
            inverted=true
        />
        <TerminalPane />
    }
}
