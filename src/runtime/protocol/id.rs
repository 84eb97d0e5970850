//! Artifact and action ids. Every delta names its artifact and its action,
//! so cloning an id must be cheap: short ids (nearly all) are stored inline
//! and copied, longer ones are shared. An atomic reference count per clone
//! (`Arc<str>`) cost more than parsing the delta itself.

use std::borrow::Borrow;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::ops::Deref;
use std::sync::Arc;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// The longest id stored inline.
const INLINE: usize = 15;

/// An artifact or action id.
///
/// A short id is a plain 16-byte array (its length, then its bytes), copied
/// in one move; only a longer one is shared behind a pointer. An enum of the
/// two was copied byte-field by byte-field, and reading the event right
/// after stalled the CPU: that showed in the streaming benchmark.
#[derive(Clone)]
pub struct Id {
    inline: [u8; INLINE + 1],
    shared: Option<Arc<String>>,
}

impl Id {
    pub fn as_str(&self) -> &str {
        match &self.shared {
            Some(shared) => shared,
            // The bytes were copied from a `str`, so they are valid UTF-8.
            None => self
                .inline
                .get(1..1 + usize::from(self.inline[0]))
                .and_then(|bytes| std::str::from_utf8(bytes).ok())
                .unwrap_or_default(),
        }
    }
}

impl From<&str> for Id {
    fn from(s: &str) -> Id {
        let mut inline = [0; INLINE + 1];
        match u8::try_from(s.len()) {
            Ok(len) if s.len() <= INLINE => {
                inline[0] = len;
                inline[1..=s.len()].copy_from_slice(s.as_bytes());
                Id {
                    inline,
                    shared: None,
                }
            }
            _ => Id {
                inline,
                shared: Some(Arc::new(s.to_owned())),
            },
        }
    }
}

impl From<String> for Id {
    fn from(s: String) -> Id {
        if s.len() <= INLINE {
            Id::from(s.as_str())
        } else {
            Id {
                inline: [0; INLINE + 1],
                shared: Some(Arc::new(s)),
            }
        }
    }
}

impl Deref for Id {
    type Target = str;
    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl AsRef<str> for Id {
    fn as_ref(&self) -> &str {
        self.as_str()
    }
}

impl Borrow<str> for Id {
    fn borrow(&self) -> &str {
        self.as_str()
    }
}

impl PartialEq for Id {
    fn eq(&self, other: &Id) -> bool {
        self.as_str() == other.as_str()
    }
}

impl Eq for Id {}

impl PartialEq<str> for Id {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<&str> for Id {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl Hash for Id {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.as_str().hash(state);
    }
}

impl fmt::Debug for Id {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl fmt::Display for Id {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for Id {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for Id {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Id, D::Error> {
        String::deserialize(deserializer).map(Id::from)
    }
}

#[cfg(test)]
mod tests {
    use super::Id;

    #[test]
    fn an_id_takes_twenty_four_bytes() {
        assert_eq!(size_of::<Id>(), 24);
    }

    #[test]
    fn short_and_long_ids_read_back() {
        for s in [
            "",
            "0",
            "todo-app",
            "ü-日本語",
            &"x".repeat(14),
            &"y".repeat(15),
        ] {
            let id = Id::from(s);
            assert_eq!(id.as_str(), s);
            assert_eq!(id.clone(), Id::from(s.to_owned()));
            assert_eq!(
                serde_json::to_string(&id).expect("serializes"),
                format!("{s:?}")
            );
        }
    }
}
