//! The chat pane: the conversation and the message composer.

use leptos::prelude::*;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    User,
    #[allow(dead_code)]
    Assistant,
}

#[derive(Clone, Debug, PartialEq)]
pub struct ChatMessage {
    pub id: usize,
    pub role: Role,
    pub text: String,
}

#[component]
pub fn ChatPane() -> impl IntoView {
    let messages = RwSignal::new(Vec::<ChatMessage>::new());
    let draft = RwSignal::new(String::new());
    let streaming = RwSignal::new(false);

    let send = move || {
        let text = draft.get_untracked().trim().to_owned();
        if text.is_empty() {
            return;
        }
        messages.update(|list| {
            let id = list.len();
            list.push(ChatMessage {
                id,
                role: Role::User,
                text,
            });
        });
        draft.set(String::new());
    };

    view! {
        <section class="chat-pane" aria-label="Chat">
            <ol class="message-list" data-testid="message-list">
                <Show when=move || messages.with(Vec::is_empty)>
                    <li class="chat-empty">
                        "Describe an app and the model will build it here."
                    </li>
                </Show>
                <For each=move || messages.get() key=|m| m.id let:message>
                    <Message message />
                </For>
            </ol>
            <form
                class="composer"
                on:submit=move |ev| {
                    ev.prevent_default();
                    send();
                }
            >
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
                            send();
                        }
                    }
                ></textarea>
                <div class="composer-actions">
                    <button
                        type="button"
                        data-testid="chat-stop"
                        class="secondary"
                        disabled=move || !streaming.get()
                    >
                        "Stop"
                    </button>
                    <button type="submit" data-testid="chat-send">
                        "Send"
                    </button>
                </div>
            </form>
        </section>
    }
}

#[component]
fn Message(message: ChatMessage) -> impl IntoView {
    let (class, test_id) = match message.role {
        Role::User => ("message message-user", "message-user"),
        Role::Assistant => ("message message-assistant", "message-assistant"),
    };
    view! {
        <li class=class data-testid=test_id>
            <div class="message-text">{message.text}</div>
        </li>
    }
}
