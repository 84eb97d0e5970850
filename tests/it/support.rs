//! What several test modules need: `rivet serve` as a real process.

use std::net::SocketAddr;
use std::path::Path;
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, BufReader, Lines};
use tokio::process::{Child, ChildStderr};

/// The access token every test IDE is given.
pub const TOKEN: &str = "rivet-test-token-0123456789abcdef";

/// The `Authorization` header value that carries [`TOKEN`].
pub fn bearer() -> String {
    format!("Bearer {TOKEN}")
}

/// An HTTP client that logs in with [`TOKEN`] on every request and follows
/// no redirects.
pub fn client() -> reqwest::ClientBuilder {
    let mut headers = reqwest::header::HeaderMap::new();
    headers.insert(
        reqwest::header::AUTHORIZATION,
        reqwest::header::HeaderValue::from_str(&bearer()).unwrap(),
    );
    reqwest::Client::builder()
        .default_headers(headers)
        .redirect(reqwest::redirect::Policy::none())
}

/// A loopback port that refuses every connection for as long as this value
/// lives: its socket is bound but never listens, so no other test can take
/// the port and start answering on it.
pub struct ClosedPort(#[allow(dead_code)] tokio::net::TcpSocket, SocketAddr);

impl ClosedPort {
    pub fn new() -> Self {
        let socket = tokio::net::TcpSocket::new_v4().unwrap();
        socket.bind("127.0.0.1:0".parse().unwrap()).unwrap();
        let addr = socket.local_addr().unwrap();
        Self(socket, addr)
    }

    pub fn addr(&self) -> SocketAddr {
        self.1
    }
}

/// The configuration of an in-process test IDE: its data directory and
/// [`TOKEN`].
pub fn config(data_dir: &Path) -> rivet::server::config::Config {
    let mut config = rivet::server::config::Config::defaults();
    config.server.data_dir = data_dir.to_owned();
    config.server.token = TOKEN.to_owned();
    config
}

/// Makes `command` (the `rivet` binary, maybe behind a wrapper) a `rivet
/// serve` on an ephemeral loopback port, keeping everything in `data_dir`
/// and logging in with [`TOKEN`].
pub fn serve_in(command: &mut tokio::process::Command, data_dir: &Path) {
    command
        .arg("serve")
        .env("RIVET_SERVER_TOKEN", TOKEN)
        .current_dir(data_dir)
        .env("RIVET_SERVER_ADDR", "127.0.0.1:0")
        .env("RIVET_SERVER_DATA_DIR", data_dir)
        .env("LEPTOS_OUTPUT_NAME", "rivet")
        .env("LEPTOS_SITE_ROOT", data_dir.join("site"))
        .env("LEPTOS_SITE_PKG_DIR", "pkg");
}

/// Spawns `command` (a prepared `rivet serve`) and waits until it logs the
/// address it listens on. Its log is drained so it never blocks on a full pipe.
pub async fn spawn_serve(command: tokio::process::Command) -> (Child, SocketAddr) {
    let (child, addr, mut log) = spawn_serve_with_log(command).await;
    tokio::spawn(async move { while let Ok(Some(_)) = log.next_line().await {} });
    (child, addr)
}

/// Like [`spawn_serve`], handing back the rest of the log to the caller.
pub async fn spawn_serve_with_log(
    mut command: tokio::process::Command,
) -> (Child, SocketAddr, Lines<BufReader<ChildStderr>>) {
    command
        .env("NO_COLOR", "1")
        .env("RUST_LOG", "warn,rivet=info")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true);
    let mut child = command.spawn().unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let addr = tokio::time::timeout(Duration::from_secs(30), async {
        let mut said = String::new();
        loop {
            let Some(line) = lines.next_line().await.unwrap() else {
                panic!("rivet serve exited, saying:\n{said}");
            };
            said.push_str(&line);
            said.push('\n');
            if let Some(rest) = line.split("listening on http://").nth(1) {
                return rest.split_whitespace().next().unwrap().parse().unwrap();
            }
        }
    })
    .await
    .unwrap();
    (child, addr, lines)
}

/// `rivet serve` as a real process with a data directory of its own and an
/// HTTP client that logs in with [`TOKEN`]: the one harness of the tests
/// that need the whole server. Modules wrap it for their own helpers.
pub struct Ide {
    child: Child,
    data: tempfile::TempDir,
    pub addr: SocketAddr,
    pub http: reqwest::Client,
}

/// How an [`Ide`] starts: `Ide::on(data)`, then its configuration.
pub struct Start {
    command: tokio::process::Command,
    data: tempfile::TempDir,
}

impl Ide {
    /// An IDE on a new data directory.
    pub fn fresh() -> Start {
        Ide::on(tempfile::tempdir().unwrap())
    }

    /// An IDE on the data directory `data` (one an earlier IDE left, say).
    pub fn on(data: tempfile::TempDir) -> Start {
        let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_rivet"));
        serve_in(&mut command, data.path());
        Start { command, data }
    }

    /// `http://<addr><path>`.
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    /// `http://<addr>/api/v1<path>`.
    pub fn api(&self, path: &str) -> String {
        self.url(&format!("/api/v1{path}"))
    }

    /// Sends `request`; its status and JSON body (null when not JSON).
    pub async fn json(
        &self,
        request: reqwest::RequestBuilder,
    ) -> (reqwest::StatusCode, serde_json::Value) {
        let response = request.send().await.unwrap();
        let status = response.status();
        let body = response.json().await.unwrap_or(serde_json::Value::Null);
        (status, body)
    }

    /// A new project named `name`, through `POST /api/v1/projects`; its id.
    pub async fn create(&self, name: &str) -> String {
        let request = self.http.post(self.api("/projects"));
        let (status, body) = self
            .json(request.json(&serde_json::json!({ "name": name })))
            .await;
        assert_eq!(status, reqwest::StatusCode::CREATED, "{body}");
        body["id"].as_str().unwrap().to_owned()
    }

    /// A new project as the browser makes one (`POST /new`); its id.
    pub async fn new_project(&self) -> String {
        let response = self.http.post(self.url("/new")).send().await.unwrap();
        let location = response.headers()["location"].to_str().unwrap();
        location.trim_start_matches("/p/").to_owned()
    }

    /// Calls a server function with form fields; its status and body.
    pub async fn call(&self, function: &str, fields: &[(&str, &str)]) -> (u16, String) {
        let url = self.url(&format!("/api/{function}"));
        let response = self.http.post(url).form(fields).send().await.unwrap();
        (response.status().as_u16(), response.text().await.unwrap())
    }

    /// Sends the person's message `text` to `project`.
    pub async fn send(&self, project: &str, text: &str) {
        let (status, body) = self
            .call("send_message", &[("project", project), ("text", text)])
            .await;
        assert_eq!(status, 200, "{body}");
    }

    /// Follows the project's feed, as the browser does.
    pub async fn feed(&self, project: &str) -> Feed {
        let response = self
            .http
            .post(self.url("/api/session_feed"))
            .form(&[("project", project)])
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 200);
        Feed::reading(response)
    }

    pub fn data_dir(&self) -> &Path {
        self.data.path()
    }

    /// The project's folder in the data directory (its `workspace`, its
    /// `checkpoints.git`).
    pub fn project_dir(&self, project: &str) -> std::path::PathBuf {
        self.data_dir().join("projects").join(project)
    }

    pub fn pid(&self) -> u32 {
        self.child.id().unwrap()
    }

    /// Kills `rivet serve` with SIGKILL (no shutdown of any kind) and hands
    /// back its data directory.
    pub async fn kill(mut self) -> tempfile::TempDir {
        self.child.start_kill().unwrap();
        self.child.wait().await.unwrap();
        self.data
    }
}

impl Start {
    /// Answers come from the scripted provider at `base_url`.
    pub fn provider(mut self, base_url: &str) -> Start {
        self.command
            .env("RIVET_LLM_PROVIDER", "custom")
            .env("RIVET_LLM_BASE_URL", base_url)
            .env("RIVET_LLM_MODEL", "rivet-replay");
        self
    }

    /// One more environment (configuration) variable.
    pub fn env(mut self, key: &str, value: impl AsRef<std::ffi::OsStr>) -> Start {
        self.command.env(key, value);
        self
    }

    pub fn envs<K: AsRef<str>, V: AsRef<std::ffi::OsStr>>(
        mut self,
        vars: impl IntoIterator<Item = (K, V)>,
    ) -> Start {
        for (key, value) in vars {
            self = self.env(key.as_ref(), value);
        }
        self
    }

    pub async fn start(self) -> Ide {
        let (child, addr) = spawn_serve(self.command).await;
        Ide {
            child,
            data: self.data,
            addr,
            http: client().build().unwrap(),
        }
    }
}

/// The events of a project's feed, folded into its state as they arrive.
pub struct Feed {
    rx: tokio::sync::mpsc::UnboundedReceiver<rivet::runtime::session::Envelope>,
    pub state: rivet::runtime::session::SessionState,
    seq: u64,
}

/// Long enough for `npm install` from the registry and a Vite start.
pub const FEED_TIMEOUT: Duration = Duration::from_secs(240);

impl Feed {
    fn reading(response: reqwest::Response) -> Feed {
        use futures::StreamExt;
        let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
        tokio::spawn(async move {
            let mut lines = rivet::runtime::session::LineDecoder::default();
            let mut body = response.bytes_stream();
            while let Some(Ok(chunk)) = body.next().await {
                for line in lines.push(&chunk) {
                    let envelope = serde_json::from_slice(&line).unwrap();
                    if tx.send(envelope).is_err() {
                        return;
                    }
                }
            }
        });
        Feed {
            rx,
            state: Default::default(),
            seq: 0,
        }
    }

    /// Applies events until `done` holds for the state.
    pub async fn until(
        &mut self,
        what: &str,
        done: impl Fn(&rivet::runtime::session::SessionState) -> bool,
    ) {
        let deadline = tokio::time::Instant::now() + FEED_TIMEOUT;
        while !done(&self.state) {
            self.next(what, deadline).await;
        }
    }

    /// Applies the next event.
    pub async fn next(&mut self, what: &str, deadline: tokio::time::Instant) {
        let envelope = tokio::time::timeout_at(deadline, self.rx.recv())
            .await
            .unwrap_or_else(|_| {
                panic!(
                    "timed out waiting for {what}; state: {:#?}",
                    summary(&self.state)
                )
            })
            .expect("the feed ended");
        assert!(envelope.seq >= self.seq, "events arrive in order");
        self.seq = envelope.seq;
        self.state.apply(&envelope.event);
    }
}

/// Each action as `kind status`, each message's status and each alert, for
/// failure messages.
pub fn summary(state: &rivet::runtime::session::SessionState) -> Vec<String> {
    let actions = state.artifacts.iter().flat_map(|a| &a.actions);
    let mut lines: Vec<String> = actions
        .map(|e| format!("{} {:?}", e.kind.type_name(), e.status))
        .collect();
    let messages = state.messages.iter();
    lines.extend(messages.map(|m| format!("{} {:?}", m.id, m.status)));
    let alerts = state.alerts.iter();
    lines.extend(alerts.map(|a| format!("alert {}: {}", a.title, a.detail)));
    lines
}
