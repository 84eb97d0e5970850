//! Code left out: a snippet with `// ... existing code ...` or a line of
//! `...` is a change to a file, not the file, and writing it would delete
//! what it leaves out.

use super::path::comment_text;

/// What comments that stand for left-out code say.
const PHRASES: &[&str] = &[
    "existing code",
    "rest of the code",
    "rest of the file",
    "rest of file",
    "rest of the component",
    "rest unchanged",
    "remains unchanged",
    "remain unchanged",
    "unchanged code",
    "same as before",
    "previous code",
    "other code",
    "code omitted",
    "omitted for brevity",
    "for brevity",
];

/// The first line of `content` that stands for left-out code, trimmed.
pub(in crate::runtime::protocol) fn elided(content: &str) -> Option<&str> {
    content.lines().map(str::trim).find(|line| is_elision(line))
}

fn is_elision(line: &str) -> bool {
    if is_ellipsis(line) {
        return true;
    }
    let Some(inner) = comment_text(line) else {
        return false;
    };
    let inner = inner.trim().trim_start_matches(['(', '[']).trim_start();
    if is_ellipsis(inner) || inner.starts_with("...") || inner.starts_with('…') {
        return true;
    }
    let lower = inner.to_lowercase();
    PHRASES.iter().any(|phrase| lower.contains(phrase))
}

fn is_ellipsis(s: &str) -> bool {
    matches!(s, "..." | "…" | "// ..." | "/* ... */")
}
