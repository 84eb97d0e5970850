//! The project's chats: which exist, opening another one, and the note a
//! new chat starts from instead of another chat's transcript. The turns of
//! each chat are kept by the conversation (`Conversation::switch_to`).

use std::collections::HashMap;

use super::api::ApiError;
use super::project::ProjectHandle;
use crate::runtime::session::{Chat, ChatId, MAX_CHATS, Role, SessionEvent, SessionState};
use crate::server::store::MessageRow;

/// How many files and requests the opening note names.
const NOTE_FILES: usize = 40;
const NOTE_REQUESTS: usize = 5;
/// How much of each request the note quotes.
const NOTE_REQUEST_CHARS: usize = 160;

/// The project's chats, the first one first.
pub fn list(handle: &ProjectHandle) -> Vec<Chat> {
    handle.session.read(|state| {
        std::iter::once(Chat::main())
            .chain(state.chats.iter().cloned())
            .collect()
    })
}

/// Refuses a chat the project does not have.
pub fn require(handle: &ProjectHandle, chat: &ChatId) -> Result<(), ApiError> {
    let known = chat.is_main()
        || handle
            .session
            .read(|s| s.chats.iter().any(|c| c.id == *chat));
    if known {
        Ok(())
    } else {
        Err(ApiError::ChatNotFound(chat.to_string()))
    }
}

/// Opens another chat, starting from a note about the project as it is.
pub async fn open(handle: &ProjectHandle) -> Result<Chat, ApiError> {
    let chat = handle.session.read(|state| {
        let count = state.chats.len() + 1;
        (count < MAX_CHATS).then(|| Chat {
            id: ChatId::numbered(count + 1),
            title: format!("Chat {}", count + 1),
            opening: opening_note(state),
        })
    });
    let chat = chat.ok_or(ApiError::TooManyChats)?;
    handle.publish(SessionEvent::ChatOpened { chat: chat.clone() });
    handle.session.flush().await;
    Ok(chat)
}

/// The note a new chat's requests carry: the project's files and the
/// person's latest requests, newest first.
pub fn opening_note(state: &SessionState) -> String {
    let mut note = format!(
        "This chat is new, on a project that already exists ({} files).",
        state.files.len()
    );
    if !state.files.is_empty() {
        let names: Vec<&str> = state
            .files
            .iter()
            .take(NOTE_FILES)
            .map(String::as_str)
            .collect();
        note.push_str(&format!(" Files: {}", names.join(", ")));
        if state.files.len() > NOTE_FILES {
            note.push_str(", …");
        }
        note.push('.');
    }
    let requests: Vec<String> = state
        .messages
        .iter()
        .rev()
        .filter(|m| m.role == Role::User && m.automatic.is_none())
        .take(NOTE_REQUESTS)
        .map(|m| shortened(m.text().trim()))
        .collect();
    if !requests.is_empty() {
        note.push_str("\nThe latest changes asked for in the project, newest first:");
        for request in requests {
            note.push_str(&format!("\n- {request}"));
        }
    }
    note
}

fn shortened(text: &str) -> String {
    let line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    match line.char_indices().nth(NOTE_REQUEST_CHARS) {
        Some((at, _)) => format!("{}…", &line[..at]),
        None => line,
    }
}

/// The opening note of the chat the next answer belongs to, if it has one.
pub fn opening_of(handle: &ProjectHandle, chat: &ChatId) -> String {
    handle.session.read(|state| {
        state
            .chats
            .iter()
            .find(|c| c.id == *chat)
            .map(|c| c.opening.clone())
            .unwrap_or_default()
    })
}

/// The rows of `chat`'s messages, in their order (a row the session does
/// not know belongs to the first chat).
pub fn of_chat(handle: &ProjectHandle, chat: &ChatId, rows: Vec<MessageRow>) -> Vec<MessageRow> {
    handle.session.read(|state| {
        let chats = by_message(state);
        rows.into_iter()
            .filter(|row| {
                chats
                    .get(row.id.as_str())
                    .map_or(chat.is_main(), |c| *c == chat)
            })
            .collect()
    })
}

/// Each message's chat, by the message's id.
pub fn by_message(state: &SessionState) -> HashMap<&str, &ChatId> {
    state
        .messages
        .iter()
        .map(|m| (m.id.as_str(), &m.chat))
        .collect()
}

/// The chat a message belongs to (the first one for a message the session
/// does not know).
pub fn chat_of(handle: &ProjectHandle, message_id: &str) -> ChatId {
    handle.session.read(|state| {
        state
            .message(message_id)
            .map_or_else(ChatId::main, |m| m.chat.clone())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::session::Message;

    #[test]
    fn the_opening_note_names_the_files_and_the_latest_requests_not_the_answers() {
        let mut state = SessionState::default();
        assert_eq!(
            opening_note(&state),
            "This chat is new, on a project that already exists (0 files)."
        );
        state
            .files
            .extend(["index.html".to_owned(), "src/main.js".to_owned()]);
        for (id, text) in [("m1", "Build a todo app"), ("m3", "Add  dark\nmode")] {
            state.apply(&SessionEvent::MessageAdded {
                message: Message::user(id, text),
            });
            let mut answer = Message::assistant(format!("{id}a"));
            answer.parts.push(crate::runtime::session::Part::Text {
                text: "Here is the secret answer text".into(),
            });
            state.apply(&SessionEvent::MessageAdded { message: answer });
        }
        let note = opening_note(&state);
        assert!(
            note.contains("(2 files). Files: index.html, src/main.js."),
            "{note}"
        );
        assert!(
            note.ends_with("newest first:\n- Add dark mode\n- Build a todo app"),
            "{note}"
        );
        assert!(!note.contains("secret answer"), "{note}");
        let long = "word ".repeat(100);
        assert_eq!(shortened(&long).chars().count(), NOTE_REQUEST_CHARS + 1);
    }
}

#[cfg(test)]
mod restore_tests {
    use crate::runtime::session::{
        ChatId, Message, MessageStatus, Role, SessionEvent, SessionState,
    };
    use crate::server::store::MessageRow;

    fn row(id: &str, role: Role, text: &str, asked: Option<&str>) -> MessageRow {
        MessageRow {
            id: id.into(),
            role,
            text: text.into(),
            asked: asked.map(Into::into),
            model: None,
            usage: None,
            cost_usd: None,
            finish_reason: None,
            status: MessageStatus::Complete,
            attachments: Default::default(),
        }
    }

    #[test]
    fn the_conversation_rebuilt_from_the_store_keeps_each_chats_turns() {
        let mut state = SessionState::default();
        let second = ChatId::numbered(2);
        let mut rows = Vec::new();
        for (n, chat, asked) in [
            (1, ChatId::main(), "build it"),
            (3, second.clone(), "explain it"),
        ] {
            let (user, answer) = (format!("m{n}"), format!("m{}", n + 1));
            for mut message in [Message::user(&user, asked), Message::assistant(&answer)] {
                message.chat = chat.clone();
                state.apply(&SessionEvent::MessageAdded { message });
            }
            rows.push(row(&user, Role::User, asked, None));
            rows.push(row(
                &answer,
                Role::Assistant,
                &format!("answer to {asked}"),
                Some(asked),
            ));
        }
        let mut conversation =
            crate::server::session::restore::conversation(&state, &rows, &|_| Vec::new());
        // The latest message's chat is the current one.
        assert_eq!(conversation.chat(), &second);
        let contents = |c: &crate::server::session::conversation::Conversation| {
            c.history()
                .iter()
                .map(|m| m.content.clone())
                .collect::<Vec<_>>()
        };
        assert_eq!(
            contents(&conversation),
            ["explain it", "answer to explain it"]
        );
        conversation.switch_to(&ChatId::main());
        assert_eq!(contents(&conversation), ["build it", "answer to build it"]);
        assert_eq!(conversation.last_number(), 4);
    }
}
