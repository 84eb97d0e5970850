//! How an action's raw content becomes its final content, and how a path
//! attribute is normalised. Each function is one linear pass (or a few) over
//! its input, run once when the action closes.

use std::borrow::Cow;

/// The final content of a file (and of a supabase action's SQL):
/// whitespace-only leading lines and trailing whitespace removed, exactly one
/// trailing newline (none for an empty file), the first line's indentation
/// kept. A body that is one fenced code block is unwrapped. Entities are
/// decoded only when the model escaped the whole file: no literal `<` but
/// some `&lt;`.
pub fn file_content(raw: &str) -> String {
    file_body(raw, true)
}

/// Like [`file_content`] for content that was decoded from HTML entities as
/// it streamed (an answer with escaped tags): it is not decoded twice.
pub(super) fn decoded_file_content(raw: &str) -> String {
    file_body(raw, false)
}

fn file_body(raw: &str, decode: bool) -> String {
    let mut body = trim_layout(raw);
    if let Some(inner) = unwrap_fence(body) {
        body = trim_layout(inner);
    }
    if body.is_empty() {
        return String::new();
    }
    let body = if decode && !body.contains('<') && body.contains("&lt;") {
        decode_entities(body, false)
    } else {
        Cow::Borrowed(body)
    };
    let mut content = String::with_capacity(body.len() + 1);
    content.push_str(&body);
    content.push('\n');
    content
}

/// The final content of a shell, start or build action: trimmed.
pub fn command_content(raw: &str) -> String {
    raw.trim().to_owned()
}

/// Removes the prefixes a model uses for the project's root: a leading
/// `/home/project/` and any leading `./`. Whether the path is acceptable is
/// decided later, when the action is validated.
pub fn normalize_path(path: &str) -> String {
    let mut path = path.trim();
    path = path.strip_prefix("/home/project/").unwrap_or(path);
    while let Some(rest) = path.strip_prefix("./") {
        path = rest;
    }
    path.to_owned()
}

/// Drops whitespace-only lines at the start and any whitespace at the end,
/// keeping the indentation of the first line that has something on it.
fn trim_layout(raw: &str) -> &str {
    let Some(first) = raw.find(|c: char| !c.is_whitespace()) else {
        return "";
    };
    let line_start = raw[..first].rfind('\n').map_or(0, |i| i + 1);
    raw[line_start..].trim_end()
}

/// The inside of `body` when it is exactly one fenced code block: an opening
/// line of three or more backticks (with or without an info string), a
/// closing line of at least as many backticks and nothing but backticks, and
/// no line in between that would close it.
fn unwrap_fence(body: &str) -> Option<&str> {
    let (first, rest) = body.split_once('\n')?;
    let opening = first.trim_start();
    let ticks = opening.bytes().take_while(|&b| b == b'`').count();
    if ticks < 3 || opening[ticks..].contains('`') {
        return None;
    }
    let is_closing = |line: &str| {
        let line = line.trim();
        line.len() >= ticks && line.bytes().all(|b| b == b'`')
    };
    let (inner, last) = match rest.rfind('\n') {
        Some(i) => (&rest[..i], &rest[i + 1..]),
        None => ("", rest),
    };
    if !is_closing(last) || inner.lines().any(is_closing) {
        return None;
    }
    Some(inner)
}

/// Decodes `&lt;`, `&gt;` and `&amp;` in one pass (so `&amp;lt;` becomes
/// `&lt;`); with `attribute`, also `&quot;`, `&apos;` and `&#39;`. Anything
/// else is left as written.
pub(super) fn decode_entities(s: &str, attribute: bool) -> Cow<'_, str> {
    if !s.contains('&') {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(i) = rest.find('&') {
        out.push_str(&rest[..i]);
        rest = &rest[i..];
        let mut decoded = None;
        for (entity, c) in ENTITIES {
            let for_attributes_only = !matches!(*c, '<' | '>' | '&');
            if (attribute || !for_attributes_only) && rest.starts_with(entity) {
                decoded = Some((entity.len(), *c));
                break;
            }
        }
        match decoded {
            Some((len, c)) => {
                out.push(c);
                rest = &rest[len..];
            }
            None => {
                out.push('&');
                rest = &rest[1..];
            }
        }
    }
    out.push_str(rest);
    Cow::Owned(out)
}

const ENTITIES: &[(&str, char)] = &[
    ("&lt;", '<'),
    ("&gt;", '>'),
    ("&amp;", '&'),
    ("&quot;", '"'),
    ("&apos;", '\''),
    ("&#39;", '\''),
];
