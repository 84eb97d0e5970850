//! `read_file`, `write_file` and `replace`.

use serde::Deserialize;

use super::{ToolContext, ToolError, ToolOutput, file_path, is_binary};
use crate::runtime::action;
use crate::runtime::host::RuntimeError;

/// Most lines one `read_file` shows.
pub const MAX_LINES: usize = 2000;
/// Longest line shown whole; longer ones are cut.
pub const MAX_LINE_CHARS: usize = 2000;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReadArgs {
    path: String,
    offset: Option<usize>,
    limit: Option<usize>,
}

pub async fn read_file(cx: &ToolContext, args: ReadArgs) -> Result<ToolOutput, ToolError> {
    let path = file_path(&args.path)?;
    let limit = args.limit.unwrap_or(MAX_LINES);
    if limit == 0 || limit > MAX_LINES {
        return Err(ToolError::Arguments(format!(
            "limit must be between 1 and {MAX_LINES}"
        )));
    }
    let bytes = cx.runtime.read_file(path.as_str()).await?;
    if is_binary(&bytes) {
        return Ok(ToolOutput::ok(format!(
            "{path} is a binary file of {} bytes; its contents are not shown.",
            bytes.len()
        )));
    }
    let text = String::from_utf8_lossy(&bytes);
    if text.is_empty() {
        return Ok(ToolOutput::ok(format!("{path} is empty.")));
    }
    let lines: Vec<&str> = text.lines().collect();
    let offset = args.offset.unwrap_or(0);
    if offset >= lines.len() {
        return Err(ToolError::Arguments(format!(
            "offset {offset} is past the end of {path}, which has {} lines",
            lines.len()
        )));
    }
    let end = (offset + limit).min(lines.len());
    let mut out = String::new();
    if offset > 0 || end < lines.len() {
        out.push_str(&format!(
            "Lines {}-{end} of {} in {path}; read more with offset={end}.\n",
            offset + 1,
            lines.len()
        ));
    }
    for (n, line) in lines[offset..end].iter().enumerate() {
        out.push_str(&format!("{:>6}| {}\n", offset + n + 1, cut_line(line)));
    }
    Ok(ToolOutput::ok(out))
}

fn cut_line(line: &str) -> String {
    if line.chars().count() <= MAX_LINE_CHARS {
        return line.to_owned();
    }
    let kept: String = line.chars().take(MAX_LINE_CHARS).collect();
    format!("{kept} …[line cut]")
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WriteArgs {
    pub(in crate::server::agent) file_path: String,
    pub(in crate::server::agent) content: String,
}

pub async fn write_file(cx: &ToolContext, args: WriteArgs) -> Result<ToolOutput, ToolError> {
    let path = file_path(&args.file_path)?;
    let existed = exists(cx, path.as_str()).await?;
    cx.runtime
        .write_file(path.as_str(), args.content.as_bytes())
        .await?;
    let verb = if existed { "Overwrote" } else { "Created" };
    Ok(ToolOutput::ok(format!(
        "{verb} {path} ({} lines).",
        args.content.lines().count()
    )))
}

async fn exists(cx: &ToolContext, path: &str) -> Result<bool, ToolError> {
    match cx.runtime.read_file(path).await {
        Ok(_) => Ok(true),
        Err(RuntimeError::NotFound { .. }) => Ok(false),
        Err(e) => Err(e.into()),
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReplaceArgs {
    pub(in crate::server::agent) file_path: String,
    pub(in crate::server::agent) old_string: String,
    pub(in crate::server::agent) new_string: String,
    pub(in crate::server::agent) expected_replacements: Option<usize>,
}

pub async fn replace(cx: &ToolContext, args: ReplaceArgs) -> Result<ToolOutput, ToolError> {
    let path = file_path(&args.file_path)?;
    let expected = args.expected_replacements.unwrap_or(1);
    if expected == 0 {
        return Err(ToolError::Arguments(
            "expected_replacements must be at least 1".to_owned(),
        ));
    }
    if args.old_string == args.new_string {
        return Err(ToolError::Arguments(
            "old_string and new_string are the same; nothing would change".to_owned(),
        ));
    }
    let original = match cx.runtime.read_file(path.as_str()).await {
        Ok(bytes) => bytes,
        Err(RuntimeError::NotFound { .. }) if args.old_string.is_empty() => {
            cx.runtime
                .write_file(path.as_str(), args.new_string.as_bytes())
                .await?;
            return Ok(ToolOutput::ok(format!("Created {path}.")));
        }
        Err(e) => return Err(e.into()),
    };
    if args.old_string.is_empty() {
        return Err(ToolError::Arguments(format!(
            "old_string is empty but {path} exists; quote the text to replace, or use write_file"
        )));
    }
    if is_binary(&original) {
        return Err(ToolError::Arguments(format!(
            "{path} is a binary file; replace edits text files"
        )));
    }
    let original = String::from_utf8_lossy(&original);
    let changed = action::replace(&original, &args.old_string, &args.new_string, expected)?;
    cx.runtime
        .write_file(path.as_str(), changed.as_bytes())
        .await?;
    let times = if expected == 1 { "once" } else { "times" };
    let count = if expected == 1 {
        String::new()
    } else {
        format!("{expected} ")
    };
    Ok(ToolOutput::ok(format!(
        "Replaced {count}{times} in {path}."
    )))
}
