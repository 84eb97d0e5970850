//! A WebContainer's report of an error of its preview (a `preview-message`
//! event, sent when it boots with `forwardPreviewErrors`), made into the
//! same [`PageReport`] the proxy's reporter posts for a sandbox preview:
//! an uncaught exception is an `error`, an unhandled rejection a
//! `rejection`, a `console.error` a `console` report. The preview is the
//! app under development, so the message is untrusted: it must have a
//! known type and a message of a sane size, or it is ignored.

use serde::Deserialize;
use serde_json::Value;

use super::{MAX_MESSAGE, PageReport};

/// Frames of a stack kept after its message.
const STACK_FRAMES: usize = 10;

/// A `preview-message` as `@webcontainer/api` types it (`PreviewMessage`):
/// `message` and `stack` for an exception or a rejection, `args` and
/// `stack` for a console error, and the preview's `port` on each.
#[derive(Deserialize, Debug)]
pub struct PreviewMessage {
    #[serde(rename = "type")]
    kind: String,
    /// The port of the server whose page reported it.
    #[serde(default)]
    pub port: Option<u16>,
    #[serde(default)]
    message: Option<String>,
    #[serde(default)]
    stack: Option<String>,
    #[serde(default)]
    args: Vec<Value>,
}

impl PreviewMessage {
    /// The message an event carried (as JSON), when it has the API's shape.
    pub fn parse(json: &str) -> Option<PreviewMessage> {
        serde_json::from_str(json).ok()
    }

    /// The page report it makes, with the preview's own `origin` (when
    /// known) taken out of stack frames, as the proxy's reporter does, so
    /// they name project paths; `None` for a message of another type, an
    /// empty one or one longer than [`MAX_MESSAGE`].
    pub fn report(&self, origin: Option<&str>) -> Option<PageReport> {
        let stack = self.stack.as_deref().unwrap_or_default();
        let (kind, text) = match self.kind.as_str() {
            "PREVIEW_UNCAUGHT_EXCEPTION" => ("error", self.exception(stack)?),
            "PREVIEW_UNHANDLED_REJECTION" => (
                "rejection",
                format!("Unhandled promise rejection: {}", self.exception(stack)?),
            ),
            "PREVIEW_CONSOLE_ERROR" => ("console", console(&self.args, stack)?),
            _ => return None,
        };
        PageReport::checked(kind, clean(&text, origin))
    }

    /// The exception's text, unless it has none or is too long.
    fn exception(&self, stack: &str) -> Option<String> {
        let message = self.message.as_deref().unwrap_or_default().trim();
        if message.len() > MAX_MESSAGE {
            return None;
        }
        let text = exception(message, stack);
        (!text.trim().is_empty()).then_some(text)
    }
}

/// An exception's message and the first frames of its stack. A V8 stack
/// begins with the error's name and message; then it is the whole text.
fn exception(message: &str, stack: &str) -> String {
    let core = message.strip_prefix("Uncaught ").unwrap_or(message);
    if core.is_empty() || stack.contains(core) {
        let message_lines = stack.lines().take_while(|l| !is_frame(l)).count();
        return within_limit(stack.lines().take(message_lines + STACK_FRAMES));
    }
    let frames = stack.lines().filter(|l| is_frame(l)).take(STACK_FRAMES);
    within_limit(std::iter::once(message).chain(frames))
}

/// A console error's arguments, written as `console.error` joins them
/// (strings as they are, other values as JSON), with the frames of the
/// call's stack when the arguments hold none of their own.
fn console(args: &[Value], stack: &str) -> Option<String> {
    let text = args
        .iter()
        .map(|arg| match arg {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        })
        .collect::<Vec<_>>()
        .join(" ");
    if text.len() > MAX_MESSAGE {
        return None;
    }
    if text.lines().any(is_frame) {
        return Some(text);
    }
    let frames = stack.lines().filter(|l| is_frame(l)).take(STACK_FRAMES);
    Some(within_limit(std::iter::once(text.as_str()).chain(frames)))
}

/// A stack frame as V8 writes it (`    at f (url:1:2)`).
fn is_frame(line: &str) -> bool {
    line.trim_start().starts_with("at ")
}

/// The lines joined, as many as fit in [`MAX_MESSAGE`].
fn within_limit<'a>(lines: impl Iterator<Item = &'a str>) -> String {
    let mut text = String::new();
    for line in lines {
        if text.len() + line.len() + 1 > MAX_MESSAGE {
            break;
        }
        if !text.is_empty() {
            text.push('\n');
        }
        text.push_str(line.trim_end());
    }
    text
}

/// `text` with the preview's own URLs made project paths and Vite's
/// `?t=…`/`?v=…` queries taken out of stack frames (as `reporter.js` does).
fn clean(text: &str, origin: Option<&str>) -> String {
    let text = match origin {
        Some(origin) => text.replace(&format!("{origin}/"), ""),
        None => text.to_owned(),
    };
    let mut out = String::with_capacity(text.len());
    let mut rest = text.as_str();
    while let Some(at) = rest.find('?') {
        out.push_str(&rest[..at]);
        let skip = version_query_len(&rest[at..]);
        if skip == 0 {
            out.push('?');
            rest = &rest[at + 1..];
        } else {
            rest = &rest[at + skip..];
        }
    }
    out.push_str(rest);
    out
}

/// The length of a `?t=…` or `?v=…` query at the start of `text` that a
/// `:<line>` follows, or 0.
fn version_query_len(text: &str) -> usize {
    if !(text.starts_with("?t=") || text.starts_with("?v=")) {
        return 0;
    }
    let value = text[3..]
        .bytes()
        .take_while(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-'))
        .count();
    let end = 3 + value;
    let bytes = text.as_bytes();
    let line_follows =
        bytes.get(end) == Some(&b':') && bytes.get(end + 1).is_some_and(u8::is_ascii_digit);
    if value > 0 && line_follows { end } else { 0 }
}

#[cfg(test)]
mod tests;
