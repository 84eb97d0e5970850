//! The LLM layer against the real scripted provider: `rivet mock-llm` runs as
//! its own process on an ephemeral port, and every request goes through
//! async-openai over HTTP.
#![cfg(feature = "ssr")]

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use rivet::server::config::Config;
use rivet::server::llm::secret::Secret;
use rivet::server::llm::{
    ChatMessage, ChatOptions, ChatOutcome, ChatRequest, FinishReason, KeyUpdate, LlmError,
    LlmEvent, LlmService, LlmSettingsUpdate, Pace, ResolvedLlm, chat, stream_chat,
};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

const MODEL: &str = "rivet-replay";

mod local;
mod window;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/transcripts")
}

fn transcript(name: &str) -> String {
    std::fs::read_to_string(fixtures().join(name)).unwrap()
}

/// The body of a transcript with front matter, as the mock plays it.
fn body_of(name: &str) -> String {
    transcript(name)
        .lines()
        .filter(|l| !l.starts_with("#!"))
        .map(|l| format!("{l}\n"))
        .collect()
}

/// `rivet mock-llm` on an ephemeral port; killed when dropped.
pub(crate) struct Mock {
    child: Child,
    addr: String,
    http: reqwest::Client,
}

impl Mock {
    /// Small chunks and no delay unless `extra` says otherwise.
    pub(crate) fn start(extra: &[&str]) -> Mock {
        Mock::start_with(&fixtures(), extra)
    }

    /// Like [`Mock::start`], replaying the transcripts of `script` instead of
    /// the fixtures.
    pub(crate) fn start_with(script: &Path, extra: &[&str]) -> Mock {
        let dir = tempfile::tempdir().unwrap();
        let mut args = vec!["mock-llm", "--port", "0"];
        for (flag, default) in [("--chunk-size", "4"), ("--delay-ms", "0")] {
            if !extra.contains(&flag) {
                args.extend([flag, default]);
            }
        }
        let mut child = Command::new(env!("CARGO_BIN_EXE_rivet"))
            .args(args)
            .arg("--script")
            .arg(script)
            .args(extra)
            .current_dir(dir.path())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        Mock {
            child,
            addr: line.trim().to_owned(),
            http: reqwest::Client::new(),
        }
    }

    pub(crate) fn base_url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    fn llm(&self) -> ResolvedLlm {
        ResolvedLlm::custom(&self.base_url(), MODEL, None)
    }

    /// Queues faults for the next chat requests, one each.
    pub(crate) async fn faults(&self, faults: Value) {
        let response = self
            .http
            .post(format!("http://{}/mock/faults", self.addr))
            .json(&faults)
            .send()
            .await
            .unwrap();
        assert!(response.status().is_success());
    }

    pub(crate) async fn log(&self) -> Vec<Value> {
        self.http
            .get(format!("http://{}/mock/log", self.addr))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap()
    }

    /// Waits until the last request's log entry ends as `end`.
    async fn wait_for_end(&self, end: &str) -> Value {
        for _ in 0..500 {
            let log = self.log().await;
            if let Some(last) = log.last()
                && last["end"] == end
            {
                return last.clone();
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        panic!("the mock never logged {end}: {:?}", self.log().await);
    }
}

impl Drop for Mock {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Quick retries, so the fault tests stay fast.
fn quick() -> ChatOptions {
    ChatOptions {
        retry_base: Duration::from_millis(10),
        retry_max: Duration::from_millis(50),
        ..ChatOptions::default()
    }
}

fn request(message: &str) -> ChatRequest {
    ChatRequest {
        options: quick(),
        ..ChatRequest::new("You build apps.", vec![ChatMessage::user(message)])
    }
}

async fn ask(llm: &ResolvedLlm, request: ChatRequest) -> (ChatOutcome, Vec<LlmEvent>) {
    let mut events = Vec::new();
    let outcome = chat(llm, request, CancellationToken::new(), |e| events.push(e)).await;
    (outcome, events)
}

fn deltas(events: &[LlmEvent]) -> String {
    events
        .iter()
        .filter_map(|e| match e {
            LlmEvent::Delta { text } => Some(text.as_str()),
            _ => None,
        })
        .collect()
}

fn count(events: &[LlmEvent], pick: fn(&LlmEvent) -> bool) -> usize {
    events.iter().filter(|e| pick(e)).count()
}

fn last_event(events: &[LlmEvent]) -> &LlmEvent {
    events.last().unwrap()
}

#[tokio::test]
async fn tokens_arrive_in_order_with_usage() {
    let mock = Mock::start(&[]);
    let (outcome, events) = ask(&mock.llm(), request("build a todo app")).await;
    let expected = transcript("todo-react.txt");
    assert_eq!(outcome.result, Ok(FinishReason::Stop));
    assert_eq!(outcome.text, expected);
    assert_eq!(deltas(&events), expected);
    let usage = outcome.usage.unwrap();
    assert_eq!(usage.completion_tokens as usize, expected.len().div_ceil(4));
    assert!(usage.prompt_tokens > 0);
    assert_eq!(
        usage.total_tokens,
        usage.prompt_tokens + usage.completion_tokens
    );
    assert_eq!(
        last_event(&events),
        &LlmEvent::Finished {
            finish_reason: FinishReason::Stop
        }
    );
    let log = mock.log().await;
    assert_eq!(log.len(), 1);
    assert_eq!(log[0]["transcript"], "todo-react");
}

/// Chunks paced apart, as a model writes them, each go on at once as a
/// delta of their own: nothing waits for more.
#[tokio::test]
async fn chunks_paced_apart_go_on_one_by_one() {
    let mock = Mock::start(&["--delay-ms", "20"]);
    let (outcome, events) = ask(&mock.llm(), request("hello")).await;
    let expected = body_of("greeting.txt");
    assert_eq!(deltas(&events), expected);
    let chunks = expected.chars().count().div_ceil(4);
    let pieces = count(&events, |e| matches!(e, LlmEvent::Delta { .. }));
    // A stalled test thread may find two chunks waiting now and then.
    assert!(pieces * 2 >= chunks, "{pieces} deltas for {chunks} chunks");
    assert_eq!(outcome.result, Ok(FinishReason::Stop));
}

/// Chunks that have already arrived when the answer reads on (its reader
/// held back by its pace meanwhile) go on as one delta, so a reader that
/// fell behind catches up with a few events, in order, losing nothing.
#[tokio::test]
async fn chunks_that_arrived_together_go_on_as_one_delta() {
    let mock = Mock::start(&[]);
    let gate = Arc::new(tokio::sync::Semaphore::new(0));
    let request = ChatRequest {
        pace: Pace::new({
            let gate = Arc::clone(&gate);
            move || {
                let gate = Arc::clone(&gate);
                Box::pin(async move {
                    let _ = gate.acquire().await.map(|permit| permit.forget());
                })
            }
        }),
        ..request("build a todo app")
    };
    let answer = tokio::spawn({
        let llm = mock.llm();
        async move {
            let mut events = Vec::new();
            let outcome = chat(&llm, request, CancellationToken::new(), |e| events.push(e)).await;
            (outcome, events)
        }
    });
    // The provider sends the whole answer while the reader waits.
    tokio::time::sleep(Duration::from_millis(300)).await;
    gate.add_permits(1 << 20);
    let (outcome, events) = answer.await.unwrap();
    let expected = transcript("todo-react.txt");
    assert_eq!(outcome.result, Ok(FinishReason::Stop));
    assert_eq!(deltas(&events), expected);
    let chunks = expected.chars().count().div_ceil(4);
    let pieces = count(&events, |e| matches!(e, LlmEvent::Delta { .. }));
    assert!(pieces * 8 <= chunks, "{pieces} deltas for {chunks} chunks");
    // Usage still comes after all of the text.
    let usage_at = events.iter().position(|e| matches!(e, LlmEvent::Usage(_)));
    let last_delta = events
        .iter()
        .rposition(|e| matches!(e, LlmEvent::Delta { .. }));
    assert!(usage_at > last_delta, "{events:?}");
}

#[tokio::test]
async fn multibyte_characters_survive_chunking() {
    let mock = Mock::start(&["--chunk-size", "1"]);
    let (outcome, _) = ask(&mock.llm(), request("hello")).await;
    assert_eq!(outcome.text, body_of("greeting.txt"));
}

#[tokio::test]
async fn stop_drops_the_upstream_connection_and_keeps_the_text() {
    let mock = Mock::start(&["--delay-ms", "20"]);
    let cancel = CancellationToken::new();
    let mut events = Vec::new();
    let stopper = cancel.clone();
    let outcome = chat(&mock.llm(), request("build a todo app"), cancel, |e| {
        if matches!(e, LlmEvent::Delta { .. }) {
            stopper.cancel();
        }
        events.push(e);
    })
    .await;
    assert_eq!(outcome.result, Err(LlmError::Cancelled));
    assert!(!outcome.text.is_empty());
    assert!(transcript("todo-react.txt").starts_with(&outcome.text));
    assert_eq!(
        last_event(&events),
        &LlmEvent::Failed {
            error: LlmError::Cancelled
        }
    );
    // The mock sees its client go away before the answer ended.
    let entry = mock.wait_for_end("client_dropped").await;
    assert!(
        (entry["content_bytes"].as_u64().unwrap() as usize) < transcript("todo-react.txt").len()
    );
}

/// A paced answer reads no more of the provider's stream than its pace
/// lets through (the store's writer being behind, in the IDE), then goes on
/// to the end once let go; stopping it while it waits works too.
#[tokio::test]
async fn a_paced_answer_reads_on_only_when_its_pace_lets_it() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let mock = Mock::start(&[]);
    let gate = Arc::new(tokio::sync::Semaphore::new(0));
    let paced = |gate: &Arc<tokio::sync::Semaphore>| {
        let gate = Arc::clone(gate);
        ChatRequest {
            pace: Pace::new(move || {
                let gate = Arc::clone(&gate);
                Box::pin(async move {
                    let _ = gate.acquire().await.map(|permit| permit.forget());
                })
            }),
            ..request("build a todo app")
        }
    };
    let seen = Arc::new(AtomicUsize::new(0));
    let answer = tokio::spawn({
        let (llm, request, seen) = (mock.llm(), paced(&gate), Arc::clone(&seen));
        async move {
            chat(&llm, request, CancellationToken::new(), |e| {
                if matches!(e, LlmEvent::Delta { .. }) {
                    seen.fetch_add(1, Ordering::SeqCst);
                }
            })
            .await
        }
    });
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(seen.load(Ordering::SeqCst) <= 1, "read past its pace");
    gate.add_permits(1 << 20);
    let outcome = answer.await.unwrap();
    assert_eq!(outcome.result, Ok(FinishReason::Stop));
    assert_eq!(outcome.text, transcript("todo-react.txt"));

    let stuck = Arc::new(tokio::sync::Semaphore::new(0));
    let cancel = CancellationToken::new();
    let stopper = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(100)).await;
        stopper.cancel();
    });
    let outcome = chat(&mock.llm(), paced(&stuck), cancel, |_| {}).await;
    assert_eq!(outcome.result, Err(LlmError::Cancelled));
}

#[tokio::test]
async fn stop_while_waiting_for_the_first_byte() {
    let mock = Mock::start(&[]);
    mock.faults(json!({"delay-ms": 30000})).await;
    let cancel = CancellationToken::new();
    let stopper = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(100)).await;
        stopper.cancel();
    });
    let outcome = chat(&mock.llm(), request("build a todo app"), cancel, |_| {}).await;
    assert_eq!(outcome.result, Err(LlmError::Cancelled));
    mock.wait_for_end("client_dropped").await;
}

#[tokio::test]
async fn dropping_the_event_stream_stops_the_answer() {
    let mock = Mock::start(&["--delay-ms", "20"]);
    let mut stream = Box::pin(stream_chat(
        mock.llm(),
        request("build a todo app"),
        CancellationToken::new(),
    ));
    while let Some(event) = stream.next().await {
        if matches!(event, LlmEvent::Delta { .. }) {
            break;
        }
    }
    drop(stream);
    mock.wait_for_end("client_dropped").await;
}

/// Plays one queued fault and returns the error the chat ended with.
async fn failure_for(mock: &Mock, fault: Value) -> (LlmError, ChatOutcome, Vec<LlmEvent>) {
    mock.faults(fault).await;
    let (outcome, events) = ask(&mock.llm(), request("build a todo app")).await;
    let error = outcome.result.clone().unwrap_err();
    (error, outcome, events)
}

#[tokio::test]
async fn rejected_keys_are_named() {
    let mock = Mock::start(&[]);
    let host = mock.addr.clone();
    for status in [401u16, 403] {
        let (error, outcome, _) = failure_for(&mock, json!({"status": status})).await;
        assert_eq!(
            error,
            LlmError::Unauthorized {
                provider: host.clone(),
                status
            }
        );
        assert_eq!(
            error.to_string(),
            format!("The key for {host} was rejected ({status}). Check it in Settings.")
        );
        assert!(outcome.text.is_empty());
    }
    // A server that checks keys for real.
    let strict = Mock::start(&["--api-key", "right"]);
    let wrong = ResolvedLlm::custom(
        &strict.base_url(),
        MODEL,
        Some(Secret::new("wrong").unwrap()),
    );
    let (outcome, _) = ask(&wrong, request("build a todo app")).await;
    assert!(matches!(
        outcome.result,
        Err(LlmError::Unauthorized { status: 401, .. })
    ));
    let right = ResolvedLlm::custom(
        &strict.base_url(),
        MODEL,
        Some(Secret::new("right").unwrap()),
    );
    let (outcome, _) = ask(&right, request("build a todo app")).await;
    assert_eq!(outcome.result, Ok(FinishReason::Stop));
}

#[tokio::test]
async fn an_unknown_model_is_named() {
    let mock = Mock::start(&[]);
    let llm = ResolvedLlm::custom(&mock.base_url(), "gpt-imaginary", None);
    let (outcome, _) = ask(&llm, request("build a todo app")).await;
    assert_eq!(
        outcome.result,
        Err(LlmError::ModelNotFound {
            provider: mock.addr.clone(),
            model: "gpt-imaginary".into()
        })
    );
}

#[tokio::test]
async fn rate_limits_report_retry_after_without_retrying() {
    let mock = Mock::start(&[]);
    let (error, _, events) = failure_for(&mock, json!({"status": 429, "retry-after": 7})).await;
    assert_eq!(
        error,
        LlmError::RateLimited {
            provider: mock.addr.clone(),
            retry_after_secs: Some(7)
        }
    );
    assert!(error.to_string().contains("Try again in 7 s"));
    assert_eq!(
        count(&events, |e| matches!(e, LlmEvent::Retrying { .. })),
        0
    );
    assert_eq!(mock.log().await.len(), 1);
}

#[tokio::test]
async fn server_errors_are_retried_before_the_first_token() {
    let mock = Mock::start(&[]);
    mock.faults(json!([{"status": 500}, {"status": 502}])).await;
    let (outcome, events) = ask(&mock.llm(), request("build a todo app")).await;
    assert_eq!(outcome.result, Ok(FinishReason::Stop));
    assert_eq!(outcome.text, transcript("todo-react.txt"));
    let retries: Vec<(u32, u64)> = events
        .iter()
        .filter_map(|e| match e {
            LlmEvent::Retrying {
                attempt, delay_ms, ..
            } => Some((*attempt, *delay_ms)),
            _ => None,
        })
        .collect();
    assert_eq!(retries, [(1, 10), (2, 20)]);
    assert_eq!(mock.log().await.len(), 3);
}

#[tokio::test]
async fn server_errors_fail_after_the_retries() {
    let mock = Mock::start(&[]);
    let (error, _, events) = failure_for(
        &mock,
        json!([{"status": 503}, {"status": 503}, {"status": 503}, {"status": 503}]),
    )
    .await;
    assert_eq!(
        error,
        LlmError::Server {
            provider: mock.addr.clone(),
            status: 503,
            attempts: 4
        }
    );
    assert_eq!(
        count(&events, |e| matches!(e, LlmEvent::Retrying { .. })),
        3
    );
}

#[tokio::test]
async fn a_refused_connection_is_retried_then_reported() {
    let port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let llm = ResolvedLlm::custom(&format!("http://127.0.0.1:{port}/v1"), MODEL, None);
    let (outcome, events) = ask(&llm, request("hi")).await;
    let Err(LlmError::Connection { message, .. }) = &outcome.result else {
        panic!("{:?}", outcome.result)
    };
    assert!(message.to_lowercase().contains("refused"), "{message}");
    assert_eq!(
        count(&events, |e| matches!(e, LlmEvent::Retrying { .. })),
        3
    );
}

#[tokio::test]
async fn a_stream_cut_mid_answer_keeps_the_partial_answer() {
    let mock = Mock::start(&[]);
    let (error, outcome, _) = failure_for(&mock, json!({"cut-after": 500})).await;
    assert!(matches!(error, LlmError::Interrupted { .. }), "{error:?}");
    assert!(error.can_continue());
    assert_eq!(outcome.text, transcript("todo-react.txt")[..500]);
    // After the first token, nothing is retried: it would repeat text.
    assert_eq!(mock.log().await.len(), 1);
}

#[tokio::test]
async fn a_stream_cut_before_the_first_token_is_retried() {
    let mock = Mock::start(&[]);
    mock.faults(json!({"cut-after": 0})).await;
    let (outcome, events) = ask(&mock.llm(), request("build a todo app")).await;
    assert_eq!(outcome.text, transcript("todo-react.txt"));
    assert_eq!(
        count(&events, |e| matches!(e, LlmEvent::Retrying { .. })),
        1
    );
}

#[tokio::test]
async fn silence_counts_as_a_cut() {
    let mock = Mock::start(&["--delay-ms", "1000"]);
    let mut silent = request("build a todo app");
    silent.options.idle_timeout = Duration::from_millis(100);
    let (outcome, _) = ask(&mock.llm(), silent).await;
    assert_eq!(
        outcome.result,
        Err(LlmError::Interrupted {
            message: "no data for 100ms".into()
        })
    );
    assert_eq!(outcome.text, transcript("todo-react.txt")[..4]);
    // No response headers at all: a connection failure, retried, then reported.
    mock.faults(json!([{"delay-ms": 5000}, {"delay-ms": 5000}]))
        .await;
    let mut slow = request("build a todo app");
    slow.options.first_byte_timeout = Duration::from_millis(100);
    slow.options.max_retries = 1;
    let (outcome, events) = ask(&mock.llm(), slow).await;
    let Err(LlmError::Connection { message, .. }) = &outcome.result else {
        panic!("{:?}", outcome.result)
    };
    assert_eq!(message, "no response within 100ms");
    assert_eq!(
        count(&events, |e| matches!(e, LlmEvent::Retrying { .. })),
        1
    );
}

#[tokio::test]
async fn a_malformed_chunk_ends_the_answer_keeping_what_came_before() {
    let mock = Mock::start(&[]);
    let (error, outcome, _) = failure_for(&mock, json!({"malformed-after": 100})).await;
    assert!(matches!(error, LlmError::BadChunk { .. }), "{error:?}");
    assert_eq!(outcome.text, transcript("todo-react.txt")[..100]);
}

#[tokio::test]
async fn a_transcript_cut_can_be_continued() {
    let mock = Mock::start(&[]);
    let (outcome, _) = ask(&mock.llm(), request("tell me a story")).await;
    assert!(matches!(outcome.result, Err(LlmError::Interrupted { .. })));
    let story = body_of("story.txt");
    assert_eq!(outcome.text, story[..60]);
    // The Continue button: the same conversation, continuing the partial answer.
    let mut more = request("tell me a story");
    more.continue_from = Some(outcome.text.clone());
    let (rest, _) = ask(&mock.llm(), more).await;
    assert_eq!(rest.result, Ok(FinishReason::Stop));
    assert_eq!(outcome.text + &rest.text, story);
    assert_eq!(mock.log().await[1]["resumed_at"], 60);
}

#[tokio::test]
async fn auto_continue_splices_a_file_cut_by_the_length_limit() {
    let mock = Mock::start(&[]);
    // The first answer stops inside src/App.jsx; the first continuation
    // repeats the last 37 bytes before going on, as models do (and its
    // 1500 bytes include them).
    mock.faults(json!([{"length-after": 1500}, {"length-after": 1500, "repeat-on-continue": 37}]))
        .await;
    let (outcome, events) = ask(&mock.llm(), request("build a todo app")).await;
    let expected = transcript("todo-react.txt");
    assert_eq!(outcome.result, Ok(FinishReason::Stop));
    assert_eq!(outcome.continuations, 2);
    assert_eq!(outcome.text, expected);
    assert_eq!(deltas(&events), expected);
    let continuing: Vec<u8> = events
        .iter()
        .filter_map(|e| match e {
            LlmEvent::Continuing { attempt } => Some(*attempt),
            _ => None,
        })
        .collect();
    assert_eq!(continuing, [1, 2]);
    let resumed: Vec<Value> = mock
        .log()
        .await
        .iter()
        .map(|e| e["resumed_at"].clone())
        .collect();
    assert_eq!(resumed, [Value::Null, json!(1500), json!(1500 + 1500 - 37)]);
    // Usage adds up over the three requests.
    let usage = outcome.usage.unwrap();
    assert!(usage.completion_tokens as usize >= expected.len() / 4);
}

#[tokio::test]
async fn auto_continue_gives_up_after_two_continuations() {
    let mock = Mock::start(&[]);
    mock.faults(json!([{"length-after": 500}, {"length-after": 500}, {"length-after": 500}]))
        .await;
    let (outcome, events) = ask(&mock.llm(), request("build a todo app")).await;
    assert_eq!(outcome.result, Ok(FinishReason::Length));
    assert_eq!(outcome.continuations, 2);
    assert_eq!(outcome.text, transcript("todo-react.txt")[..1500]);
    assert_eq!(
        last_event(&events),
        &LlmEvent::Finished {
            finish_reason: FinishReason::Length
        }
    );
}

#[tokio::test]
async fn scripted_tool_calls_arrive_whole() {
    let mock = Mock::start(&[]);
    let (outcome, events) = ask(&mock.llm(), request("list files")).await;
    assert_eq!(outcome.result, Ok(FinishReason::ToolCalls));
    assert_eq!(outcome.text, "Let me look at the project first.");
    let names: Vec<&str> = outcome.tool_calls.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["list_files", "read_file"]);
    let args: Value = serde_json::from_str(&outcome.tool_calls[0].arguments).unwrap();
    assert_eq!(args, json!({"dir": "src", "recursive": true}));
    assert_eq!(outcome.tool_calls[1].id, "call_2");
    assert_eq!(
        count(&events, |e| matches!(e, LlmEvent::ToolCalls { .. })),
        1
    );
    // The next turn, after the tool results, is the second scripted answer.
    let mut next = request("list files");
    next.messages
        .push(ChatMessage::assistant("Let me look at the project first."));
    let (outcome, _) = ask(&mock.llm(), next).await;
    assert_eq!(
        outcome.text,
        "The project has two source files and a package.json."
    );
}

#[tokio::test]
async fn the_demo_provider_replays_built_in_answers() {
    let data = tempfile::tempdir().unwrap();
    let mut config = Config::defaults();
    config.server.data_dir = data.path().to_owned();
    let service = LlmService::new(Arc::new(config));
    let public = service
        .save(&LlmSettingsUpdate {
            provider: "demo".into(),
            key: KeyUpdate::Keep,
            ..LlmSettingsUpdate::default()
        })
        .unwrap();
    assert!(public.demo && public.configured);
    let llm = service.resolve_for_chat().await.unwrap();
    let (outcome, _) = ask(&llm, request("add a clear completed button")).await;
    assert_eq!(outcome.text, transcript("edit-app.txt"));
    assert_eq!(service.list_models(&llm).await, [MODEL]);
}

#[tokio::test]
async fn models_come_from_the_provider() {
    let mock = Mock::start(&["--models", "alpha,beta"]);
    let data = tempfile::tempdir().unwrap();
    let mut config = Config::defaults();
    config.server.data_dir = data.path().to_owned();
    let service = LlmService::new(Arc::new(config));
    let llm = ResolvedLlm::custom(&mock.base_url(), "", None);
    assert_eq!(service.list_models(&llm).await, ["alpha", "beta"]);
    // With no model chosen, the first listed one is asked.
    assert_eq!(service.ready(llm).await.unwrap().model, "alpha");
    // A provider that does not answer falls back to the configuration.
    let mut gone = ResolvedLlm::custom("http://127.0.0.1:9/v1", "", None);
    gone.models = vec!["fallback".into()];
    assert_eq!(service.list_models(&gone).await, ["fallback"]);
}

/// Runs `rivet ask` in an empty directory with a clean environment.
fn rivet_ask(args: &[&str]) -> (i32, String, String) {
    rivet_ask_with(&[], args)
}

/// [`rivet_ask`] with these environment variables.
fn rivet_ask_with(env: &[(&str, &str)], args: &[&str]) -> (i32, String, String) {
    let dir = tempfile::tempdir().unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_rivet"))
        .arg("ask")
        .args(args)
        .current_dir(dir.path())
        .env_clear()
        .envs(env.iter().copied())
        .output()
        .unwrap();
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8(output.stdout).unwrap(),
        String::from_utf8(output.stderr).unwrap(),
    )
}

#[tokio::test]
async fn ask_prints_the_answer() {
    let mock = Mock::start(&[]);
    let url = mock.base_url();
    let (code, stdout, stderr) = rivet_ask(&[
        "--base-url",
        &url,
        "--model",
        MODEL,
        "--raw",
        "build a todo app",
    ]);
    assert_eq!((code, stderr.as_str()), (0, ""));
    assert_eq!(stdout, transcript("todo-react.txt"));
    let (code, stdout, stderr) = rivet_ask(&["--base-url", &url, "hello"]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(stdout, body_of("greeting.txt"));
    assert!(stderr.contains("completion"), "{stderr}");
}

#[tokio::test]
async fn ask_prints_the_parser_events() {
    use rivet::runtime::protocol::{Event, Parser, merge_adjacent};
    let mock = Mock::start(&[]);
    let url = mock.base_url();
    let (code, stdout, stderr) = rivet_ask(&["--base-url", &url, "--events", "build a todo app"]);
    assert_eq!(code, 0, "{stderr}");
    let events: Vec<Event> = stdout
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    // Streamed in 4-character chunks, the events equal those of the whole
    // answer parsed at once, adjacent pieces merged.
    let whole = Parser::parse("message", &transcript("todo-react.txt"));
    assert_eq!(merge_adjacent(events), merge_adjacent(whole));
    let (code, _, stderr) = rivet_ask(&["--base-url", &url, "--events", "--raw", "x"]);
    assert_eq!(code, 2, "{stderr}");
}

#[tokio::test]
async fn ask_reports_failures_and_exits_non_zero() {
    let mock = Mock::start(&[]);
    let url = mock.base_url();
    mock.faults(json!({"cut-after": 100})).await;
    let (code, stdout, stderr) = rivet_ask(&["--base-url", &url, "--raw", "build a todo app"]);
    assert_eq!(code, 1);
    assert_eq!(stdout, transcript("todo-react.txt")[..100]);
    assert!(stderr.contains("The answer was interrupted"), "{stderr}");

    mock.faults(json!({"status": 401})).await;
    let (code, stdout, stderr) = rivet_ask(&["--base-url", &url, "build a todo app"]);
    assert_eq!((code, stdout.as_str()), (1, ""));
    assert!(stderr.contains("was rejected (401)"), "{stderr}");

    mock.faults(json!([{"length-after": 10}, {"length-after": 10}, {"length-after": 10}]))
        .await;
    let (code, stdout, stderr) = rivet_ask(&["--base-url", &url, "--raw", "build a todo app"]);
    assert_eq!(code, 3, "{stderr}");
    assert_eq!(stdout, transcript("todo-react.txt")[..30]);

    let (code, _, stderr) = rivet_ask(&["hello"]);
    assert_eq!(code, 1);
    assert!(
        stderr.contains("No model provider is configured"),
        "{stderr}"
    );
}

/// The IDE page, rendered by the server with `stored` saved in the settings.
async fn render_page(stored: LlmSettingsUpdate) -> String {
    use rivet::server::state::AppState;
    use tower::ServiceExt;
    let data = tempfile::tempdir().unwrap();
    let config = super::support::config(data.path());
    let options = leptos::config::LeptosOptions::builder()
        .output_name("rivet")
        .site_root("target/site")
        .build();
    let state = AppState::new(options, config);
    state.llm.save(&stored).unwrap();
    let response = rivet::server::http::app(state)
        .oneshot(
            axum::http::Request::get("/p/someproject")
                .header("host", "127.0.0.1:3000")
                .header("authorization", super::support::bearer())
                .body(axum::body::Body::empty())
                .unwrap(),
        )
        .await
        .unwrap();
    let body = axum::body::to_bytes(response.into_body(), usize::MAX)
        .await
        .unwrap();
    String::from_utf8(body.to_vec()).unwrap()
}

#[tokio::test]
async fn the_page_shows_the_settings_but_never_the_key() {
    let key = "sk-page-test-0123456789abcdef";
    let html = render_page(LlmSettingsUpdate {
        provider: "openai".into(),
        model: "gpt-4.1-mini".into(),
        key: KeyUpdate::Set(key.into()),
        ..LlmSettingsUpdate::default()
    })
    .await;
    // The top bar's status is rendered on the server; the settings form is
    // a lazy part the browser builds (end2end covers it), from the same
    // settings, which carry no key.
    assert!(
        html.contains("data-testid=\"llm-status\""),
        "missing llm-status"
    );
    assert!(html.contains("OpenAI · gpt-4.1-mini"));
    assert!(!html.contains("sk-page-test"), "the key reached the page");

    let html = render_page(LlmSettingsUpdate {
        provider: "demo".into(),
        ..LlmSettingsUpdate::default()
    })
    .await;
    assert!(html.contains("Demo: replayed answers, not a live model"));

    // Custom without a URL: not configured, whatever the environment holds.
    let html = render_page(LlmSettingsUpdate {
        provider: "custom".into(),
        ..LlmSettingsUpdate::default()
    })
    .await;
    assert!(html.contains("No model provider is configured"));
    assert!(html.contains("data-testid=\"llm-use-demo\""));
}

/// An OpenAI-compatible server on 127.0.0.1 that records the
/// `Authorization` header of every request: it lists one model and
/// refuses chat requests (400, so nothing is retried).
struct Recorder {
    addr: std::net::SocketAddr,
    seen: Arc<std::sync::Mutex<Vec<Option<String>>>>,
}

impl Recorder {
    async fn start() -> Recorder {
        use axum::http::{HeaderMap, Method, StatusCode, header::AUTHORIZATION};
        let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
        let record = seen.clone();
        let app = axum::Router::new().fallback(move |method: Method, headers: HeaderMap| {
            let auth = headers
                .get(AUTHORIZATION)
                .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned());
            record.lock().unwrap().push(auth);
            async move {
                if method == Method::GET {
                    (
                        StatusCode::OK,
                        axum::Json(json!({"object": "list", "data": [{"id": "recorded"}]})),
                    )
                } else {
                    let error =
                        json!({"error": {"message": "recorded", "type": "invalid_request_error"}});
                    (StatusCode::BAD_REQUEST, axum::Json(error))
                }
            }
        });
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move { axum::serve(listener, app).await });
        Recorder { addr, seen }
    }

    fn url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    /// The `Authorization` headers received since the last call.
    fn take(&self) -> Vec<Option<String>> {
        std::mem::take(&mut *self.seen.lock().unwrap())
    }
}

/// The attack: the settings panel's `list_models` called with
/// `{"provider":"openai","base_url":"http://any-host/v1"}` sent the OpenAI
/// key to any-host. It runs `LlmService::models_for`, as `list_models` does.
#[tokio::test]
async fn list_models_for_a_caller_chosen_url_sends_no_key() {
    let data = tempfile::tempdir().unwrap();
    let mut config = Config::defaults();
    config.server.data_dir = data.path().to_owned();
    let service = LlmService::new(Arc::new(config));
    let save = |provider: &str, base_url: &str, key: KeyUpdate| {
        service
            .save(&LlmSettingsUpdate {
                provider: provider.into(),
                base_url: base_url.into(),
                model: String::new(),
                key,
                format: None,
            })
            .unwrap()
    };
    let any_host = Recorder::start().await;
    save("openai", "", KeyUpdate::Set("sk-openai-secret".into()));
    let list = service.models_for("openai", &any_host.url()).await;
    // Still listed, without the key, and the panel says why.
    assert_eq!(list.models, ["recorded"]);
    assert_eq!(any_host.take(), [None]);
    let notice = list.key_notice.unwrap();
    assert!(
        notice.starts_with(&format!("No key is sent to {}:", any_host.url())),
        "{notice}"
    );

    // The URL saved with a key gets it, as typed or with a trailing slash.
    let own = Recorder::start().await;
    save(
        "custom",
        &own.url(),
        KeyUpdate::Set("k-custom-secret".into()),
    );
    let list = service
        .models_for("custom", &format!("{}/", own.url()))
        .await;
    assert_eq!(list.key_notice, None);
    assert_eq!(own.take(), [Some("Bearer k-custom-secret".to_owned())]);
    // Another URL for the same provider does not.
    service.models_for("custom", &any_host.url()).await;
    assert_eq!(any_host.take(), [None]);

    // Saving only a new URL does not take the key along, for the model list
    // nor for chat requests.
    let public = save("custom", &any_host.url(), KeyUpdate::Keep);
    assert!(public.configured && !public.key_set, "{public:?}");
    assert!(public.key_notice.is_some());
    let llm = service.resolve_for_chat().await.unwrap();
    let (outcome, _) = ask(&llm, request("build a todo app")).await;
    assert!(matches!(
        outcome.result,
        Err(LlmError::Rejected { status: 400, .. })
    ));
    let seen = any_host.take();
    assert_eq!(seen.len(), 2, "{seen:?}");
    for auth in seen.into_iter().flatten() {
        assert!(!auth.contains("secret"), "{auth}");
    }
    assert!(own.take().is_empty());
}

/// The same with keys from the environment, through `rivet ask`: a key
/// goes with the base URL configured with it, never with one named on the
/// command line.
#[tokio::test]
async fn an_environment_key_goes_only_to_the_url_configured_with_it() {
    let own = Recorder::start().await;
    let any_host = Recorder::start().await;
    let (own_url, any_url) = (own.url(), any_host.url());
    let run = |env: Vec<(&'static str, String)>, args: Vec<String>| {
        tokio::task::spawn_blocking(move || {
            let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            rivet_ask_with(&env, &args)
        })
    };
    let configured = vec![
        ("RIVET_LLM_PROVIDER", "custom".to_owned()),
        ("RIVET_LLM_BASE_URL", own_url.clone()),
        ("RIVET_LLM_MODEL", "m".to_owned()),
        ("RIVET_LLM_API_KEY", "k-env-secret".to_owned()),
        ("OPENAI_API_KEY", "sk-env-secret".to_owned()),
    ];
    let (code, _, stderr) = run(configured.clone(), vec!["hello".into()]).await.unwrap();
    assert!(code == 1 && stderr.contains("refused"), "{stderr}");
    // The model list (for the model's context window), then the chat.
    let key = Some("Bearer k-env-secret".to_owned());
    assert_eq!(own.take(), [key.clone(), key]);

    // Asked without a key; OpenAI, which needs one, is not asked at all.
    for (provider, requests) in [(None, 2), (Some("custom"), 2), (Some("openai"), 0)] {
        let mut args: Vec<String> = ["--base-url", &any_url, "--model", "m", "hello"]
            .map(str::to_owned)
            .into();
        if let Some(provider) = provider {
            args.extend(["--provider".to_owned(), provider.to_owned()]);
        }
        let (code, _, stderr) = run(configured.clone(), args).await.unwrap();
        assert_eq!(code, 1, "{provider:?}: {stderr}");
        let seen = any_host.take();
        assert_eq!(seen.len(), requests, "{provider:?}: {stderr}");
        for auth in seen.into_iter().flatten() {
            assert!(!auth.contains("secret"), "{provider:?}: {auth}");
        }
        if requests == 0 {
            let expected = format!("No key is sent to {any_url}");
            assert!(stderr.contains(&expected), "{stderr}");
        }
    }
    assert!(own.take().is_empty());
}
