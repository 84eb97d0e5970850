//! What the person points at in the preview. The preview's inspector
//! (`server/sandbox/preview/inspector.js`) describes the element they
//! select, or the text they edit in place, and posts it to the IDE's page;
//! here is what that message holds ([`parse`]), the chip the composer shows
//! for it ([`ElementSelection::label`]) and the block the model reads in the
//! message ([`ElementSelection::block`]), and the pure half of an edit in
//! place ([`find_once`], [`project_file_of`]).
//!
//! The previewed page runs the project's code, so everything it says is
//! checked and capped before it is shown, stored or sent to the model.

use std::fmt::Write;

use serde::{Deserialize, Serialize};

/// The most elements one message may carry.
pub const MAX_SELECTIONS: usize = 8;
/// Longest selector, in characters.
pub const MAX_SELECTOR_CHARS: usize = 1000;
/// Longest tag name, in characters.
pub const MAX_TAG_CHARS: usize = 64;
/// Most class names an element may list.
pub const MAX_CLASSES: usize = 50;
/// Longest class name, in characters.
pub const MAX_CLASS_CHARS: usize = 200;
/// Longest text of an element, in characters, after trimming.
pub const MAX_TEXT_CHARS: usize = 500;
/// The element's HTML is cut to this many bytes.
pub const MAX_HTML_BYTES: usize = 2048;
/// Longest old or new text of an edit in place, in characters.
pub const MAX_EDIT_CHARS: usize = 10_000;
/// Most project files a selection names when its source is not known.
pub const MAX_FILES: usize = 5;
/// Longest id, file name or path, in characters.
const MAX_NAME_CHARS: usize = 1000;
/// Characters of the element's text a chip shows.
const LABEL_TEXT_CHARS: usize = 30;

/// One element of the previewed page, as the inspector describes it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ElementSelection {
    /// A CSS selector that finds it from `body`.
    pub selector: String,
    /// Its tag name, lower-case.
    pub tag: String,
    #[serde(default)]
    pub id: Option<String>,
    #[serde(default)]
    pub classes: Vec<String>,
    /// Its text, trimmed, with runs of white space as one space.
    #[serde(default)]
    pub text: String,
    /// The start of its `outerHTML`.
    #[serde(default)]
    pub html: String,
    /// Where it was on the page, in CSS pixels.
    pub rect: Rect,
    /// Where its code is, when the app's dev build says.
    #[serde(default)]
    pub source: Option<SourceLocation>,
    /// Project files that hold its distinctive text or classes (filled by
    /// the server).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub files: Vec<String>,
}

/// A box on the page, in CSS pixels.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize, Default)]
pub struct Rect {
    pub x: f64,
    pub y: f64,
    pub width: f64,
    pub height: f64,
}

/// A place in the project's code: a file, and its line and column when
/// known.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SourceLocation {
    pub file: String,
    #[serde(default)]
    pub line: Option<u32>,
    #[serde(default)]
    pub column: Option<u32>,
}

/// What the inspector tells the IDE's page.
#[derive(Clone, Debug, PartialEq)]
pub enum InspectorMessage {
    /// The person clicked an element.
    Selected(ElementSelection),
    /// The person pressed Escape while selecting.
    Cancelled,
    /// The person changed an element's text in place.
    TextEdited {
        element: ElementSelection,
        old_text: String,
        new_text: String,
    },
}

/// What became of an edit in place.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum TextEdit {
    /// The old text was in one place of one file, and was replaced there.
    Applied { path: String },
    /// The old text was nowhere (0) or in several places: nothing was
    /// written, the model has to make the change.
    Ambiguous { occurrences: usize },
}

/// Where a text occurs in a project's source files.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TextMatch {
    /// Exactly once: in this file, at this byte.
    Once { path: String, at: usize },
    /// Not at all.
    None,
    /// More than once, this many times.
    Many(usize),
}

/// The message as the inspector posted it.
#[derive(Deserialize)]
struct Posted {
    source: String,
    kind: String,
    #[serde(default)]
    element: Option<ElementSelection>,
    #[serde(default)]
    old_text: Option<String>,
    #[serde(default)]
    new_text: Option<String>,
}

/// The inspector's message in `json` (the message event's data), checked;
/// `None` for anything else, the preview's error reports included, and for
/// a message whose fields are missing or too large.
pub fn parse(json: &str) -> Option<InspectorMessage> {
    let posted: Posted = serde_json::from_str(json).ok()?;
    if posted.source != "rivet-preview" {
        return None;
    }
    match posted.kind.as_str() {
        "selected" => Some(InspectorMessage::Selected(posted.element?.checked()?)),
        "select-cancelled" => Some(InspectorMessage::Cancelled),
        "text-edited" => {
            let (old_text, new_text) = (posted.old_text?, posted.new_text?);
            if !edit_fits(&old_text, &new_text) {
                return None;
            }
            let element = posted.element?.checked()?;
            Some(InspectorMessage::TextEdited {
                element,
                old_text,
                new_text,
            })
        }
        _ => None,
    }
}

/// Whether the texts of an edit in place may be taken: neither longer than
/// [`MAX_EDIT_CHARS`], and not both empty.
pub fn edit_fits(old_text: &str, new_text: &str) -> bool {
    let short = |text: &str| text.chars().count() <= MAX_EDIT_CHARS;
    short(old_text) && short(new_text) && !(old_text.is_empty() && new_text.is_empty())
}

impl ElementSelection {
    /// The selection as it may be kept: every field within its cap (the
    /// HTML cut to [`MAX_HTML_BYTES`], the text's white space collapsed),
    /// or `None` when a field is missing, on several lines or too long.
    pub fn checked(mut self) -> Option<ElementSelection> {
        self.text = collapse(&self.text);
        self.id = self.id.filter(|id| !id.is_empty());
        self.tag = self.tag.to_ascii_lowercase();
        self.html = cut_bytes(&self.html, MAX_HTML_BYTES).to_owned();
        let fits = self.names_fit()
            && self.text.chars().count() <= MAX_TEXT_CHARS
            && [self.rect.x, self.rect.y, self.rect.width, self.rect.height]
                .iter()
                .all(|v| v.is_finite())
            && self.places_fit();
        fits.then_some(self)
    }

    /// Whether the selector, tag, id and classes are single lines within
    /// their caps.
    fn names_fit(&self) -> bool {
        one_line(&self.selector, MAX_SELECTOR_CHARS)
            && one_line(&self.tag, MAX_TAG_CHARS)
            && !self.tag.contains(char::is_whitespace)
            && self
                .id
                .as_deref()
                .is_none_or(|id| one_line(id, MAX_NAME_CHARS))
            && self.classes.len() <= MAX_CLASSES
            && self.classes.iter().all(|c| one_line(c, MAX_CLASS_CHARS))
    }

    /// Whether the source and the files are single lines within their caps.
    fn places_fit(&self) -> bool {
        self.source
            .as_ref()
            .is_none_or(|s| one_line(&s.file, MAX_NAME_CHARS))
            && self.files.len() <= MAX_FILES
            && self.files.iter().all(|f| one_line(f, MAX_NAME_CHARS))
    }

    /// The chip's text: the tag, its id or first class, and the start of
    /// its text, e.g. `button.counter "count is 0"`.
    pub fn label(&self) -> String {
        let mut label = self.tag.clone();
        if let Some(id) = &self.id {
            let _ = write!(label, "#{id}");
        } else if let Some(class) = self.classes.first() {
            let _ = write!(label, ".{class}");
        }
        let text = self.text.trim();
        if !text.is_empty() {
            let _ = write!(label, " \"{}\"", cut_chars(text, LABEL_TEXT_CHARS));
        }
        label
    }

    /// What the model reads of the element: a short block with its
    /// selector, tag, id, classes, text, size and place, where its code is
    /// (or which files hold its text), and the start of its HTML.
    pub fn block(&self) -> String {
        let mut block = String::from("<selected_element>\n");
        let _ = writeln!(block, "selector: {}", self.selector);
        let _ = writeln!(block, "tag: {}", self.tag);
        if let Some(id) = &self.id {
            let _ = writeln!(block, "id: {id}");
        }
        if !self.classes.is_empty() {
            let _ = writeln!(block, "classes: {}", self.classes.join(" "));
        }
        if !self.text.is_empty() {
            let _ = writeln!(block, "text: \"{}\"", self.text);
        }
        let Rect {
            x,
            y,
            width,
            height,
        } = self.rect;
        let _ = writeln!(
            block,
            "size: {}×{} at ({}, {})",
            px(width),
            px(height),
            px(x),
            px(y)
        );
        self.write_place(&mut block);
        if !self.html.is_empty() {
            let fence = fence_for(&self.html);
            let _ = writeln!(block, "html:\n{fence}html\n{}\n{fence}", self.html);
        }
        block.push_str("</selected_element>");
        block
    }

    /// The `source:` line, else the `files:` line, when there is one.
    fn write_place(&self, block: &mut String) {
        if let Some(source) = &self.source {
            let _ = write!(block, "source: {}", source.file);
            if let Some(line) = source.line {
                let _ = write!(block, ":{line}");
                if let Some(column) = source.column {
                    let _ = write!(block, ":{column}");
                }
            }
            block.push('\n');
        } else if !self.files.is_empty() {
            let _ = writeln!(block, "files: {}", self.files.join(", "));
        }
    }
}

/// The person's message with the elements they selected: the text, a
/// blank line, a sentence and each element's block. The text as it is
/// when there are none.
pub fn message_with_selections(text: &str, selections: &[ElementSelection]) -> String {
    if selections.is_empty() {
        return text.to_owned();
    }
    let mut message = String::new();
    if !text.is_empty() {
        message.push_str(text);
        message.push_str("\n\n");
    }
    message.push_str("The person selected these elements in the preview:");
    for selection in selections {
        message.push_str("\n\n");
        message.push_str(&selection.block());
    }
    message
}

/// Where `old` occurs in the given (path, content) source files: exactly
/// once across all of them, not at all, or more than once (the count). An
/// empty `old` occurs nowhere.
pub fn find_once<'a>(old: &str, files: impl IntoIterator<Item = (&'a str, &'a str)>) -> TextMatch {
    if old.is_empty() {
        return TextMatch::None;
    }
    let mut first = None;
    let mut count = 0;
    for (path, content) in files {
        for at in occurrences(content, old) {
            count += 1;
            first.get_or_insert((path, at));
        }
    }
    match (count, first) {
        (1, Some((path, at))) => TextMatch::Once {
            path: path.to_owned(),
            at,
        },
        (0, _) | (_, None) => TextMatch::None,
        (n, _) => TextMatch::Many(n),
    }
}

/// Where `needle` (not empty) starts in `haystack`, overlapping
/// occurrences included.
fn occurrences<'h>(haystack: &'h str, needle: &'h str) -> impl Iterator<Item = usize> + 'h {
    let step = needle.chars().next().map_or(1, char::len_utf8);
    let mut from = 0;
    std::iter::from_fn(move || {
        let at = from + haystack.get(from..)?.find(needle)?;
        from = at + step;
        Some(at)
    })
}

/// The source path a dev build named (absolute in the sandbox, e.g.
/// `/home/project/src/App.jsx`, or `/@fs/…`, or with a `?v=…` query, or a
/// `webpack://` prefix) as one of `project_files` (project-relative paths):
/// the longest path suffix that is a project file. A path through a folder
/// the IDE skips (`node_modules`, …) is no project file.
pub fn project_file_of(reported: &str, project_files: &[String]) -> Option<String> {
    let path = reported.split(['?', '#']).next().unwrap_or_default();
    let path = path.split_once("://").map_or(path, |(_, rest)| rest);
    let path = path.replace('\\', "/");
    let parts: Vec<&str> = path
        .split('/')
        .filter(|p| !p.is_empty() && *p != ".")
        .collect();
    if parts
        .iter()
        .any(|p| crate::runtime::tree::is_skipped_dir(p))
    {
        return None;
    }
    (0..parts.len())
        .map(|start| parts[start..].join("/"))
        .find(|candidate| project_files.iter().any(|file| file == candidate))
}

/// Whether `text` is one non-empty line of at most `max` characters.
fn one_line(text: &str, max: usize) -> bool {
    !text.trim().is_empty() && !text.contains(char::is_control) && text.chars().count() <= max
}

/// `text` trimmed, each run of white space one space.
fn collapse(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// At most `max` bytes of `text`, cut at a character.
fn cut_bytes(text: &str, max: usize) -> &str {
    if text.len() <= max {
        return text;
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

/// At most `max` characters of `text`, with `…` when it was cut.
fn cut_chars(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((end, _)) => format!("{}…", text[..end].trim_end()),
        None => text.to_owned(),
    }
}

/// A length in whole CSS pixels.
fn px(value: f64) -> i64 {
    value.round() as i64
}

/// A code fence longer than any run of backticks in `text`, so the text
/// cannot close it.
fn fence_for(text: &str) -> String {
    let longest = text.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    "`".repeat(longest.max(2) + 1)
}

#[cfg(test)]
mod tests;
