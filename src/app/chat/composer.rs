//! The message box with its Send and Stop buttons.

use leptos::prelude::*;

use super::part::{ChatPart, chat_part};
use crate::app::api::{RivetError, send_message, stop_run};
use crate::app::context::{Attaching, CurrentProject, OpenChat, Outgoing};
use crate::app::session::SessionStore;

#[component]
pub fn Composer() -> impl IntoView {
    let store = expect_context::<SessionStore>();
    let project = expect_context::<CurrentProject>().0;
    let chat = expect_context::<OpenChat>().0;
    let attaching = expect_context::<Attaching>();
    let draft = RwSignal::new(String::new());
    let error = RwSignal::new(None::<RivetError>);
    let model = RwSignal::new(String::new());
    // The text of the last send, given back to the box if it is refused.
    let last_sent = StoredValue::new(String::new());

    let send = Action::new({
        let project = project.clone();
        move |text: &String| {
            let picked = Some(model.get_untracked()).filter(|m| !m.is_empty());
            send_message(
                project.clone(),
                text.clone(),
                picked,
                None,
                Some(chat.get_untracked()),
            )
        }
    });
    let stop = Action::new(move |_: &()| stop_run(project.clone()));
    Effect::new(move |_| {
        let result = send.value().get().or(stop.value().get());
        error.set(result.and_then(Result::err));
    });
    Effect::new(move |_| {
        let refused = send.value().with(|r| matches!(r, Some(Err(_))));
        if refused && draft.get_untracked().is_empty() {
            draft.set(last_sent.get_value());
        }
    });
    // A message with attachments the server refused (sent by the bar).
    Effect::new(move |_| {
        if let Some((refusal, text)) = attaching.refused.get() {
            error.set(Some(refusal));
            if draft.get_untracked().is_empty() {
                draft.set(text);
            }
        }
    });
    let busy = move || error.with(|e| e.as_ref().is_some_and(RivetError::is_busy));
    let over_budget =
        move || error.with(|e| e.as_ref().is_some_and(RivetError::is_budget_exceeded));
    let on_raised = Callback::new(move |()| error.set(None));

    let submit = move || {
        let text = draft.get_untracked().trim().to_owned();
        if (text.is_empty() && attaching.is_empty()) || store.busy.get_untracked() {
            return;
        }
        draft.set(String::new());
        error.set(None);
        if attaching.is_empty() {
            last_sent.set_value(text.clone());
            send.dispatch(text);
        } else {
            let picked = Some(model.get_untracked()).filter(|m| !m.is_empty());
            attaching.ask.set(Some(Outgoing {
                text,
                model: picked,
            }));
        }
    };

    view! {
        <form
            class="composer"
            on:submit=move |ev| {
                ev.prevent_default();
                submit();
            }
        >
            <Show when=move || error.with(Option::is_some)>
                // A refused send because another answer streams reads as
                // "busy", not as a failure.
                <p
                    class="composer-error"
                    class:busy=busy
                    data-testid=move || if busy() { "composer-busy" } else { "composer-error" }
                    role="alert"
                >
                    {move || {
                        if busy() {
                            "Busy: an answer is still running. Wait for it, or press Stop.".to_owned()
                        } else {
                            error.with(|e| e.as_ref().map(ToString::to_string).unwrap_or_default())
                        }
                    }}
                    <Show when=over_budget>
                        {chat_part(ChatPart::BudgetRaise(on_raised))}
                    </Show>
                </p>
            </Show>
            <textarea
                data-testid="chat-input"
                aria-label="Message"
                placeholder="Build a todo app with React…"
                rows="3"
                prop:value=move || draft.get()
                on:input:target=move |ev| draft.set(ev.target().value())
                on:keydown=move |ev| {
                    // Enter sends; Shift+Enter starts a new line.
                    if ev.key() == "Enter" && !ev.shift_key() && !ev.is_composing() {
                        ev.prevent_default();
                        submit();
                    }
                }
            ></textarea>
            <div class="composer-actions">
                {chat_part(ChatPart::ComposerTools { model, draft })}
                <span class="connection" class:offline=move || !store.connected.get()>
                    {move || if store.connected.get() { "" } else { "Connecting…" }}
                </span>
                <button
                    type="button"
                    data-testid="chat-stop"
                    class="secondary"
                    disabled=move || !store.busy.get()
                    on:click=move |_| {
                        stop.dispatch(());
                    }
                >
                    "Stop"
                </button>
                <button
                    type="submit"
                    data-testid="chat-send"
                    disabled=move || {
                        store.busy.get() || send.pending().get() || attaching.sending.get()
                    }
                >
                    "Send"
                </button>
            </div>
        </form>
    }
}

/// The composer's tools, out of the first load (`super::part`): what the
/// message carries (first, on a line of its own), the mode switch, the
/// model picker, Enhance, the project's auto-fix switch and its spend line.
pub fn composer_tools(model: RwSignal<String>, draft: RwSignal<String>) -> AnyView {
    view! {
        <super::attach::AttachmentsBar />
        <super::mode_switch::ModeSwitch />
        <super::model_pick::ModelPick model />
        <super::enhance::Enhance draft />
        <super::auto_fix::ProjectAutoFix />
        <super::spend::SpendLine />
    }
    .into_any()
}
