//! The composer's Build / Agent switch. The conversation's mode lives in
//! the session (so every tab and a reload agree); until one is chosen the
//! server answers the configured default.

use leptos::prelude::*;

use crate::app::api::{Mode, set_conversation_mode};
use crate::app::context::CurrentProject;
use crate::app::session::SessionStore;

#[component]
pub fn ModeSwitch() -> impl IntoView {
    let store = expect_context::<SessionStore>();
    let project = expect_context::<CurrentProject>().0;
    // The configured default, asked once in the browser.
    let default_mode = RwSignal::new(None::<Mode>);
    Effect::new({
        let project = project.clone();
        move |_| {
            let project = project.clone();
            leptos::task::spawn_local(async move {
                if let Ok(mode) = crate::app::api::conversation_mode(project).await {
                    default_mode.set(Some(mode));
                }
            });
        }
    });
    let current = move || {
        store.messages.track();
        store
            .with(|s| s.mode)
            .or(default_mode.get())
            .unwrap_or_default()
    };
    let choose = Action::new(move |mode: &Mode| set_conversation_mode(project.clone(), *mode));
    let button = move |mode: Mode| {
        view! {
            <button
                type="button"
                role="radio"
                class="mode-option"
                aria-checked=move || (current() == mode).to_string()
                class:selected=move || current() == mode
                data-mode=format!("{mode:?}").to_lowercase()
                on:click=move |_| {
                    choose.dispatch(mode);
                }
            >
                {mode.label()}
            </button>
        }
    };
    view! {
        <div
            class="mode-switch"
            role="radiogroup"
            aria-label="Mode"
            data-testid="mode-switch"
            data-mode=move || format!("{:?}", current()).to_lowercase()
            title="Build: one answer that writes the app. Agent: the model works step by step with tools, asking before it changes files or runs commands. Plan: discuss and plan; nothing runs until you build the plan."
        >
            {button(Mode::Build)}
            {button(Mode::Agent)}
            {button(Mode::Plan)}
        </div>
    }
}
