//! The checkpoint buttons under an answer: "Restore to here" (the files go
//! back to just after this answer; later messages are kept, marked undone),
//! Redo (after such a restore), and "Fork from here" (a new project with
//! the files and the conversation up to this answer).

use leptos::prelude::*;

use crate::app::api::{fork_from_message, redo_restore, restore_to_message};
use crate::app::context::CurrentProject;
use crate::app::session::SessionStore;
use crate::runtime::session::{MessageStatus, SessionState};

/// Which of Restore and Redo an answer offers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Offer {
    Restore,
    Redo,
    /// Streaming, or undone itself.
    Nothing,
}

fn is_undone(status: &MessageStatus) -> bool {
    matches!(status, MessageStatus::Undone { .. })
}

/// Redo when every message after this one is undone (a restore went back
/// here and nothing was sent since); Restore otherwise.
pub fn offer(state: &SessionState, message_id: &str) -> Offer {
    let Some(index) = state.messages.iter().position(|m| m.id == message_id) else {
        return Offer::Nothing;
    };
    let status = &state.messages[index].status;
    if is_undone(status) || *status == MessageStatus::Streaming {
        return Offer::Nothing;
    }
    let later = &state.messages[index + 1..];
    if !later.is_empty() && later.iter().all(|m| is_undone(&m.status)) {
        Offer::Redo
    } else {
        Offer::Restore
    }
}

/// The checkpoint buttons, out of the first load (`super::part`).
pub fn checkpoint_buttons(message_id: String) -> AnyView {
    view! { <CheckpointButtons message_id /> }.into_any()
}

#[component]
pub fn CheckpointButtons(message_id: String) -> impl IntoView {
    let store = expect_context::<SessionStore>();
    let project = expect_context::<CurrentProject>().0;
    let current = Signal::derive({
        let id = message_id.clone();
        move || {
            store.messages.track();
            let later: Vec<String> = store.with(|s| {
                s.messages
                    .iter()
                    .skip_while(|m| m.id != id)
                    .map(|m| m.id.clone())
                    .collect()
            });
            for later_id in &later {
                store.message_version(later_id).track();
            }
            store.with(|s| offer(s, &id))
        }
    });
    let restore = Action::new({
        let (project, id) = (project.clone(), message_id.clone());
        move |_: &()| restore_to_message(project.clone(), id.clone())
    });
    let redo = Action::new({
        let (project, id) = (project.clone(), message_id.clone());
        move |_: &()| redo_restore(project.clone(), id.clone())
    });
    let fork = Action::new({
        let id = message_id.clone();
        move |_: &()| fork_from_message(project.clone(), id.clone())
    });
    let error = move || {
        let failed = [restore.value().get(), redo.value().get()]
            .into_iter()
            .flatten()
            .find_map(Result::err)
            .or_else(|| fork.value().get().and_then(Result::err));
        failed.map(|e| view! { <p class="message-status failed" data-testid="checkpoint-error">{e.to_string()}</p> })
    };
    let fork_link = move || {
        fork.value().get().and_then(Result::ok).map(|id| {
            view! {
                <a class="fork-link" data-testid="fork-link" rel="external" href=format!("/p/{id}")>
                    "Open the fork"
                </a>
            }
        })
    };
    view! {
        <Show when=move || current.get() == Offer::Restore>
            <button class="secondary" data-testid="restore-to-here" title="Put the files back as they were after this answer"
                on:click=move |_| { restore.dispatch(()); }>"Restore to here"</button>
        </Show>
        <Show when=move || current.get() == Offer::Redo>
            <button class="secondary" data-testid="redo" title="Undo the restore"
                on:click=move |_| { redo.dispatch(()); }>"Redo"</button>
        </Show>
        <Show when=move || current.get() != Offer::Nothing>
            <button class="secondary" data-testid="fork-from-here" title="A new project with the files and the conversation up to here"
                on:click=move |_| { fork.dispatch(()); }>"Fork from here"</button>
        </Show>
        {fork_link}
        {error}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::session::Message;

    fn message(id: &str, status: MessageStatus) -> Message {
        let mut message = Message::assistant(id);
        message.status = status;
        message
    }

    fn undone() -> MessageStatus {
        MessageStatus::Undone {
            was: Box::new(MessageStatus::Complete),
        }
    }

    #[test]
    fn an_answer_followed_only_by_undone_messages_offers_redo() {
        let mut state = SessionState {
            messages: vec![
                message("m2", MessageStatus::Complete),
                message("m4", undone()),
                message("m6", MessageStatus::Streaming),
            ],
            ..SessionState::default()
        };
        assert_eq!(offer(&state, "m2"), Offer::Restore);
        assert_eq!(offer(&state, "m4"), Offer::Nothing);
        assert_eq!(offer(&state, "m6"), Offer::Nothing);
        state.messages[2].status = undone();
        assert_eq!(offer(&state, "m2"), Offer::Redo);
        assert_eq!(offer(&state, "nothing"), Offer::Nothing);
    }
}
