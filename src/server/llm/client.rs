//! Streaming one answer from an OpenAI-compatible provider through
//! async-openai: deltas as they arrive, retries before the first token,
//! auto-continue on the length limit, and a stop that drops the upstream
//! request at once.
//!
//! Two entry points:
//! - [`chat`] runs on the caller's task and hands every event to a callback
//!   (for example `|e| { let _ = broadcast_tx.send(e); }`), then returns the
//!   [`ChatOutcome`] (the whole answer, to store).
//! - [`stream_chat`] runs on a task of its own and returns the events as a
//!   `Stream`; dropping the stream stops the answer.
//!
//! Either way the events end with exactly one `Finished` or `Failed`, and
//! cancelling the token ends the answer with `Failed { Cancelled }`, keeping
//! the text that arrived.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use async_openai::Client;
use async_openai::config::OpenAIConfig;
use async_openai::error::{OpenAIError, WrappedError};
use async_openai::types::chat::{
    ChatCompletionMessageToolCall, ChatCompletionMessageToolCalls,
    ChatCompletionRequestAssistantMessage, ChatCompletionRequestAssistantMessageContent,
    ChatCompletionRequestMessage, ChatCompletionRequestMessageContentPartImage,
    ChatCompletionRequestMessageContentPartText, ChatCompletionRequestSystemMessage,
    ChatCompletionRequestSystemMessageContent, ChatCompletionRequestToolMessage,
    ChatCompletionRequestToolMessageContent, ChatCompletionRequestUserMessage,
    ChatCompletionRequestUserMessageContent, ChatCompletionRequestUserMessageContentPart,
    ChatCompletionResponseStream, ChatCompletionStreamOptions, ChatCompletionTool,
    ChatCompletionTools, CreateChatCompletionRequest, CreateChatCompletionStreamResponse,
    FinishReason as ApiFinishReason, FunctionCall, FunctionObject, ImageUrl,
};
use futures::future::BoxFuture;
use futures::{FutureExt, Stream, StreamExt};
use tokio_util::sync::CancellationToken;

use super::provider::TokenLimitField;
use super::settings::ResolvedLlm;
use super::splice::{CONTINUE_PROMPT, OverlapTrimmer};
use super::upstream::{Failure, classify, clean_message};
use crate::runtime::llm::{FinishReason, LlmError, LlmEvent, TokenUsage, ToolCall};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChatRole {
    User,
    Assistant,
    /// A tool's result (agent mode), answering the call `tool_call_id`.
    Tool,
}

/// An image sent to the model with a message, as base64.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ImagePart {
    /// `image/png`, `image/jpeg`, …
    pub media_type: String,
    pub base64: String,
}

impl ImagePart {
    /// The `data:` URL of an `image_url` content part.
    pub fn data_url(&self) -> String {
        format!("data:{};base64,{}", self.media_type, self.base64)
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChatMessage {
    pub role: ChatRole,
    pub content: String,
    /// Images a user message carries (for a model that takes images).
    pub images: Vec<ImagePart>,
    /// The tools an assistant message called (agent mode).
    pub tool_calls: Vec<ToolCall>,
    /// The call a tool message answers.
    pub tool_call_id: Option<String>,
}

impl ChatMessage {
    pub fn user(content: impl Into<String>) -> ChatMessage {
        ChatMessage {
            role: ChatRole::User,
            content: content.into(),
            images: Vec::new(),
            tool_calls: Vec::new(),
            tool_call_id: None,
        }
    }

    /// A user message with images, sent as `image_url` content parts.
    pub fn user_with_images(content: impl Into<String>, images: Vec<ImagePart>) -> ChatMessage {
        ChatMessage {
            images,
            ..ChatMessage::user(content)
        }
    }

    pub fn assistant(content: impl Into<String>) -> ChatMessage {
        ChatMessage {
            role: ChatRole::Assistant,
            content: content.into(),
            images: Vec::new(),
            tool_calls: Vec::new(),
            tool_call_id: None,
        }
    }

    /// An assistant message that called tools.
    pub fn assistant_calls(content: impl Into<String>, calls: Vec<ToolCall>) -> ChatMessage {
        ChatMessage {
            tool_calls: calls,
            ..ChatMessage::assistant(content)
        }
    }

    /// A tool's result for the call `call_id`.
    pub fn tool(call_id: impl Into<String>, content: impl Into<String>) -> ChatMessage {
        ChatMessage {
            role: ChatRole::Tool,
            content: content.into(),
            images: Vec::new(),
            tool_calls: Vec::new(),
            tool_call_id: Some(call_id.into()),
        }
    }
}

/// A tool the model may call (agent mode).
#[derive(Clone, Debug, PartialEq)]
pub struct ToolSpec {
    pub name: String,
    pub description: String,
    /// JSON Schema of the arguments.
    pub parameters: serde_json::Value,
}

#[derive(Clone, Debug)]
pub struct ChatRequest {
    /// The system prompt (see `prompt::system_prompt`).
    pub system: String,
    /// The conversation, oldest first, ending with the user's message.
    pub messages: Vec<ChatMessage>,
    /// Continue this partial answer instead of starting a new one (the
    /// chat's Continue button): events then carry only the new text.
    pub continue_from: Option<String>,
    pub tools: Vec<ToolSpec>,
    pub options: ChatOptions,
    pub pace: Pace,
}

impl ChatRequest {
    pub fn new(system: impl Into<String>, messages: Vec<ChatMessage>) -> ChatRequest {
        ChatRequest {
            system: system.into(),
            messages,
            continue_from: None,
            tools: Vec::new(),
            options: ChatOptions::default(),
            pace: Pace::default(),
        }
    }
}

/// What an answer waits for after each chunk, before it reads more of the
/// provider's stream: back-pressure from whoever takes the events (the
/// store's writer catching up) down to the provider's connection. The
/// default waits for nothing.
#[derive(Clone, Default)]
pub struct Pace(Option<Arc<dyn Fn() -> BoxFuture<'static, ()> + Send + Sync>>);

impl Pace {
    pub fn new(ready: impl Fn() -> BoxFuture<'static, ()> + Send + Sync + 'static) -> Pace {
        Pace(Some(Arc::new(ready)))
    }

    async fn ready(&self) {
        if let Some(ready) = &self.0 {
            ready().await;
        }
    }
}

impl std::fmt::Debug for Pace {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.is_some() {
            "Pace(paced)"
        } else {
            "Pace(free)"
        })
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ChatOptions {
    /// Retries of a request that failed before its first token (5xx,
    /// connection errors); `Retry-After` is honoured up to `retry_max`.
    pub max_retries: u32,
    /// First retry delay, doubled each time, capped at `retry_max`.
    pub retry_base: Duration,
    pub retry_max: Duration,
    /// How many times an answer cut by the length limit is continued.
    pub max_continuations: u8,
    /// How long to wait for the response headers (a local model may first
    /// have to load).
    pub first_byte_timeout: Duration,
    /// How long the stream may stay silent before it counts as cut
    /// (noticed within twice this).
    pub idle_timeout: Duration,
}

impl Default for ChatOptions {
    fn default() -> Self {
        ChatOptions {
            max_retries: 3,
            retry_base: Duration::from_millis(500),
            retry_max: Duration::from_secs(8),
            max_continuations: 2,
            first_byte_timeout: Duration::from_secs(300),
            idle_timeout: Duration::from_secs(120),
        }
    }
}

/// The whole answer, once the events have ended.
#[derive(Clone, Debug, PartialEq)]
pub struct ChatOutcome {
    /// Everything the deltas carried, continuations spliced in.
    pub text: String,
    pub usage: Option<TokenUsage>,
    pub result: Result<FinishReason, LlmError>,
    pub tool_calls: Vec<ToolCall>,
    pub continuations: u8,
}

/// Streams one answer, calling `on_event` for each event in order.
pub async fn chat(
    llm: &ResolvedLlm,
    request: ChatRequest,
    cancel: CancellationToken,
    on_event: impl FnMut(LlmEvent) + Send,
) -> ChatOutcome {
    let mut run = Run {
        llm,
        options: request.options,
        pace: request.pace.clone(),
        cancel,
        on_event,
        text: String::new(),
        held: String::new(),
        usage: None,
        tool_calls: BTreeMap::new(),
        continuations: 0,
    };
    let result = run.answer(&request).await;
    let tool_calls: Vec<ToolCall> = std::mem::take(&mut run.tool_calls).into_values().collect();
    match &result {
        Ok(finish_reason) => {
            if !tool_calls.is_empty() {
                (run.on_event)(LlmEvent::ToolCalls {
                    calls: tool_calls.clone(),
                });
            }
            (run.on_event)(LlmEvent::Finished {
                finish_reason: *finish_reason,
            });
        }
        Err(error) => (run.on_event)(LlmEvent::Failed {
            error: error.clone(),
        }),
    }
    ChatOutcome {
        text: run.text,
        usage: run.usage,
        result,
        tool_calls,
        continuations: run.continuations,
    }
}

/// Like [`chat`], on a task of its own. Dropping the stream stops the
/// answer as the cancel token does.
pub fn stream_chat(
    llm: ResolvedLlm,
    request: ChatRequest,
    cancel: CancellationToken,
) -> impl Stream<Item = LlmEvent> + Send + 'static {
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    // A child token, so dropping the stream stops this answer only.
    let cancel = cancel.child_token();
    let guard = cancel.clone().drop_guard();
    tokio::spawn(async move {
        chat(&llm, request, cancel, |event| {
            let _ = tx.send(event);
        })
        .await;
    });
    tokio_stream::wrappers::UnboundedReceiverStream::new(rx).map(move |event| {
        // The guard lives as long as the stream.
        let _ = &guard;
        event
    })
}

/// At most this many chunks, or this much text, that have already arrived
/// are handed on as one delta.
const CATCH_UP_CHUNKS: usize = 256;
const CATCH_UP_BYTES: usize = 16 * 1024;

/// How far one request has gone.
#[derive(Clone, Copy, Default)]
struct Progress {
    /// Anything of the answer arrived (a retry would repeat it).
    started: bool,
    /// The finish reason, once a chunk carried one.
    finish: Option<FinishReason>,
}

/// How one request (one round) ended.
enum RoundEnd {
    Finished(FinishReason),
    Failed(LlmError),
}

struct Run<'a, F> {
    llm: &'a ResolvedLlm,
    options: ChatOptions,
    pace: Pace,
    cancel: CancellationToken,
    on_event: F,
    /// The answer so far (what the deltas carried).
    text: String,
    /// Text taken in and not yet handed on (see [`Run::release`]).
    held: String,
    usage: Option<TokenUsage>,
    tool_calls: BTreeMap<u32, ToolCall>,
    continuations: u8,
}

impl<F: FnMut(LlmEvent) + Send> Run<'_, F> {
    async fn answer(&mut self, request: &ChatRequest) -> Result<FinishReason, LlmError> {
        if let Some(problem) = &self.llm.problem {
            return Err(LlmError::NotConfigured {
                message: problem.clone(),
            });
        }
        let client = client(self.llm);
        let messages = base_messages(request);
        // What the model has written so far, when this request continues it.
        let mut written = request.continue_from.clone();
        loop {
            let trimmer = written.as_deref().map(OverlapTrimmer::new);
            let api_request = self.api_request(request, &messages, written.as_deref());
            match self.round(&client, api_request, trimmer).await {
                RoundEnd::Finished(FinishReason::Length)
                    if self.continuations < self.options.max_continuations
                        && self.tool_calls.is_empty() =>
                {
                    self.continuations += 1;
                    (self.on_event)(LlmEvent::Continuing {
                        attempt: self.continuations,
                    });
                    let mut so_far = request.continue_from.clone().unwrap_or_default();
                    so_far.push_str(&self.text);
                    written = Some(so_far);
                }
                RoundEnd::Finished(reason) => return Ok(reason),
                RoundEnd::Failed(error) => return Err(error),
            }
        }
    }

    #[allow(deprecated)] // `max_tokens` is deprecated by OpenAI, still what others use.
    fn api_request(
        &self,
        request: &ChatRequest,
        messages: &[ChatCompletionRequestMessage],
        written: Option<&str>,
    ) -> CreateChatCompletionRequest {
        let mut messages = messages.to_vec();
        if let Some(written) = written {
            messages.push(assistant(written));
            messages.push(user(CONTINUE_PROMPT));
        }
        let limit = self.llm.max_tokens;
        let tools = (!request.tools.is_empty()).then(|| {
            request
                .tools
                .iter()
                .map(|t| {
                    ChatCompletionTools::Function(ChatCompletionTool {
                        function: FunctionObject {
                            name: t.name.clone(),
                            description: Some(t.description.clone()),
                            parameters: Some(t.parameters.clone()),
                            strict: None,
                        },
                    })
                })
                .collect()
        });
        CreateChatCompletionRequest {
            messages,
            model: self.llm.model.clone(),
            stream: Some(true),
            stream_options: Some(ChatCompletionStreamOptions {
                include_usage: Some(true),
                include_obfuscation: None,
            }),
            max_tokens: limit.filter(|_| self.llm.token_limit == TokenLimitField::MaxTokens),
            max_completion_tokens: limit
                .filter(|_| self.llm.token_limit == TokenLimitField::MaxCompletionTokens),
            tools,
            ..Default::default()
        }
    }

    /// One request, retried while it has produced no text.
    async fn round(
        &mut self,
        client: &Client<OpenAIConfig>,
        request: CreateChatCompletionRequest,
        mut trimmer: Option<OverlapTrimmer>,
    ) -> RoundEnd {
        let mut attempt = 0u32;
        let usage_before = self.usage;
        loop {
            let outcome = self
                .attempt(client, request.clone(), &mut trimmer, usage_before)
                .await;
            let failure = match outcome {
                Ok(end) => {
                    self.flush(&mut trimmer);
                    return end;
                }
                Err(failure) => failure,
            };
            let Some(asked_delay) = failure.retry else {
                return RoundEnd::Failed(failure.error);
            };
            if attempt >= self.options.max_retries {
                return RoundEnd::Failed(with_attempts(failure.error, attempt + 1));
            }
            attempt += 1;
            let backoff = self
                .options
                .retry_base
                .saturating_mul(1u32 << (attempt - 1).min(16));
            let delay = asked_delay.unwrap_or(backoff).min(self.options.retry_max);
            (self.on_event)(LlmEvent::Retrying {
                attempt,
                delay_ms: delay.as_millis() as u64,
                reason: retry_reason(&failure.error),
            });
            tokio::select! {
                () = self.cancel.cancelled() => return RoundEnd::Failed(LlmError::Cancelled),
                () = tokio::time::sleep(delay) => {}
            }
        }
    }

    /// One HTTP request. `Err` is a failure before any text of this round
    /// (which the caller may retry); everything after the first token ends
    /// the round. Text the trimmer holds back is released by the caller.
    async fn attempt(
        &mut self,
        client: &Client<OpenAIConfig>,
        request: CreateChatCompletionRequest,
        trimmer: &mut Option<OverlapTrimmer>,
        usage_before: Option<TokenUsage>,
    ) -> Result<RoundEnd, Failure> {
        let chat = client.chat();
        // One future for the whole attempt, polled again by each `select!`,
        // rather than a new one made (and registered) twice per chunk.
        let cancelled = self.cancel.clone().cancelled_owned();
        tokio::pin!(cancelled);
        let opened = tokio::select! {
            biased;
            () = &mut cancelled => return Ok(RoundEnd::Failed(LlmError::Cancelled)),
            opened = tokio::time::timeout(
                self.options.first_byte_timeout,
                chat.create_stream(request),
            ) => opened,
        };
        let mut stream = match opened {
            Ok(Ok(stream)) => stream,
            Ok(Err(e)) => return Err(classify(self.llm, e)),
            Err(_) => {
                return Err(self.connection_failure(format!(
                    "no response within {:?}",
                    self.options.first_byte_timeout
                )));
            }
        };
        let mut round = Progress::default();
        // One timer for the whole stream rather than one per chunk: when it
        // fires it is re-armed if anything arrived since, so a silence is
        // noticed after one to two idle periods.
        let idle_timeout = self.options.idle_timeout;
        let idle = tokio::time::sleep(idle_timeout);
        tokio::pin!(idle);
        let mut heard = false;
        loop {
            let next = tokio::select! {
                biased;
                // Returning drops `stream`, which closes the upstream connection.
                () = &mut cancelled => return Ok(RoundEnd::Failed(LlmError::Cancelled)),
                next = stream.next() => next,
                () = &mut idle => {
                    if std::mem::take(&mut heard) {
                        idle.as_mut().reset(tokio::time::Instant::now() + idle_timeout);
                        continue;
                    }
                    return self.cut(round.started, format!("no data for {idle_timeout:?}"));
                }
            };
            heard = true;
            let taken = self.take_in(&mut stream, next, trimmer, usage_before, &mut round);
            self.release();
            if let Err(end) = taken {
                return end;
            }
            tokio::select! {
                biased;
                () = &mut cancelled => return Ok(RoundEnd::Failed(LlmError::Cancelled)),
                () = self.pace.ready() => {}
            }
        }
    }

    /// Takes in `first` and whatever else has already arrived, their text
    /// held to go on as one delta (the caller releases it): a reader that
    /// fell behind (waiting for the store's writer, or for a core) catches
    /// up with one event instead of one per chunk. Nothing waits here for
    /// more.
    fn take_in(
        &mut self,
        stream: &mut ChatCompletionResponseStream,
        first: Option<Result<CreateChatCompletionStreamResponse, OpenAIError>>,
        trimmer: &mut Option<OverlapTrimmer>,
        usage_before: Option<TokenUsage>,
        round: &mut Progress,
    ) -> Result<(), Result<RoundEnd, Failure>> {
        let mut next = Some(first);
        let mut taken = 0;
        while let Some(item) = next.take() {
            let chunk = self.chunk_or_end(item, round)?;
            round.started |= self.absorb(chunk, trimmer, usage_before, &mut round.finish);
            taken += 1;
            if taken < CATCH_UP_CHUNKS && self.held.len() < CATCH_UP_BYTES {
                next = stream.next().now_or_never();
            }
        }
        Ok(())
    }

    /// Takes in one chunk; returns whether it carried anything of the answer.
    fn absorb(
        &mut self,
        chunk: CreateChatCompletionStreamResponse,
        trimmer: &mut Option<OverlapTrimmer>,
        usage_before: Option<TokenUsage>,
        finish: &mut Option<FinishReason>,
    ) -> bool {
        let mut carried = false;
        if let Some(u) = chunk.usage {
            let round = TokenUsage {
                prompt_tokens: u.prompt_tokens,
                completion_tokens: u.completion_tokens,
                total_tokens: u.total_tokens,
            };
            let total = usage_before.map_or(round, |before| before + round);
            self.usage = Some(total);
            self.release();
            (self.on_event)(LlmEvent::Usage(total));
        }
        for choice in chunk.choices.into_iter().filter(|c| c.index == 0) {
            if let Some(content) = choice.delta.content.filter(|c| !c.is_empty()) {
                carried = true;
                let shown = match trimmer {
                    Some(t) => t.push(&content),
                    None => content,
                };
                self.emit_text(shown);
            }
            for piece in choice.delta.tool_calls.unwrap_or_default() {
                carried = true;
                let call = self
                    .tool_calls
                    .entry(piece.index)
                    .or_insert_with(|| ToolCall {
                        id: String::new(),
                        name: String::new(),
                        arguments: String::new(),
                    });
                if let Some(id) = piece.id {
                    call.id = id;
                }
                if let Some(function) = piece.function {
                    call.name.push_str(&function.name.unwrap_or_default());
                    call.arguments
                        .push_str(&function.arguments.unwrap_or_default());
                }
            }
            if let Some(reason) = choice.finish_reason {
                *finish = Some(match reason {
                    ApiFinishReason::Stop => FinishReason::Stop,
                    ApiFinishReason::Length => FinishReason::Length,
                    ApiFinishReason::ToolCalls | ApiFinishReason::FunctionCall => {
                        FinishReason::ToolCalls
                    }
                    ApiFinishReason::ContentFilter => FinishReason::ContentFilter,
                });
            }
        }
        carried
    }

    /// One item of the provider's stream: its chunk, or how the round ends.
    fn chunk_or_end(
        &self,
        item: Option<Result<CreateChatCompletionStreamResponse, OpenAIError>>,
        round: &Progress,
    ) -> Result<CreateChatCompletionStreamResponse, Result<RoundEnd, Failure>> {
        let Progress { started, finish } = *round;
        match (item, finish) {
            (Some(Ok(chunk)), _) => Ok(chunk),
            // The final chunks arrived; the end, or a transport error after
            // them, loses nothing.
            (None | Some(Err(_)), Some(reason)) => Err(Ok(RoundEnd::Finished(reason))),
            (None, None) => Err(self.cut(
                started,
                "the stream ended before the answer was complete".to_owned(),
            )),
            (Some(Err(error)), None) => Err(self.stream_error(started, error)),
        }
    }

    /// Text joins what is held until [`Run::release`].
    fn emit_text(&mut self, text: String) {
        if !text.is_empty() {
            self.text.push_str(&text);
            self.held.push_str(&text);
        }
    }

    /// Hands on the text held since the last release, as one delta.
    fn release(&mut self) {
        if !self.held.is_empty() {
            let text = std::mem::take(&mut self.held);
            (self.on_event)(LlmEvent::Delta { text });
        }
    }

    /// Releases text a trimmer still holds back.
    fn flush(&mut self, trimmer: &mut Option<OverlapTrimmer>) {
        if let Some(t) = trimmer {
            let rest = t.finish();
            self.emit_text(rest);
        }
        self.release();
    }

    /// The stream stopped early: retryable if nothing had arrived yet.
    fn cut(&self, started: bool, message: String) -> Result<RoundEnd, Failure> {
        if started {
            Ok(RoundEnd::Failed(LlmError::Interrupted { message }))
        } else {
            Err(self.connection_failure(message))
        }
    }

    fn stream_error(&self, started: bool, error: OpenAIError) -> Result<RoundEnd, Failure> {
        match error {
            OpenAIError::JSONDeserialize(e, content) => {
                // Some providers report a failure mid-stream as an error object.
                if let Ok(wrapped) = serde_json::from_str::<WrappedError>(&content) {
                    let message = clean_message(self.llm, &wrapped.error.message);
                    return self.cut(started, format!("{}: {message}", self.llm.label));
                }
                Ok(RoundEnd::Failed(LlmError::BadChunk {
                    message: e.to_string(),
                }))
            }
            other => {
                let failure = classify(self.llm, other);
                match failure.error {
                    LlmError::Connection { message, .. } => self.cut(started, message),
                    error if started => Ok(RoundEnd::Failed(error)),
                    _ => Err(failure),
                }
            }
        }
    }

    fn connection_failure(&self, message: String) -> Failure {
        Failure {
            error: LlmError::Connection {
                provider: self.llm.label.clone(),
                message,
            },
            retry: Some(None),
        }
    }
}

/// Why a request is tried again, in a few words.
fn retry_reason(error: &LlmError) -> String {
    match error {
        LlmError::Server {
            provider, status, ..
        } => format!("{provider} answered {status}"),
        LlmError::Connection { provider, message } => format!("{provider}: {message}"),
        other => other.to_string(),
    }
}

fn with_attempts(error: LlmError, attempts: u32) -> LlmError {
    match error {
        LlmError::Server {
            provider, status, ..
        } => LlmError::Server {
            provider,
            status,
            attempts,
        },
        other => other,
    }
}

fn client(llm: &ResolvedLlm) -> Client<OpenAIConfig> {
    // Everything is set explicitly: OpenAIConfig's defaults read OPENAI_*
    // variables, which must not leak into requests to other providers.
    let config = OpenAIConfig::new()
        .with_api_base(llm.base_url.clone())
        .with_api_key(llm.key().map_or("", |k| k.expose()))
        .with_org_id("")
        .with_project_id("");
    super::upstream::openai_client(config)
}

fn base_messages(request: &ChatRequest) -> Vec<ChatCompletionRequestMessage> {
    let mut messages = Vec::with_capacity(base_len(request) + 2);
    if !request.system.is_empty() {
        messages.push(ChatCompletionRequestMessage::System(
            ChatCompletionRequestSystemMessage {
                content: ChatCompletionRequestSystemMessageContent::Text(request.system.clone()),
                name: None,
            },
        ));
    }
    messages.extend(request.messages.iter().map(|m| match m.role {
        ChatRole::User if !m.images.is_empty() => user_with_images(m),
        ChatRole::User => user(&m.content),
        ChatRole::Assistant if !m.tool_calls.is_empty() => assistant_calls(m),
        ChatRole::Assistant => assistant(&m.content),
        ChatRole::Tool => ChatCompletionRequestMessage::Tool(ChatCompletionRequestToolMessage {
            content: ChatCompletionRequestToolMessageContent::Text(m.content.clone()),
            tool_call_id: m.tool_call_id.clone().unwrap_or_default(),
        }),
    }));
    messages
}

fn base_len(request: &ChatRequest) -> usize {
    request.messages.len() + usize::from(!request.system.is_empty())
}

fn user(text: &str) -> ChatCompletionRequestMessage {
    ChatCompletionRequestMessage::User(ChatCompletionRequestUserMessage {
        content: ChatCompletionRequestUserMessageContent::Text(text.to_owned()),
        name: None,
    })
}

fn user_with_images(m: &ChatMessage) -> ChatCompletionRequestMessage {
    let text = ChatCompletionRequestUserMessageContentPart::Text(
        ChatCompletionRequestMessageContentPartText {
            text: m.content.clone(),
            prompt_cache_breakpoint: None,
        },
    );
    let images = m.images.iter().map(|image| {
        ChatCompletionRequestUserMessageContentPart::ImageUrl(
            ChatCompletionRequestMessageContentPartImage {
                image_url: ImageUrl {
                    url: image.data_url(),
                    detail: None,
                },
                prompt_cache_breakpoint: None,
            },
        )
    });
    ChatCompletionRequestMessage::User(ChatCompletionRequestUserMessage {
        content: ChatCompletionRequestUserMessageContent::Array(
            std::iter::once(text).chain(images).collect(),
        ),
        name: None,
    })
}

fn assistant_calls(m: &ChatMessage) -> ChatCompletionRequestMessage {
    let calls = m
        .tool_calls
        .iter()
        .map(|c| {
            ChatCompletionMessageToolCalls::Function(ChatCompletionMessageToolCall {
                id: c.id.clone(),
                function: FunctionCall {
                    name: c.name.clone(),
                    arguments: c.arguments.clone(),
                },
            })
        })
        .collect();
    ChatCompletionRequestMessage::Assistant(ChatCompletionRequestAssistantMessage {
        content: (!m.content.is_empty())
            .then(|| ChatCompletionRequestAssistantMessageContent::Text(m.content.clone())),
        tool_calls: Some(calls),
        ..Default::default()
    })
}

fn assistant(text: &str) -> ChatCompletionRequestMessage {
    ChatCompletionRequestMessage::Assistant(ChatCompletionRequestAssistantMessage {
        content: Some(ChatCompletionRequestAssistantMessageContent::Text(
            text.to_owned(),
        )),
        ..Default::default()
    })
}
