//! The terminal pane: a "Rivet" tab where action commands and their output
//! appear, rendered by xterm.js.

#[cfg(feature = "hydrate")]
mod xterm;

use leptos::prelude::*;

#[component]
pub fn TerminalPane() -> impl IntoView {
    let host = NodeRef::<leptos::html::Div>::new();
    let failed = RwSignal::new(None::<String>);

    #[cfg(feature = "hydrate")]
    xterm::mount(host, failed);

    view! {
        <section class="terminal-pane" data-testid="terminal" aria-label="Terminal">
            <div class="tabs" role="tablist">
                <div class="tab active" role="tab" aria-selected="true">
                    <span class="tab-name">"Rivet"</span>
                </div>
            </div>
            <div class="terminal-host" node_ref=host></div>
            <Show when=move || failed.get().is_some()>
                <p class="editor-error" role="alert">
                    "The terminal could not load: " {move || failed.get().unwrap_or_default()}
                </p>
            </Show>
        </section>
    }
}
