//! "Build this plan" under an answer of Plan mode: it sends the plan to be
//! built as a message of Build mode (the conversation switches to Build).

use leptos::prelude::*;

use crate::app::api::{Mode, send_message};
use crate::app::context::{CurrentProject, OpenChat};
use crate::app::session::SessionStore;

/// The message that asks for the plan to be built; the model sees the plan
/// just before it in the conversation.
const BUILD_THE_PLAN: &str = "Build the plan above.";

#[component]
pub fn BuildPlan() -> impl IntoView {
    let store = expect_context::<SessionStore>();
    let project = expect_context::<CurrentProject>().0;
    let chat = expect_context::<OpenChat>().0;
    let build = Action::new(move |_: &()| {
        send_message(
            project.clone(),
            BUILD_THE_PLAN.to_owned(),
            None,
            Some(Mode::Build),
            Some(chat.get_untracked()),
        )
    });
    view! {
        <button
            class="primary"
            data-testid="message-build-plan"
            title="Switch to Build mode and build this plan"
            disabled=move || store.busy.get() || build.pending().get()
            on:click=move |_| {
                build.dispatch(());
            }
        >
            "Build this plan"
        </button>
    }
}
