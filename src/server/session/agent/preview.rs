//! What a step card says: the arguments in a line, and what the person
//! approves (the file's diff, or the command).

use serde_json::Value;
use similar::TextDiff;

use crate::runtime::host::Runtime;
use crate::runtime::llm::ToolCall;
use crate::server::agent::tools::{Tool, file_path};

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

/// What the person approves: a unified diff for a file change, the
/// command for a shell step.
pub async fn approval_preview(runtime: &dyn Runtime, tool: Tool, call: &ToolCall) -> String {
    let args = arguments(call);
    match tool {
        Tool::RunShellCommand => format!("$ {}", text(&args, "command")),
        Tool::WriteFile => {
            let path = written_file(call).unwrap_or_else(|| text(&args, "file_path").to_owned());
            let before = match runtime.read_file(&path).await {
                Ok(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
                Err(_) => String::new(),
            };
            diff(&path, &before, text(&args, "content"))
        }
        Tool::Replace => diff(
            text(&args, "file_path"),
            text(&args, "old_string"),
            text(&args, "new_string"),
        ),
        _ => call.arguments.clone(),
    }
}

/// A unified diff with three lines of context.
pub fn diff(path: &str, before: &str, after: &str) -> String {
    TextDiff::from_lines(before, after)
        .unified_diff()
        .context_radius(3)
        .header(&format!("a/{path}"), &format!("b/{path}"))
        .to_string()
}
