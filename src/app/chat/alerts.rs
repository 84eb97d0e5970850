//! Alerts of the run: a failed command, a dev server that crashed, an action
//! that could not run, each with the end of its output; and the build
//! results (each failure, with the files it names) the fix loop works from.
//! A failure a fix repaired stays listed, quietly, saying what fixed it
//! (`data-state="resolved"`; `"open"` until then).

use leptos::prelude::*;

use crate::app::api::try_fix_again;
use crate::app::context::CurrentProject;
use crate::app::session::SessionStore;
use crate::runtime::build_result::BuildResult;
use crate::runtime::session::Alert;

/// The alerts, out of the first load (`super::part`).
pub fn alert_list() -> AnyView {
    view! { <AlertList /> }.into_any()
}

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
    // Build results are listed with the alerts; those already dismissed
    // (older than the dismissal) are not.
    let results_after = RwSignal::new(0u64);
    let results = move || {
        store.alerts.track();
        let after = results_after.get();
        store.with(|s| {
            s.build_results
                .iter()
                .filter(|r| r.id > after)
                .cloned()
                .collect::<Vec<BuildResult>>()
        })
    };
    view! {
        <Show when=move || !alerts().is_empty() || !results().is_empty()>
            <div class="alerts" role="alert">
                // Keyed by the state too, so a failure redraws when resolved.
                <For each=results key=|r| (r.id, r.resolved.is_some()) let:result>
                    <div class="alert build-result" data-testid="build-result" data-stage=format!("{:?}", result.stage)
                        data-state=state_name(&result.resolved)>
                        <details>
                            <summary class="alert-title">
                                {result.title()}
                                {(!result.files.is_empty()).then(|| format!(" ({})", result.files.join(", ")))}
                            </summary>
                            <pre class="alert-detail">{result.output.clone()}</pre>
                        </details>
                        <Resolved by=result.resolved.clone() />
                    </div>
                </For>
                <For each=alerts key=|a| (a.id, a.resolved.is_some()) let:alert>
                    <div class="alert" data-testid="alert" data-state=state_name(&alert.resolved)>
                        <div class="alert-title">{alert.title.clone()}</div>
                        <pre class="alert-detail">{alert.detail.clone()}</pre>
                        <Resolved by=alert.resolved.clone() />
                        {(alert.resolved.is_none() && !alert.fix_results.is_empty())
                            .then(|| view! { <TryAgain alert=alert.id /> })}
                    </div>
                </For>
                <button
                    class="secondary alert-dismiss"
                    on:click=move |_| {
                        let last = store.with(|s| s.alerts.last().map_or(0, |a| a.id));
                        dismissed.set(last);
                        let last = store.with(|s| s.build_results.last().map_or(0, |r| r.id));
                        results_after.set(last);
                    }
                >
                    "Dismiss"
                </button>
            </div>
        </Show>
    }
}

/// `open` until a later run fixed the failure, then `resolved`.
fn state_name(resolved: &Option<String>) -> &'static str {
    if resolved.is_some() {
        "resolved"
    } else {
        "open"
    }
}

/// What fixed a resolved failure.
#[component]
fn Resolved(by: Option<String>) -> impl IntoView {
    by.map(|by| view! { <div class="alert-resolved" data-testid="alert-resolved">{by}</div> })
}

/// "Try again" on the fix loop's stop alert: the loop starts over with a
/// fresh count of attempts and tokens.
#[component]
fn TryAgain(alert: u64) -> impl IntoView {
    let project = expect_context::<CurrentProject>().0;
    let again = Action::new(move |_: &()| try_fix_again(project.clone(), alert));
    let refused = move || {
        again
            .value()
            .get()
            .and_then(Result::err)
            .map(|e| view! { <p class="alert-detail" role="alert">{e.to_string()}</p> })
    };
    view! {
        <button
            class="secondary"
            data-testid="fix-try-again"
            disabled=move || again.pending().get() || again.value().with(|v| matches!(v, Some(Ok(()))))
            on:click=move |_| {
                again.dispatch(());
            }
        >
            "Try again"
        </button>
        {refused}
    }
}
