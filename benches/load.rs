//! Load, measured: the real `rivet serve` (a child process with its own data
//! directory and token, as `tests/it/support.rs` starts it) under many
//! streaming answers at once, and with many idle sandboxes open.
//!
//! 1. **Concurrent streaming answers.** For each count in
//!    `RIVET_LOAD_STREAMS` (default `100,1000`; a fresh server each), that
//!    many projects are created through `/api/v1` (new and empty: a Build
//!    answer lists the project's files for its prompt, and an empty project
//!    is listed without starting its sandbox, so no sandbox runs), a
//!    subscriber reads each project's `/events`, and each project is sent
//!    one message. The scripted provider runs in this process and answers
//!    every message with the same prose (no actions, so nothing runs in the
//!    sandboxes), `RIVET_LOAD_TOKENS` chunks (default 400) of 4 characters,
//!    one every `RIVET_LOAD_PACE_MS` (default 25 ms), like a real model. It
//!    notes when it hands each chunk to its connection; each subscriber notes
//!    when the HTTP bytes that complete that chunk's text arrive (before
//!    decoding them). Both on this process's monotonic clock: the difference
//!    is what the server adds per token (its LLM client, the parser, the
//!    store, which writes every event before a subscriber gets it, and the
//!    event stream), plus the loopback hops. Also: errors, the server's RSS
//!    before and during the streams, and the IDE's page latency meanwhile.
//! 2. **Idle sandboxes.** `RIVET_LOAD_SANDBOXES` projects (default 50) get
//!    their sandbox opened (a file written through the API), then the
//!    memory of the sandbox processes and the IDE's growth is measured, the
//!    time to open one more, and the page latency with them open.
//!
//! `cargo bench --profile release --no-default-features --features ssr
//! --bench load` (needs bwrap; all traffic on 127.0.0.1; not part of the
//! test suite). It prints Markdown tables. `RIVET_LOAD_BIN` names another
//! `rivet` binary to measure instead of the one built with the bench;
//! `RIVET_LOAD_FLOOR=1` measures the streams through a bare relay instead
//! (`load/relay.rs`), the floor of what this machine and these clients allow.

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[allow(dead_code)]
#[path = "../tests/it/support.rs"]
mod support;

#[path = "load/relay.rs"]
mod relay;

use std::collections::HashMap;
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures::{StreamExt, stream};
use rivet::runtime::protocol::Event;
use rivet::runtime::session::{Envelope, LineDecoder, MessageStatus, Role, SessionEvent};
use rivet::server::llm::mock::{MockConfig, MockServer, parse};
use tokio::sync::oneshot;

const CHUNK_CHARS: usize = 4;
/// The marker each project's message carries, so the provider's chunks can
/// be matched to their stream.
const MARKER: &str = "loadstream-";
/// Requests in flight at once while setting up.
const SETUP_CONCURRENCY: usize = 16;

fn env_or<T: std::str::FromStr>(name: &str, default: T) -> T {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Prose with no markup, so the parser passes it straight on as text.
fn answer(tokens: usize) -> String {
    const WORDS: &str = "the quick brown fox jumps over a lazy dog while seven \
        wizards quietly judge boxing matches near the old river bank ";
    WORDS.chars().cycle().take(tokens * CHUNK_CHARS).collect()
}

/// Where each chunk's text ends, in bytes of the answer.
fn chunk_ends(text: &str) -> Vec<usize> {
    let mut ends = Vec::new();
    let mut chars: usize = 0;
    for (at, c) in text.char_indices() {
        chars += 1;
        if chars.is_multiple_of(CHUNK_CHARS) {
            ends.push(at + c.len_utf8());
        }
    }
    if !chars.is_multiple_of(CHUNK_CHARS) {
        ends.push(text.len());
    }
    ends
}

fn stream_index(last_user: &str) -> Option<usize> {
    let rest = &last_user[last_user.find(MARKER)? + MARKER.len()..];
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    digits.parse().ok()
}

// --- the machine and its processes ------------------------------------------

fn raise_open_files() {
    use nix::sys::resource::{Resource, getrlimit, setrlimit};
    if let Ok((_, hard)) = getrlimit(Resource::RLIMIT_NOFILE) {
        let _ = setrlimit(Resource::RLIMIT_NOFILE, hard, hard);
    }
    if let Ok((soft, _)) = getrlimit(Resource::RLIMIT_NOFILE) {
        println!("open files limit of the bench (inherited by the server): {soft}");
    }
}

fn machine() -> String {
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
    let mem_kib: u64 = meminfo
        .lines()
        .find_map(|l| l.strip_prefix("MemTotal:"))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .unwrap_or(0);
    let os = std::fs::read_to_string("/etc/os-release")
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix("PRETTY_NAME="))
        .map(|v| v.trim_matches('"').to_owned())
        .unwrap_or_default();
    format!(
        "{cores} cores, {:.1} GiB, {os}",
        mem_kib as f64 / 1024.0 / 1024.0
    )
}

/// A `kB` field of `/proc/<pid>/status` (or of `smaps_rollup`).
fn proc_kib(path: &str, field: &str) -> u64 {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix(field))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
}

/// The CPU time (user and system) process `pid` ("self" for this one) has
/// used, from `/proc/<pid>/stat`.
fn cpu_time(pid: &str) -> Duration {
    static TICKS: std::sync::OnceLock<f64> = std::sync::OnceLock::new();
    let ticks = *TICKS.get_or_init(|| {
        let out = std::process::Command::new("getconf")
            .arg("CLK_TCK")
            .output();
        out.ok()
            .and_then(|o| String::from_utf8(o.stdout).ok())
            .and_then(|t| t.trim().parse().ok())
            .unwrap_or(100.0)
    });
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // The fields after the command's name, from the third (state) on:
    // utime and stime are the 14th and 15th.
    let rest = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let field = |i: usize| {
        fields
            .get(i)
            .and_then(|f| f.parse::<f64>().ok())
            .unwrap_or(0.0)
    };
    Duration::from_secs_f64((field(11) + field(12)) / ticks)
}

fn rss_kib(pid: u32) -> u64 {
    proc_kib(&format!("/proc/{pid}/status"), "VmRSS:")
}

fn pss_kib(pid: u32) -> u64 {
    proc_kib(&format!("/proc/{pid}/smaps_rollup"), "Pss:")
}

/// Every process below `root` (not `root` itself), with its real uid.
fn descendants(root: u32) -> Vec<(u32, u32)> {
    let mut parent_of = HashMap::new();
    let mut uid_of = HashMap::new();
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    for entry in dir.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|s| s.parse::<u32>().ok())
        else {
            continue;
        };
        let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
        let field = |name: &str| {
            status
                .lines()
                .find_map(|l| l.strip_prefix(name))
                .and_then(|v| v.split_whitespace().next()?.parse::<u32>().ok())
        };
        if let (Some(ppid), Some(uid)) = (field("PPid:"), field("Uid:")) {
            parent_of.insert(pid, ppid);
            uid_of.insert(pid, uid);
        }
    }
    let mut found = Vec::new();
    for (&pid, _) in parent_of.iter() {
        let mut at = pid;
        while let Some(&up) = parent_of.get(&at) {
            if up == root {
                found.push((pid, uid_of[&pid]));
                break;
            }
            if up <= 1 {
                break;
            }
            at = up;
        }
    }
    found
}

struct Processes {
    count: usize,
    rss_kib: u64,
    pss_kib: u64,
    /// Processes per real uid.
    uids: Vec<(u32, usize)>,
}

fn processes_below(root: u32) -> Processes {
    let all = descendants(root);
    let mut uids: HashMap<u32, usize> = HashMap::new();
    for (_, uid) in &all {
        *uids.entry(*uid).or_default() += 1;
    }
    let mut uids: Vec<_> = uids.into_iter().collect();
    uids.sort();
    Processes {
        count: all.len(),
        rss_kib: all.iter().map(|(pid, _)| rss_kib(*pid)).sum(),
        pss_kib: all.iter().map(|(pid, _)| pss_kib(*pid)).sum(),
        uids,
    }
}

fn mib(kib: u64) -> String {
    format!("{:.1} MiB", kib as f64 / 1024.0)
}

fn ms(d: Duration) -> String {
    format!("{:.3} ms", d.as_secs_f64() * 1000.0)
}

fn quantile(sorted: &[Duration], q: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    sorted[((sorted.len() - 1) as f64 * q).round() as usize]
}

// --- the IDE -----------------------------------------------------------------

struct Ide {
    child: tokio::process::Child,
    _data: tempfile::TempDir,
    addr: SocketAddr,
    http: reqwest::Client,
    /// Server log lines that say a sandbox helper could not watch its files.
    unwatched: Arc<AtomicUsize>,
    /// Sandboxes the server started, from its log.
    started: Arc<AtomicUsize>,
}

impl Ide {
    async fn start(base_url: &str) -> Ide {
        let data = tempfile::tempdir().unwrap();
        let command = if floor() {
            let mut relay = tokio::process::Command::new(std::env::current_exe().unwrap());
            relay.env(relay::UPSTREAM, base_url);
            relay
        } else {
            // RIVET_LOAD_BIN measures another build of the server (an earlier
            // commit's, say) with the same clients, in the same run.
            let bin = std::env::var_os("RIVET_LOAD_BIN")
                .unwrap_or_else(|| env!("CARGO_BIN_EXE_rivet").into());
            let mut command = tokio::process::Command::new(bin);
            support::serve_in(&mut command, data.path());
            command
                .env("RIVET_LLM_PROVIDER", "custom")
                .env("RIVET_LLM_BASE_URL", base_url)
                .env("RIVET_LLM_MODEL", "rivet-replay");
            command
        };
        let (child, addr, mut log) = support::spawn_serve_with_log(command).await;
        let unwatched = Arc::new(AtomicUsize::new(0));
        let started = Arc::new(AtomicUsize::new(0));
        let (count, starts) = (unwatched.clone(), started.clone());
        tokio::spawn(async move {
            while let Ok(Some(line)) = log.next_line().await {
                if line.contains("file changes are not reported") {
                    count.fetch_add(1, Ordering::Relaxed);
                }
                if line.contains("sandbox started") {
                    starts.fetch_add(1, Ordering::Relaxed);
                }
            }
        });
        Ide {
            child,
            _data: data,
            addr,
            http: support::client()
                .pool_max_idle_per_host(64)
                .build()
                .unwrap(),
            unwatched,
            started,
        }
    }

    fn pid(&self) -> u32 {
        self.child.id().unwrap()
    }

    fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    async fn new_project(&self, name: &str) -> Result<String, String> {
        let response = self
            .http
            .post(self.url("/api/v1/projects"))
            .json(&serde_json::json!({ "name": name }))
            .send()
            .await
            .map_err(|e| e.to_string())?;
        if response.status() != 201 {
            return Err(format!("create: {}", response.status()));
        }
        let project: serde_json::Value = response.json().await.map_err(|e| e.to_string())?;
        Ok(project["id"].as_str().unwrap_or_default().to_owned())
    }

    /// Writes a small file, which starts the project's sandbox if it is not
    /// running.
    async fn open_sandbox(&self, project: &str) -> Result<Duration, String> {
        let started = Instant::now();
        let response = self
            .http
            .put(self.url(&format!("/api/v1/projects/{project}/files/notes.md")))
            .body("load test\n")
            .send()
            .await
            .map_err(|e| e.to_string())?;
        if response.status() != 204 {
            let status = response.status();
            let body = response.text().await.unwrap_or_default();
            return Err(format!("write: {status} {body}"));
        }
        Ok(started.elapsed())
    }

    async fn send(&self, project: &str, text: &str) -> Result<(), String> {
        let response = self
            .http
            .post(self.url(&format!("/api/v1/projects/{project}/messages")))
            .json(&serde_json::json!({ "text": text }))
            .send()
            .await
            .map_err(|e| e.to_string())?;
        if response.status() != 202 {
            let status = response.status();
            let body = response.text().await.unwrap_or_default();
            return Err(format!("send: {status} {body}"));
        }
        Ok(())
    }

    /// One GET, timed; `None` when it failed.
    async fn timed_get(&self, path: &str) -> Option<Duration> {
        let started = Instant::now();
        let response = self.http.get(self.url(path)).send().await.ok()?;
        if response.status() != 200 {
            return None;
        }
        response.bytes().await.ok()?;
        Some(started.elapsed())
    }
}

async fn in_parallel<T, F, Fut>(count: usize, concurrency: usize, f: F) -> Vec<T>
where
    F: Fn(usize) -> Fut,
    Fut: std::future::Future<Output = T>,
{
    let mut results: Vec<(usize, T)> = stream::iter(0..count)
        .map(|i| {
            let fut = f(i);
            async move { (i, fut.await) }
        })
        .buffer_unordered(concurrency)
        .collect()
        .await;
    results.sort_by_key(|(i, _)| *i);
    results.into_iter().map(|(_, t)| t).collect()
}

// --- part 1: concurrent streams ----------------------------------------------

type WriteTimes = Arc<Mutex<HashMap<usize, Vec<Instant>>>>;

/// What one subscriber saw.
#[derive(Default)]
struct Followed {
    /// When the bytes completing each chunk arrived.
    received: Vec<Instant>,
    text_bytes: usize,
    text_events: usize,
    /// Snapshots after the first: the subscriber fell behind.
    resyncs: usize,
    finished: Option<MessageStatus>,
    error: Option<String>,
}

/// Reads a project's events until its answer ends; `ready` fires once the
/// first snapshot is read.
async fn follow(
    ide: Arc<Ide>,
    project: String,
    ends: Arc<Vec<usize>>,
    ready: oneshot::Sender<Result<(), String>>,
    deadline: tokio::time::Instant,
) -> Followed {
    let mut out = Followed {
        received: Vec::with_capacity(ends.len()),
        ..Followed::default()
    };
    let response = ide
        .http
        .get(ide.url(&format!("/api/v1/projects/{project}/events")))
        .send()
        .await;
    let response = match response {
        Ok(r) if r.status() == 200 => r,
        Ok(r) => {
            let error = format!("events: {}", r.status());
            let _ = ready.send(Err(error.clone()));
            out.error = Some(error);
            return out;
        }
        Err(e) => {
            let _ = ready.send(Err(e.to_string()));
            out.error = Some(e.to_string());
            return out;
        }
    };
    let mut ready = Some(ready);
    let mut body = response.bytes_stream();
    let mut lines = LineDecoder::default();
    let mut snapshots = 0;
    let mut assistant: Option<String> = None;
    loop {
        let chunk = match tokio::time::timeout_at(deadline, body.next()).await {
            Err(_) => {
                out.error = Some("timed out".to_owned());
                break;
            }
            Ok(None) => {
                out.error = Some("the stream closed".to_owned());
                break;
            }
            Ok(Some(Err(e))) => {
                out.error = Some(e.to_string());
                break;
            }
            Ok(Some(Ok(chunk))) => chunk,
        };
        let now = Instant::now();
        for line in lines.push(&chunk) {
            let envelope: Envelope = match serde_json::from_slice(&line) {
                Ok(e) => e,
                Err(e) => {
                    out.error = Some(format!("a line that is not an event: {e}"));
                    return out;
                }
            };
            match envelope.event {
                SessionEvent::Snapshot { .. } => {
                    snapshots += 1;
                    if snapshots > 1 {
                        out.resyncs += 1;
                    }
                    if let Some(ready) = ready.take() {
                        let _ = ready.send(Ok(()));
                    }
                }
                SessionEvent::MessageAdded { message } if message.role == Role::Assistant => {
                    assistant = Some(message.id);
                }
                SessionEvent::Protocol {
                    event: Event::Text { text },
                    ..
                } => {
                    out.text_events += 1;
                    out.text_bytes += text.len();
                    while out.received.len() < ends.len()
                        && ends[out.received.len()] <= out.text_bytes
                    {
                        out.received.push(now);
                    }
                }
                SessionEvent::MessageFinished {
                    message_id, status, ..
                } if assistant.as_deref() == Some(message_id.as_str()) => {
                    out.finished = Some(status);
                    return out;
                }
                _ => {}
            }
        }
    }
    if let Some(ready) = ready.take() {
        let _ = ready.send(Err(out.error.clone().unwrap_or_default()));
    }
    out
}

struct StreamFigures {
    streams: usize,
    setup: Duration,
    p50: Duration,
    p99: Duration,
    p999: Duration,
    max: Duration,
    tokens: usize,
    tokens_expected: usize,
    errors: Vec<String>,
    resyncs: usize,
    text_events: usize,
    peak_concurrent: usize,
    all_at_once: Duration,
    wall: Duration,
    rss_idle: u64,
    rss_before: u64,
    rss_subscribed: u64,
    rss_peak: u64,
    /// CPU time from the messages' sending to the last answer's end: the
    /// server's, and this process's (the provider and the subscribers).
    server_cpu: Duration,
    bench_cpu: Duration,
    sandboxes: Processes,
    unwatched: usize,
    /// Sandboxes started from the server's start to the streams' end.
    sandboxes_started: usize,
    pages: Vec<Duration>,
    page_errors: usize,
}

async fn streams(count: usize, tokens: usize, pace: Duration) -> StreamFigures {
    let text = answer(tokens);
    let ends = Arc::new(chunk_ends(&text));
    let written: WriteTimes = Arc::default();
    let observer = {
        let written = written.clone();
        Arc::new(move |last_user: &str, index: usize| {
            let now = Instant::now();
            let Some(stream) = stream_index(last_user) else {
                return;
            };
            let mut map = written.lock().unwrap();
            let times = map.entry(stream).or_default();
            if times.len() == index {
                times.push(now);
            }
        })
    };
    let config = MockConfig {
        transcripts: vec![parse("load.txt", &text).unwrap()],
        chunk_size: CHUNK_CHARS,
        chunk_delay: pace,
        on_chunk: Some(observer),
        models: vec!["rivet-replay".to_owned()],
        ..MockConfig::demo()
    };
    let mock = MockServer::start(config, SocketAddr::from((Ipv4Addr::LOCALHOST, 0)))
        .await
        .unwrap();
    let ide = Arc::new(Ide::start(&mock.base_url()).await);
    let pid = ide.pid();
    let mut errors = Vec::new();
    tokio::time::sleep(Duration::from_secs(1)).await;
    let rss_idle = rss_kib(pid);

    let setup_started = Instant::now();
    let projects = in_parallel(count, SETUP_CONCURRENCY, |i| {
        let ide = ide.clone();
        async move { ide.new_project(&format!("load {i}")).await }
    })
    .await;
    let projects: Vec<String> = projects
        .into_iter()
        .filter_map(|p| p.map_err(|e| errors.push(e)).ok())
        .collect();
    tokio::time::sleep(Duration::from_secs(2)).await;
    let rss_before = rss_kib(pid);
    let sandboxes = processes_below(pid);

    let deadline = tokio::time::Instant::now()
        + pace * tokens as u32
        + Duration::from_secs(180 + count as u64 / 10);
    let mut followers = Vec::with_capacity(projects.len());
    let mut readiness = Vec::with_capacity(projects.len());
    for project in &projects {
        let (ready, is_ready) = oneshot::channel();
        followers.push(tokio::spawn(follow(
            ide.clone(),
            project.clone(),
            ends.clone(),
            ready,
            deadline,
        )));
        readiness.push(is_ready);
    }
    for is_ready in readiness {
        if let Ok(Err(e)) = is_ready.await {
            errors.push(e);
        }
    }
    let setup_time = setup_started.elapsed();
    tokio::time::sleep(Duration::from_secs(1)).await;
    let rss_subscribed = rss_kib(pid);

    // While the answers stream: the server's RSS, and the page latency.
    let done = Arc::new(AtomicBool::new(false));
    let sampler = {
        let (ide, done) = (ide.clone(), done.clone());
        let project = projects.first().cloned().unwrap_or_default();
        tokio::spawn(async move {
            let mut peak = 0;
            let mut pages = Vec::new();
            let mut page_errors = 0;
            let mut turn = 0u64;
            while !done.load(Ordering::Relaxed) {
                peak = peak.max(rss_kib(pid));
                turn += 1;
                if turn.is_multiple_of(2) {
                    let path = if turn.is_multiple_of(4) {
                        "/api/v1/projects".to_owned()
                    } else {
                        format!("/p/{project}")
                    };
                    match ide.timed_get(&path).await {
                        Some(d) => pages.push(d),
                        None => page_errors += 1,
                    }
                }
                tokio::time::sleep(Duration::from_millis(250)).await;
            }
            (peak, pages, page_errors)
        })
    };

    let started = Instant::now();
    let cpu_before = (cpu_time(&pid.to_string()), cpu_time("self"));
    let sent = in_parallel(projects.len(), 64, |i| {
        let ide = ide.clone();
        let project = projects[i].clone();
        async move {
            ide.send(&project, &format!("write some prose {MARKER}{i:05}"))
                .await
        }
    })
    .await;
    for result in sent {
        if let Err(e) = result {
            errors.push(e);
        }
    }
    let mut followed = Vec::with_capacity(followers.len());
    for follower in followers {
        followed.push(follower.await.unwrap());
    }
    let wall = started.elapsed();
    let server_cpu = cpu_time(&pid.to_string()).saturating_sub(cpu_before.0);
    let bench_cpu = cpu_time("self").saturating_sub(cpu_before.1);
    done.store(true, Ordering::Relaxed);
    let (rss_peak, mut pages, page_errors) = sampler.await.unwrap();
    pages.sort();

    let written = written.lock().unwrap().clone();
    let mut latencies = Vec::with_capacity(projects.len() * ends.len());
    let (mut resyncs, mut text_events) = (0, 0);
    let mut spans = Vec::new();
    // Tokens slower than `slow_from`, by the half second the provider sent them in.
    let slow_from = slow_from();
    let mut slow = std::collections::BTreeMap::new();
    for (i, f) in followed.iter().enumerate() {
        resyncs += f.resyncs;
        text_events += f.text_events;
        if let Some(e) = &f.error {
            errors.push(format!("stream {i}: {e}"));
        }
        match &f.finished {
            Some(MessageStatus::Complete) => {}
            Some(other) => errors.push(format!("stream {i} ended {other:?}")),
            None => {}
        }
        if f.text_bytes != text.len() && f.error.is_none() {
            errors.push(format!(
                "stream {i}: {} bytes of text, not {}",
                f.text_bytes,
                text.len()
            ));
        }
        let Some(sent) = written.get(&i) else {
            errors.push(format!("stream {i}: the provider never answered"));
            continue;
        };
        if let (Some(first), Some(last)) = (sent.first(), sent.last()) {
            spans.push((*first, *last));
        }
        for (s, r) in sent.iter().zip(&f.received) {
            let latency = r.saturating_duration_since(*s);
            if latency >= slow_from {
                let at = s.saturating_duration_since(started).as_millis() / 500;
                *slow.entry(at).or_insert(0usize) += 1;
            }
            latencies.push(latency);
        }
    }
    latencies.sort();
    if std::env::var_os("RIVET_LOAD_SLOW").is_some() {
        print_slow(&slow, slow_from);
    }
    // How many answers streamed at once, from the provider's side.
    let mut edges: Vec<(Instant, i64)> = spans
        .iter()
        .flat_map(|(a, b)| [(*a, 1), (*b, -1)])
        .collect();
    edges.sort();
    let (mut open, mut peak_concurrent) = (0i64, 0i64);
    for (_, step) in edges {
        open += step;
        peak_concurrent = peak_concurrent.max(open);
    }
    let all_at_once = match (
        spans.iter().map(|s| s.0).max(),
        spans.iter().map(|s| s.1).min(),
    ) {
        (Some(last_start), Some(first_end)) if spans.len() == count => {
            first_end.saturating_duration_since(last_start)
        }
        _ => Duration::ZERO,
    };
    let figures = StreamFigures {
        streams: count,
        setup: setup_time,
        p50: quantile(&latencies, 0.50),
        p99: quantile(&latencies, 0.99),
        p999: quantile(&latencies, 0.999),
        max: latencies.last().copied().unwrap_or_default(),
        tokens: latencies.len(),
        tokens_expected: count * ends.len(),
        errors,
        resyncs,
        text_events,
        peak_concurrent: peak_concurrent as usize,
        all_at_once,
        wall,
        rss_idle,
        rss_before,
        rss_subscribed,
        rss_peak,
        server_cpu,
        bench_cpu,
        sandboxes,
        unwatched: ide.unwatched.load(Ordering::Relaxed),
        sandboxes_started: ide.started.load(Ordering::Relaxed),
        pages,
        page_errors,
    };
    drop(ide);
    drop(mock);
    // The sandboxes end with the server.
    tokio::time::sleep(Duration::from_secs(2)).await;
    figures
}

fn print_streams(all: &[StreamFigures], tokens: usize, pace: Duration) {
    let through = if floor() {
        "the relay (`RIVET_LOAD_FLOOR`: no server, the floor)"
    } else {
        "`rivet serve`"
    };
    println!(
        "\n## Concurrent streaming answers through {through} ({tokens} chunks of \
         {CHUNK_CHARS} characters per answer, one every {} ms)\n",
        pace.as_millis()
    );
    let row = |name: &str, f: &dyn Fn(&StreamFigures) -> String| {
        let cells: Vec<String> = all.iter().map(f).collect();
        println!("| {name} | {} |", cells.join(" | "));
    };
    row("streams", &|f| f.streams.to_string());
    println!("|---|{}", "---:|".repeat(all.len()));
    row("server-added latency per token, p50", &|f| ms(f.p50));
    row("p99", &|f| ms(f.p99));
    row("p99.9", &|f| ms(f.p999));
    row("max", &|f| ms(f.max));
    row("tokens received / expected", &|f| {
        format!("{} / {}", f.tokens, f.tokens_expected)
    });
    row("text events received", &|f| f.text_events.to_string());
    row("errors", &|f| f.errors.len().to_string());
    row("subscribers resynchronised (fell behind)", &|f| {
        f.resyncs.to_string()
    });
    row("answers streaming at once (peak)", &|f| {
        f.peak_concurrent.to_string()
    });
    row("all of them streaming at once for", &|f| {
        format!("{:.1} s", f.all_at_once.as_secs_f64())
    });
    row("send → last answer ended", &|f| {
        format!("{:.1} s", f.wall.as_secs_f64())
    });
    row("setup (projects, sandboxes, subscribers)", &|f| {
        format!("{:.1} s", f.setup.as_secs_f64())
    });
    let per_token = |cpu: Duration, f: &StreamFigures| {
        format!(
            "{:.1} s ({:.0} µs a token)",
            cpu.as_secs_f64(),
            cpu.as_secs_f64() * 1e6 / f.tokens.max(1) as f64
        )
    };
    row("server CPU, send → last answer ended", &|f| {
        per_token(f.server_cpu, f)
    });
    row("bench's provider and subscribers' CPU, same", &|f| {
        per_token(f.bench_cpu, f)
    });
    row("server RSS, started", &|f| mib(f.rss_idle));
    row("server RSS, projects and sandboxes open", &|f| {
        mib(f.rss_before)
    });
    row("server RSS, subscribers connected", &|f| {
        mib(f.rss_subscribed)
    });
    row("server RSS, peak while streaming", &|f| mib(f.rss_peak));
    row(
        "**server memory per stream** (peak − open) / streams",
        &|f| {
            format!(
                "{:.0} KiB",
                f.rss_peak.saturating_sub(f.rss_before) as f64 / f.streams as f64
            )
        },
    );
    row("sandbox processes (RSS, PSS)", &|f| {
        format!(
            "{} ({}, {})",
            f.sandboxes.count,
            mib(f.sandboxes.rss_kib),
            mib(f.sandboxes.pss_kib)
        )
    });
    row("sandbox processes per uid", &|f| {
        f.sandboxes
            .uids
            .iter()
            .map(|(uid, n)| format!("{uid}: {n}"))
            .collect::<Vec<_>>()
            .join(", ")
    });
    row("agents that could not watch their files", &|f| {
        f.unwatched.to_string()
    });
    row("sandboxes started", &|f| f.sandboxes_started.to_string());
    row("page latency meanwhile (median / max)", &|f| {
        format!(
            "{} / {} ({} samples, {} failed)",
            ms(quantile(&f.pages, 0.5)),
            ms(f.pages.last().copied().unwrap_or_default()),
            f.pages.len(),
            f.page_errors
        )
    });
    for f in all {
        for e in f.errors.iter().take(10) {
            println!("error ({} streams): {e}", f.streams);
        }
    }
}

/// A token counts as slow from this latency on: `RIVET_LOAD_SLOW`, in
/// milliseconds (20 when it is not a number).
fn slow_from() -> Duration {
    Duration::from_millis(env_or("RIVET_LOAD_SLOW", 20))
}

/// With `RIVET_LOAD_SLOW` set: when the slow tokens were sent, by half
/// second since the messages were sent, to tell a burst (answers starting
/// or ending together) from a steady cost.
fn print_slow(slow: &std::collections::BTreeMap<u128, usize>, from: Duration) {
    println!(
        "tokens over {} ms, by when they were sent:",
        from.as_millis()
    );
    for (half, count) in slow {
        println!("  {:>5.1} s  {count}", *half as f64 / 2.0);
    }
}

// --- part 2: idle sandboxes --------------------------------------------------

/// Page latencies: the project list and a project's page, `rounds` each.
async fn pages(ide: &Ide, project: &str, rounds: usize) -> (Vec<Duration>, Vec<Duration>, usize) {
    let (mut list, mut page, mut failed) = (Vec::new(), Vec::new(), 0);
    for _ in 0..rounds {
        match ide.timed_get("/api/v1/projects").await {
            Some(d) => list.push(d),
            None => failed += 1,
        }
        match ide.timed_get(&format!("/p/{project}")).await {
            Some(d) => page.push(d),
            None => failed += 1,
        }
    }
    list.sort();
    page.sort();
    (list, page, failed)
}

async fn idle_sandboxes(count: usize) {
    let mock = MockServer::start(
        MockConfig::demo(),
        SocketAddr::from((Ipv4Addr::LOCALHOST, 0)),
    )
    .await
    .unwrap();
    let ide = Ide::start(&mock.base_url()).await;
    let pid = ide.pid();
    let mut projects = Vec::new();
    for i in 0..=count {
        projects.push(ide.new_project(&format!("idle {i}")).await.unwrap());
    }
    // Each project opened in the IDE (its session), no sandbox yet.
    for project in &projects {
        let _ = ide.timed_get(&format!("/p/{project}")).await;
    }
    tokio::time::sleep(Duration::from_secs(1)).await;
    let rounds = 20;
    let (list_before, page_before, failed_before) = pages(&ide, &projects[0], rounds).await;
    let rss_before = rss_kib(pid);
    let below_before = processes_below(pid);

    let mut opening = Vec::new();
    let mut errors = Vec::new();
    for project in &projects[..count] {
        match ide.open_sandbox(project).await {
            Ok(d) => opening.push(d),
            Err(e) => errors.push(e),
        }
    }
    opening.sort();
    tokio::time::sleep(Duration::from_secs(2)).await;
    let rss_open = rss_kib(pid);
    let below = processes_below(pid);
    let (list_open, page_open, failed_open) = pages(&ide, &projects[0], rounds).await;
    let next = ide.open_sandbox(&projects[count]).await;
    let again = ide.open_sandbox(&projects[0]).await;

    let growth = rss_open.saturating_sub(rss_before);
    let sandbox_rss = below.rss_kib.saturating_sub(below_before.rss_kib);
    let sandbox_pss = below.pss_kib.saturating_sub(below_before.pss_kib);
    println!("\n## {count} idle project sandboxes open at once\n");
    println!("| What | Figure |");
    println!("|---|---:|");
    println!(
        "| opening a sandbox (a file written into a project whose sandbox is not running), median / max of {count} | {} / {} |",
        ms(quantile(&opening, 0.5)),
        ms(opening.last().copied().unwrap_or_default())
    );
    println!(
        "| the IDE's RSS: before / with {count} sandboxes open | {} / {} (+{}) |",
        mib(rss_before),
        mib(rss_open),
        mib(growth)
    );
    println!(
        "| sandbox processes | {} ({}) |",
        below.count - below_before.count,
        below
            .uids
            .iter()
            .map(|(uid, n)| format!("uid {uid}: {n}"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    println!(
        "| their RSS / PSS (shared pages counted once) | {} / {} |",
        mib(sandbox_rss),
        mib(sandbox_pss)
    );
    println!(
        "| **memory per idle sandbox**: (sandbox RSS + IDE growth) / {count} | {:.2} MiB |",
        (sandbox_rss + growth) as f64 / 1024.0 / count as f64
    );
    println!(
        "| the same with PSS | {:.2} MiB |",
        (sandbox_pss + growth) as f64 / 1024.0 / count as f64
    );
    match next {
        Ok(d) => println!("| **opening one more, with {count} open** | {} |", ms(d)),
        Err(e) => println!("| opening one more, with {count} open | failed: {e} |"),
    }
    if let Ok(d) = again {
        println!("| the same write into an open sandbox | {} |", ms(d));
    }
    println!(
        "| `GET /api/v1/projects` ({} projects), median / max of {rounds}: no sandbox → {count} open | {} / {} → {} / {} |",
        projects.len(),
        ms(quantile(&list_before, 0.5)),
        ms(list_before.last().copied().unwrap_or_default()),
        ms(quantile(&list_open, 0.5)),
        ms(list_open.last().copied().unwrap_or_default())
    );
    println!(
        "| `GET /p/<project>` (the IDE page), median / max of {rounds}: no sandbox → {count} open | {} / {} → {} / {} |",
        ms(quantile(&page_before, 0.5)),
        ms(page_before.last().copied().unwrap_or_default()),
        ms(quantile(&page_open, 0.5)),
        ms(page_open.last().copied().unwrap_or_default())
    );
    println!(
        "| errors | {} |",
        errors.len() + failed_before + failed_open
    );
    println!(
        "| agents that could not watch their files | {} |",
        ide.unwatched.load(Ordering::Relaxed)
    );
    for e in errors.iter().take(10) {
        println!("error: {e}");
    }
}

/// Whether the streams go through the relay (`relay.rs`) instead of the
/// server: the floor of what the bench can measure on this machine.
fn floor() -> bool {
    std::env::var_os("RIVET_LOAD_FLOOR").is_some_and(|v| v == "1")
}

fn main() {
    if let Ok(upstream) = std::env::var(relay::UPSTREAM) {
        relay::run(upstream);
        return;
    }
    raise_open_files();
    let counts: Vec<usize> = std::env::var("RIVET_LOAD_STREAMS")
        .unwrap_or_else(|_| "100,1000".to_owned())
        .split(',')
        .filter_map(|s| s.trim().parse().ok())
        .collect();
    let tokens = env_or("RIVET_LOAD_TOKENS", 400);
    let pace = Duration::from_millis(env_or("RIVET_LOAD_PACE_MS", 25));
    let sandboxes = env_or("RIVET_LOAD_SANDBOXES", 50);
    println!("machine: {}", machine());
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        if sandboxes > 0 {
            idle_sandboxes(sandboxes).await;
        }
        let mut all = Vec::new();
        for count in counts {
            let started = Instant::now();
            all.push(streams(count, tokens, pace).await);
            eprintln!(
                "{count} streams measured in {:.0} s",
                started.elapsed().as_secs_f64()
            );
            // The table so far, in case a larger count does not finish.
            print_streams(&all, tokens, pace);
        }
    });
}
