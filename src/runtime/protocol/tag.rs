//! Recognising the bolt tags (and the file tags of other builders) in a
//! stream, one byte at a time, with state that survives chunk boundaries; and
//! reading a complete tag's attributes.

use super::content::decode_entities;

/// The tags of the protocol, and other builders' file tags (`dyad-write`,
/// `file`, `lov-write`), which models trained on them write instead of a
/// `boltAction`. Each parser state listens for some of them. A plain enum:
/// the tag reader looks at it for every byte of a held tag.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum TagName {
    OpenArtifact,
    CloseArtifact,
    OpenAction,
    CloseAction,
    OpenDyadWrite,
    CloseDyadWrite,
    OpenFile,
    CloseFile,
    OpenLovWrite,
    CloseLovWrite,
}

impl TagName {
    /// The tag's text up to and including its name.
    fn literal(self) -> &'static [u8] {
        match self {
            TagName::OpenArtifact => b"<boltArtifact",
            TagName::CloseArtifact => b"</boltArtifact",
            TagName::OpenAction => b"<boltAction",
            TagName::CloseAction => b"</boltAction",
            TagName::OpenDyadWrite => b"<dyad-write",
            TagName::CloseDyadWrite => b"</dyad-write",
            TagName::OpenFile => b"<file",
            TagName::CloseFile => b"</file",
            TagName::OpenLovWrite => b"<lov-write",
            TagName::CloseLovWrite => b"</lov-write",
        }
    }

    fn is_closing(self) -> bool {
        matches!(
            self,
            TagName::CloseArtifact
                | TagName::CloseAction
                | TagName::CloseDyadWrite
                | TagName::CloseFile
                | TagName::CloseLovWrite
        )
    }

    /// Another builder's opening file tag.
    pub(super) fn is_foreign(self) -> bool {
        matches!(
            self,
            TagName::OpenDyadWrite | TagName::OpenFile | TagName::OpenLovWrite
        )
    }

    /// What closes an action this tag opens, as a list to listen for.
    pub(super) fn closer(self) -> &'static [TagName] {
        match self {
            TagName::OpenDyadWrite => &[TagName::CloseDyadWrite],
            TagName::OpenFile => &[TagName::CloseFile],
            TagName::OpenLovWrite => &[TagName::CloseLovWrite],
            _ => &[TagName::CloseAction],
        }
    }
}

/// Where a held-back `<…` stands.
#[derive(Clone, Copy, Debug)]
enum Phase {
    /// Part of a tag name is matched (the held bytes are a prefix of a
    /// literal).
    Name,
    /// An opening tag's name is complete; attributes run up to a `>` that is
    /// not inside a quoted value.
    Attributes {
        name: TagName,
        after_equals: bool,
        quote: Option<u8>,
    },
    /// A closing tag's name is complete; only whitespace may come before `>`.
    Closing { name: TagName },
}

/// What feeding bytes to a held tag decided.
pub(super) enum Step {
    /// The input ran out before a decision; all of it is held.
    NeedMore,
    /// The held bytes, ending at `>`, are this tag; `consumed` bytes of the
    /// input belong to it.
    Tag { name: TagName, consumed: usize },
    /// The held bytes are not a tag and must be released as ordinary input;
    /// `consumed` bytes of the input were added to them, and scanning goes on
    /// after those.
    NotATag { consumed: usize },
}

/// A `<` that may still become a tag, with what followed it so far. It never
/// grows beyond [`super::MAX_HELD_TAG`] bytes.
#[derive(Debug, Default)]
pub(super) struct HeldTag {
    bytes: String,
    phase: Option<Phase>,
}

impl HeldTag {
    pub(super) fn is_active(&self) -> bool {
        self.phase.is_some()
    }

    /// Starts holding at a `<`.
    pub(super) fn start(&mut self) {
        self.bytes.clear();
        self.bytes.push('<');
        self.phase = Some(Phase::Name);
    }

    /// The held text, for a tag that was recognised or released.
    pub(super) fn text(&self) -> &str {
        &self.bytes
    }

    /// Stops holding; the held text stays readable until the next `start`.
    pub(super) fn stop(&mut self) {
        self.phase = None;
    }

    /// The held text, taken out to be read again as ordinary input; hand
    /// it back with [`HeldTag::give_back`] to keep its allocation.
    pub(super) fn take_text(&mut self) -> String {
        std::mem::take(&mut self.bytes)
    }

    pub(super) fn give_back(&mut self, mut bytes: String) {
        if self.bytes.is_empty() {
            bytes.clear();
            self.bytes = bytes;
        }
    }

    /// Feeds input that follows the held bytes. `listens` are the tags the
    /// parser's state accepts. Linear in the bytes it consumes.
    pub(super) fn feed(&mut self, input: &str, listens: &[TagName], max: usize) -> Step {
        let bytes = input.as_bytes();
        let mut i = 0;
        while i < bytes.len() {
            let Some(phase) = self.phase else {
                return Step::NotATag { consumed: 0 };
            };
            let b = bytes[i];
            match phase {
                Phase::Name => match self.name_step(b, listens) {
                    NameStep::Extend(next) => {
                        self.bytes.push(char::from(b));
                        i += 1;
                        match next {
                            Some(Phase::Attributes { name, .. })
                            | Some(Phase::Closing { name })
                                if b == b'>' =>
                            {
                                return Step::Tag { name, consumed: i };
                            }
                            Some(next) => self.phase = Some(next),
                            None => {}
                        }
                    }
                    NameStep::Mismatch => return Step::NotATag { consumed: i },
                },
                Phase::Attributes {
                    name,
                    after_equals,
                    quote,
                } => {
                    // Scan the run of this phase in one go; the held text is
                    // copied once, when the run ends.
                    let mut after_equals = after_equals;
                    let mut quote = quote;
                    let start = i;
                    let mut held = self.bytes.len();
                    while i < bytes.len() {
                        let b = bytes[i];
                        let width = utf8_width(b);
                        if width > 0 && held + width > max {
                            self.bytes.push_str(&input[start..i]);
                            return Step::NotATag { consumed: i };
                        }
                        held += 1;
                        i += 1;
                        match quote {
                            Some(q) if b == q => quote = None,
                            Some(_) => {}
                            None => match b {
                                b'>' => {
                                    self.bytes.push_str(&input[start..i]);
                                    return Step::Tag { name, consumed: i };
                                }
                                b'=' => after_equals = true,
                                b'"' | b'\'' if after_equals => quote = Some(b),
                                b' ' | b'\t' | b'\n' | b'\r' | b'\x0c' => {}
                                _ => after_equals = false,
                            },
                        }
                    }
                    self.bytes.push_str(&input[start..i]);
                    self.phase = Some(Phase::Attributes {
                        name,
                        after_equals,
                        quote,
                    });
                }
                Phase::Closing { name } => match b {
                    _ if self.bytes.len() >= max => return Step::NotATag { consumed: i },
                    b'>' => {
                        self.bytes.push('>');
                        return Step::Tag {
                            name,
                            consumed: i + 1,
                        };
                    }
                    b' ' | b'\t' | b'\n' | b'\r' | b'\x0c' => {
                        self.bytes.push(char::from(b));
                        i += 1;
                    }
                    _ => return Step::NotATag { consumed: i },
                },
            }
        }
        Step::NeedMore
    }

    /// One byte while the name is being matched: the held bytes are a strict
    /// prefix of at least one listened literal, or exactly a whole literal.
    fn name_step(&self, b: u8, listens: &[TagName]) -> NameStep {
        let held = self.bytes.as_bytes();
        for &name in listens {
            let literal = name.literal();
            if !literal.starts_with(held) {
                continue;
            }
            if held.len() < literal.len() {
                if literal[held.len()] == b {
                    return NameStep::Extend(None);
                }
                continue;
            }
            // The name is complete: the next byte says whether it is a tag.
            let whitespace = matches!(b, b' ' | b'\t' | b'\n' | b'\r' | b'\x0c');
            if name.is_closing() {
                if whitespace || b == b'>' {
                    return NameStep::Extend(Some(Phase::Closing { name }));
                }
            } else if whitespace || b == b'>' || b == b'/' {
                return NameStep::Extend(Some(Phase::Attributes {
                    name,
                    after_equals: false,
                    quote: None,
                }));
            }
        }
        NameStep::Mismatch
    }
}

enum NameStep {
    Extend(Option<Phase>),
    Mismatch,
}

/// The byte length of the character that starts with `b`, or 0 for a
/// continuation byte.
fn utf8_width(b: u8) -> usize {
    match b {
        0x00..=0x7f => 1,
        0x80..=0xbf => 0,
        0xc0..=0xdf => 2,
        0xe0..=0xef => 3,
        _ => 4,
    }
}

/// A complete opening tag's attributes, in order, first occurrence winning,
/// values with entities decoded; and whether the tag closed itself (`/>`).
#[derive(Debug, Default, PartialEq)]
pub(super) struct TagAttributes {
    pub(super) pairs: Vec<(String, String)>,
    pub(super) self_closing: bool,
}

impl TagAttributes {
    /// Reads `tag`, the whole text from `<` to `>`, of a tag named `name`.
    /// Lenient: anything that is not an attribute is skipped.
    pub(super) fn parse(tag: &str, name: TagName) -> TagAttributes {
        let inner = &tag[name.literal().len()..];
        let inner = inner.strip_suffix('>').unwrap_or(inner);
        let mut attributes = TagAttributes::default();
        let mut rest = inner;
        loop {
            rest = rest.trim_start();
            let Some(c) = rest.chars().next() else { break };
            if c == '/' {
                rest = &rest[1..];
                if rest.trim().is_empty() {
                    attributes.self_closing = true;
                    break;
                }
                continue;
            }
            let name_end = rest
                .find(|c: char| c.is_whitespace() || matches!(c, '=' | '/' | '"' | '\''))
                .unwrap_or(rest.len());
            if name_end == 0 {
                // A stray quote or `=`: skip it.
                rest = &rest[c.len_utf8()..];
                continue;
            }
            let key = &rest[..name_end];
            rest = rest[name_end..].trim_start();
            let mut value = "";
            if let Some(after) = rest.strip_prefix('=') {
                let after = after.trim_start();
                match after.chars().next() {
                    Some(q @ ('"' | '\'')) => {
                        let body = &after[1..];
                        let end = body.find(q).unwrap_or(body.len());
                        value = &body[..end];
                        rest = body.get(end + 1..).unwrap_or("");
                    }
                    _ => {
                        let end = after.find(char::is_whitespace).unwrap_or(after.len());
                        let mut v = &after[..end];
                        let tail = &after[end..];
                        if tail.trim().is_empty()
                            && let Some(stripped) = v.strip_suffix('/')
                        {
                            v = stripped;
                            attributes.self_closing = true;
                        }
                        value = v;
                        rest = tail;
                    }
                }
            }
            if !attributes.pairs.iter().any(|(k, _)| k == key) {
                attributes
                    .pairs
                    .push((key.to_owned(), decode_entities(value, true).into_owned()));
            }
        }
        attributes
    }

    /// Takes the value of an attribute out, leaving the unknown ones.
    pub(super) fn take(&mut self, key: &str) -> Option<String> {
        let index = self.pairs.iter().position(|(k, _)| k == key)?;
        Some(self.pairs.remove(index).1)
    }

    /// Takes out the first attribute whose name, in any letter case, is one
    /// of `keys`.
    pub(super) fn take_any(&mut self, keys: &[&str]) -> Option<String> {
        let index = (self.pairs.iter())
            .position(|(k, _)| keys.iter().any(|key| k.eq_ignore_ascii_case(key)))?;
        Some(self.pairs.remove(index).1)
    }
}
