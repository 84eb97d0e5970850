//! `search_file_content`: ripgrep's matcher and searcher over the files,
//! read through the runtime (they live in the sandbox, not on a path the IDE
//! could walk), so the search sees exactly what the other tools see.

use grep_regex::RegexMatcherBuilder;
use grep_searcher::sinks::Lossy;
use grep_searcher::{BinaryDetection, SearcherBuilder};
use serde::Deserialize;

use super::listing::{include_matcher, project_files, relative};
use super::{ToolContext, ToolError, ToolOutput, dir_path, shown};

/// Most matching lines one search answers.
pub const MAX_MATCHES: usize = 500;
/// Files larger than this are not searched.
pub const MAX_FILE_BYTES: usize = 1024 * 1024;
/// Longest matching line shown whole.
const MAX_LINE_CHARS: usize = 500;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SearchArgs {
    pattern: String,
    path: Option<String>,
    include: Option<String>,
}

struct FileMatches {
    path: String,
    lines: Vec<(u64, String)>,
}

pub async fn search_file_content(
    cx: &ToolContext,
    args: SearchArgs,
) -> Result<ToolOutput, ToolError> {
    if args.pattern.is_empty() {
        return Err(ToolError::Arguments("pattern is empty".to_owned()));
    }
    let matcher = RegexMatcherBuilder::new()
        .build(&args.pattern)
        .map_err(|e| ToolError::Pattern {
            pattern: args.pattern.clone(),
            message: e.to_string(),
        })?;
    let include = args.include.as_deref().map(include_matcher).transpose()?;
    let dir = dir_path(args.path.as_deref())?;
    let mut searcher = SearcherBuilder::new()
        .binary_detection(BinaryDetection::quit(0))
        .line_number(true)
        .build();
    let mut found = Vec::new();
    let mut total = 0;
    for path in project_files(cx, &dir, true).await? {
        if include
            .as_ref()
            .is_some_and(|m| !m.is_match(relative(&dir, &path)))
        {
            continue;
        }
        let Ok(bytes) = cx.runtime.read_file(&path).await else {
            continue;
        };
        if bytes.len() > MAX_FILE_BYTES {
            continue;
        }
        let mut lines = Vec::new();
        // A searcher error on one file (none is expected on a slice) skips it.
        let _ = searcher.search_slice(
            &matcher,
            &bytes,
            Lossy(|number, line| {
                lines.push((number, shorten(line.trim_end_matches(['\n', '\r']))));
                Ok(total + lines.len() < MAX_MATCHES)
            }),
        );
        if !lines.is_empty() {
            total += lines.len();
            found.push(FileMatches { path, lines });
        }
        if total >= MAX_MATCHES {
            break;
        }
    }
    Ok(ToolOutput::ok(report(&args, &dir, &found, total)))
}

fn shorten(line: &str) -> String {
    if line.chars().count() <= MAX_LINE_CHARS {
        return line.to_owned();
    }
    let kept: String = line.chars().take(MAX_LINE_CHARS).collect();
    format!("{kept} …")
}

fn report(args: &SearchArgs, dir: &str, found: &[FileMatches], total: usize) -> String {
    let filter = args
        .include
        .as_deref()
        .map(|i| format!(" (files {i:?})"))
        .unwrap_or_default();
    if found.is_empty() {
        return format!(
            "No matches for {:?} in {}{filter}.",
            args.pattern,
            shown(dir)
        );
    }
    let mut out = format!(
        "Found {total} match(es) for {:?} in {}{filter}:\n---\n",
        args.pattern,
        shown(dir)
    );
    for file in found {
        out.push_str(&format!("File: {}\n", file.path));
        for (number, line) in &file.lines {
            out.push_str(&format!("L{number}: {line}\n"));
        }
        out.push_str("---\n");
    }
    if total >= MAX_MATCHES {
        out.push_str(&format!(
            "Stopped at {MAX_MATCHES} matches; narrow the pattern or the path.\n"
        ));
    }
    out
}
