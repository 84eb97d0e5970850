//! API keys, kept out of logs, errors and anything sent to the browser.

use std::fmt;

/// An API key. `Debug`, `Display` and `Serialize` all print a placeholder;
/// only [`Secret::expose`] gives the key, for the one place that sends it.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum InvalidKey {
    #[error("the API key is empty")]
    Empty,
    #[error("the API key contains spaces or control characters; paste it again")]
    BadCharacter,
}

const PLACEHOLDER: &str = "<redacted>";

impl Secret {
    /// Accepts a key as pasted: surrounding whitespace is dropped. What is left
    /// must be printable ASCII without spaces, since it goes into an HTTP
    /// header.
    pub fn new(key: &str) -> Result<Secret, InvalidKey> {
        let key = key.trim();
        if key.is_empty() {
            return Err(InvalidKey::Empty);
        }
        if !key.bytes().all(|b| b.is_ascii_graphic()) {
            return Err(InvalidKey::BadCharacter);
        }
        Ok(Secret(key.to_owned()))
    }

    pub fn expose(&self) -> &str {
        &self.0
    }

    /// Removes the key from text that came from elsewhere (a provider's error
    /// message may quote it).
    pub fn redact(&self, text: &str) -> String {
        text.replace(&self.0, PLACEHOLDER)
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Secret({PLACEHOLDER})")
    }
}

impl fmt::Display for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(PLACEHOLDER)
    }
}

impl serde::Serialize for Secret {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(PLACEHOLDER)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_trimmed_and_checked() {
        let check = |input: &str, expect: Result<&str, InvalidKey>| {
            let got = Secret::new(input);
            assert_eq!(
                got.as_ref().map(Secret::expose),
                expect.as_deref(),
                "{input:?}"
            );
        };
        check("  sk-abc\n", Ok("sk-abc"));
        check("", Err(InvalidKey::Empty));
        check(" \t", Err(InvalidKey::Empty));
        check("sk abc", Err(InvalidKey::BadCharacter));
        check("sk-\u{e9}", Err(InvalidKey::BadCharacter));
        check("sk-a\r\nX-Evil: 1", Err(InvalidKey::BadCharacter));
    }

    #[test]
    fn no_formatting_shows_the_key() {
        let key = Secret::new("sk-very-secret-123").unwrap();
        for shown in [
            format!("{key}"),
            format!("{key:?}"),
            format!("{key:#?}"),
            serde_json::to_string(&key).unwrap(),
            key.redact("Incorrect API key provided: sk-very-secret-123."),
        ] {
            assert!(!shown.contains("secret"), "{shown}");
        }
    }
}
