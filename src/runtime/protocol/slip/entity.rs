//! HTML entities, decoded as a stream: the parser reads an answer that
//! escaped its tags (`&lt;boltAction …&gt;`) by decoding it and reading the
//! result as bolt, so tags, attributes and content are unescaped alike.

/// What a piece of text that starts with `&` is so far.
#[derive(Debug, PartialEq)]
pub(in crate::runtime::protocol) enum Entity {
    /// A whole entity standing for this character.
    Char(char),
    /// The start of an entity: more text decides.
    Prefix,
    /// Not an entity: the `&` is itself.
    Not,
}

const ENTITIES: &[(&str, char)] = &[
    ("&lt;", '<'),
    ("&gt;", '>'),
    ("&amp;", '&'),
    ("&quot;", '"'),
    ("&apos;", '\''),
    ("&#39;", '\''),
    ("&#x27;", '\''),
    ("&#34;", '"'),
    ("&#x22;", '"'),
    ("&#47;", '/'),
    ("&#x2F;", '/'),
];

/// The longest entity, so a held prefix stays short.
pub(in crate::runtime::protocol) const MAX_ENTITY: usize = 6;

/// Reads `s`, which starts with `&`.
pub(in crate::runtime::protocol) fn entity(s: &str) -> Entity {
    let mut prefix = false;
    for (name, c) in ENTITIES {
        if s == *name {
            return Entity::Char(*c);
        }
        prefix |= name.len() > s.len() && name.starts_with(s);
    }
    if prefix { Entity::Prefix } else { Entity::Not }
}

/// The escaped tag starts that switch the parser to decoding.
pub(in crate::runtime::protocol) const TRIGGERS: &[&str] = &["&lt;boltArtifact", "&lt;boltAction"];

/// What `held`, text from a `&` on, is for the escaped-tag triggers.
#[derive(Debug, PartialEq)]
pub(in crate::runtime::protocol) enum Trigger {
    /// Still the start of a trigger.
    Prefix,
    /// A whole trigger; the next character decides whether it is a tag.
    Whole,
    /// Not a trigger.
    Not,
}

pub(in crate::runtime::protocol) fn trigger(held: &str) -> Trigger {
    if TRIGGERS.contains(&held) {
        Trigger::Whole
    } else if TRIGGERS.iter().any(|t| t.starts_with(held)) {
        Trigger::Prefix
    } else {
        Trigger::Not
    }
}

/// Whether `c`, after a whole trigger, ends the tag's name.
pub(in crate::runtime::protocol) fn ends_tag_name(c: char) -> bool {
    c.is_whitespace() || c == '&' || c == '/' || c == '>'
}
