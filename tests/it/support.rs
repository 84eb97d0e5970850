//! What several test modules need: `rivet serve` as a real process.

use std::net::SocketAddr;
use std::time::Duration;

use tokio::io::AsyncBufReadExt;

/// Spawns `command` (a prepared `rivet serve`) and waits until it logs the
/// address it listens on. Its log is drained so it never blocks on a full pipe.
pub async fn spawn_serve(
    mut command: tokio::process::Command,
) -> (tokio::process::Child, SocketAddr) {
    command
        .env("NO_COLOR", "1")
        .env("RUST_LOG", "warn,rivet=info")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true);
    let mut child = command.spawn().unwrap();
    let mut lines = tokio::io::BufReader::new(child.stderr.take().unwrap()).lines();
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
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
    (child, addr)
}
