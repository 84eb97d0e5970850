//! The terminal pane: a "Rivet" tab with every command the model's actions
//! run and their output, interactive shell tabs where the project runs
//! (`bash` in its server sandbox, or `jsh` in the page's WebContainer), and
//! the "Database" tab (`data_panel`).

#[cfg(feature = "hydrate")]
mod xterm;

use leptos::prelude::*;

/// A tab of the pane: `None` is the Rivet tab, `Some(n)` shell `n`.
type TabId = Option<u32>;

#[component]
pub fn TerminalPane() -> impl IntoView {
    let shells = RwSignal::new(Vec::<u32>::new());
    let active = RwSignal::new(None::<u32>);
    let failed = RwSignal::new(None::<String>);
    // The Database tab is shown instead of the terminals.
    let data = RwSignal::new(false);
    let project = use_context::<crate::app::context::CurrentProject>().map(|c| c.0);
    let add_shell = move |_| {
        let next = shells.with_untracked(|s| s.iter().max().map_or(1, |n| n + 1));
        shells.update(|s| s.push(next));
        active.set(Some(next));
        data.set(false);
    };
    let close_shell = move |n: u32| {
        shells.update(|s| s.retain(|x| *x != n));
        if active.get_untracked() == Some(n) {
            active.set(None);
        }
    };
    view! {
        <section class="terminal-pane" data-testid="terminal" aria-label="Terminal">
            <div class="tabs" role="tablist">
                <TabButton tab=None active data label="Rivet".to_owned() />
                <For each=move || shells.get() key=|n| *n let:n>
                    <TabButton tab=Some(n) active data label=format!("Shell {n}") />
                    <button class="tab-close" aria-label="Close shell" on:click=move |_| close_shell(n)>
                        "×"
                    </button>
                </For>
                <button class="tab-add" title="New shell" data-testid="terminal-new" on:click=add_shell>
                    "+"
                </button>
                <button class="tab tab-data" role="tab" data-testid="data-tab"
                    class:active=move || data.get()
                    aria-selected=move || data.get().to_string()
                    on:click=move |_| data.set(true)>
                    "Database"
                </button>
            </div>
            <Show when=move || data.get()>
                {project.clone().map(|project| view! { <crate::app::data_panel::DataPanel project /> })}
            </Show>
            <div class="terminal-stack" class:hidden=move || data.get()>
                <TerminalView tab=None active failed />
                <For each=move || shells.get() key=|n| *n let:n>
                    <TerminalView tab=Some(n) active failed />
                </For>
            </div>
            <Show when=move || failed.get().is_some()>
                <p class="editor-error" role="alert">
                    "The terminal could not load: " {move || failed.get().unwrap_or_default()}
                </p>
            </Show>
        </section>
    }
}

#[component]
fn TabButton(
    tab: TabId,
    active: RwSignal<TabId>,
    data: RwSignal<bool>,
    label: String,
) -> impl IntoView {
    let shown = move || active.get() == tab && !data.get();
    view! {
        <button
            class="tab"
            role="tab"
            data-testid="terminal-tab"
            class:active=shown
            aria-selected=move || shown().to_string()
            on:click=move |_| {
                active.set(tab);
                data.set(false);
            }
        >
            {label}
        </button>
    }
}

#[component]
fn TerminalView(
    tab: TabId,
    active: RwSignal<TabId>,
    failed: RwSignal<Option<String>>,
) -> impl IntoView {
    let host = NodeRef::<leptos::html::Div>::new();
    #[cfg(feature = "hydrate")]
    xterm::mount(host, tab, active, failed);
    #[cfg(not(feature = "hydrate"))]
    let _ = failed;
    let test_id = if tab.is_none() {
        "terminal-rivet"
    } else {
        "terminal-shell"
    };
    view! {
        <div
            class="terminal-host"
            data-testid=test_id
            node_ref=host
            class:hidden=move || active.get() != tab
        ></div>
    }
}
