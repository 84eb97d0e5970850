//! Interactive terminals: `bash -i` on a terminal inside the project's
//! sandbox, bridged to the browser over a WebSocket.
//!
//! A terminal outlives its WebSocket: a page closed or reloaded leaves the
//! shell running, and reconnecting gets the recent output (a 256 KiB
//! scrollback) and then the live output. Several browsers may watch one
//! terminal at once. Closing the shell's tab in the IDE ends it.
//!
//! Frames: binary frames carry terminal bytes both ways. Text frames carry
//! JSON: from the browser `{"type":"resize","cols":120,"rows":40}`,
//! `{"type":"input","data":"ls\r"}` or `{"type":"close"}` (the tab was
//! closed: end the shell); to the browser `{"type":"exit","code":0}` when the
//! shell ends, or `{"type":"error","message":"…"}`.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use axum::extract::ws::rejection::WebSocketUpgradeRejection;
use axum::extract::ws::{Message, WebSocket, WebSocketUpgrade};
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use futures::{SinkExt, StreamExt};
use serde::Deserialize;
use tokio::sync::{broadcast, watch};

use super::SandboxManager;
use super::process::SandboxProcess;
use crate::runtime::host::{ExitStatus, Process, PtySize, RuntimeError};
use crate::runtime::project::ProjectId;
use crate::server::projects::ProjectError;
use crate::server::state::AppState;

/// Output kept for a reconnecting browser.
pub const SCROLLBACK_BYTES: usize = 256 * 1024;

type Key = (ProjectId, String);

/// The terminals of every project.
#[derive(Default)]
pub struct Terminals {
    shells: tokio::sync::Mutex<HashMap<Key, Arc<Shell>>>,
}

/// One terminal's shell: its process and the output kept for the viewers
/// that reconnect.
pub struct Shell {
    process: SandboxProcess,
    /// The recent output; appended under this lock together with the
    /// broadcast, so a new viewer's snapshot and subscription meet exactly.
    scrollback: Mutex<(Vec<u8>, broadcast::Sender<Bytes>)>,
    ended: watch::Receiver<Option<ExitStatus>>,
}

impl Shell {
    /// The scrollback so far and the output from now on.
    fn attach(&self) -> (Vec<u8>, broadcast::Receiver<Bytes>) {
        let guard = self.scrollback.lock().unwrap_or_else(|e| e.into_inner());
        (guard.0.clone(), guard.1.subscribe())
    }

    fn record(&self, chunk: Vec<u8>) {
        let mut guard = self.scrollback.lock().unwrap_or_else(|e| e.into_inner());
        let (scrollback, live) = &mut *guard;
        scrollback.extend_from_slice(&chunk);
        let excess = scrollback.len().saturating_sub(SCROLLBACK_BYTES);
        scrollback.drain(..excess);
        let _ = live.send(Bytes::from(chunk));
    }
}

impl Terminals {
    /// The terminal `name` of a project, with a new shell if it has none.
    async fn open(
        &self,
        manager: &Arc<SandboxManager>,
        project: &ProjectId,
        name: &str,
        size: PtySize,
    ) -> Result<Arc<Shell>, RuntimeError> {
        let key = (project.clone(), name.to_owned());
        let mut shells = self.shells.lock().await;
        if let Some(shell) = shells.get(&key).filter(|s| s.ended.borrow().is_none()) {
            return Ok(shell.clone());
        }
        let runtime = manager.project_runtime(project);
        let argv = vec!["/bin/bash".to_owned(), "-i".to_owned()];
        let process = runtime.spawn_argv(argv, Some(size)).await?;
        let output = process.take_output();
        let (ended_tx, ended) = watch::channel(None);
        let shell = Arc::new(Shell {
            process,
            scrollback: Mutex::new((Vec::new(), broadcast::channel(1024).0)),
            ended,
        });
        shells.insert(key.clone(), shell.clone());
        let manager = manager.clone();
        let pumped = shell.clone();
        tokio::spawn(async move {
            if let Some(mut output) = output {
                while let Some(chunk) = output.next().await {
                    pumped.record(chunk);
                }
            }
            let status = pumped.process.wait().await;
            ended_tx.send_replace(Some(status));
            let mut shells = manager.terminals.shells.lock().await;
            if shells.get(&key).is_some_and(|s| Arc::ptr_eq(s, &pumped)) {
                shells.remove(&key);
            }
        });
        Ok(shell)
    }

    /// Ends `shell` (terminal `name`) and forgets it at once,
    /// so the next tab of that name starts a new shell even while this one
    /// is still exiting.
    async fn close(&self, project: &ProjectId, name: &str, shell: &Arc<Shell>) {
        let key = (project.clone(), name.to_owned());
        {
            let mut shells = self.shells.lock().await;
            if shells.get(&key).is_some_and(|s| Arc::ptr_eq(s, shell)) {
                shells.remove(&key);
            }
        }
        let _ = shell.process.kill().await;
    }

    /// Forgets a project's terminals; their shells end with its sandbox.
    pub async fn close_project(&self, project: &ProjectId) {
        self.shells.lock().await.retain(|(p, _), _| p != project);
    }
}

#[derive(Debug, Deserialize)]
pub struct SizeQuery {
    cols: Option<u16>,
    rows: Option<u16>,
}

#[derive(Debug, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase")]
enum Control {
    Input {
        data: String,
    },
    Resize {
        cols: u16,
        rows: u16,
    },
    /// The tab was closed: the shell ends (its exit is sent as usual).
    Close,
}

fn valid_name(name: &str) -> bool {
    (1..=32).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'_')
}

/// `GET /api/projects/{project}/terminals/{terminal}/ws?cols=80&rows=24`.
pub async fn websocket(
    State(state): State<AppState>,
    Path((project, name)): Path<(String, String)>,
    Query(size): Query<SizeQuery>,
    upgrade: Result<WebSocketUpgrade, WebSocketUpgradeRejection>,
) -> Response {
    let Ok(project) = ProjectId::parse(&project) else {
        return (StatusCode::BAD_REQUEST, "invalid project id").into_response();
    };
    if !valid_name(&name) {
        return (
            StatusCode::BAD_REQUEST,
            "invalid terminal name: use 1 to 32 of a-z, 0-9, - and _",
        )
            .into_response();
    }
    // WebSockets are exempt from the same-origin policy: `access::guard`
    // has checked this handshake's Origin (a preview or another site would
    // otherwise open a shell) and its token.
    // A terminal starts the project's sandbox: only for a project that
    // exists, or anyone could start sandboxes nobody sees, until the IDE exits.
    match state.store.project(project.as_str()).await {
        Ok(Some(_)) => {}
        Ok(None) => {
            let e = ProjectError::NotFound(project.clone());
            return (StatusCode::NOT_FOUND, e.to_string()).into_response();
        }
        Err(e) => {
            tracing::error!("{e}");
            return (StatusCode::INTERNAL_SERVER_ERROR, e.to_string()).into_response();
        }
    }
    let upgrade = match upgrade {
        Ok(upgrade) => upgrade,
        Err(rejection) => return rejection.into_response(),
    };
    let size = PtySize {
        cols: size.cols.filter(|c| *c > 0).unwrap_or(80),
        rows: size.rows.filter(|r| *r > 0).unwrap_or(24),
    };
    let manager = state.sandbox.clone();
    upgrade.on_upgrade(move |socket| bridge(socket, manager, project, name, size))
}

fn event(json: serde_json::Value) -> Message {
    Message::Text(json.to_string().into())
}

async fn bridge(
    socket: WebSocket,
    manager: Arc<SandboxManager>,
    project: ProjectId,
    name: String,
    size: PtySize,
) {
    let (mut sink, mut incoming) = socket.split();
    let shell = match manager
        .terminals
        .open(&manager, &project, &name, size)
        .await
    {
        Ok(shell) => shell,
        Err(e) => {
            let _ = sink
                .send(event(
                    serde_json::json!({"type": "error", "message": e.to_string()}),
                ))
                .await;
            let _ = sink.close().await;
            return;
        }
    };
    let _ = shell.process.resize(size).await;
    let (scrollback, mut live) = shell.attach();
    if !scrollback.is_empty() && sink.send(Message::Binary(scrollback.into())).await.is_err() {
        return;
    }
    let mut ended = shell.ended.clone();
    loop {
        tokio::select! {
            chunk = live.recv() => match chunk {
                Ok(bytes) => {
                    if sink.send(Message::Binary(bytes)).await.is_err() {
                        return;
                    }
                }
                // A slow viewer skips what it missed; the shell never waits for it.
                Err(broadcast::error::RecvError::Lagged(_)) => {}
                Err(broadcast::error::RecvError::Closed) => {}
            },
            code = async { ended.wait_for(Option::is_some).await.ok().and_then(|s| s.as_ref().and_then(|s| s.code)) } => {
                // Output still queued goes out before the exit notice.
                while let Ok(bytes) = live.try_recv() {
                    let _ = sink.send(Message::Binary(bytes)).await;
                }
                let _ = sink.send(event(serde_json::json!({"type": "exit", "code": code}))).await;
                let _ = sink.close().await;
                return;
            }
            message = incoming.next() => {
                let Some(Ok(message)) = message else { return };
                let input = match message {
                    Message::Binary(data) => Some(data.to_vec()),
                    Message::Text(text) => match serde_json::from_str::<Control>(&text) {
                        Ok(Control::Input { data }) => Some(data.into_bytes()),
                        Ok(Control::Resize { cols, rows }) => {
                            if cols > 0 && rows > 0 {
                                let _ = shell.process.resize(PtySize { cols, rows }).await;
                            }
                            None
                        }
                        Ok(Control::Close) => {
                            manager.terminals.close(&project, &name, &shell).await;
                            None
                        }
                        Err(_) => None,
                    },
                    Message::Close(_) => return,
                    Message::Ping(_) | Message::Pong(_) => None,
                };
                if let Some(input) = input
                    && shell.process.write_stdin(&input).await.is_err()
                {
                    return;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn terminal_names_are_short_and_plain() {
        for (name, ok) in [
            ("1", true),
            ("main", true),
            ("dev-server_2", true),
            ("", false),
            ("A", false),
            ("a/b", false),
        ] {
            assert_eq!(valid_name(name), ok, "{name:?}");
        }
        assert!(!valid_name(&"a".repeat(33)));
    }

    #[test]
    fn control_messages_parse() {
        let resize: Control =
            serde_json::from_str(r#"{"type":"resize","cols":120,"rows":40}"#).unwrap();
        assert!(matches!(
            resize,
            Control::Resize {
                cols: 120,
                rows: 40
            }
        ));
        let input: Control = serde_json::from_str(r#"{"type":"input","data":"ls\r"}"#).unwrap();
        assert!(matches!(input, Control::Input { data } if data == "ls\r"));
    }

    /// A state whose data directory lives as long as the returned guard.
    fn state() -> (AppState, tempfile::TempDir) {
        crate::server::state::for_tests(|config| {
            config.server.token = "terminal-test-token-0123".to_owned();
        })
    }

    fn upgrade_request(project: &str) -> axum::http::Request<axum::body::Body> {
        axum::http::Request::get(format!("/api/projects/{project}/terminals/main/ws"))
            .header("host", "127.0.0.1:3000")
            .header("origin", "http://127.0.0.1:3000")
            .header("authorization", "Bearer terminal-test-token-0123")
            .header("connection", "upgrade")
            .header("upgrade", "websocket")
            .header("sec-websocket-version", "13")
            .header("sec-websocket-key", "dGhlIHNhbXBsZSBub25jZQ==")
            .body(axum::body::Body::empty())
            .unwrap()
    }

    #[tokio::test]
    async fn a_terminal_for_a_project_that_does_not_exist_starts_no_sandbox() {
        use tower::ServiceExt;
        let (state, _data) = state();
        let app = crate::server::http::app(state.clone());
        let response = app.oneshot(upgrade_request("ghost")).await.unwrap();
        assert_eq!(response.status(), StatusCode::NOT_FOUND);
        let ghost = ProjectId::parse("ghost").unwrap();
        assert_eq!(state.sandbox.sandbox_pid(&ghost).await, None);
        assert!(!state.projects.dir(&ghost).exists());
        // A project that exists gets past the check (to the upgrade, which
        // needs a real connection).
        let real = crate::server::state::project_for_tests(&state, "real").await;
        let app = crate::server::http::app(state.clone());
        let response = app
            .oneshot(upgrade_request(real.id.as_str()))
            .await
            .unwrap();
        assert_ne!(response.status(), StatusCode::NOT_FOUND);
    }
}
