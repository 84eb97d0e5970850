//! SEARCH/REPLACE edits. An edit action's body holds blocks
//!
//! ```text
//! <<<<<<< SEARCH
//! old lines
//! =======
//! new lines
//! >>>>>>> REPLACE
//! ```
//!
//! applied in order. Each SEARCH must match exactly one place: first as
//! written, then ignoring whitespace at the start and end of each line. A
//! block that matches nowhere or more than once is an error that names the
//! block and quotes the closest lines, so the model can correct itself. The
//! same matcher serves the `replace` tool (old text, new text, expected count).

use std::fmt;

use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct EditBlock {
    /// The lines to find, each ending in `\n`; empty for "the whole (empty)
    /// file".
    pub search: String,
    /// The lines to put in their place, each ending in `\n`.
    pub replace: String,
}

/// Lines of the file quoted in an error: where they start and the text with
/// line numbers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Closest {
    pub first_line: usize,
    pub last_line: usize,
    pub quoted: String,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EditError {
    NoBlocks,
    Malformed {
        block: usize,
        reason: &'static str,
    },
    /// Nothing to search for (and the file is not empty).
    EmptySearch {
        block: Option<usize>,
    },
    NoMatch {
        block: Option<usize>,
        search: String,
        closest: Option<Closest>,
    },
    WrongCount {
        block: Option<usize>,
        search: String,
        expected: usize,
        found: usize,
        /// The 1-based lines where the matches start.
        lines: Vec<usize>,
    },
}

impl std::error::Error for EditError {}

impl fmt::Display for EditError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let target = |f: &mut fmt::Formatter<'_>, block: &Option<usize>, search: &str| {
            let first = search.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
            match block {
                Some(n) => write!(f, "SEARCH block {n} (starting {:?})", first.trim()),
                None => write!(f, "the text to replace (starting {:?})", first.trim()),
            }
        };
        match self {
            EditError::NoBlocks => f.write_str(
                "the edit has no SEARCH/REPLACE blocks \
                 (<<<<<<< SEARCH, old lines, =======, new lines, >>>>>>> REPLACE)",
            ),
            EditError::Malformed { block, reason } => write!(f, "SEARCH block {block}: {reason}"),
            EditError::EmptySearch { block: Some(n) } => write!(
                f,
                "SEARCH block {n} is empty, which only fits an empty file; quote the lines to change"
            ),
            EditError::EmptySearch { block: None } => f.write_str("the text to replace is empty"),
            EditError::NoMatch {
                block,
                search,
                closest,
            } => {
                target(f, block, search)?;
                f.write_str(" matches nowhere in the file")?;
                match closest {
                    Some(c) if c.first_line == c.last_line => {
                        write!(f, "; the closest line is {}:\n{}", c.first_line, c.quoted)
                    }
                    Some(c) => write!(
                        f,
                        "; the closest lines are {}-{}:\n{}",
                        c.first_line, c.last_line, c.quoted
                    ),
                    None => Ok(()),
                }
            }
            EditError::WrongCount {
                block,
                search,
                expected,
                found,
                lines,
            } => {
                target(f, block, search)?;
                let lines: Vec<String> = lines.iter().map(usize::to_string).collect();
                if block.is_some() {
                    write!(
                        f,
                        " matches {found} places (lines {}); add surrounding lines so it matches one",
                        lines.join(", ")
                    )
                } else {
                    write!(
                        f,
                        " was expected {expected} times but occurs {found} times (lines {})",
                        lines.join(", ")
                    )
                }
            }
        }
    }
}

/// Parses and applies an edit action's raw body to `original`.
pub fn apply_edit(original: &str, raw_edit_body: &str) -> Result<String, EditError> {
    apply_blocks(original, &parse_edit_blocks(raw_edit_body)?)
}

/// Applies blocks in order, each to the result of the one before.
pub fn apply_blocks(original: &str, blocks: &[EditBlock]) -> Result<String, EditError> {
    let mut text = original.to_owned();
    for (index, block) in blocks.iter().enumerate() {
        text = replace_in(&text, &block.search, &block.replace, 1, Some(index + 1))?;
    }
    Ok(text)
}

/// Replaces `old` by `new` in `original`, which must contain it exactly
/// `expected_count` times: as written, or else ignoring whitespace at the
/// start and end of each line.
pub fn replace(
    original: &str,
    old: &str,
    new: &str,
    expected_count: usize,
) -> Result<String, EditError> {
    replace_in(original, old, new, expected_count, None)
}

/// Reads the blocks of an edit body. Lines outside blocks (blank lines, a
/// stray fence) are ignored; a block missing a marker is an error.
pub fn parse_edit_blocks(body: &str) -> Result<Vec<EditBlock>, EditError> {
    enum Section {
        Outside,
        Search,
        Replace,
    }
    let mut blocks = Vec::new();
    let mut section = Section::Outside;
    let (mut search, mut replace) = (String::new(), String::new());
    for line in body.lines() {
        let marker = Marker::of(line);
        let block = blocks.len() + 1;
        let malformed = |reason| Err(EditError::Malformed { block, reason });
        section = match (section, marker) {
            (Section::Outside, Some(Marker::Search)) => Section::Search,
            (Section::Outside, Some(_)) => {
                return malformed("a ======= or >>>>>>> REPLACE line comes before <<<<<<< SEARCH");
            }
            (Section::Outside, None) => Section::Outside,
            (Section::Search, Some(Marker::Divider)) => Section::Replace,
            (Section::Search, Some(_)) => {
                return malformed("the SEARCH section does not end with a ======= line");
            }
            (Section::Search, None) => {
                push_line(&mut search, line);
                Section::Search
            }
            (Section::Replace, Some(Marker::Replace)) => {
                blocks.push(EditBlock {
                    search: std::mem::take(&mut search),
                    replace: std::mem::take(&mut replace),
                });
                Section::Outside
            }
            (Section::Replace, Some(Marker::Search)) => {
                return malformed("the block does not end with a >>>>>>> REPLACE line");
            }
            // A line of `=` inside the new text is content (a Markdown
            // heading underline, say).
            (Section::Replace, Some(Marker::Divider) | None) => {
                push_line(&mut replace, line);
                Section::Replace
            }
        };
    }
    if !matches!(section, Section::Outside) {
        return Err(EditError::Malformed {
            block: blocks.len() + 1,
            reason: "the block does not end with a >>>>>>> REPLACE line",
        });
    }
    if blocks.is_empty() {
        return Err(EditError::NoBlocks);
    }
    Ok(blocks)
}

fn push_line(section: &mut String, line: &str) {
    section.push_str(line.strip_suffix('\r').unwrap_or(line));
    section.push('\n');
}

enum Marker {
    Search,
    Divider,
    Replace,
}

impl Marker {
    /// Markers are 5 to 9 of `<`, `=` or `>`; the word after the angles is
    /// required, the space before it optional.
    fn of(line: &str) -> Option<Marker> {
        let line = line.trim();
        let run = |c: char| line.chars().take_while(|&x| x == c).count();
        let (lt, eq, gt) = (run('<'), run('='), run('>'));
        if (5..=9).contains(&lt) && line[lt..].trim_start() == "SEARCH" {
            Some(Marker::Search)
        } else if (5..=9).contains(&eq) && eq == line.len() {
            Some(Marker::Divider)
        } else if (5..=9).contains(&gt) && line[gt..].trim_start() == "REPLACE" {
            Some(Marker::Replace)
        } else {
            None
        }
    }
}

/// The shared matcher. `block` is the 1-based block number for an edit, or
/// `None` for the `replace` tool; blocks match whole lines only.
fn replace_in(
    original: &str,
    old: &str,
    new: &str,
    expected: usize,
    block: Option<usize>,
) -> Result<String, EditError> {
    // Work on `\n` line ends and a final newline; restore both at the end.
    let crlf = original.contains("\r\n");
    let mut text = if crlf {
        original.replace("\r\n", "\n")
    } else {
        original.to_owned()
    };
    let add_newline = !text.is_empty() && !text.ends_with('\n');
    if add_newline {
        text.push('\n');
    }
    let old = old.replace("\r\n", "\n");
    let new = new.replace("\r\n", "\n");

    if old.trim().is_empty() {
        // An empty SEARCH creates the content of an empty file.
        return if block.is_some() && text.trim().is_empty() {
            Ok(restore(new, crlf, false))
        } else {
            Err(EditError::EmptySearch { block })
        };
    }

    let exact = exact_matches(&text, &old, block.is_some());
    let (matches, replacement) = if exact.is_empty() {
        let loose = loose_matches(&text, &old);
        if loose.is_empty() {
            return Err(EditError::NoMatch {
                block,
                search: old.clone(),
                closest: closest_lines(&text, &old),
            });
        }
        let replacement = reindent(&text[loose[0].clone()], &old, &new);
        let replacement = if replacement.is_empty() || replacement.ends_with('\n') {
            replacement
        } else {
            replacement + "\n"
        };
        (loose, replacement)
    } else {
        (exact, new)
    };
    if matches.len() != expected {
        return Err(EditError::WrongCount {
            block,
            search: old,
            expected,
            found: matches.len(),
            lines: matches
                .iter()
                .map(|m| line_number(&text, m.start))
                .collect(),
        });
    }
    let mut result = String::with_capacity(text.len() + replacement.len() * expected);
    let mut at = 0;
    for m in matches {
        result.push_str(&text[at..m.start]);
        result.push_str(&replacement);
        at = m.end;
    }
    result.push_str(&text[at..]);
    Ok(restore(result, crlf, add_newline))
}

fn restore(mut text: String, crlf: bool, remove_final_newline: bool) -> String {
    if remove_final_newline && text.ends_with('\n') {
        text.pop();
    }
    if crlf {
        text.replace('\n', "\r\n")
    } else {
        text
    }
}

type Span = std::ops::Range<usize>;

/// Non-overlapping occurrences of `old`; with `whole_lines`, only those that
/// start at the start of a line (`old` then ends with a newline).
fn exact_matches(text: &str, old: &str, whole_lines: bool) -> Vec<Span> {
    let mut found = Vec::new();
    let mut from = 0;
    while let Some(i) = text[from..].find(old) {
        let start = from + i;
        if !whole_lines || start == 0 || text.as_bytes()[start - 1] == b'\n' {
            found.push(start..start + old.len());
            from = start + old.len();
        } else {
            from = start + 1;
            while !text.is_char_boundary(from) {
                from += 1;
            }
        }
    }
    found
}

/// The lines of `s` without blank lines at either end.
fn needle_lines(s: &str) -> Vec<&str> {
    let lines: Vec<&str> = s.lines().collect();
    let first = lines.iter().position(|l| !l.trim().is_empty());
    let last = lines.iter().rposition(|l| !l.trim().is_empty());
    match (first, last) {
        (Some(a), Some(b)) => lines[a..=b].to_vec(),
        _ => Vec::new(),
    }
}

/// Each line of `text` with its span, newline included.
fn line_spans(text: &str) -> Vec<(Span, &str)> {
    let mut spans = Vec::new();
    let mut at = 0;
    for line in text.split_inclusive('\n') {
        spans.push((at..at + line.len(), line.trim_end_matches('\n')));
        at += line.len();
    }
    spans
}

/// Non-overlapping runs of whole lines equal to `old`'s lines once each is
/// trimmed.
fn loose_matches(text: &str, old: &str) -> Vec<Span> {
    let needle = needle_lines(old);
    let lines = line_spans(text);
    let mut found = Vec::new();
    let mut i = 0;
    while !needle.is_empty() && i + needle.len() <= lines.len() {
        let hit = needle
            .iter()
            .zip(&lines[i..])
            .all(|(n, (_, l))| n.trim() == l.trim());
        if hit {
            found.push(lines[i].0.start..lines[i + needle.len() - 1].0.end);
            i += needle.len();
        } else {
            i += 1;
        }
    }
    found
}

/// `new` shifted by the indentation the file has and `old` lacked (or the
/// other way round), judged on the first line that has text.
fn reindent(matched: &str, old: &str, new: &str) -> String {
    let indent = |s: &str| -> String { s.chars().take_while(|c| c.is_whitespace()).collect() };
    let (Some(file_line), Some(old_line)) = (
        matched.lines().find(|l| !l.trim().is_empty()),
        old.lines().find(|l| !l.trim().is_empty()),
    ) else {
        return new.to_owned();
    };
    let (have, wrote) = (indent(file_line), indent(old_line));
    let mut out = String::with_capacity(new.len());
    for line in new.split_inclusive('\n') {
        if line.trim().is_empty() {
            out.push_str(line);
        } else if let Some(extra) = have.strip_prefix(wrote.as_str()) {
            out.push_str(extra);
            out.push_str(line);
        } else if let Some(surplus) = wrote.strip_prefix(have.as_str()) {
            out.push_str(line.strip_prefix(surplus).unwrap_or(line));
        } else {
            out.push_str(line);
        }
    }
    out
}

fn line_number(text: &str, at: usize) -> usize {
    text[..at].bytes().filter(|&b| b == b'\n').count() + 1
}

/// The run of lines most like `old`, line by line, quoted with numbers.
fn closest_lines(text: &str, old: &str) -> Option<Closest> {
    const MAX_QUOTED: usize = 20;
    let needle = needle_lines(old);
    let lines = line_spans(text);
    if needle.is_empty() || lines.is_empty() {
        return None;
    }
    let width = needle.len().min(lines.len());
    let mut best = (0.0, 0);
    for start in 0..=lines.len() - width {
        let score: f64 = needle
            .iter()
            .zip(&lines[start..start + width])
            .map(|(n, (_, l))| similarity(n.trim(), l.trim()))
            .sum();
        if score > best.0 {
            best = (score, start);
        }
    }
    if best.0 <= 0.0 {
        return None;
    }
    let (start, end) = (best.1, best.1 + width);
    let mut quoted = String::new();
    for (n, (_, line)) in lines[start..end].iter().enumerate().take(MAX_QUOTED) {
        quoted.push_str(&format!("{:>5} | {line}\n", start + n + 1));
    }
    if width > MAX_QUOTED {
        quoted.push_str("      | …\n");
    }
    Some(Closest {
        first_line: start + 1,
        last_line: end,
        quoted,
    })
}

/// How alike two lines are, from 0 to 1: the share of the longer one that a
/// common start and a common end cover.
fn similarity(a: &str, b: &str) -> f64 {
    if a == b {
        return if a.is_empty() { 0.1 } else { 1.0 };
    }
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    let longest = a.len().max(b.len());
    let prefix = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let suffix = a[prefix..]
        .iter()
        .rev()
        .zip(b[prefix..].iter().rev())
        .take_while(|(x, y)| x == y)
        .count();
    (prefix + suffix) as f64 / longest as f64
}

#[cfg(test)]
mod tests;
