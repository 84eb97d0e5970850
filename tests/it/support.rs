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
        loop {
            let line = lines
                .next_line()
                .await
                .unwrap()
                .expect("rivet serve exited");
            if let Some(rest) = line.split("listening on http://").nth(1) {
                return rest.split_whitespace().next().unwrap().parse().unwrap();
            }
        }
    })
    .await
    .unwrap();
    (child, addr, lines)
}
