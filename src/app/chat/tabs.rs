//! The project's chats as tabs above the conversation, and the button that
//! opens another one (it starts from a note about the project, not from
//! this chat's transcript).

use leptos::prelude::*;

use crate::app::api::open_chat;
use crate::app::context::{CurrentProject, OpenChat};
use crate::app::session::SessionStore;
use crate::runtime::session::{Chat, ChatId};

/// The tabs, out of the first load (`super::part`): until they arrive the
/// first chat shows.
pub fn chat_tabs() -> AnyView {
    view! {
        <ChatTabs />
        <ChatOpening />
    }
    .into_any()
}

#[component]
fn ChatTabs() -> impl IntoView {
    let store = expect_context::<SessionStore>();
    let project = expect_context::<CurrentProject>().0;
    let open = expect_context::<OpenChat>().0;
    let chats = move || {
        store.messages.track();
        store.with(|s| {
            std::iter::once(Chat::main())
                .chain(s.chats.iter().cloned())
                .map(|c| (c.id, c.title))
                .collect::<Vec<_>>()
        })
    };
    let new_chat = Action::new(move |_: &()| open_chat(project.clone()));
    Effect::new(move |_| {
        if let Some(Ok(chat)) = new_chat.value().get() {
            open.set(chat.id);
        }
    });
    view! {
        <nav class="chat-tabs" aria-label="Chats" role="tablist">
            <For each=chats key=|(id, _)| id.clone() let:chat>
                <ChatTab id=chat.0 title=chat.1 />
            </For>
            <button
                type="button"
                class="chat-new"
                data-testid="chat-new"
                title="A new chat on this project: it starts from the project's files and latest changes, not from this conversation"
                disabled=move || new_chat.pending().get()
                on:click=move |_| {
                    new_chat.dispatch(());
                }
            >
                "+ Chat"
            </button>
            {move || {
                new_chat
                    .value()
                    .get()
                    .and_then(Result::err)
                    .map(|e| view! { <span class="chat-new-error" role="alert">{e.to_string()}</span> })
            }}
        </nav>
    }
}

#[component]
fn ChatTab(id: ChatId, title: String) -> impl IntoView {
    let open = expect_context::<OpenChat>().0;
    let selected = {
        let id = id.clone();
        move || open.with(|o| *o == id)
    };
    view! {
        <button
            type="button"
            role="tab"
            class="chat-tab"
            data-testid="chat-tab"
            data-chat=id.to_string()
            aria-selected=move || selected().to_string()
            on:click=move |_| open.set(id.clone())
        >
            {title}
        </button>
    }
}

/// The note a chat opened beside the first one starts from, shown while it
/// has no message.
#[component]
fn ChatOpening() -> impl IntoView {
    let store = expect_context::<SessionStore>();
    let open = expect_context::<OpenChat>().0;
    let note = move || {
        store.messages.track();
        open.with(|chat| {
            store.with(|s| {
                let empty = !s.messages.iter().any(|m| m.chat == *chat);
                s.chats
                    .iter()
                    .find(|c| c.id == *chat && empty)
                    .map(|c| c.opening.clone())
            })
        })
    };
    move || {
        note().map(|note| {
            view! {
                <div class="chat-opening-note" data-testid="chat-opening">
                    <p>"A new chat on this project. Its requests start from this note, not from the other chats:"</p>
                    <pre class="chat-opening">{note}</pre>
                </div>
            }
        })
    }
}
