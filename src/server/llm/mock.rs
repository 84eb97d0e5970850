//! The scripted provider: a real OpenAI-compatible HTTP server that replays
//! transcripts instead of asking a model. It backs the `demo` provider (in
//! process, with the compiled-in transcripts), `rivet mock-llm` and the
//! tests. See docs/mock-llm.md for transcripts, faults and the control API.

mod fault;
mod reply;
mod transcript;

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde::Serialize;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

pub use fault::Fault;
pub use reply::Ending;
pub use transcript::{Body as TranscriptBody, Transcript, embedded, load_dir, parse};

use reply::{Frame, Reply, Script};

/// Called as each content chunk is handed to the connection, with the
/// request's last user message and the chunk's index (benchmarks use it to
/// time chunks end to end on one clock).
pub type ChunkObserver = Arc<dyn Fn(&str, usize) + Send + Sync>;

#[derive(Clone)]
pub struct MockConfig {
    pub transcripts: Vec<Transcript>,
    /// Characters per chunk.
    pub chunk_size: usize,
    /// Pause between chunks.
    pub chunk_delay: Duration,
    /// The models `/v1/models` lists; a request for another gets a 404.
    pub models: Vec<String>,
    /// When set, requests must carry `Authorization: Bearer <key>`.
    pub api_key: Option<String>,
    pub on_chunk: Option<ChunkObserver>,
    /// When set, a request whose prompt is estimated
    /// (`budget::estimate_request`) above this many tokens is refused with
    /// the usual 400 `context_length_exceeded`.
    pub context_limit: Option<u32>,
    /// What `/v1/models` says beyond the model names.
    pub models_answer: ModelsAnswer,
}

/// How the scripted provider answers `/v1/models`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ModelsAnswer {
    /// Reported as each model's `context_length`, as OpenRouter and LM
    /// Studio do.
    pub context_length: Option<u32>,
    /// Answer with this HTTP status and an error body instead of the list.
    pub status: Option<u16>,
}

impl MockConfig {
    /// The compiled-in demo transcripts at a pace a person can watch.
    pub fn demo() -> MockConfig {
        MockConfig {
            transcripts: embedded(),
            chunk_size: 8,
            chunk_delay: Duration::from_millis(10),
            models: vec![super::provider::DEMO_MODEL.to_owned()],
            api_key: None,
            on_chunk: None,
            context_limit: None,
            models_answer: ModelsAnswer::default(),
        }
    }

    /// `transcripts` answered as `model`, 16 characters a chunk without a
    /// pause (tests and benchmarks change what they need).
    pub fn replaying(transcripts: Vec<Transcript>, model: &str) -> MockConfig {
        MockConfig {
            transcripts,
            chunk_size: 16,
            chunk_delay: Duration::ZERO,
            models: vec![model.to_owned()],
            ..MockConfig::demo()
        }
    }
}

/// One request as the log records it.
#[derive(Clone, Debug, Serialize)]
pub struct LogEntry {
    pub id: u64,
    pub model: String,
    pub stream: bool,
    pub last_user: String,
    /// The system prompt, so tests can see what the model was told.
    pub system: String,
    /// The other messages' text, oldest first, each as `role: text`.
    pub messages: Vec<String>,
    /// The names of the tools the request offered.
    pub tools: Vec<String>,
    /// The images the request carried, as their `data:` URLs.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub images: Vec<String>,
    /// The prompt's tokens as `budget::estimate_request` estimates them
    /// (what `--context-limit` compares).
    pub prompt_estimate: u32,
    pub transcript: Option<String>,
    /// Set when the request continued an answer, at this byte offset.
    pub resumed_at: Option<usize>,
    pub fault: Fault,
    pub status: u16,
    /// Bytes of answer text sent.
    pub content_bytes: usize,
    pub end: LogEnd,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum LogEnd {
    /// Still streaming.
    Open,
    /// Answered with an error status.
    Refused,
    Completed,
    Length,
    /// Closed by the mock (`cut-after`).
    Cut,
    /// The client went away before the end.
    ClientDropped,
}

struct MockState {
    config: MockConfig,
    next_id: AtomicU64,
    rotation: AtomicUsize,
    faults: Mutex<VecDeque<Fault>>,
    log: Mutex<Vec<LogEntry>>,
}

impl MockState {
    fn log_update(&self, id: u64, f: impl FnOnce(&mut LogEntry)) {
        let mut log = self.log.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(entry) = log.iter_mut().rev().find(|e| e.id == id) {
            f(entry);
        }
    }
}

/// The scripted provider's routes: `/v1/models`, `/v1/chat/completions`,
/// and the control endpoints under `/mock/`.
pub fn router(config: MockConfig) -> Router {
    let state = Arc::new(MockState {
        config,
        next_id: AtomicU64::new(1),
        rotation: AtomicUsize::new(0),
        faults: Mutex::new(VecDeque::new()),
        log: Mutex::new(Vec::new()),
    });
    Router::new()
        .route("/v1/models", get(models))
        .route("/v1/chat/completions", post(completions))
        .route("/mock/faults", post(queue_faults).delete(clear_faults))
        .route("/mock/log", get(read_log).delete(clear_log))
        .with_state(state)
}

/// A scripted provider listening on a port of its own.
pub struct MockServer {
    pub addr: SocketAddr,
    shutdown: CancellationToken,
}

impl MockServer {
    pub async fn start(config: MockConfig, addr: SocketAddr) -> std::io::Result<MockServer> {
        let listener = tokio::net::TcpListener::bind(addr).await?;
        let addr = listener.local_addr()?;
        let shutdown = CancellationToken::new();
        let app = router(config);
        let stop = shutdown.clone();
        // Each chunk leaves as it is written, as a streaming provider's do:
        // without this, Nagle's algorithm holds a chunk until the previous
        // one is acknowledged, which the client delays by up to 40 ms.
        let listener = axum::serve::ListenerExt::tap_io(listener, |tcp| {
            if let Err(e) = tcp.set_nodelay(true) {
                tracing::debug!("TCP_NODELAY on a provider connection: {e}");
            }
        });
        tokio::spawn(async move {
            let server = axum::serve(listener, app)
                .with_graceful_shutdown(async move { stop.cancelled().await });
            if let Err(e) = server.await {
                tracing::error!("scripted provider stopped: {e}");
            }
        });
        Ok(MockServer { addr, shutdown })
    }

    /// The base URL to give an OpenAI client.
    pub fn base_url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }
}

impl Drop for MockServer {
    fn drop(&mut self) {
        self.shutdown.cancel();
    }
}

/// `rivet mock-llm`.
#[derive(Debug, clap::Args)]
pub struct MockArgs {
    /// Port to listen on (0 picks a free one); the address is printed on
    /// stdout's first line.
    #[arg(long, default_value_t = 8089)]
    pub port: u16,
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1")]
    pub host: std::net::IpAddr,
    /// Directory of transcripts (.txt answers, .json tool scripts); without
    /// it, the built-in demo transcripts.
    #[arg(long)]
    pub script: Option<PathBuf>,
    /// Characters per streamed chunk.
    #[arg(long, default_value_t = 8)]
    pub chunk_size: usize,
    /// Milliseconds between chunks.
    #[arg(long, default_value_t = 10)]
    pub delay_ms: u64,
    /// Models to list and accept, comma-separated.
    #[arg(long, value_delimiter = ',', default_value = super::provider::DEMO_MODEL)]
    pub models: Vec<String>,
    /// Require this API key (requests without it get a 401).
    #[arg(long)]
    pub api_key: Option<String>,
    /// Refuse a request whose prompt is estimated above this many tokens
    /// with a 400 `context_length_exceeded`, as a model with that context
    /// window would.
    #[arg(long)]
    pub context_limit: Option<u32>,
    /// Report this context length for every model in `/v1/models`
    /// (`context_length`, as OpenRouter and LM Studio do).
    #[arg(long)]
    pub context_length: Option<u32>,
    /// Answer `/v1/models` with this HTTP status (an error) instead of the
    /// list.
    #[arg(long, value_parser = clap::value_parser!(u16).range(100..=599))]
    pub models_status: Option<u16>,
}

pub async fn run(args: MockArgs) -> anyhow::Result<()> {
    let transcripts = match &args.script {
        Some(dir) => load_dir(dir).map_err(anyhow::Error::msg)?,
        None => embedded(),
    };
    let config = MockConfig {
        transcripts,
        chunk_size: args.chunk_size.max(1),
        chunk_delay: Duration::from_millis(args.delay_ms),
        models: args.models,
        api_key: args.api_key,
        on_chunk: None,
        context_limit: args.context_limit,
        models_answer: ModelsAnswer {
            context_length: args.context_length,
            status: args.models_status,
        },
    };
    let count = config.transcripts.len();
    let server = MockServer::start(config, SocketAddr::new(args.host, args.port)).await?;
    // Scripts and tests read the address from the first line.
    println!("{}", server.addr);
    tracing::info!(
        "scripted provider with {count} transcripts at {}",
        server.base_url()
    );
    tokio::signal::ctrl_c().await?;
    Ok(())
}

async fn models(State(state): State<Arc<MockState>>) -> Response {
    let answer = state.config.models_answer;
    if let Some(status) = answer.status {
        let message = format!("scripted fault: status {status}");
        return error_response(status, &message, "models_unavailable", None);
    }
    let data: Vec<Value> = state
        .config
        .models
        .iter()
        .map(|id| {
            let mut model = json!({"id": id, "object": "model", "created": 0, "owned_by": "rivet"});
            if let Some(length) = answer.context_length {
                model["context_length"] = json!(length);
            }
            model
        })
        .collect();
    Json(json!({"object": "list", "data": data})).into_response()
}

async fn queue_faults(State(state): State<Arc<MockState>>, Json(body): Json<Value>) -> Response {
    let list = match body {
        Value::Array(items) => items,
        one => vec![one],
    };
    let parsed: Result<Vec<Fault>, _> = list.into_iter().map(serde_json::from_value).collect();
    match parsed {
        Ok(faults) => {
            let mut queue = state.faults.lock().unwrap_or_else(PoisonError::into_inner);
            queue.extend(faults);
            Json(json!({"queued": queue.len()})).into_response()
        }
        Err(e) => (StatusCode::BAD_REQUEST, e.to_string()).into_response(),
    }
}

/// The first queued fault meant for this request, if any.
fn take_queued_fault(state: &MockState, last_user: &str) -> Fault {
    let mut queue = state.faults.lock().unwrap_or_else(PoisonError::into_inner);
    let at = queue.iter().position(|fault| fault.applies_to(last_user));
    at.and_then(|i| queue.remove(i)).unwrap_or_default()
}

async fn clear_faults(State(state): State<Arc<MockState>>) -> StatusCode {
    state
        .faults
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .clear();
    StatusCode::NO_CONTENT
}

async fn read_log(State(state): State<Arc<MockState>>) -> Json<Vec<LogEntry>> {
    Json(
        state
            .log
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone(),
    )
}

async fn clear_log(State(state): State<Arc<MockState>>) -> StatusCode {
    state
        .log
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .clear();
    StatusCode::NO_CONTENT
}

fn error_response(status: u16, message: &str, code: &str, retry_after: Option<u64>) -> Response {
    let status = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let body = json!({"error": {"message": message, "type": "mock_error", "code": code}});
    let mut response = (status, Json(body)).into_response();
    if let Some(secs) = retry_after {
        response
            .headers_mut()
            .insert(header::RETRY_AFTER, header::HeaderValue::from(secs));
    }
    response
}

/// What the request asks, read leniently as a real server would.
struct Asked {
    model: String,
    stream: bool,
    include_usage: bool,
    last_user: String,
    system: String,
    prompt_tokens: u64,
    /// The answer being continued: the assistant message before the last
    /// user message.
    previous_answer: Option<String>,
    /// The user message that answer replied to.
    previous_question: String,
    /// Assistant messages after the last user message (tool turns).
    turns_taken: usize,
    /// The tool results the request ends with, in order.
    tool_results: Vec<String>,
}

/// The non-system messages of a request as `role: text`.
fn offered_tools(body: &Value) -> Vec<String> {
    let tools = body["tools"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default();
    tools
        .iter()
        .filter_map(|t| t["function"]["name"].as_str().map(str::to_owned))
        .collect()
}

fn logged_messages(body: &Value) -> Vec<String> {
    body["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|m| m["role"] != "system")
        .map(|m| {
            let text = match &m["content"] {
                Value::String(s) => s.clone(),
                Value::Array(parts) => parts
                    .iter()
                    .filter_map(|p| p["text"].as_str())
                    .collect::<Vec<_>>()
                    .join(""),
                _ => String::new(),
            };
            format!("{}: {text}", m["role"].as_str().unwrap_or_default())
        })
        .collect()
}

fn read_request(body: &Value) -> Asked {
    let mut messages = body["messages"].as_array().cloned().unwrap_or_default();
    // A user message right after tool results carries their images: it
    // belongs to the same turn, whose results come before it.
    let follows_tools = |m: &[Value]| {
        m.len() >= 2 && m[m.len() - 1]["role"] == "user" && m[m.len() - 2]["role"] == "tool"
    };
    if follows_tools(&messages) {
        messages.pop();
    }
    let text = |m: &Value| match &m["content"] {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|p| p["text"].as_str())
            .collect::<Vec<_>>()
            .join(""),
        _ => String::new(),
    };
    let last_user_at = messages.iter().rposition(|m| m["role"] == "user");
    let previous_answer = last_user_at
        .and_then(|i| i.checked_sub(1))
        .map(|i| &messages[i])
        .filter(|m| m["role"] == "assistant")
        .map(text)
        .filter(|t| !t.is_empty());
    let previous_question = last_user_at
        .and_then(|i| messages[..i].iter().rposition(|m| m["role"] == "user"))
        .map(|i| text(&messages[i]))
        .unwrap_or_default();
    let prompt_bytes: usize = messages.iter().map(|m| text(m).len()).sum();
    Asked {
        model: body["model"].as_str().unwrap_or_default().to_owned(),
        stream: body["stream"].as_bool().unwrap_or(false),
        include_usage: body["stream_options"]["include_usage"]
            .as_bool()
            .unwrap_or(false),
        last_user: last_user_at.map(|i| text(&messages[i])).unwrap_or_default(),
        system: messages
            .iter()
            .filter(|m| m["role"] == "system")
            .map(text)
            .collect::<Vec<_>>()
            .join("\n"),
        prompt_tokens: (prompt_bytes as u64).div_ceil(4),
        previous_answer,
        previous_question,
        tool_results: {
            let first = messages
                .iter()
                .rposition(|m| m["role"] != "tool")
                .map_or(0, |i| i + 1);
            messages[first..].iter().map(text).collect()
        },
        turns_taken: last_user_at.map_or(0, |i| {
            messages[i + 1..]
                .iter()
                .filter(|m| m["role"] == "assistant")
                .count()
        }),
    }
}

/// The transcript and offset a request resumes, when its previous answer
/// is a strict beginning of a text transcript. Transcripts may share a
/// beginning; then the one the question that started the answer picks wins,
/// as it did when the answer began.
fn find_resume(
    transcripts: &[Transcript],
    previous: &str,
    question: &str,
) -> Option<(usize, usize)> {
    let extends = |t: &Transcript| {
        matches!(&t.body, TranscriptBody::Text(body)
            if body.len() > previous.len() && body.starts_with(previous))
    };
    let candidates: Vec<usize> = (0..transcripts.len())
        .filter(|&i| extends(&transcripts[i]))
        .collect();
    let words = transcript::words(question);
    let picked = candidates.into_iter().max_by_key(|&i| {
        (
            transcript::score(&transcripts[i], &words),
            std::cmp::Reverse(i),
        )
    })?;
    Some((picked, previous.len()))
}

async fn completions(
    State(state): State<Arc<MockState>>,
    headers: HeaderMap,
    Json(body): Json<Value>,
) -> Response {
    if let Some(limit) = state.config.context_limit {
        let used = super::budget::estimate_request(&body);
        if used > limit {
            let message = format!(
                "This model's maximum context length is {limit} tokens. However, your messages \
                 resulted in {used} tokens. Please reduce the length of the messages."
            );
            return error_response(400, &message, "context_length_exceeded", None);
        }
    }
    let id = state.next_id.fetch_add(1, Ordering::Relaxed);
    let asked = read_request(&body);
    let header_fault = match headers.get("x-mock-fault").map(|v| v.to_str()) {
        None => Fault::default(),
        Some(Ok(text)) => match Fault::parse_header(text) {
            Ok(fault) => fault,
            Err(e) => return error_response(400, &format!("X-Mock-Fault: {e}"), "bad_fault", None),
        },
        Some(Err(_)) => return error_response(400, "X-Mock-Fault is not text", "bad_fault", None),
    };
    let queued = take_queued_fault(&state, &asked.last_user);
    let transcripts = &state.config.transcripts;
    let resume = asked
        .previous_answer
        .as_deref()
        .and_then(|prev| find_resume(transcripts, prev, &asked.previous_question));
    let chosen = match resume {
        Some((i, _)) => Some(i),
        None if transcripts.is_empty() => None,
        None => Some(
            transcript::best_match(transcripts, &asked.last_user).unwrap_or_else(|| {
                state.rotation.fetch_add(1, Ordering::Relaxed) % transcripts.len()
            }),
        ),
    };
    let own_fault = chosen.map_or_else(Fault::default, |i| {
        let fault = &transcripts[i].fault;
        if resume.is_some() {
            fault.for_continuation()
        } else {
            fault.clone()
        }
    });
    let fault = queued.over(&header_fault).over(&own_fault);
    push_log(
        &state,
        LogEntry {
            id,
            model: asked.model.clone(),
            stream: asked.stream,
            last_user: asked.last_user.clone(),
            system: asked.system.clone(),
            messages: logged_messages(&body),
            tools: offered_tools(&body),
            images: super::budget::image_urls(&body),
            prompt_estimate: super::budget::estimate_request(&body),
            transcript: chosen.map(|i| transcripts[i].name.clone()),
            resumed_at: resume.map(|(_, at)| at),
            fault: fault.clone(),
            status: 200,
            content_bytes: 0,
            end: LogEnd::Open,
        },
    );
    // From here on, a client that goes away is recorded as such.
    let mut guard = StreamGuard {
        state: state.clone(),
        id,
        end: LogEnd::ClientDropped,
        status: 200,
        content_bytes: 0,
    };
    if let Some(ms) = fault.delay_ms {
        tokio::time::sleep(Duration::from_millis(ms)).await;
    }
    let refused = refusal(&state.config, &headers, &asked, &fault);
    let (Some(index), None) = (chosen, &refused) else {
        let (status, response) = refused.unwrap_or_else(|| {
            (
                500,
                error_response(500, "no transcripts", "no_transcripts", None),
            )
        });
        guard.status = status;
        guard.end = LogEnd::Refused;
        return response;
    };
    if let Err(message) = transcripts[index].check_results(asked.turns_taken, &asked.tool_results) {
        guard.status = 422;
        guard.end = LogEnd::Refused;
        return error_response(422, &message, "unexpected_tool_result", None);
    }
    let script = script_for(&transcripts[index], resume, asked.turns_taken, &fault);
    let chunk_size = fault.chunk_size.unwrap_or(state.config.chunk_size);
    let reply = Reply::new(
        format!("chatcmpl-mock-{id}"),
        asked.model.clone(),
        script,
        fault.clone(),
        chunk_size,
        asked.include_usage,
        asked.prompt_tokens,
    );
    if !asked.stream {
        let (completion, ending) = reply.into_completion();
        guard.content_bytes = completion["choices"][0]["message"]["content"]
            .as_str()
            .map_or(0, str::len);
        guard.end = log_end(ending);
        return Json(completion).into_response();
    }
    let delay = fault
        .chunk_delay_ms
        .map_or(state.config.chunk_delay, Duration::from_millis);
    stream_response(guard, asked.last_user, reply, delay)
}

/// The error status a request gets, if any: a wrong key, an unknown model,
/// or a scripted status.
fn refusal(
    config: &MockConfig,
    headers: &HeaderMap,
    asked: &Asked,
    fault: &Fault,
) -> Option<(u16, Response)> {
    if let Some(key) = &config.api_key {
        let sent = headers
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "));
        if sent != Some(key.as_str()) {
            let r = error_response(401, "Incorrect API key provided.", "invalid_api_key", None);
            return Some((401, r));
        }
    }
    if !config.models.contains(&asked.model) {
        let message = format!("The model `{}` does not exist.", asked.model);
        return Some((404, error_response(404, &message, "model_not_found", None)));
    }
    if let Some(status) = fault.status.filter(|s| !(200..300).contains(s)) {
        let code = match status {
            401 => "invalid_api_key",
            404 => "model_not_found",
            429 => "rate_limit_exceeded",
            _ => "scripted_fault",
        };
        let message = fault
            .message
            .clone()
            .unwrap_or_else(|| format!("scripted fault: status {status}"));
        return Some((
            status,
            error_response(status, &message, code, fault.retry_after),
        ));
    }
    None
}

fn script_for(
    transcript: &Transcript,
    resume: Option<(usize, usize)>,
    turns_taken: usize,
    fault: &Fault,
) -> Script {
    match &transcript.body {
        TranscriptBody::Text(text) => {
            let mut start = resume.map_or(0, |(_, at)| at);
            if resume.is_some() {
                start = start.saturating_sub(fault.repeat_on_continue.unwrap_or(0));
                while !text.is_char_boundary(start) {
                    start -= 1;
                }
            }
            Script {
                content: text[start..].to_owned(),
                tool_calls: Vec::new(),
            }
        }
        TranscriptBody::Turns(turns) => {
            let turn = &turns[turns_taken.min(turns.len() - 1)];
            Script {
                content: turn.content.clone(),
                tool_calls: turn.tool_calls.clone(),
            }
        }
    }
}

fn push_log(state: &MockState, entry: LogEntry) {
    state
        .log
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .push(entry);
}

fn log_end(ending: Ending) -> LogEnd {
    match ending {
        Ending::Stop | Ending::ToolCalls => LogEnd::Completed,
        Ending::Length => LogEnd::Length,
        Ending::Cut => LogEnd::Cut,
    }
}

/// Writes how a request ended into the log when dropped. A client that goes
/// away drops the response before it finished, so `end` starts as
/// `ClientDropped` and is changed only when the response gets to its end.
struct StreamGuard {
    state: Arc<MockState>,
    id: u64,
    end: LogEnd,
    status: u16,
    content_bytes: usize,
}

impl StreamGuard {
    /// Records how the response ended (written to the log on drop).
    fn ended(&mut self, end: LogEnd) {
        self.end = end;
    }
}

impl Drop for StreamGuard {
    fn drop(&mut self) {
        let (end, status, bytes) = (self.end, self.status, self.content_bytes);
        self.state.log_update(self.id, |e| {
            e.end = end;
            e.status = status;
            e.content_bytes = bytes;
        });
    }
}

/// Long enough for the connection to write out the chunks before a cut.
const FLUSH_BEFORE_CUT: Duration = Duration::from_millis(20);

struct StreamState {
    reply: Reply,
    guard: StreamGuard,
    delay: Duration,
    last_user: String,
    chunk_index: usize,
}

fn stream_response(
    guard: StreamGuard,
    last_user: String,
    reply: Reply,
    delay: Duration,
) -> Response {
    let start = StreamState {
        reply,
        guard,
        delay,
        last_user,
        chunk_index: 0,
    };
    let stream = futures::stream::unfold(start, |mut s| async move {
        let frame = s.reply.next_frame();
        s.guard.content_bytes = s.reply.sent_bytes();
        match frame {
            None => {
                s.guard.ended(log_end(s.reply.ending()));
                None
            }
            Some(Frame::Abort) => {
                s.guard.end = LogEnd::Cut;
                // The server drops what it has not flushed when the body fails;
                // pausing first lets it send every chunk before the cut.
                tokio::time::sleep(FLUSH_BEFORE_CUT).await;
                // An error from the body makes the server drop the connection
                // mid-response, which is what a cut looks like to a client.
                Some((Err(std::io::Error::other("scripted cut")), s))
            }
            Some(Frame::Data {
                line,
                content_bytes,
            }) => {
                if content_bytes > 0 {
                    if !s.delay.is_zero() && s.chunk_index > 0 {
                        tokio::time::sleep(s.delay).await;
                    }
                    if let Some(observe) = &s.guard.state.config.on_chunk {
                        observe(&s.last_user, s.chunk_index);
                    }
                    s.chunk_index += 1;
                }
                Some((Ok(Bytes::from(format!("data: {line}\n\n"))), s))
            }
        }
    });
    Response::builder()
        .header(header::CONTENT_TYPE, "text/event-stream")
        .header(header::CACHE_CONTROL, "no-cache")
        .body(Body::from_stream(stream))
        .unwrap_or_else(|_| StatusCode::INTERNAL_SERVER_ERROR.into_response())
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::Request;
    use tower::ServiceExt;

    fn config(transcripts: &[(&str, &str)]) -> MockConfig {
        let transcripts = transcripts
            .iter()
            .map(|(n, t)| parse(n, t).unwrap())
            .collect();
        MockConfig {
            chunk_size: 4,
            ..MockConfig::replaying(transcripts, "m")
        }
    }

    #[tokio::test]
    async fn a_request_over_the_context_limit_is_refused_as_providers_do() {
        let mut limited = config(&[("hi.txt", "Hello!")]);
        limited.context_limit = Some(100);
        let app = router(limited);
        let small = json!([{"role": "user", "content": "hello"}]);
        let (status, _, _) = post(&app, ask(small), None).await;
        assert_eq!(status, StatusCode::OK);
        let large = json!([{"role": "user", "content": "x".repeat(400)}]);
        let (status, _, body) = post(&app, ask(large), None).await;
        assert_eq!(status, StatusCode::BAD_REQUEST);
        let v: Value = serde_json::from_str(&body).unwrap();
        assert_eq!(v["error"]["code"], "context_length_exceeded");
        assert!(
            v["error"]["message"]
                .as_str()
                .unwrap()
                .contains("maximum context length is 100")
        );
    }

    async fn post(
        app: &Router,
        body: Value,
        fault: Option<&str>,
    ) -> (StatusCode, HeaderMap, String) {
        let mut request =
            Request::post("/v1/chat/completions").header("content-type", "application/json");
        if let Some(fault) = fault {
            request = request.header("x-mock-fault", fault);
        }
        let response = app
            .clone()
            .oneshot(request.body(Body::from(body.to_string())).unwrap())
            .await
            .unwrap();
        let status = response.status();
        let headers = response.headers().clone();
        let bytes = axum::body::to_bytes(response.into_body(), usize::MAX)
            .await
            .unwrap();
        (status, headers, String::from_utf8(bytes.to_vec()).unwrap())
    }

    fn ask(messages: Value) -> Value {
        json!({"model": "m", "messages": messages})
    }

    const TOOL_SCRIPT: &str = r#"{"match": "build", "turns": [
        {"tool_calls": [{"id": "c1", "name": "write_file", "arguments": {"file_path": "a.txt", "content": "hi"}}]},
        {"expect_results": ["Created a.txt"], "content": "Done."}
    ]}"#;

    #[tokio::test]
    async fn a_tool_script_plays_its_next_turn_when_the_results_are_as_expected() {
        let app = router(config(&[("agent.json", TOOL_SCRIPT)]));
        let first = json!([{"role": "user", "content": "build it"}]);
        let (_, _, body) = post(&app, ask(first), None).await;
        let v: Value = serde_json::from_str(&body).unwrap();
        assert_eq!(
            v["choices"][0]["message"]["tool_calls"][0]["function"]["name"],
            "write_file"
        );
        let second = json!([
            {"role": "user", "content": "build it"},
            {"role": "assistant", "content": null, "tool_calls": [{"id": "c1", "type": "function",
                "function": {"name": "write_file", "arguments": "{}"}}]},
            {"role": "tool", "tool_call_id": "c1", "content": "Created a.txt (1 lines)."}
        ]);
        let (status, _, body) = post(&app, ask(second), None).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        let v: Value = serde_json::from_str(&body).unwrap();
        assert_eq!(v["choices"][0]["message"]["content"], "Done.");
    }

    #[tokio::test]
    async fn a_tool_result_other_than_the_script_expects_is_refused_naming_it() {
        let app = router(config(&[("agent.json", TOOL_SCRIPT)]));
        let msgs = json!([
            {"role": "user", "content": "build it"},
            {"role": "assistant", "content": null, "tool_calls": [{"id": "c1", "type": "function",
                "function": {"name": "write_file", "arguments": "{}"}}]},
            {"role": "tool", "tool_call_id": "c1", "content": "Error: denied by the user"}
        ]);
        let (status, _, body) = post(&app, ask(msgs), None).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
        assert!(
            body.contains("tool result 1 should contain \\\"Created a.txt\\\""),
            "{body}"
        );
        assert!(body.contains("denied by the user"), "{body}");
    }

    #[tokio::test]
    async fn a_header_fault_applies_to_its_request_only() {
        let app = router(config(&[("a.txt", "hello")]));
        let msgs = json!([{"role": "user", "content": "hi"}]);
        let (status, headers, body) =
            post(&app, ask(msgs.clone()), Some("status=429, retry-after=7")).await;
        assert_eq!(status, StatusCode::TOO_MANY_REQUESTS);
        assert_eq!(headers[header::RETRY_AFTER], "7");
        assert!(body.contains("rate_limit_exceeded"), "{body}");
        let (status, _, body) = post(&app, ask(msgs), None).await;
        assert_eq!(status, StatusCode::OK);
        let v: Value = serde_json::from_str(&body).unwrap();
        assert_eq!(v["choices"][0]["message"]["content"], "hello");
    }

    #[tokio::test]
    async fn a_queued_fault_with_when_waits_for_its_request() {
        let app = router(config(&[("a.txt", "hello")]));
        let state_faults = json!([{"status": 401, "when": "hello there"}]);
        let queued = app
            .clone()
            .oneshot(
                Request::post("/mock/faults")
                    .header("content-type", "application/json")
                    .body(Body::from(state_faults.to_string()))
                    .unwrap(),
            )
            .await
            .unwrap();
        assert_eq!(queued.status(), StatusCode::OK);
        // A request from elsewhere (a fix attempt) passes the fault by.
        let other = json!([{"role": "user", "content": "the build failed"}]);
        let (status, _, _) = post(&app, ask(other.clone()), None).await;
        assert_eq!(status, StatusCode::OK);
        let meant = json!([{"role": "user", "content": "hello there, friend"}]);
        let (status, _, _) = post(&app, ask(meant.clone()), None).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED);
        // Taken once.
        let (status, _, _) = post(&app, ask(meant), None).await;
        assert_eq!(status, StatusCode::OK);
    }

    #[tokio::test]
    async fn continuations_resume_where_the_answer_stopped() {
        let app = router(config(&[("a.txt", "0123456789"), ("b.txt", "abcdefghij")]));
        let msgs = json!([
            {"role": "user", "content": "go"},
            {"role": "assistant", "content": "abcd"},
            {"role": "user", "content": "continue"}
        ]);
        let (_, _, body) = post(&app, ask(msgs), None).await;
        let v: Value = serde_json::from_str(&body).unwrap();
        assert_eq!(v["choices"][0]["message"]["content"], "efghij");
        // A complete earlier answer is history, not something to continue.
        let msgs = json!([
            {"role": "user", "content": "go"},
            {"role": "assistant", "content": "abcdefghij"},
            {"role": "user", "content": "again"}
        ]);
        let (_, _, body) = post(&app, ask(msgs), None).await;
        assert!(!body.contains("efghij\""), "{body}");
    }

    #[tokio::test]
    async fn continuations_of_a_shared_beginning_follow_the_question() {
        let app = router(config(&[
            ("broken-app.txt", "abcdef-broken"),
            ("good-app.txt", "abcdef-good"),
        ]));
        for (question, rest) in [("the good one", "-good"), ("the broken one", "-broken")] {
            let msgs = json!([
                {"role": "user", "content": question},
                {"role": "assistant", "content": "abcdef"},
                {"role": "user", "content": "continue"}
            ]);
            let (_, _, body) = post(&app, ask(msgs), None).await;
            let v: Value = serde_json::from_str(&body).unwrap();
            assert_eq!(v["choices"][0]["message"]["content"], rest, "{question}");
        }
    }

    #[tokio::test]
    async fn unmatched_messages_rotate_through_the_transcripts() {
        let app = router(config(&[("a.txt", "A"), ("b.txt", "B")]));
        let mut got = Vec::new();
        for _ in 0..3 {
            let (_, _, body) =
                post(&app, ask(json!([{"role": "user", "content": "zzz"}])), None).await;
            let v: Value = serde_json::from_str(&body).unwrap();
            got.push(
                v["choices"][0]["message"]["content"]
                    .as_str()
                    .unwrap()
                    .to_owned(),
            );
        }
        assert_eq!(got, ["A", "B", "A"]);
    }

    #[tokio::test]
    async fn unknown_models_and_wrong_keys_are_refused() {
        let mut cfg = config(&[("a.txt", "A")]);
        cfg.api_key = Some("k".into());
        let app = router(cfg);
        let msgs = json!([{"role": "user", "content": "x"}]);
        let (status, _, _) = post(&app, ask(msgs.clone()), None).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED);
        let app = router(config(&[("a.txt", "A")]));
        let (status, _, body) = post(&app, json!({"model": "gpt-x", "messages": msgs}), None).await;
        assert_eq!(status, StatusCode::NOT_FOUND);
        assert!(body.contains("model_not_found"), "{body}");
    }

    #[tokio::test]
    async fn streams_end_with_done_and_are_logged() {
        let app = router(config(&[("a.txt", "hello world")]));
        let body = json!({"model": "m", "stream": true, "stream_options": {"include_usage": true},
            "messages": [{"role": "user", "content": "hi"}]});
        let (status, headers, text) = post(&app, body, None).await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(headers[header::CONTENT_TYPE], "text/event-stream");
        assert!(text.ends_with("data: [DONE]\n\n"), "{text}");
        assert!(text.contains("\"usage\""), "{text}");
        let response = app
            .oneshot(Request::get("/mock/log").body(Body::empty()).unwrap())
            .await
            .unwrap();
        let bytes = axum::body::to_bytes(response.into_body(), usize::MAX)
            .await
            .unwrap();
        let log: Value = serde_json::from_slice(&bytes).unwrap();
        assert_eq!(log[0]["end"], "completed");
        assert_eq!(log[0]["content_bytes"], 11);
        assert_eq!(log[0]["transcript"], "a");
    }
}
