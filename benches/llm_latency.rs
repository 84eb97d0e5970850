//! The latency Rivet's LLM client adds per token: the scripted provider runs
//! in this process, records when it hands each chunk to its connection, and
//! the consumer of `llm::chat` records when the matching delta reaches it.
//! Both timestamps come from the same monotonic clock. The difference covers
//! the HTTP hop on loopback, async-openai's SSE parsing and Rivet's event
//! handling.
//!
//! Run: `cargo bench --features ssr --bench llm_latency`. The answer replayed
//! is the start of /work/shared/bench/response-1mb.txt (override with
//! RIVET_BENCH_RESPONSE), cut into 4-character chunks (about one token each).

use std::collections::HashMap;
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rivet::server::llm::mock::{MockConfig, MockServer, parse};
use rivet::server::llm::{ChatMessage, ChatRequest, LlmEvent, ResolvedLlm, chat};
use tokio_util::sync::CancellationToken;

/// Tokens per stream.
const TOKENS: usize = 1500;
const CHUNK_CHARS: usize = 4;

type WriteTimes = Arc<Mutex<HashMap<String, Vec<Instant>>>>;

fn answer() -> String {
    let path = std::env::var("RIVET_BENCH_RESPONSE")
        .unwrap_or_else(|_| "/work/shared/bench/response-1mb.txt".to_owned());
    let text = std::fs::read_to_string(&path).unwrap_or_else(|_| {
        eprintln!("{path} not found; using generated text");
        "const value = compute(input);\n".repeat(TOKENS)
    });
    text.chars().take(TOKENS * CHUNK_CHARS).collect()
}

struct Figures {
    p50: Duration,
    p99: Duration,
    max: Duration,
    tokens_per_sec: f64,
}

async fn run(streams: usize, delay: Duration, text: &str) -> Figures {
    let written: WriteTimes = Arc::default();
    let observer = {
        let written = written.clone();
        Arc::new(move |key: &str, index: usize| {
            let now = Instant::now();
            let mut map = written
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            let times = map.entry(key.to_owned()).or_default();
            debug_assert_eq!(times.len(), index);
            times.push(now);
        })
    };
    let transcript = parse("bench.txt", text).unwrap_or_else(|e| panic!("{e}"));
    let config = MockConfig {
        chunk_size: CHUNK_CHARS,
        chunk_delay: delay,
        on_chunk: Some(observer),
        ..MockConfig::replaying(vec![transcript], "bench")
    };
    let server = MockServer::start(config, SocketAddr::from((Ipv4Addr::LOCALHOST, 0)))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let llm = ResolvedLlm::custom(&server.base_url(), "bench", None);
    let started = Instant::now();
    let tasks: Vec<_> = (0..streams)
        .map(|i| {
            let llm = llm.clone();
            tokio::spawn(async move {
                let key = format!("bench stream {i}");
                let request = ChatRequest::new("", vec![ChatMessage::user(key.clone())]);
                let mut received = Vec::with_capacity(TOKENS);
                let outcome = chat(&llm, request, CancellationToken::new(), |e| {
                    if let LlmEvent::Delta { .. } = e {
                        received.push(Instant::now());
                    }
                })
                .await;
                assert!(outcome.result.is_ok(), "{:?}", outcome.result);
                (key, received)
            })
        })
        .collect();
    let mut latencies = Vec::with_capacity(streams * TOKENS);
    let mut results = Vec::new();
    for task in tasks {
        results.push(task.await.unwrap_or_else(|e| panic!("{e}")));
    }
    let elapsed = started.elapsed();
    let written = written
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    for (key, received) in results {
        let sent = &written[&key];
        assert_eq!(sent.len(), received.len(), "one delta per chunk");
        latencies.extend(
            sent.iter()
                .zip(&received)
                .map(|(s, r)| r.duration_since(*s)),
        );
    }
    latencies.sort();
    let at = |q: f64| latencies[((latencies.len() - 1) as f64 * q).round() as usize];
    Figures {
        p50: at(0.50),
        p99: at(0.99),
        max: latencies[latencies.len() - 1],
        tokens_per_sec: latencies.len() as f64 / elapsed.as_secs_f64(),
    }
}

/// How long after a stop the provider sees its connection close.
async fn stop_to_close(text: &str) -> Duration {
    let closed: Arc<Mutex<Option<Instant>>> = Arc::default();
    let transcript = parse("bench.txt", text).unwrap_or_else(|e| panic!("{e}"));
    let config = MockConfig {
        chunk_size: CHUNK_CHARS,
        chunk_delay: Duration::from_millis(20),
        ..MockConfig::replaying(vec![transcript], "bench")
    };
    let server = MockServer::start(config, SocketAddr::from((Ipv4Addr::LOCALHOST, 0)))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let log_url = format!("http://{}/mock/log", server.addr);
    let llm = ResolvedLlm::custom(&server.base_url(), "bench", None);
    let cancel = CancellationToken::new();
    let stopper = cancel.clone();
    let mut deltas = 0;
    let stopped_at: Arc<Mutex<Option<Instant>>> = Arc::default();
    let stop_time = stopped_at.clone();
    chat(
        &llm,
        ChatRequest::new("", vec![ChatMessage::user("stop")]),
        cancel,
        |e| {
            if let LlmEvent::Delta { .. } = e {
                deltas += 1;
                if deltas == 10 {
                    *stop_time
                        .lock()
                        .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(Instant::now());
                    stopper.cancel();
                }
            }
        },
    )
    .await;
    let http = reqwest::Client::new();
    while closed
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .is_none()
    {
        let log: serde_json::Value = http
            .get(&log_url)
            .send()
            .await
            .unwrap_or_else(|e| panic!("{e}"))
            .json()
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        if log[0]["end"] == "client_dropped" {
            *closed
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(Instant::now());
        } else {
            tokio::time::sleep(Duration::from_micros(500)).await;
        }
    }
    let closed = closed
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .unwrap_or_else(Instant::now);
    let stopped = stopped_at
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .unwrap_or_else(Instant::now);
    closed.duration_since(stopped)
}

fn ms(d: Duration) -> String {
    format!("{:.3} ms", d.as_secs_f64() * 1000.0)
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    let text = answer();
    println!("{TOKENS} tokens of {CHUNK_CHARS} characters per stream, 2 worker threads\n");
    println!("| upstream pace | streams | p50 | p99 | max | tokens/s (all streams) |");
    println!("|---|---|---|---|---|---|");
    for (pace, delay) in [
        ("no delay", Duration::ZERO),
        ("1 token / 1 ms", Duration::from_millis(1)),
        ("1 token / 10 ms", Duration::from_millis(10)),
    ] {
        for streams in [1, 100] {
            // A warm-up run, then the measured one.
            runtime.block_on(run(streams.min(10), delay, &text));
            let f = runtime.block_on(run(streams, delay, &text));
            println!(
                "| {pace} | {streams} | {} | {} | {} | {:.0} |",
                ms(f.p50),
                ms(f.p99),
                ms(f.max),
                f.tokens_per_sec
            );
        }
    }
    let stop = runtime.block_on(stop_to_close(&text));
    println!(
        "\nstop → the provider sees the connection close: {}",
        ms(stop)
    );
}
