//! Elements the person selected in the preview, on the server: a selection
//! placed in the project's files ([`locate`]), and a text the person changed
//! in the preview written back to the one place of the source it comes from
//! ([`edit_text`]), without the model.
//!
//! Both read the project's source files as the session lists them: through
//! the runtime, without the folders the IDE never looks into
//! (`runtime::tree`), lock files, or anything that is not UTF-8 text.

use futures::StreamExt;

use super::api::{ApiError, open_project};
use super::conversation;
use crate::runtime::host::{DirEntry, EntryKind, Runtime, RuntimeError, checked_path};
use crate::runtime::project::ProjectId;
use crate::runtime::selection::{
    ElementSelection, MAX_FILES, SourceLocation, TextEdit, TextMatch, edit_fits, find_once,
    project_file_of,
};
use crate::runtime::tree::is_inside_skipped_dir;
use crate::server::state::AppState;

/// Most files read for one search.
const MAX_SOURCE_FILES: usize = 2000;
/// Largest file read for a search, in bytes.
const MAX_SOURCE_BYTES: u64 = 1024 * 1024;
/// Most bytes one search reads in all.
const MAX_TOTAL_BYTES: u64 = 64 * 1024 * 1024;
/// Files read at the same time.
const READ_AT_ONCE: usize = 8;
/// Lock files: written by package managers, never the source of a text.
const LOCK_FILES: &[&str] = &[
    "package-lock.json",
    "npm-shrinkwrap.json",
    "yarn.lock",
    "pnpm-lock.yaml",
    "bun.lock",
    "bun.lockb",
];
/// Shortest text, or class name, distinctive enough to look for.
const MIN_DISTINCTIVE_CHARS: usize = 3;
/// How many of the element's longest class names are looked for.
const MAX_CLASSES_SEARCHED: usize = 3;

/// The selection as the model will read it: checked (else
/// [`ApiError::InvalidSelection`]), its source a project path (dropped when
/// it names no project file), and, when the dev build did not say where its
/// code is, up to [`MAX_FILES`] project files that hold its text or its
/// class names. A project whose files cannot be listed leaves it unplaced.
pub async fn locate(
    state: &AppState,
    project: &ProjectId,
    selection: ElementSelection,
) -> Result<ElementSelection, ApiError> {
    let mut selection = selection.checked().ok_or(ApiError::InvalidSelection)?;
    let handle = open_project(state, project).await?;
    let runtime = handle.runtime.as_ref();
    let entries = source_entries(runtime).await.unwrap_or_default();
    let paths: Vec<String> = entries.iter().map(|e| e.path.clone()).collect();
    selection.files.clear();
    selection.source = selection.source.take().and_then(|source| {
        project_file_of(&source.file, &paths).map(|file| SourceLocation { file, ..source })
    });
    if selection.source.is_none() {
        let files = read_sources(runtime, &entries).await;
        selection.files = files_naming(&selection, &files);
    }
    Ok(selection)
}

/// Replaces `old_text` with `new_text` in the project's source when it
/// occurs exactly once there, as the person's own edit (the model hears of
/// it, the next checkpoint holds it); otherwise writes nothing and says how
/// often it occurs. Refused while an answer streams.
pub async fn edit_text(
    state: &AppState,
    project: &ProjectId,
    old_text: &str,
    new_text: &str,
) -> Result<TextEdit, ApiError> {
    if !edit_fits(old_text, new_text) {
        return Err(ApiError::InvalidSelection);
    }
    let handle = open_project(state, project).await?;
    if conversation::is_busy(&handle) {
        return Err(ApiError::Busy);
    }
    let runtime = handle.runtime.as_ref();
    let files = read_sources(runtime, &source_entries(runtime).await?).await;
    let pairs = files.iter().map(|(p, c)| (p.as_str(), c.as_str()));
    let (path, at) = match find_once(old_text, pairs) {
        TextMatch::Once { path, at } => (path, at),
        TextMatch::None => return Ok(TextEdit::Ambiguous { occurrences: 0 }),
        TextMatch::Many(occurrences) => return Ok(TextEdit::Ambiguous { occurrences }),
    };
    let content = files
        .iter()
        .find(|(p, _)| *p == path)
        .map(|(_, c)| c.as_str())
        .unwrap_or_default();
    let changed = replaced(content, at, old_text.len(), new_text);
    let target = checked_path(&path)?;
    super::api::write_file(state, project, &target, changed.into_bytes()).await?;
    Ok(TextEdit::Applied { path })
}

/// `content` with the `len` bytes at `at` replaced by `new`.
fn replaced(content: &str, at: usize, len: usize, new: &str) -> String {
    let mut out = String::with_capacity(content.len() + new.len());
    out.push_str(content.get(..at).unwrap_or(content));
    out.push_str(new);
    out.push_str(content.get(at + len..).unwrap_or_default());
    out
}

/// The project's files a text may come from, in path order: the session's
/// listing (no skipped folders), without lock files, at most
/// [`MAX_SOURCE_FILES`].
async fn source_entries(runtime: &dyn Runtime) -> Result<Vec<DirEntry>, RuntimeError> {
    let entries = runtime.list_tree("").await?;
    Ok(entries
        .into_iter()
        .filter(|e| e.kind == EntryKind::File && !is_inside_skipped_dir(&e.path))
        .filter(|e| !LOCK_FILES.contains(&e.path.rsplit('/').next().unwrap_or_default()))
        .take(MAX_SOURCE_FILES)
        .collect())
}

/// The text of each of `entries` that is UTF-8 text of at most
/// [`MAX_SOURCE_BYTES`], while the total stays under [`MAX_TOTAL_BYTES`];
/// a file that cannot be read is left out.
async fn read_sources(runtime: &dyn Runtime, entries: &[DirEntry]) -> Vec<(String, String)> {
    let mut total = 0;
    let mut wanted = Vec::new();
    for entry in entries.iter().filter(|e| e.size <= MAX_SOURCE_BYTES) {
        total += entry.size;
        if total > MAX_TOTAL_BYTES {
            break;
        }
        wanted.push(entry.path.clone());
    }
    futures::stream::iter(wanted)
        .map(|path| read_text(runtime, path))
        .buffered(READ_AT_ONCE)
        .filter_map(futures::future::ready)
        .collect()
        .await
}

/// A file's path and text, when it is text and not too large.
async fn read_text(runtime: &dyn Runtime, path: String) -> Option<(String, String)> {
    let bytes = runtime.read_file(&path).await.ok()?;
    if bytes.len() as u64 > MAX_SOURCE_BYTES || bytes.contains(&0) {
        return None;
    }
    let text = String::from_utf8(bytes).ok()?;
    Some((path, text))
}

/// Up to [`MAX_FILES`] of `files` that hold the element's text (when it is
/// long enough to tell), else its most specific class names.
fn files_naming(selection: &ElementSelection, files: &[(String, String)]) -> Vec<String> {
    let text = selection.text.trim();
    if text.chars().count() >= MIN_DISTINCTIVE_CHARS {
        let holding: Vec<String> = files
            .iter()
            .filter(|(_, content)| content.contains(text))
            .map(|(path, _)| path.clone())
            .take(MAX_FILES)
            .collect();
        if !holding.is_empty() {
            return holding;
        }
    }
    files_with_classes(&selection.classes, files)
}

/// The files whose `class`/`className` attributes name the element's
/// longest class names, those naming more of them first.
fn files_with_classes(classes: &[String], files: &[(String, String)]) -> Vec<String> {
    let mut specific: Vec<&str> = classes
        .iter()
        .map(String::as_str)
        .filter(|c| c.chars().count() >= MIN_DISTINCTIVE_CHARS)
        .collect();
    specific.sort_by_key(|c| std::cmp::Reverse(c.len()));
    specific.truncate(MAX_CLASSES_SEARCHED);
    let mut scored: Vec<(usize, &str)> = files
        .iter()
        .filter_map(|(path, content)| {
            let named = specific
                .iter()
                .filter(|class| in_class_attribute(content, class))
                .count();
            (named > 0).then_some((named, path.as_str()))
        })
        .collect();
    scored.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(b.1)));
    scored
        .into_iter()
        .take(MAX_FILES)
        .map(|(_, path)| path.to_owned())
        .collect()
}

/// Whether `class` is a whole name after `class` (`class=`, `className=`,
/// `:class=`) on some line of `content`.
fn in_class_attribute(content: &str, class: &str) -> bool {
    content.lines().any(|line| {
        let Some(start) = line.find("class") else {
            return false;
        };
        let rest = &line[start..];
        rest.match_indices(class)
            .any(|(at, _)| whole_name(rest, at, class.len()))
    })
}

/// Whether the `len` bytes at `at` of `text` are not part of a longer name.
fn whole_name(text: &str, at: usize, len: usize) -> bool {
    let in_name = |c: char| c.is_alphanumeric() || c == '-' || c == '_';
    let before = text[..at].chars().next_back().is_none_or(|c| !in_name(c));
    let after = text[at + len..].chars().next().is_none_or(|c| !in_name(c));
    before && after
}

#[cfg(test)]
mod tests;
