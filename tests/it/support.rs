//! What several test modules need: `rivet serve` as a real process.

use std::net::SocketAddr;
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, BufReader, Lines};
use tokio::process::{Child, ChildStderr};

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
