//! The frames of one scripted answer, produced one at a time so a long
//! transcript streamed to many clients costs no more memory than its text.

use serde::Serialize;
use serde_json::{Value, json};

use super::fault::Fault;
use super::transcript::ScriptedToolCall;

/// What the answer carries.
pub struct Script {
    pub content: String,
    pub tool_calls: Vec<ScriptedToolCall>,
}

/// One piece of the response body.
#[derive(Debug, PartialEq)]
pub enum Frame {
    /// An SSE `data:` line; `content_bytes` of answer text in it.
    Data { line: String, content_bytes: usize },
    /// Close the connection here, without `[DONE]`.
    Abort,
}

/// How the answer ended, for the log.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ending {
    Stop,
    ToolCalls,
    Length,
    Cut,
}

impl Ending {
    /// The `finish_reason` the answer ends with.
    fn finish_reason(self) -> &'static str {
        match self {
            Ending::Length => "length",
            Ending::ToolCalls => "tool_calls",
            Ending::Stop | Ending::Cut => "stop",
        }
    }
}

enum Phase {
    Role,
    Content,
    ToolStart(usize),
    ToolArgs(usize, usize),
    Finish,
    Usage,
    Done,
    End,
}

pub struct Reply {
    id: String,
    model: String,
    created: u64,
    script: Script,
    /// Tool arguments as JSON text, one per call.
    arguments: Vec<String>,
    chunk_chars: usize,
    fault: Fault,
    include_usage: bool,
    prompt_tokens: u64,
    phase: Phase,
    /// Byte offset reached in `script.content`.
    pos: usize,
    sent_bytes: usize,
    malformed_sent: bool,
    ending: Ending,
}

impl Reply {
    pub fn new(
        id: String,
        model: String,
        script: Script,
        fault: Fault,
        chunk_chars: usize,
        include_usage: bool,
        prompt_tokens: u64,
    ) -> Reply {
        let arguments = script
            .tool_calls
            .iter()
            .map(|c| c.arguments.to_string())
            .collect();
        Reply {
            id,
            model,
            created: now_secs(),
            script,
            arguments,
            chunk_chars: chunk_chars.max(1),
            fault,
            include_usage,
            prompt_tokens,
            phase: Phase::Role,
            pos: 0,
            sent_bytes: 0,
            malformed_sent: false,
            ending: Ending::Stop,
        }
    }

    pub fn ending(&self) -> Ending {
        self.ending
    }

    pub fn sent_bytes(&self) -> usize {
        self.sent_bytes
    }

    fn chunk(&self, delta: Value, finish_reason: Option<&str>) -> String {
        json!({
            "id": self.id,
            "object": "chat.completion.chunk",
            "created": self.created,
            "model": self.model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}],
        })
        .to_string()
    }

    /// A content chunk, the frame sent most: serialized without building a
    /// JSON tree first.
    fn content_chunk(&self, content: &str) -> String {
        #[derive(Serialize)]
        struct Chunk<'a> {
            id: &'a str,
            object: &'static str,
            created: u64,
            model: &'a str,
            choices: [Choice<'a>; 1],
        }
        #[derive(Serialize)]
        struct Choice<'a> {
            index: u32,
            delta: Delta<'a>,
            finish_reason: Option<&'static str>,
        }
        #[derive(Serialize)]
        struct Delta<'a> {
            content: &'a str,
        }
        let chunk = Chunk {
            id: &self.id,
            object: "chat.completion.chunk",
            created: self.created,
            model: &self.model,
            choices: [Choice {
                index: 0,
                delta: Delta { content },
                finish_reason: None,
            }],
        };
        serde_json::to_string(&chunk).unwrap_or_default()
    }

    fn data(line: String, content_bytes: usize) -> Option<Frame> {
        Some(Frame::Data {
            line,
            content_bytes,
        })
    }

    /// The byte limit the fault puts on the answer text, if any.
    fn limit(&self) -> Option<(usize, Ending)> {
        let cut = self.fault.cut_after.map(|n| (n, Ending::Cut));
        let length = self.fault.length_after.map(|n| (n, Ending::Length));
        match (cut, length) {
            (Some(a), Some(b)) => Some(if a.0 <= b.0 { a } else { b }),
            (a, b) => a.or(b),
        }
    }

    pub fn next_frame(&mut self) -> Option<Frame> {
        loop {
            match self.phase {
                Phase::Role => {
                    self.phase = Phase::Content;
                    return Self::data(
                        self.chunk(json!({"role": "assistant", "content": ""}), None),
                        0,
                    );
                }
                Phase::Content => {
                    if let Some(frame) = self.malformed_due() {
                        return Some(frame);
                    }
                    let rest = &self.script.content[self.pos..];
                    let limit = self.limit();
                    if let Some((n, ending)) = limit
                        && self.sent_bytes >= n
                    {
                        self.ending = ending;
                        self.phase = if ending == Ending::Cut {
                            Phase::End
                        } else {
                            Phase::Finish
                        };
                        if ending == Ending::Cut {
                            return Some(Frame::Abort);
                        }
                        continue;
                    }
                    if rest.is_empty() {
                        self.phase = Phase::ToolStart(0);
                        continue;
                    }
                    let mut end = rest
                        .char_indices()
                        .nth(self.chunk_chars)
                        .map_or(rest.len(), |(i, _)| i);
                    if let Some((n, _)) = limit {
                        end = floor_char_boundary(rest, end.min(n - self.sent_bytes));
                        if end == 0 {
                            // The limit falls inside one character: stop before it.
                            self.sent_bytes = n;
                            continue;
                        }
                    }
                    let line = self.content_chunk(&rest[..end]);
                    self.pos += end;
                    self.sent_bytes += end;
                    return Self::data(line, end);
                }
                Phase::ToolStart(i) => {
                    let Some(call) = self.script.tool_calls.get(i) else {
                        self.phase = Phase::Finish;
                        continue;
                    };
                    self.ending = Ending::ToolCalls;
                    self.phase = Phase::ToolArgs(i, 0);
                    let delta = json!({"tool_calls": [{
                        "index": i, "id": call.id, "type": "function",
                        "function": {"name": call.name, "arguments": ""},
                    }]});
                    return Self::data(self.chunk(delta, None), 0);
                }
                Phase::ToolArgs(i, at) => {
                    let args = &self.arguments[i][at..];
                    if args.is_empty() {
                        self.phase = Phase::ToolStart(i + 1);
                        continue;
                    }
                    // Uneven pieces, as real providers send them.
                    let size = piece_size(self.chunk_chars, at);
                    let end = args.char_indices().nth(size).map_or(args.len(), |(j, _)| j);
                    let piece = args[..end].to_owned();
                    self.phase = Phase::ToolArgs(i, at + end);
                    self.sent_bytes += end;
                    let delta =
                        json!({"tool_calls": [{"index": i, "function": {"arguments": piece}}]});
                    return Self::data(self.chunk(delta, None), end);
                }
                Phase::Finish => {
                    self.phase = Phase::Usage;
                    let reason = self.ending.finish_reason();
                    return Self::data(self.chunk(json!({}), Some(reason)), 0);
                }
                Phase::Usage => {
                    self.phase = Phase::Done;
                    if self.include_usage {
                        let usage = json!({
                            "id": self.id,
                            "object": "chat.completion.chunk",
                            "created": self.created,
                            "model": self.model,
                            "choices": [],
                            "usage": usage(self.prompt_tokens, self.sent_bytes),
                        });
                        return Self::data(usage.to_string(), 0);
                    }
                }
                Phase::Done => {
                    self.phase = Phase::End;
                    return Self::data("[DONE]".to_owned(), 0);
                }
                Phase::End => return None,
            }
        }
    }

    fn malformed_due(&mut self) -> Option<Frame> {
        let at = self.fault.malformed_after?;
        if self.malformed_sent || self.sent_bytes < at {
            return None;
        }
        self.malformed_sent = true;
        Some(Frame::Data {
            line: r#"{"id":"broken","choices":[{"index":0,"delta":{"content":"#.to_owned(),
            content_bytes: 0,
        })
    }

    /// The whole answer as one `chat.completion` object (for `stream: false`).
    pub fn into_completion(mut self) -> (Value, Ending) {
        let mut content = String::new();
        let mut calls: Vec<Value> = Vec::new();
        while let Some(frame) = self.next_frame() {
            let Frame::Data { line, .. } = frame else {
                break;
            };
            let Ok(chunk) = serde_json::from_str::<Value>(&line) else {
                continue;
            };
            let delta = &chunk["choices"][0]["delta"];
            if let Some(text) = delta["content"].as_str() {
                content.push_str(text);
            }
            for piece in delta["tool_calls"].as_array().into_iter().flatten() {
                let i = piece["index"].as_u64().unwrap_or(0) as usize;
                if calls.len() <= i {
                    calls.push(json!({"id": piece["id"], "type": "function",
                        "function": {"name": piece["function"]["name"], "arguments": ""}}));
                }
                let args = piece["function"]["arguments"].as_str().unwrap_or("");
                let so_far = calls[i]["function"]["arguments"]
                    .as_str()
                    .unwrap_or("")
                    .to_owned();
                calls[i]["function"]["arguments"] = Value::String(so_far + args);
            }
        }
        let reason = self.ending.finish_reason();
        let mut message = json!({"role": "assistant", "content": content});
        if !calls.is_empty() {
            message["tool_calls"] = Value::Array(calls);
        }
        let completion = json!({
            "id": self.id,
            "object": "chat.completion",
            "created": self.created,
            "model": self.model,
            "choices": [{"index": 0, "message": message, "finish_reason": reason}],
            "usage": usage(self.prompt_tokens, self.sent_bytes),
        });
        (completion, self.ending)
    }
}

/// Token counts estimated as a quarter of the bytes, rounded up.
pub fn usage(prompt_tokens: u64, completion_bytes: usize) -> Value {
    let completion = (completion_bytes as u64).div_ceil(4);
    json!({
        "prompt_tokens": prompt_tokens,
        "completion_tokens": completion,
        "total_tokens": prompt_tokens + completion,
    })
}

/// How many characters of a tool call's arguments the next piece carries,
/// from the offset reached: a cycle of short and long pieces around the
/// chunk size.
fn piece_size(chunk_chars: usize, at: usize) -> usize {
    let sizes = [chunk_chars.div_ceil(2), chunk_chars * 2, 1, chunk_chars];
    sizes[at % sizes.len()].max(1)
}

fn floor_char_boundary(s: &str, mut i: usize) -> usize {
    while i > 0 && !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

fn now_secs() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reply(content: &str, fault: Fault, chunk: usize) -> Reply {
        let script = Script {
            content: content.to_owned(),
            tool_calls: vec![],
        };
        Reply::new("id".into(), "m".into(), script, fault, chunk, true, 5)
    }

    /// Plays a reply; returns the content pieces and the last frame's text.
    fn play(mut r: Reply) -> (Vec<String>, Vec<String>) {
        let mut pieces = Vec::new();
        let mut tail = Vec::new();
        while let Some(frame) = r.next_frame() {
            match frame {
                Frame::Data {
                    line,
                    content_bytes,
                } => {
                    if content_bytes > 0 {
                        let v: Value = serde_json::from_str(&line).unwrap();
                        pieces.push(
                            v["choices"][0]["delta"]["content"]
                                .as_str()
                                .unwrap()
                                .to_owned(),
                        );
                    } else {
                        tail.push(line);
                    }
                }
                Frame::Abort => tail.push("ABORT".into()),
            }
        }
        (pieces, tail)
    }

    #[test]
    fn text_is_chunked_by_characters() {
        let (pieces, tail) = play(reply("héllo wörld", Fault::default(), 4));
        assert_eq!(pieces, ["héll", "o wö", "rld"]);
        assert!(tail[1].contains(r#""finish_reason":"stop""#), "{tail:?}");
        assert!(tail[2].contains(r#""completion_tokens":4"#), "{tail:?}");
        assert_eq!(tail.last().unwrap(), "[DONE]");
    }

    #[test]
    fn limits_cut_or_stop_at_a_character_boundary() {
        let cut = Fault {
            cut_after: Some(6),
            ..Fault::default()
        };
        let (pieces, tail) = play(reply("abcdéfgh", cut, 4));
        assert_eq!(pieces, ["abcd", "é"]);
        assert_eq!(tail.last().unwrap(), "ABORT");
        let length = Fault {
            length_after: Some(5),
            ..Fault::default()
        };
        let (pieces, tail) = play(reply("abcdéfgh", length, 4));
        assert_eq!(pieces, ["abcd"]);
        assert!(tail[1].contains(r#""finish_reason":"length""#), "{tail:?}");
    }

    #[test]
    fn a_malformed_chunk_is_inserted_once() {
        let fault = Fault {
            malformed_after: Some(2),
            ..Fault::default()
        };
        let (pieces, tail) = play(reply("abcdef", fault, 2));
        assert_eq!(pieces, ["ab", "cd", "ef"]);
        assert!(serde_json::from_str::<Value>(&tail[1]).is_err(), "{tail:?}");
    }

    #[test]
    fn tool_calls_stream_by_index() {
        let script = Script {
            content: String::new(),
            tool_calls: vec![ScriptedToolCall {
                id: "c1".into(),
                name: "ls".into(),
                arguments: json!({"dir": "."}),
            }],
        };
        let r = Reply::new(
            "id".into(),
            "m".into(),
            script,
            Fault::default(),
            5,
            false,
            0,
        );
        let (completion, ending) = r.into_completion();
        assert_eq!(ending, Ending::ToolCalls);
        let call = &completion["choices"][0]["message"]["tool_calls"][0];
        assert_eq!(call["function"]["arguments"], r#"{"dir":"."}"#);
        assert_eq!(completion["choices"][0]["finish_reason"], "tool_calls");
    }

    #[test]
    fn tool_call_arguments_stream_in_uneven_pieces_after_the_id_and_name() {
        let arguments = json!({"file_path": "src/App.jsx", "content": "export default 1;\n"});
        let script = Script {
            content: String::new(),
            tool_calls: vec![ScriptedToolCall {
                id: "c1".into(),
                name: "write_file".into(),
                arguments: arguments.clone(),
            }],
        };
        let mut r = Reply::new(
            "id".into(),
            "m".into(),
            script,
            Fault::default(),
            6,
            false,
            0,
        );
        let mut deltas = Vec::new();
        while let Some(Frame::Data { line, .. }) = r.next_frame() {
            if let Ok(v) = serde_json::from_str::<Value>(&line)
                && let Some(calls) = v["choices"][0]["delta"]["tool_calls"].as_array()
            {
                deltas.push(calls[0].clone());
            }
        }
        assert_eq!(deltas[0]["id"], "c1");
        assert_eq!(deltas[0]["function"]["name"], "write_file");
        let pieces: Vec<&str> = deltas[1..]
            .iter()
            .map(|d| d["function"]["arguments"].as_str().unwrap())
            .collect();
        assert!(
            deltas[1..]
                .iter()
                .all(|d| d["index"] == 0 && d.get("id").is_none())
        );
        let sizes: std::collections::BTreeSet<usize> =
            pieces.iter().map(|p| p.chars().count()).collect();
        assert!(sizes.len() >= 3, "pieces of one size only: {pieces:?}");
        let joined: Value = serde_json::from_str(&pieces.concat()).unwrap();
        assert_eq!(joined, arguments);
    }
}
