//! `list_directory` and `glob`.

use globset::{Glob, GlobBuilder, GlobSet, GlobSetBuilder};
use serde::Deserialize;

use super::{ToolContext, ToolError, ToolOutput, dir_path, gitignore, ignored, shown};
use crate::runtime::host::{DirEntry, EntryKind};

/// Most paths one `glob` answers.
pub const MAX_GLOB_RESULTS: usize = 1000;

fn bad_pattern(pattern: &str, error: &globset::Error) -> ToolError {
    ToolError::Pattern {
        pattern: pattern.to_owned(),
        message: error.kind().to_string(),
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ListArgs {
    path: String,
    #[serde(default)]
    ignore: Vec<String>,
    respect_git_ignore: Option<bool>,
}

pub async fn list_directory(cx: &ToolContext, args: ListArgs) -> Result<ToolOutput, ToolError> {
    let dir = dir_path(Some(&args.path))?;
    let mut names = GlobSetBuilder::new();
    for pattern in &args.ignore {
        names.add(Glob::new(pattern).map_err(|e| bad_pattern(pattern, &e))?);
    }
    let names = names.build().map_err(|e| bad_pattern("ignore", &e))?;
    let rules = match args.respect_git_ignore.unwrap_or(true) {
        true => gitignore(cx).await,
        false => None,
    };
    let mut entries = cx.runtime.list(&dir).await?;
    let before = entries.len();
    entries.retain(|e| {
        !names.is_match(name(&e.path))
            && !ignored(rules.as_ref(), &e.path, e.kind == EntryKind::Dir)
    });
    let hidden = before - entries.len();
    entries.sort_by_key(|e| (e.kind != EntryKind::Dir, name(&e.path).to_owned()));
    Ok(ToolOutput::ok(listing_text(&dir, &entries, hidden)))
}

fn name(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

fn listing_text(dir: &str, entries: &[DirEntry], hidden: usize) -> String {
    if entries.is_empty() && hidden == 0 {
        return format!("Directory {} is empty.", shown(dir));
    }
    let mut out = format!("Directory listing for {}:\n", shown(dir));
    for entry in entries {
        let mark = match entry.kind {
            EntryKind::Dir => "[DIR] ",
            EntryKind::Symlink => "[LINK] ",
            _ => "",
        };
        out.push_str(&format!("{mark}{}\n", name(&entry.path)));
    }
    if hidden > 0 {
        out.push_str(&format!("({hidden} ignored)\n"));
    }
    out
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GlobArgs {
    pattern: String,
    path: Option<String>,
    case_sensitive: Option<bool>,
    respect_git_ignore: Option<bool>,
}

/// Paths match relative to the folder searched; `*` stays within one
/// folder, `**` crosses them. Matches come newest first (files without a
/// modification time last), then in path order.
pub async fn glob(cx: &ToolContext, args: GlobArgs) -> Result<ToolOutput, ToolError> {
    if args.pattern.trim().is_empty() {
        return Err(ToolError::Arguments("pattern is empty".to_owned()));
    }
    let dir = dir_path(args.path.as_deref())?;
    let matcher = GlobBuilder::new(&args.pattern)
        .case_insensitive(!args.case_sensitive.unwrap_or(false))
        .literal_separator(true)
        .build()
        .map_err(|e| bad_pattern(&args.pattern, &e))?
        .compile_matcher();
    let mut files = project_entries(cx, &dir, args.respect_git_ignore.unwrap_or(true)).await?;
    files.retain(|entry| matcher.is_match(relative(&dir, &entry.path)));
    files.sort_by(|a, b| {
        b.modified
            .cmp(&a.modified)
            .then_with(|| a.path.cmp(&b.path))
    });
    let found: Vec<&String> = files.iter().map(|entry| &entry.path).collect();
    if found.is_empty() {
        return Ok(ToolOutput::ok(format!(
            "No files match {:?} in {}.",
            args.pattern,
            shown(&dir)
        )));
    }
    let mut out = format!(
        "Found {} file(s) matching {:?} in {}:\n",
        found.len(),
        args.pattern,
        shown(&dir)
    );
    for path in found.iter().take(MAX_GLOB_RESULTS) {
        out.push_str(path);
        out.push('\n');
    }
    if found.len() > MAX_GLOB_RESULTS {
        out.push_str(&format!(
            "… and {} more; narrow the pattern.\n",
            found.len() - MAX_GLOB_RESULTS
        ));
    }
    Ok(ToolOutput::ok(out))
}

/// `path` relative to `dir` (a folder of the project, `""` for its root).
pub fn relative<'a>(dir: &str, path: &'a str) -> &'a str {
    if dir.is_empty() {
        return path;
    }
    path.strip_prefix(dir)
        .and_then(|rest| rest.strip_prefix('/'))
        .unwrap_or(path)
}

/// The regular files under a folder, in path order, without what
/// `.gitignore` ignores when asked. Links are never entered.
pub async fn project_files(
    cx: &ToolContext,
    dir: &str,
    respect_git_ignore: bool,
) -> Result<Vec<String>, ToolError> {
    let entries = project_entries(cx, dir, respect_git_ignore).await?;
    Ok(entries.into_iter().map(|e| e.path).collect())
}

/// The files under `dir` with what the runtime says of them.
async fn project_entries(
    cx: &ToolContext,
    dir: &str,
    respect_git_ignore: bool,
) -> Result<Vec<DirEntry>, ToolError> {
    let rules = match respect_git_ignore {
        true => gitignore(cx).await,
        false => None,
    };
    let entries = cx.runtime.list_tree(dir).await?;
    Ok(entries
        .into_iter()
        .filter(|e| e.kind == EntryKind::File && !ignored(rules.as_ref(), &e.path, false))
        .collect())
}

/// A glob for `include`: `*` may cross folders, so `*.js` finds every
/// JavaScript file.
pub fn include_matcher(pattern: &str) -> Result<GlobSet, ToolError> {
    let glob = Glob::new(pattern).map_err(|e| bad_pattern(pattern, &e))?;
    GlobSetBuilder::new()
        .add(glob)
        .build()
        .map_err(|e| bad_pattern(pattern, &e))
}
