//! `rivet serve` as a process: how it stops.

use std::time::Duration;

use super::support::{serve_in, spawn_serve_with_log};

/// Once whoever read its log has gone, every log line fails to write; the
/// server must still stop on SIGTERM rather than keep serving.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_stops_the_server_after_its_log_reader_has_gone() {
    let data = tempfile::tempdir().unwrap();
    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_rivet"));
    serve_in(&mut command, data.path());
    let (mut child, addr, log) = spawn_serve_with_log(command).await;
    drop(log);

    let pid = nix::unistd::Pid::from_raw(child.id().unwrap() as i32);
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM).unwrap();
    let status = tokio::time::timeout(Duration::from_secs(10), child.wait())
        .await
        .expect("rivet serve still runs 10 s after SIGTERM")
        .unwrap();
    assert!(status.success(), "{status:?}");
    assert!(
        tokio::net::TcpStream::connect(addr).await.is_err(),
        "{addr} still accepts connections"
    );
}
