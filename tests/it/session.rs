//! Whole answers end to end without a browser: the real `rivet serve`, the
//! scripted provider as its own process, the bubblewrap sandbox, real npm and
//! Vite, read through the same newline-delimited feed the browser reads.
#![cfg(feature = "ssr")]

use std::net::SocketAddr;
use std::time::Duration;

use futures::StreamExt;
use rivet::runtime::session::{ActionStatus, Envelope, LineDecoder, MessageStatus, SessionState};
use serde_json::json;
use tokio::sync::mpsc;

use super::llm::Mock;

/// Long enough for `npm install` from the registry and a Vite start.
const RUN_TIMEOUT: Duration = Duration::from_secs(240);

struct Ide {
    _child: tokio::process::Child,
    _data: tempfile::TempDir,
    addr: SocketAddr,
    http: reqwest::Client,
}

impl Ide {
    async fn start(mock: &Mock) -> Ide {
        let data = tempfile::tempdir().unwrap();
        let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_rivet"));
        super::support::serve_in(&mut command, data.path());
        command
            .env("RIVET_LLM_PROVIDER", "custom")
            .env("RIVET_LLM_BASE_URL", mock.base_url())
            .env("RIVET_LLM_MODEL", "rivet-replay");
        let (child, addr) = super::support::spawn_serve(command).await;
        Ide {
            _child: child,
            _data: data,
            addr,
            http: super::support::client().build().unwrap(),
        }
    }

    fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    async fn new_project(&self) -> String {
        let response = self.http.get(self.url("/new")).send().await.unwrap();
        let location = response.headers()["location"].to_str().unwrap().to_owned();
        location.trim_start_matches("/p/").to_owned()
    }

    /// Calls a server function with form fields; returns the status and body.
    async fn call(&self, function: &str, fields: &[(&str, &str)]) -> (u16, String) {
        let response = self
            .http
            .post(self.url(&format!("/api/{function}")))
            .form(fields)
            .send()
            .await
            .unwrap();
        (response.status().as_u16(), response.text().await.unwrap())
    }

    async fn send(&self, project: &str, text: &str) {
        let (status, body) = self
            .call("send_message", &[("project", project), ("text", text)])
            .await;
        assert_eq!(status, 200, "{body}");
    }

    /// Follows the project's feed, folding events into a state.
    async fn feed(&self, project: &str) -> Feed {
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
        Feed {
            rx,
            state: SessionState::default(),
            seq: 0,
        }
    }
}

struct Feed {
    rx: mpsc::UnboundedReceiver<Envelope>,
    state: SessionState,
    seq: u64,
}

impl Feed {
    /// Applies events until `done` holds for the state.
    async fn until(&mut self, what: &str, done: impl Fn(&SessionState) -> bool) {
        let deadline = tokio::time::Instant::now() + RUN_TIMEOUT;
        while !done(&self.state) {
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
}

/// Each action as `kind status`, for failure messages.
fn summary(state: &SessionState) -> Vec<String> {
    let mut lines: Vec<String> = state
        .artifacts
        .iter()
        .flat_map(|a| &a.actions)
        .map(|e| format!("{} {:?}", e.kind.type_name(), e.status))
        .collect();
    lines.extend(
        state
            .messages
            .iter()
            .map(|m| format!("{} {:?}", m.id, m.status)),
    );
    lines.extend(
        state
            .alerts
            .iter()
            .map(|a| format!("alert {}: {}", a.title, a.detail)),
    );
    lines
}

/// The status of the first action of `kind` in the latest answer's artifacts.
fn status_of(state: &SessionState, kind: &str) -> Option<ActionStatus> {
    let last = state.messages.last()?.id.clone();
    state
        .artifacts
        .iter()
        .filter(|a| a.message_id == last)
        .flat_map(|a| &a.actions)
        .find(|e| e.kind.type_name() == kind)
        .map(|e| e.status.clone())
}

fn answered(state: &SessionState) -> bool {
    state.messages.len() >= 2 && state.messages.last().is_some_and(|m| m.status.is_final())
}

#[tokio::test(flavor = "multi_thread")]
async fn a_todo_app_is_built_served_and_edited() {
    let mock = Mock::start(&["--chunk-size", "64"]);
    let ide = Ide::start(&mock).await;
    let project = ide.new_project().await;
    let mut feed = ide.feed(&project).await;
    ide.send(&project, "build a todo app").await;

    feed.until("the dev server", |s| {
        status_of(s, "start") == Some(ActionStatus::Complete) && !s.previews.is_empty()
    })
    .await;
    let state = &feed.state;
    assert_eq!(state.messages[1].status, MessageStatus::Complete);
    assert!(state.files.contains("src/App.jsx"), "{:?}", state.files);
    assert!(state.changed_by_last_answer.contains("package.json"));
    let actions: Vec<_> = state.artifacts[0]
        .actions
        .iter()
        .map(|a| a.status.clone())
        .collect();
    assert!(
        actions.iter().all(|s| *s == ActionStatus::Complete),
        "{actions:?}"
    );
    assert!(
        state.terminal.contains("npm install"),
        "the terminal shows the command"
    );
    assert!(state.alerts.is_empty(), "{:?}", state.alerts);

    // The preview is served through the IDE from an origin of its own: the
    // IDE's host (so the same site) on another port.
    let preview = state.previews[0].clone();
    assert_eq!(preview.port, 5173);
    let ide_origin = format!("http://{}/", ide.addr);
    assert!(
        preview
            .url
            .starts_with(&format!("http://{}:", ide.addr.ip())),
        "{}",
        preview.url
    );
    assert_ne!(preview.url, ide_origin);
    let page = ide.http.get(&preview.url).send().await.unwrap();
    assert_eq!(page.status(), 200);
    assert_eq!(
        page.headers()["cross-origin-resource-policy"],
        "cross-origin"
    );
    assert!(page.text().await.unwrap().contains("<div id=\"root\">"));
    // A page served from the preview's origin cannot drive the IDE.
    let forged = ide
        .http
        .post(ide.url("/api/send_message"))
        .header("origin", preview.url.trim_end_matches('/'))
        .form(&[("project", project.as_str()), ("text", "delete everything")])
        .send()
        .await
        .unwrap();
    assert_eq!(forged.status(), 403, "{}", forged.text().await.unwrap());

    // An edit by hand reaches the model with the next message, as a diff.
    let (status, html) = ide
        .call(
            "read_file",
            &[("project", &project), ("path", "index.html")],
        )
        .await;
    assert_eq!(status, 200);
    let html: String = serde_json::from_str(&html).unwrap();
    let retitled = html.replace("<title>Todo App</title>", "<title>My Todos</title>");
    assert_ne!(retitled, html);
    let (status, _) = ide
        .call(
            "write_file",
            &[
                ("project", &project),
                ("path", "index.html"),
                ("content", &retitled),
            ],
        )
        .await;
    assert_eq!(status, 200);

    // The follow-up edit applies to the file the first answer wrote.
    ide.send(&project, "add a clear completed button").await;
    feed.until("the edit", |s| {
        s.messages.len() == 4
            && status_of(s, "edit").is_some_and(|st| !st.is_active())
            && answered(s)
    })
    .await;
    assert_eq!(
        status_of(&feed.state, "edit"),
        Some(ActionStatus::Complete),
        "{:#?}",
        summary(&feed.state)
    );
    let (status, app) = ide
        .call(
            "read_file",
            &[("project", &project), ("path", "src/App.jsx")],
        )
        .await;
    assert_eq!(status, 200);
    assert!(app.contains("Clear completed"), "{app}");
    let asked = mock.log().await;
    let follow_up = &asked.last().unwrap()["system"];
    let system = follow_up.as_str().unwrap();
    assert!(
        system.contains("-    <title>Todo App</title>\n+    <title>My Todos</title>"),
        "{system}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_misspelt_dependency_fails_the_install_with_npms_404() {
    let mock = Mock::start(&["--chunk-size", "64"]);
    let ide = Ide::start(&mock).await;
    let project = ide.new_project().await;
    // The run belongs to the project, not to a tab: the feed opens afterwards.
    ide.send(&project, "broken dep").await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let mut feed = ide.feed(&project).await;
    feed.until("the install to fail", |s| {
        matches!(status_of(s, "shell"), Some(ActionStatus::Failed { .. }))
    })
    .await;
    let Some(ActionStatus::Failed { reason }) = status_of(&feed.state, "shell") else {
        unreachable!()
    };
    assert!(reason.contains("npm install"), "{reason}");
    assert!(reason.contains("404"), "{reason}");
    assert!(
        feed.state.alerts.iter().any(|a| a.detail.contains("404")),
        "{:?}",
        feed.state.alerts
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn stop_aborts_the_running_install_and_everything_after_it() {
    let mock = Mock::start(&["--chunk-size", "64"]);
    let ide = Ide::start(&mock).await;
    let project = ide.new_project().await;
    let mut feed = ide.feed(&project).await;
    ide.send(&project, "build a todo app").await;
    feed.until("npm install to run", |s| {
        status_of(s, "shell") == Some(ActionStatus::Running)
    })
    .await;
    let (status, body) = ide.call("stop_run", &[("project", &project)]).await;
    assert_eq!(status, 200, "{body}");
    feed.until("the run to end", |s| !s.is_busy()).await;
    assert_eq!(
        status_of(&feed.state, "shell"),
        Some(ActionStatus::Aborted),
        "{:#?}",
        summary(&feed.state)
    );
    assert_eq!(status_of(&feed.state, "start"), Some(ActionStatus::Aborted));
    assert!(feed.state.previews.is_empty());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_rejected_key_fails_the_answer_with_a_clear_message() {
    let mock = Mock::start(&[]);
    mock.faults(json!({"status": 401})).await;
    let ide = Ide::start(&mock).await;
    let project = ide.new_project().await;
    let mut feed = ide.feed(&project).await;
    ide.send(&project, "build a todo app").await;
    feed.until("the answer to fail", answered).await;
    let MessageStatus::Failed { error } = &feed.state.messages[1].status else {
        panic!("{:?}", feed.state.messages[1].status)
    };
    assert!(error.contains("was rejected (401)"), "{error}");
    // Nothing was lost: the message can be asked again and succeeds.
    let (status, body) = ide
        .call(
            "retry_answer",
            &[
                ("project", &project),
                ("message_id", &feed.state.messages[1].id),
            ],
        )
        .await;
    assert_eq!(status, 200, "{body}");
    feed.until("the retried answer", |s| {
        s.messages.len() == 3 && answered(s)
    })
    .await;
    assert_eq!(feed.state.messages[2].status, MessageStatus::Complete);
}

#[tokio::test(flavor = "multi_thread")]
async fn requests_from_other_sites_are_refused() {
    let mock = Mock::start(&[]);
    let ide = Ide::start(&mock).await;
    let project = ide.new_project().await;
    let response = ide
        .http
        .post(ide.url("/api/send_message"))
        .header("sec-fetch-site", "cross-site")
        .form(&[("project", project.as_str()), ("text", "rm -rf everything")])
        .send()
        .await
        .unwrap();
    assert!(!response.status().is_success());
    assert!(response.text().await.unwrap().contains("refused"));
}
