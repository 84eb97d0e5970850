//! The editor pane: tabs over one Monaco editor with a model per file.

#[cfg(feature = "hydrate")]
pub(crate) mod monaco;

use leptos::prelude::*;

use super::workbench::Workbench;

#[component]
pub fn EditorPane() -> impl IntoView {
    let workbench = expect_context::<Workbench>();
    let host = NodeRef::<leptos::html::Div>::new();
    let diff_host = NodeRef::<leptos::html::Div>::new();
    let ready = RwSignal::new(false);
    let failed = RwSignal::new(None::<String>);

    #[cfg(feature = "hydrate")]
    monaco::mount(host, diff_host, workbench, ready, failed);

    // Until Monaco has loaded (it is fetched lazily), the active file is shown as text.
    let fallback_text = move || {
        let active = workbench.active_tab.get()?;
        workbench
            .files
            .with(|files| files.get(&active).map(|f| f.content.clone()))
    };

    view! {
        <section class="editor-pane" data-testid="editor" aria-label="Editor">
            <div class="tabs" role="tablist">
                <For each=move || workbench.tabs.get() key=|path| path.clone() let:path>
                    <EditorTab path />
                </For>
                <span class="spacer"></span>
                <button
                    class="chip diff-toggle"
                    data-testid="editor-diff"
                    title="What the latest answer changed in this file"
                    class:active=move || workbench.diff.get()
                    on:click=move |_| workbench.diff.update(|d| *d = !*d)
                >
                    "Diff"
                </button>
            </div>
            <div class="editor-body">
                <div class="monaco-host" node_ref=host class:hidden=move || !ready.get() || workbench.diff.get()></div>
                <div class="monaco-host" data-testid="editor-diff-view" node_ref=diff_host class:hidden=move || !workbench.diff.get()></div>
                <Show when=move || !ready.get()>
                    <pre class="editor-fallback">{fallback_text}</pre>
                </Show>
                <Show when=move || failed.get().is_some()>
                    <p class="editor-error" role="alert">
                        "The editor could not load: "
                        {move || failed.get().unwrap_or_default()}
                    </p>
                </Show>
            </div>
        </section>
    }
}

#[component]
fn EditorTab(path: String) -> impl IntoView {
    let workbench = expect_context::<Workbench>();
    let is_active = {
        let path = path.clone();
        move || workbench.active_tab.get().as_deref() == Some(path.as_str())
    };
    let is_writing = {
        let path = path.clone();
        move || {
            workbench
                .files
                .with(|f| f.get(&path).is_some_and(|f| f.writing))
        }
    };
    let is_dirty = {
        let path = path.clone();
        move || {
            workbench
                .files
                .with(|f| f.get(&path).is_some_and(|f| f.dirty))
        }
    };
    let name = path.rsplit('/').next().unwrap_or(&path).to_owned();
    let open = {
        let path = path.clone();
        move |_| workbench.open(&path)
    };
    let close = {
        let path = path.clone();
        move |ev: leptos::ev::MouseEvent| {
            ev.stop_propagation();
            workbench.close(&path);
        }
    };
    view! {
        <div class="tab" role="tab" data-testid="editor-tab" data-path=path.clone() class:active=is_active.clone() aria-selected=move || is_active().to_string() title=path.clone() on:click=open>
            <span class="tab-name">{name}</span>
            <Show when=is_writing>
                <span class="writing-marker" title="The model is writing this file">"✎"</span>
            </Show>
            <Show when=is_dirty.clone()>
                <span class="dirty-marker" aria-label="unsaved changes">"●"</span>
            </Show>
            <button class="tab-close" aria-label="Close tab" on:click=close>
                "×"
            </button>
        </div>
    }
}
