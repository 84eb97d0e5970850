//! A project's chats: separate conversations over the same files, runtime
//! and checkpoints. Every project has its first chat, `main`; the others
//! are opened by the person and start from a note about the project, not
//! from another chat's transcript.

use std::fmt;

use serde::{Deserialize, Serialize};

/// The most chats a project may have.
pub const MAX_CHATS: usize = 32;

/// A chat's name within its project: `main`, or `c2`, `c3`, …
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[serde(transparent)]
pub struct ChatId(String);

impl ChatId {
    /// The project's first chat, the one the older routes address.
    pub fn main() -> ChatId {
        ChatId("main".to_owned())
    }

    /// The `n`th chat a project opened (`n` ≥ 2).
    pub fn numbered(n: usize) -> ChatId {
        ChatId(format!("c{n}"))
    }

    /// A chat id as a caller wrote it: `main` or `c` and a number.
    pub fn parse(text: &str) -> Option<ChatId> {
        let numbered = text.strip_prefix('c').is_some_and(|n| {
            !n.is_empty() && n.len() <= 4 && n.bytes().all(|b| b.is_ascii_digit())
        });
        (text == "main" || numbered).then(|| ChatId(text.to_owned()))
    }

    pub fn is_main(&self) -> bool {
        self.0 == "main"
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl Default for ChatId {
    fn default() -> ChatId {
        ChatId::main()
    }
}

impl fmt::Display for ChatId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// One of a project's chats.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct Chat {
    pub id: ChatId,
    pub title: String,
    /// What its requests are told about the project: its files and latest
    /// changes when the chat was opened (empty for the first chat, whose
    /// transcript tells it).
    pub opening: String,
}

impl Chat {
    /// The first chat, which every project has.
    pub fn main() -> Chat {
        Chat {
            id: ChatId::main(),
            title: "Chat 1".to_owned(),
            opening: String::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chat_ids_are_main_or_numbered() {
        assert_eq!(ChatId::parse("main"), Some(ChatId::main()));
        assert_eq!(ChatId::parse("c2"), Some(ChatId::numbered(2)));
        for bad in ["", "c", "c-1", "C2", "c12345", "../x", "main2", "c2 "] {
            assert_eq!(ChatId::parse(bad), None, "{bad:?}");
        }
        assert!(ChatId::default().is_main());
        assert_eq!(
            serde_json::to_string(&ChatId::numbered(3)).unwrap(),
            "\"c3\""
        );
    }
}
