//! From the first failure to a working preview, for each fix fixture: the
//! real `rivet serve` (as the fix integration tests in `tests/it/session/
//! fix.rs` run it), the bubblewrap sandbox, real npm and Vite, and the
//! scripted provider in this process replaying `tests/fixtures/transcripts`
//! (`broken-dep` then `fix-dep`, `broken-syntax` then `fix-syntax`) without
//! delay, so the figures are Rivet's, npm's and Vite's time, not a model's.
//!
//! For each fixture it prints the seconds from the first failure the
//! session shows (the failed action's end, or the build result of a compile
//! error) to the preview answering 200 with the app (the page with its
//! `root` element and `src/App.jsx` compiling), and the tokens the
//! automatic attempt used (the usage the provider reported for its answer).
//!
//! `cargo bench --features ssr --bench fix_loop` (needs bwrap and npm's
//! registry; not part of the test suite).

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[allow(dead_code)]
#[path = "../tests/it/support.rs"]
mod support;

use std::net::{Ipv4Addr, SocketAddr};
use std::path::Path;
use std::time::{Duration, Instant};

use futures::StreamExt;
use rivet::runtime::session::{ActionStatus, Envelope, LineDecoder, Role, SessionState};
use rivet::server::llm::mock::{MockConfig, MockServer, load_dir};
use tokio::sync::mpsc;

/// Long enough for `npm install` from the registry and a Vite start.
const TIMEOUT: Duration = Duration::from_secs(300);

struct Fixture {
    name: &'static str,
    /// What the person types.
    message: &'static str,
}

const FIXTURES: &[Fixture] = &[
    Fixture {
        name: "broken-dep → fix-dep",
        message: "broken dep",
    },
    Fixture {
        name: "broken-syntax → fix-syntax",
        message: "broken syntax",
    },
];

/// What one run measured.
struct Figures {
    seconds: f64,
    tokens: u32,
    attempts: usize,
}

struct Ide {
    _child: tokio::process::Child,
    _data: tempfile::TempDir,
    addr: SocketAddr,
    http: reqwest::Client,
}

impl Ide {
    async fn start(base_url: &str) -> Ide {
        let data = tempfile::tempdir().unwrap();
        let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_rivet"));
        support::serve_in(&mut command, data.path());
        command
            .env("RIVET_LLM_PROVIDER", "custom")
            .env("RIVET_LLM_BASE_URL", base_url)
            .env("RIVET_LLM_MODEL", "rivet-replay");
        let (child, addr) = support::spawn_serve(command).await;
        Ide {
            _child: child,
            _data: data,
            addr,
            http: support::client().build().unwrap(),
        }
    }

    fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    async fn new_project(&self) -> String {
        let response = self.http.post(self.url("/new")).send().await.unwrap();
        let location = response.headers()["location"].to_str().unwrap().to_owned();
        location.trim_start_matches("/p/").to_owned()
    }

    async fn send(&self, project: &str, text: &str) {
        let response = self
            .http
            .post(self.url("/api/send_message"))
            .form(&[("project", project), ("text", text)])
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 200);
    }

    /// The project's events, as the browser reads them.
    async fn feed(&self, project: &str) -> mpsc::UnboundedReceiver<Envelope> {
        let response = self
            .http
            .post(self.url("/api/session_feed"))
            .form(&[("project", project)])
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 200);
        let (tx, rx) = mpsc::unbounded_channel();
        tokio::spawn(async move {
            let mut lines = LineDecoder::default();
            let mut body = response.bytes_stream();
            while let Some(Ok(chunk)) = body.next().await {
                for line in lines.push(&chunk) {
                    let envelope: Envelope = serde_json::from_slice(&line).unwrap();
                    if tx.send(envelope).is_err() {
                        return;
                    }
                }
            }
        });
        rx
    }

    /// Whether the preview at `url` shows the app: the page and its module.
    async fn works(&self, url: &str) -> bool {
        let page = self.http.get(url).send().await;
        let Ok(page) = page else { return false };
        if page.status() != 200
            || !page
                .text()
                .await
                .unwrap_or_default()
                .contains("id=\"root\"")
        {
            return false;
        }
        let module = self.http.get(format!("{url}src/App.jsx")).send().await;
        module.is_ok_and(|m| m.status() == 200)
    }
}

fn failed(state: &SessionState) -> bool {
    !state.build_results.is_empty()
        || state
            .artifacts
            .iter()
            .flat_map(|a| &a.actions)
            .any(|e| matches!(e.status, ActionStatus::Failed { .. }))
}

fn automatic(state: &SessionState) -> Option<usize> {
    state.messages.iter().position(|m| m.automatic.is_some())
}

/// Tokens of the answers after the first automatic message.
fn attempt_tokens(state: &SessionState) -> u32 {
    let Some(first) = automatic(state) else {
        return 0;
    };
    state.messages[first..]
        .iter()
        .filter(|m| m.role == Role::Assistant)
        .filter_map(|m| m.usage.as_ref())
        .map(|u| u.total_tokens)
        .sum()
}

/// Follows the feed until the automatic attempt's answer has ended (its
/// usage comes with its end).
async fn attempt_over(
    feed: &mut mpsc::UnboundedReceiver<Envelope>,
    state: &mut SessionState,
    deadline: Instant,
) {
    let answered = |s: &SessionState| {
        automatic(s).is_some_and(|first| {
            s.messages[first..]
                .iter()
                .any(|m| m.role == Role::Assistant && m.status.is_final())
        })
    };
    while !answered(state) {
        let left = deadline.saturating_duration_since(Instant::now());
        let envelope = tokio::time::timeout(left, feed.recv())
            .await
            .expect("the attempt's answer ends")
            .expect("the feed goes on");
        state.apply(&envelope.event);
    }
}

async fn measure(base_url: &str, fixture: &Fixture) -> Figures {
    let ide = Ide::start(base_url).await;
    let project = ide.new_project().await;
    let mut feed = ide.feed(&project).await;
    let mut state = SessionState::default();
    ide.send(&project, fixture.message).await;
    let deadline = Instant::now() + TIMEOUT;
    let mut first_failure: Option<Instant> = None;
    let mut loaded = false;
    loop {
        assert!(Instant::now() < deadline, "{}: timed out", fixture.name);
        while let Ok(envelope) = feed.try_recv() {
            state.apply(&envelope.event);
        }
        if first_failure.is_none() && failed(&state) {
            first_failure = Some(Instant::now());
        }
        let url = state.previews.iter().find_map(|p| p.url.clone());
        if let Some(url) = url {
            // The page loads its module as a browser would, which makes Vite
            // compile it (and report the error of a broken one).
            if !loaded {
                loaded = true;
                let _ = ide.http.get(format!("{url}src/App.jsx")).send().await;
            }
            if let Some(failure) = first_failure
                && automatic(&state).is_some()
                && ide.works(&url).await
            {
                let seconds = failure.elapsed().as_secs_f64();
                attempt_over(&mut feed, &mut state, deadline).await;
                return Figures {
                    seconds,
                    tokens: attempt_tokens(&state),
                    attempts: state
                        .messages
                        .iter()
                        .filter(|m| m.automatic.is_some())
                        .count(),
                };
            }
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

fn main() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/transcripts");
        let config = MockConfig {
            transcripts: load_dir(&dir).unwrap(),
            chunk_size: 64,
            chunk_delay: Duration::ZERO,
            ..MockConfig::demo()
        };
        let mock = MockServer::start(config, SocketAddr::from((Ipv4Addr::LOCALHOST, 0)))
            .await
            .unwrap();
        println!("| fixture | first failure → working preview | tokens of the automatic attempt | attempts |");
        println!("|---|---:|---:|---:|");
        for fixture in FIXTURES {
            let figures = measure(&mock.base_url(), fixture).await;
            println!(
                "| {} | {:.2} s | {} | {} |",
                fixture.name, figures.seconds, figures.tokens, figures.attempts
            );
        }
    });
}
