//! Artifact and action ids. Every delta names its artifact and its action,
//! so cloning an id must be cheap: short ids (nearly all) are stored inline
//! and copied, longer ones are shared. An atomic reference count per clone
//! cost more than parsing the delta itself.

use std::borrow::Borrow;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::ops::Deref;
use std::sync::Arc;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// The longest id stored inline.
const INLINE: usize = 15;

/// An artifact or action id.
#[derive(Clone)]
pub struct Id(Repr);

// `Inline` is one `Copy` block of 16 bytes whose first byte, the length, is
// also the enum's tag (lengths above 15 mean `Shared`), so a clone is a
// single 16-byte copy. Field-wise copies made the next read of the event
// stall the CPU, which showed in the streaming benchmark.
#[derive(Clone)]
enum Repr {
    Inline(Inline),
    Shared(Arc<String>),
}

#[derive(Clone, Copy)]
struct Inline {
    len: Len,
    bytes: [u8; INLINE],
}

#[derive(Clone, Copy)]
#[repr(u8)]
enum Len {
    L0,
    L1,
    L2,
    L3,
    L4,
    L5,
    L6,
    L7,
    L8,
    L9,
    L10,
    L11,
    L12,
    L13,
    L14,
    L15,
}

const LENS: [Len; INLINE + 1] = [
    Len::L0,
    Len::L1,
    Len::L2,
    Len::L3,
    Len::L4,
    Len::L5,
    Len::L6,
    Len::L7,
    Len::L8,
    Len::L9,
    Len::L10,
    Len::L11,
    Len::L12,
    Len::L13,
    Len::L14,
    Len::L15,
];

impl Id {
    pub fn as_str(&self) -> &str {
        match &self.0 {
            // The bytes were copied from a `str` at a character boundary, so
            // they are always valid UTF-8.
            Repr::Inline(inline) => {
                std::str::from_utf8(&inline.bytes[..inline.len as usize]).unwrap_or_default()
            }
            Repr::Shared(s) => s,
        }
    }
}

impl From<&str> for Id {
    fn from(s: &str) -> Id {
        match LENS.get(s.len()) {
            Some(&len) => {
                let mut bytes = [0; INLINE];
                bytes[..s.len()].copy_from_slice(s.as_bytes());
                Id(Repr::Inline(Inline { len, bytes }))
            }
            None => Id(Repr::Shared(Arc::new(s.to_owned()))),
        }
    }
}

impl From<String> for Id {
    fn from(s: String) -> Id {
        if s.len() <= INLINE {
            Id::from(s.as_str())
        } else {
            Id(Repr::Shared(Arc::new(s)))
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
    fn an_id_takes_sixteen_bytes() {
        assert_eq!(size_of::<Id>(), 16);
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
