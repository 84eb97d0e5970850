//! What a step card says: the arguments in a line, and what the person
//! approves (the file's diff, or the command).

use std::time::Duration;

use serde_json::Value;
use similar::TextDiff;

use crate::runtime::action;
use crate::runtime::host::Runtime;
use crate::runtime::llm::ToolCall;
use crate::runtime::session::StepChange;
use crate::server::agent::run::Subject;
use crate::server::agent::tools::{Tool, file_path};

/// The longest an approval preview's diff may search for the smallest one.
const DIFF_TIMEOUT: Duration = Duration::from_secs(1);
/// The longest argument summary.
const SUMMARY_CHARS: usize = 120;
/// The longest result kept on a card.
pub const RESULT_CHARS: usize = 4000;

fn arguments(call: &ToolCall) -> Value {
    serde_json::from_str(&call.arguments).unwrap_or(Value::Null)
}

fn text<'a>(args: &'a Value, key: &str) -> &'a str {
    args.get(key).and_then(Value::as_str).unwrap_or_default()
}

/// The arguments in a line: the path, pattern or command.
pub fn summary(call: &ToolCall) -> String {
    let args = arguments(call);
    let line = ["file_path", "path", "pattern", "command"]
        .iter()
        .map(|key| text(&args, key))
        .find(|value| !value.is_empty())
        .unwrap_or_default();
    cap(line.lines().next().unwrap_or_default(), SUMMARY_CHARS)
}

/// `text` cut to `max` characters, marked when cut.
pub fn cap(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_owned(),
    }
}

/// The project file a call writes, when it writes one.
pub fn written_file(call: &ToolCall) -> Option<String> {
    match Tool::from_name(&call.name)? {
        Tool::WriteFile | Tool::Replace => {
            let args = arguments(call);
            file_path(text(&args, "file_path"))
                .ok()
                .map(|p| p.as_str().to_owned())
        }
        _ => None,
    }
}

/// The command a `run_shell_command` call runs.
pub fn command(call: &ToolCall) -> Option<String> {
    (Tool::from_name(&call.name)? == Tool::RunShellCommand)
        .then(|| text(&arguments(call), "command").to_owned())
}

/// What the person approves: a unified diff for a file change (with the
/// whole file before and after, for a diff editor), the command for a
/// shell step.
pub struct ApprovalPreview {
    pub text: String,
    pub change: Option<StepChange>,
}

impl ApprovalPreview {
    fn text(text: String) -> ApprovalPreview {
        ApprovalPreview { text, change: None }
    }

    fn change(path: &str, before: &str, after: &str) -> ApprovalPreview {
        ApprovalPreview {
            text: diff(path, before, after),
            change: StepChange::capped(path, before, after),
        }
    }
}

pub async fn approval_preview(
    runtime: &dyn Runtime,
    subject: Subject,
    call: &ToolCall,
) -> ApprovalPreview {
    let args = arguments(call);
    let tool = match subject {
        Subject::Builtin(tool) => tool,
        Subject::Other { description } => return ApprovalPreview::text(description),
    };
    match tool {
        Tool::RunShellCommand => ApprovalPreview::text(format!("$ {}", text(&args, "command"))),
        Tool::WriteFile => {
            let path = written_file(call).unwrap_or_else(|| text(&args, "file_path").to_owned());
            let before = current_text(runtime, &path).await.unwrap_or_default();
            ApprovalPreview::change(&path, &before, text(&args, "content"))
        }
        Tool::Replace => replace_preview(runtime, call, &args).await,
        _ => ApprovalPreview::text(call.arguments.clone()),
    }
}

/// The file as the replacement leaves it; when it cannot be worked out
/// (no such file, no match: the tool will say so), the quoted text against
/// its replacement.
async fn replace_preview(runtime: &dyn Runtime, call: &ToolCall, args: &Value) -> ApprovalPreview {
    let (old, new) = (text(args, "old_string"), text(args, "new_string"));
    let expected = args
        .get("expected_replacements")
        .and_then(Value::as_u64)
        .and_then(|n| usize::try_from(n).ok())
        .unwrap_or(1);
    if let Some(path) = written_file(call)
        && let Some(before) = current_text(runtime, &path).await
        && let Ok(after) = action::replace(&before, old, new, expected)
    {
        return ApprovalPreview::change(&path, &before, &after);
    }
    ApprovalPreview::text(diff(text(args, "file_path"), old, new))
}

/// A file's text as it is now; `None` when it cannot be read.
async fn current_text(runtime: &dyn Runtime, path: &str) -> Option<String> {
    let bytes = runtime.read_file(path).await.ok()?;
    Some(String::from_utf8_lossy(&bytes).into_owned())
}

/// A unified diff with three lines of context.
/// Huge files with few common lines would take minutes to diff exactly;
/// after [`DIFF_TIMEOUT`] the diff is coarser but still correct.
pub fn diff(path: &str, before: &str, after: &str) -> String {
    TextDiff::configure()
        .timeout(DIFF_TIMEOUT)
        .diff_lines(before, after)
        .unified_diff()
        .context_radius(3)
        .header(&format!("a/{path}"), &format!("b/{path}"))
        .to_string()
}
