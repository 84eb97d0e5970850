//! Alerts of the run: a failed command, a dev server that crashed, an action
//! that could not run, each with the end of its output.

use leptos::prelude::*;

use crate::app::session::SessionStore;
use crate::runtime::session::Alert;

#[component]
pub fn AlertList() -> impl IntoView {
    let store = expect_context::<SessionStore>();
    let dismissed = RwSignal::new(0u64);
    let alerts = move || {
        store.alerts.track();
        let after = dismissed.get();
        store.with(|s| {
            s.alerts
                .iter()
                .filter(|a| a.id > after)
                .cloned()
                .collect::<Vec<Alert>>()
        })
    };
    view! {
        <Show when=move || !alerts().is_empty()>
            <div class="alerts" role="alert">
                <For each=alerts key=|a| a.id let:alert>
                    <div class="alert" data-testid="alert">
                        <div class="alert-title">{alert.title.clone()}</div>
                        <pre class="alert-detail">{alert.detail.clone()}</pre>
                    </div>
                </For>
                <button
                    class="secondary alert-dismiss"
                    on:click=move |_| {
                        let last = store.with(|s| s.alerts.last().map_or(0, |a| a.id));
                        dismissed.set(last);
                    }
                >
                    "Dismiss"
                </button>
            </div>
        </Show>
    }
}
