//! The chat pane: the conversation, the alerts of the current run, and the
//! message composer.

mod agent_run;
mod agent_step;
mod alerts;
mod answer_text;
mod artifact;
mod attach;
mod auto_fix;
mod card_memory;
mod checkpoint;
mod composer;
mod context;
mod enhance;
mod message;
mod mode_switch;
mod model_pick;
mod part;
mod plan;
mod spend;
mod step_diff;
mod tabs;

use leptos::prelude::*;

use crate::app::context::OpenChat;
use crate::runtime::session::ChatId;

use super::session::SessionStore;
use super::settings::LlmSettings;

#[component]
pub fn ChatPane() -> impl IntoView {
    let store = expect_context::<SessionStore>();
    provide_context(card_memory::CardMemory::default());
    let open = RwSignal::new(ChatId::main());
    provide_context(OpenChat(open));
    let ids = move || {
        store.messages.track();
        open.with(|chat| {
            store.with(|s| {
                s.messages
                    .iter()
                    .filter(|m| m.chat == *chat)
                    .map(|m| m.id.clone())
                    .collect::<Vec<_>>()
            })
        })
    };

    let settings = LlmSettings::expect();
    let not_configured = move || settings.current().is_some_and(|s| !s.configured);
    // Effects only run in the browser: the chat is hydrated and takes input
    // (the workbench's panes may still be loading; `data-hydrated` follows
    // once they are).
    Effect::new(|_| {
        if let Some(body) = document().body() {
            let _ = body.set_attribute("data-chat-ready", "true");
        }
    });

    view! {
        <section class="chat-pane" aria-label="Chat">
            {part::chat_part(part::ChatPart::Tabs)}
            <ol class="message-list" data-testid="message-list">
                <Show when=move || ids().is_empty()>
                    <li class="chat-empty">
                        <p>"Describe an app and the model will build it here."</p>
                        <Show when=not_configured>
                            <p class="chat-hint">
                                "No model is configured yet. Choose one in Settings, or use "
                                <strong>"Demo (scripted answers)"</strong>
                                " at the top to watch replayed answers build an app, with no key and no network."
                            </p>
                        </Show>
                    </li>
                </Show>
                <For each=ids key=|id| id.clone() let:id>
                    <message::MessageView id />
                </For>
            </ol>
            {part::chat_part(part::ChatPart::Alerts)}
            <composer::Composer />
        </section>
    }
}
