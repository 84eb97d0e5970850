//! The project's files as a tree.

use leptos::prelude::*;

use super::workbench::{WELCOME_TAB, Workbench};

#[component]
pub fn FileTree() -> impl IntoView {
    let workbench = expect_context::<Workbench>();
    let paths = move || {
        workbench.files.with(|files| {
            files
                .keys()
                .filter(|path| path.as_str() != WELCOME_TAB)
                .cloned()
                .collect::<Vec<_>>()
        })
    };
    view! {
        <nav class="file-tree" data-testid="file-tree" aria-label="Files">
            <div class="pane-title">"Files"</div>
            <Show
                when=move || !paths().is_empty()
                fallback=|| view! { <p class="empty-state">"No files yet."</p> }
            >
                <ul>
                    <For each=paths key=|path| path.clone() let:path>
                        <li>
                            <button
                                class="file-entry"
                                on:click={
                                    let path = path.clone();
                                    move |_| workbench.open(&path)
                                }
                            >
                                {path.clone()}
                            </button>
                        </li>
                    </For>
                </ul>
            </Show>
        </nav>
    }
}
