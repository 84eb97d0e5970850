//! Import and export in the UI: [`ExportMenu`] in the IDE's top bar (the
//! project's files as a zip, its conversation as JSON) and [`ImportPanel`],
//! a self-contained form that makes a new project from a zip or a
//! conversation JSON, a folder (picked or dropped) or a git URL through the
//! HTTP API (`docs/api.md`), then opens it at `/p/<id>`.

#[cfg(feature = "hydrate")]
mod dropped;
#[cfg(feature = "hydrate")]
mod upload;

use leptos::prelude::*;

use super::context::CurrentProject;

/// The current project's downloads.
#[component]
pub fn ExportMenu() -> impl IntoView {
    let Some(CurrentProject(id)) = use_context::<CurrentProject>() else {
        return ().into_any();
    };
    let zip = format!("/api/v1/projects/{}/export.zip", id.as_str());
    let with_data = format!("{zip}?data=1");
    let json = format!("/api/v1/projects/{}/conversation.json", id.as_str());
    view! {
        <details class="export-menu">
            <summary class="icon-button" data-testid="export-menu">"Export"</summary>
            <div class="export-menu-items" role="menu">
                <a role="menuitem" href=zip download="" data-testid="export-zip">
                    "Project files (.zip)"
                </a>
                <a role="menuitem" href=with_data download="" data-testid="export-zip-data"
                    title="The files, and the database's data as rivet-database.sql (pg_dump)">
                    "Files and database data (.zip)"
                </a>
                <a role="menuitem" href=json download="" data-testid="export-json">
                    "Conversation (.json)"
                </a>
            </div>
        </details>
    }
    .into_any()
}

/// What the person picked, as the panel shows it.
#[derive(Clone, Debug, PartialEq)]
enum Picked {
    Nothing,
    /// A zip or a conversation JSON, by file name.
    Archive(String),
    /// A folder's files, by count.
    Folder(usize),
}

/// The files behind [`Picked`] (browser objects, kept on this thread).
#[derive(Default)]
struct Chosen {
    archive: Option<web_sys::File>,
    folder: Vec<(String, web_sys::File)>,
}

thread_local! {
    static CHOSEN: std::cell::RefCell<Chosen> = std::cell::RefCell::default();
}

/// The page's one [`Chosen`], in a thread-local rather than the reactive
/// owner: the server renders the panel on one thread and may clean its
/// owner up on another, where a value holding browser objects must not be
/// dropped.
#[derive(Clone, Copy)]
struct ChosenFiles;

impl ChosenFiles {
    /// Forgets what an earlier panel chose.
    fn fresh() -> ChosenFiles {
        CHOSEN.with(|c| *c.borrow_mut() = Chosen::default());
        ChosenFiles
    }

    fn update_value(self, f: impl FnOnce(&mut Chosen)) {
        CHOSEN.with(|c| f(&mut c.borrow_mut()));
    }

    #[cfg_attr(not(feature = "hydrate"), allow(dead_code))]
    fn with_value<T>(self, f: impl FnOnce(&Chosen) -> T) -> T {
        CHOSEN.with(|c| f(&c.borrow()))
    }
}

/// The form that makes a new project from something outside.
#[component]
pub fn ImportPanel() -> impl IntoView {
    let name = RwSignal::new(String::new());
    let git_url = RwSignal::new(String::new());
    let picked = RwSignal::new(Picked::Nothing);
    let error = RwSignal::new(None::<String>);
    let busy = RwSignal::new(false);
    let dragging = RwSignal::new(false);
    let chosen = ChosenFiles::fresh();
    // `webkitdirectory` makes the picker choose a folder (set once hydrated).
    let folder_input = NodeRef::<leptos::html::Input>::new();
    Effect::new(move |_| {
        if let Some(input) = folder_input.get() {
            input.set_webkitdirectory(true);
        }
    });

    let summary = move || match picked.get() {
        Picked::Nothing => "Nothing picked yet.".to_owned(),
        Picked::Archive(file) => format!("Picked {file}."),
        Picked::Folder(count) => format!("Picked a folder of {count} files."),
    };
    let on_archive = move |ev: leptos::ev::Event| {
        let input: web_sys::HtmlInputElement = event_target(&ev);
        if let Some(file) = input.files().and_then(|files| files.get(0)) {
            picked.set(Picked::Archive(file.name()));
            chosen.update_value(|c| {
                c.archive = Some(file);
                c.folder.clear();
            });
        }
    };
    let on_folder = move |ev: leptos::ev::Event| {
        let input: web_sys::HtmlInputElement = event_target(&ev);
        let files = folder_files(&input);
        picked.set(Picked::Folder(files.len()));
        chosen.update_value(|c| {
            c.archive = None;
            c.folder = files;
        });
    };
    let on_drop = move |ev: leptos::ev::DragEvent| {
        ev.prevent_default();
        dragging.set(false);
        drop_files(&ev, picked, chosen, error);
    };
    let on_submit = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        if busy.get_untracked() {
            return;
        }
        error.set(None);
        submit(
            name.get_untracked(),
            git_url.get_untracked(),
            chosen,
            busy,
            error,
        );
    };

    view! {
        <form class="import-panel" on:submit=on_submit aria-label="Import a project">
            <h2>"Import a project"</h2>
            <label class="import-row">
                "Name (optional) "
                <input type="text" prop:value=name on:input=move |ev| name.set(event_target_value(&ev)) />
            </label>
            <div
                class="import-drop"
                class:dragging=dragging
                on:dragover=move |ev: leptos::ev::DragEvent| {
                    ev.prevent_default();
                    dragging.set(true);
                }
                on:dragleave=move |_| dragging.set(false)
                on:drop=on_drop
            >
                <p>"Drop a folder, a .zip or a conversation .json here, or pick one:"</p>
                <label class="import-row">
                    "Zip or conversation JSON "
                    <input type="file" accept=".zip,.json,application/zip,application/json"
                        data-testid="import-zip" on:change=on_archive />
                </label>
                <label class="import-row">
                    "Folder "
                    <input type="file" multiple node_ref=folder_input
                        data-testid="import-folder" on:change=on_folder />
                </label>
                <p class="import-picked">{summary}</p>
            </div>
            <label class="import-row">
                "or a git URL (http or https) "
                <input
                    type="url"
                    placeholder="https://github.com/owner/repo.git"
                    data-testid="import-git-url"
                    prop:value=git_url
                    on:input=move |ev| git_url.set(event_target_value(&ev))
                />
            </label>
            <button type="submit" data-testid="import-submit" disabled=move || busy.get()>
                {move || if busy.get() { "Importing…" } else { "Import" }}
            </button>
            <Show when=move || error.get().is_some()>
                <p class="import-error" role="alert" data-testid="import-error">
                    {move || error.get().unwrap_or_default()}
                </p>
            </Show>
        </form>
    }
}

/// `ImportPanel` on a page of its own (`/import`).
#[component]
pub fn ImportPage() -> impl IntoView {
    Effect::new(|_| {
        if let Some(body) = document().body() {
            let _ = body.set_attribute("data-hydrated", "true");
        }
    });
    view! {
        <main class="import-page">
            <ImportPanel />
        </main>
    }
}

/// The files of a folder picked with `webkitdirectory`, by their path
/// inside it (without the folder's own name), leaving out the folders the
/// IDE never looks into (`node_modules`, build output…).
fn folder_files(input: &web_sys::HtmlInputElement) -> Vec<(String, web_sys::File)> {
    let Some(list) = input.files() else {
        return Vec::new();
    };
    (0..list.length())
        .filter_map(|i| list.get(i))
        .filter_map(|file| {
            let relative = js_sys::Reflect::get(&file, &"webkitRelativePath".into())
                .ok()
                .and_then(|v| v.as_string())
                .filter(|p| !p.is_empty())
                .unwrap_or_else(|| file.name());
            let inside = relative
                .split_once('/')
                .map_or(relative.as_str(), |(_, rest)| rest);
            keep(inside).then(|| (inside.to_owned(), file))
        })
        .collect()
}

/// Whether an uploaded path is worth sending (the one skip rule).
fn keep(path: &str) -> bool {
    !path.is_empty() && !crate::runtime::tree::is_inside_skipped_dir(path)
}

#[cfg(feature = "hydrate")]
fn drop_files(
    ev: &leptos::ev::DragEvent,
    picked: RwSignal<Picked>,
    chosen: ChosenFiles,
    error: RwSignal<Option<String>>,
) {
    let Some(transfer) = ev.data_transfer() else {
        return;
    };
    // The entries must be taken while the event is handled.
    let entries = dropped::entries(&transfer);
    leptos::task::spawn_local(async move {
        match dropped::walk(entries).await {
            Ok(dropped::Dropped::Archive(file)) => {
                picked.set(Picked::Archive(file.name()));
                chosen.update_value(|c| {
                    c.archive = Some(file);
                    c.folder.clear();
                });
            }
            Ok(dropped::Dropped::Files(files)) => {
                let files: Vec<_> = files.into_iter().filter(|(p, _)| keep(p)).collect();
                picked.set(Picked::Folder(files.len()));
                chosen.update_value(|c| {
                    c.archive = None;
                    c.folder = files;
                });
            }
            Err(message) => error.set(Some(message)),
        }
    });
}

#[cfg(not(feature = "hydrate"))]
fn drop_files(
    _: &leptos::ev::DragEvent,
    _: RwSignal<Picked>,
    _: ChosenFiles,
    _: RwSignal<Option<String>>,
) {
}

#[cfg(feature = "hydrate")]
fn submit(
    name: String,
    git_url: String,
    chosen: ChosenFiles,
    busy: RwSignal<bool>,
    error: RwSignal<Option<String>>,
) {
    busy.set(true);
    leptos::task::spawn_local(async move {
        let (archive, folder) = chosen.with_value(|c| (c.archive.clone(), c.folder.clone()));
        let outcome = if !git_url.trim().is_empty() {
            upload::git(&name, git_url.trim()).await
        } else if let Some(file) = archive {
            upload::archive(&name, &file).await
        } else if !folder.is_empty() {
            upload::folder(&name, &folder).await
        } else {
            Err("Pick a zip, a folder or a git URL first.".to_owned())
        };
        match outcome {
            Ok(id) => {
                if let Some(window) = web_sys::window() {
                    let _ = window.location().assign(&format!("/p/{id}"));
                }
            }
            Err(message) => {
                error.set(Some(message));
                busy.set(false);
            }
        }
    });
}

#[cfg(not(feature = "hydrate"))]
fn submit(_: String, _: String, _: ChosenFiles, _: RwSignal<bool>, _: RwSignal<Option<String>>) {}
