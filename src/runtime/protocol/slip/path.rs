//! Whether a piece of text is a path, and the paths models give around a code
//! fence: the line before it and a comment on its first line. Only a line that
//! is nothing but the path counts: a sentence that mentions one is prose.
//! Whether the path may be written is not decided here but by `ProjectPath`
//! when the action is validated, as for any action.

/// File names without an extension that projects have.
const BARE_NAMES: &[&str] = &[
    "Dockerfile",
    "Makefile",
    "Procfile",
    "Gemfile",
    "Rakefile",
    "LICENSE",
];

/// Labels a model puts before a path.
const LABELS: &[&str] = &["file path", "filepath", "filename", "file", "path"];

/// Whether `s` reads as a file's path: no spaces, only the characters paths
/// are made of, and a last name with an extension (`App.tsx`), a dot file
/// (`.env`) or a known bare name (`Dockerfile`).
pub(in crate::runtime::protocol) fn looks_like_path(s: &str) -> bool {
    let allowed = |c: char| c.is_alphanumeric() || "._-/@+[]()~".contains(c);
    if s.is_empty() || s.len() > 300 || !s.chars().all(allowed) {
        return false;
    }
    let name = s.rsplit('/').next().unwrap_or(s);
    if BARE_NAMES.contains(&name) {
        return true;
    }
    if let Some(dot_name) = name.strip_prefix('.') {
        return !dot_name.is_empty() && !dot_name.starts_with('.');
    }
    match name.rsplit_once('.') {
        Some((stem, ext)) => {
            !stem.is_empty()
                && (1..=10).contains(&ext.len())
                && ext.starts_with(|c: char| c.is_ascii_alphabetic())
                && ext.chars().all(|c| c.is_ascii_alphanumeric())
        }
        None => false,
    }
}

/// A path written without backticks or bold: also not a product name such
/// as `Node.js` or `Vue.js`, which headings name more often than files.
pub(in crate::runtime::protocol) fn plain_path(s: &str) -> bool {
    let product =
        !s.contains('/') && s.starts_with(|c: char| c.is_ascii_uppercase()) && s.ends_with(".js");
    looks_like_path(s) && !product
}

/// The path a line gives when it is nothing but that path: a heading, a list
/// item, bold, backticks, a `File:` label, a trailing colon.
pub(in crate::runtime::protocol) fn in_line_before(line: &str) -> Option<String> {
    let unbolded = line.replace("**", "");
    let mut decorated = unbolded.len() != line.len();
    let mut s = strip_list_marker(strip_heading(unbolded.trim()));
    for _ in 0..4 {
        let before = s;
        s = s.trim().trim_end_matches(':').trim_end();
        if let Some(inner) = unwrap_marks(s) {
            s = inner;
            decorated = true;
        }
        if let Some(rest) = strip_label(s) {
            s = rest;
            decorated = true;
        }
        if s == before {
            break;
        }
    }
    let ok = if decorated {
        looks_like_path(s)
    } else {
        plain_path(s)
    };
    ok.then(|| s.to_owned())
}

/// A sentence that names exactly one path in backticks ("In `src/main.js`,
/// change…"): the file a snippet after it is about. Never written, only
/// named when the snippet is reported.
pub(in crate::runtime::protocol) fn named_in_prose(line: &str) -> Option<String> {
    let mut found: Option<&str> = None;
    let mut parts = line.split('`');
    parts.next();
    while let (Some(inside), Some(_)) = (parts.next(), parts.next()) {
        if looks_like_path(inside) {
            match found {
                Some(known) if known != inside => return None,
                _ => found = Some(inside),
            }
        }
    }
    found.map(str::to_owned)
}

/// The path a comment on a fence's first line gives: `// src/a.js`,
/// `/* src/a.js */`, `<!-- index.html -->`, `# main.py`, `-- q.sql`, with or
/// without a `File:` label.
pub(in crate::runtime::protocol) fn in_comment(line: &str) -> Option<String> {
    let inner = comment_text(line.trim())?;
    let mut s = inner.trim();
    if let Some(rest) = strip_label(s) {
        s = rest;
    }
    s = unwrap_marks(s).unwrap_or(s).trim();
    plain_path(s).then(|| s.to_owned())
}

/// The text of a line that is one comment, without its markers.
pub(in crate::runtime::protocol) fn comment_text(t: &str) -> Option<&str> {
    let wrapped = [("{/*", "*/}"), ("/*", "*/"), ("<!--", "-->")];
    for (open, close) in wrapped {
        if let Some(inner) = t.strip_prefix(open).and_then(|r| r.strip_suffix(close)) {
            return Some(inner);
        }
    }
    if t.starts_with("#!") {
        return None;
    }
    ["//", "#", "--", ";"]
        .iter()
        .find_map(|marker| t.strip_prefix(marker))
}

fn strip_heading(s: &str) -> &str {
    let hashes = s.bytes().take_while(|&b| b == b'#').count();
    match s[hashes..].strip_prefix(' ') {
        Some(rest) if (1..=6).contains(&hashes) => rest.trim_start(),
        _ => s,
    }
}

fn strip_list_marker(s: &str) -> &str {
    for marker in ["- ", "* ", "+ "] {
        if let Some(rest) = s.strip_prefix(marker) {
            return rest.trim_start();
        }
    }
    let digits = s.bytes().take_while(u8::is_ascii_digit).count();
    match s[digits..].strip_prefix(". ") {
        Some(rest) if digits > 0 => rest.trim_start(),
        _ => s,
    }
}

/// `s` without one pair of markdown marks around it: `**`, `__`, `*`, `_`,
/// `` ` ``.
fn unwrap_marks(s: &str) -> Option<&str> {
    ["**", "__", "`", "*", "_"].iter().find_map(|mark| {
        s.strip_prefix(mark)
            .and_then(|r| r.strip_suffix(mark))
            .filter(|inner| !inner.is_empty())
    })
}

/// `s` without a leading `File:`-style label.
fn strip_label(s: &str) -> Option<&str> {
    LABELS.iter().find_map(|label| {
        let head = s.get(..label.len())?;
        let rest = s[label.len()..].trim_start().strip_prefix(':')?;
        head.eq_ignore_ascii_case(label).then(|| rest.trim_start())
    })
}
