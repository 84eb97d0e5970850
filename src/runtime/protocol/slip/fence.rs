//! Markdown code fences: the opening line, its info string, the closing line,
//! and reading the start of a line that may still become one.

use super::path::{looks_like_path, plain_path};
use crate::runtime::protocol::Recovery;

/// The longest fence line (opening or closing) that is held back while it
/// is read; a longer line is not taken for a fence.
pub(in crate::runtime::protocol) const MAX_FENCE_LINE: usize = 512;

/// An opening fence line: its character (`` ` `` or `~`), how many, and the
/// info string after them.
#[derive(Clone, Debug, PartialEq)]
pub(in crate::runtime::protocol) struct FenceOpen {
    pub ch: u8,
    pub ticks: usize,
    pub info: String,
}

impl FenceOpen {
    /// The language: the info string's first word, before any `:` or `{`.
    pub fn lang(&self) -> &str {
        let word = self.info.split_whitespace().next().unwrap_or("");
        word.split([':', '{']).next().unwrap_or("")
    }
}

/// Reads `line` (without its line end) as an opening fence: at most three
/// spaces, three or more backticks or tildes, an info string (with no
/// backtick after backticks).
pub(in crate::runtime::protocol) fn opener(line: &str) -> Option<FenceOpen> {
    let line = line.trim_end();
    let indent = line.len() - line.trim_start_matches(' ').len();
    let rest = &line[indent..];
    let ch = *rest.as_bytes().first()?;
    if indent > 3 || !matches!(ch, b'`' | b'~') {
        return None;
    }
    let ticks = rest.bytes().take_while(|&b| b == ch).count();
    let info = rest[ticks..].trim();
    if ticks < 3 || (ch == b'`' && info.contains('`')) {
        return None;
    }
    Some(FenceOpen {
        ch,
        ticks,
        info: info.to_owned(),
    })
}

/// Whether `line` closes the fence `open`: at most three spaces, at least as
/// many of its character, then only whitespace.
pub(in crate::runtime::protocol) fn is_closing(line: &str, open: &FenceOpen) -> bool {
    let line = line.trim_end();
    let indent = line.len() - line.trim_start_matches(' ').len();
    let rest = &line[indent..];
    indent <= 3 && rest.len() >= open.ticks && rest.bytes().all(|b| b == open.ch)
}

/// The start of a line, read a byte at a time: whether it may still be a
/// fence line (an opening one, or the closing one of `closing`).
#[derive(Clone, Copy, Debug, Default)]
pub(in crate::runtime::protocol) struct LineStart {
    spaces: u8,
    ch: u8,
    ticks: usize,
    /// Past the run of fence characters.
    after: bool,
}

impl LineStart {
    /// Takes the next byte; false once the line cannot be a fence line.
    pub fn step(&mut self, b: u8, closing: Option<&FenceOpen>) -> bool {
        if self.ticks == 0 {
            return self.before_fence(b, closing);
        }
        if !self.after {
            if b == self.ch {
                self.ticks += 1;
                return true;
            }
            let needed = closing.map_or(3, |open| open.ticks);
            if self.ticks < needed {
                return false;
            }
            self.after = true;
        }
        match closing {
            // Only whitespace may follow a closing fence.
            Some(_) => matches!(b, b' ' | b'\t' | b'\r'),
            None => !(self.ch == b'`' && b == b'`'),
        }
    }

    fn before_fence(&mut self, b: u8, closing: Option<&FenceOpen>) -> bool {
        match b {
            b' ' if self.spaces < 3 => {
                self.spaces += 1;
                true
            }
            b'`' | b'~' if closing.is_none_or(|open| open.ch == b) => {
                self.ch = b;
                self.ticks = 1;
                true
            }
            _ => false,
        }
    }
}

/// The path an info string gives, and how: `title="src/a.js"` (or
/// `filename=`, `file=`, `path=`), `js:src/a.js`, or a word that is a path
/// (```` ```src/a.js ````, ```` ```js src/a.js ````).
pub(in crate::runtime::protocol) fn path_in_info(info: &str) -> Option<(String, Recovery)> {
    if let Some(path) = info_attribute(info, &["title", "filename", "file", "path"])
        && looks_like_path(&path)
    {
        return Some((path, Recovery::FenceTitle));
    }
    let mut words = info.split_whitespace();
    let first = words.next()?;
    if let Some((_, path)) = first.split_once(':')
        && looks_like_path(path)
    {
        return Some((path.to_owned(), Recovery::FenceInfo));
    }
    [Some(first), words.next()]
        .into_iter()
        .flatten()
        .find(|word| plain_path(word))
        .map(|word| (word.to_owned(), Recovery::FenceInfo))
}

/// The value of the first `key=value` of `keys` in an info string; the value
/// in double or single quotes, or up to the next space.
fn info_attribute(info: &str, keys: &[&str]) -> Option<String> {
    let mut rest = info;
    while let Some(eq) = rest.find('=') {
        let key_start = (rest[..eq].char_indices().rev())
            .find(|(_, c)| !(c.is_ascii_alphanumeric() || *c == '_' || *c == '-'))
            .map_or(0, |(i, c)| i + c.len_utf8());
        let key = &rest[key_start..eq];
        let after = &rest[eq + 1..];
        let (value, next) = attribute_value(after);
        if keys.iter().any(|k| key.eq_ignore_ascii_case(k)) {
            return Some(value.trim().to_owned());
        }
        rest = next;
    }
    None
}

/// A quoted or bare value at the start of `s`, and what follows it.
fn attribute_value(s: &str) -> (&str, &str) {
    match s.chars().next() {
        Some(q @ ('"' | '\'')) => {
            let body = &s[1..];
            let end = body.find(q).unwrap_or(body.len());
            (&body[..end], body.get(end + 1..).unwrap_or(""))
        }
        _ => {
            let end = s.find(char::is_whitespace).unwrap_or(s.len());
            (&s[..end], &s[end..])
        }
    }
}
