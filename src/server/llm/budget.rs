//! Token counts for the context budget, estimated cheaply: no tokenizer is
//! bundled (each model family has its own), so a text counts as its UTF-8
//! bytes divided by four, plus a tenth for safety, and each message a few
//! tokens more for its role and framing. English prose and code average a
//! little over four bytes a token with the common tokenizers, so the
//! estimate errs high, which is the safe side for a limit.

use serde_json::Value;

pub mod fit;
pub mod steps;

/// Bytes per token of the estimate.
pub const BYTES_PER_TOKEN: usize = 4;
/// Tokens a message costs beyond its text (role, separators).
pub const PER_MESSAGE: u32 = 4;
/// What one image in a message is counted as: a 1024×1024 image at high
/// detail costs 765 tokens at OpenAI; other providers charge less or alike.
pub const IMAGE_TOKENS: u32 = 765;

/// Estimated tokens of `text`.
pub fn estimate_text(text: &str) -> u32 {
    let tokens = text.len().div_ceil(BYTES_PER_TOKEN);
    let with_margin = tokens + tokens.div_ceil(10);
    u32::try_from(with_margin).unwrap_or(u32::MAX)
}

/// Estimated prompt tokens of an OpenAI-style request body: every
/// message's text (a string, or the text parts of an array), its tool
/// calls' arguments, [`IMAGE_TOKENS`] for each image part, and
/// [`PER_MESSAGE`] each.
pub fn estimate_request(body: &Value) -> u32 {
    let Some(messages) = body.get("messages").and_then(Value::as_array) else {
        return 0;
    };
    messages
        .iter()
        .map(|m| {
            PER_MESSAGE
                .saturating_add(estimate_text(&message_text(m)))
                .saturating_add(IMAGE_TOKENS.saturating_mul(image_parts(m)))
        })
        .fold(0u32, u32::saturating_add)
}

/// The `image_url` parts of a message's content.
fn image_parts(message: &Value) -> u32 {
    let parts = message.get("content").and_then(Value::as_array);
    let count = parts
        .into_iter()
        .flatten()
        .filter(|p| p.get("type").and_then(Value::as_str) == Some("image_url"))
        .count();
    u32::try_from(count).unwrap_or(u32::MAX)
}

/// The `data:` URLs of a request's image parts, in order (the scripted
/// provider's log).
pub fn image_urls(body: &Value) -> Vec<String> {
    let messages = body.get("messages").and_then(Value::as_array);
    messages
        .into_iter()
        .flatten()
        .filter_map(|m| m.get("content").and_then(Value::as_array))
        .flatten()
        .filter_map(|p| p.pointer("/image_url/url").and_then(Value::as_str))
        .map(str::to_owned)
        .collect()
}

fn message_text(message: &Value) -> String {
    let mut text = match message.get("content") {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(parts)) => parts
            .iter()
            .filter_map(|p| p.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    };
    for call in message
        .get("tool_calls")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        if let Some(arguments) = call.pointer("/function/arguments").and_then(Value::as_str) {
            text.push_str(arguments);
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_text_counts_a_quarter_of_its_bytes_and_a_tenth_more() {
        assert_eq!(estimate_text(""), 0);
        assert_eq!(estimate_text("abcd"), 2);
        assert_eq!(estimate_text(&"x".repeat(4000)), 1100);
        // Multi-byte characters count by their bytes.
        assert_eq!(estimate_text("日本"), 3);
    }

    #[test]
    fn a_request_counts_every_message_text_and_tool_call() {
        let body = json!({"messages": [
            {"role": "system", "content": "x".repeat(400)},
            {"role": "user", "content": [{"type": "text", "text": "y".repeat(40)}]},
            {"role": "assistant", "content": null, "tool_calls": [
                {"id": "c", "type": "function", "function": {"name": "f", "arguments": "z".repeat(40)}}
            ]},
        ]});
        assert_eq!(estimate_request(&body), (4 + 110) + (4 + 11) + (4 + 11));
    }

    #[test]
    fn a_request_without_messages_counts_nothing() {
        assert_eq!(estimate_request(&json!({"model": "m"})), 0);
    }
}
