//! Whole answers end to end without a browser: the real `rivet serve`, the
//! scripted provider as its own process, the bubblewrap sandbox, real npm and
//! Vite, read through the same newline-delimited feed the browser reads.
#![cfg(feature = "ssr")]

use std::time::Duration;

use rivet::runtime::build_result::Stage;
use rivet::runtime::session::{ActionStatus, MessageStatus, SessionState};
use serde_json::json;

use super::llm::Mock;
use super::support::{Feed, Ide, summary};

mod context;
mod fix;
mod nudge;
mod page_error;
mod plan;
mod rules;
mod slips;
mod tool_format;
mod typed_calls;
mod window;

/// Long enough for `npm install` from the registry and a Vite start.
const RUN_TIMEOUT: Duration = super::support::FEED_TIMEOUT;

/// The session tests' starts of the one harness: answers from `mock`.
impl Ide {
    async fn start(mock: &Mock) -> Ide {
        Ide::start_with(mock, &[]).await
    }

    /// Like [`Ide::start`], with more environment (configuration) variables.
    async fn start_with(mock: &Mock, env: &[(&str, &str)]) -> Ide {
        Ide::start_in_with(mock, tempfile::tempdir().unwrap(), env).await
    }

    /// Starts `rivet serve` on the data directory `data`.
    async fn start_in(mock: &Mock, data: tempfile::TempDir) -> Ide {
        Ide::start_in_with(mock, data, &[]).await
    }

    async fn start_in_with(mock: &Mock, data: tempfile::TempDir, env: &[(&str, &str)]) -> Ide {
        Ide::on(data)
            .envs(env.iter().copied())
            .provider(&mock.base_url())
            .start()
            .await
    }
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

/// A project larger than one listing opens with its file tree marked as
/// showing part of it, where the tree once showed the first 10,000 entries
/// and only the IDE's log said the rest were missing.
#[tokio::test(flavor = "multi_thread")]
async fn a_project_larger_than_a_listing_opens_with_its_file_tree_marked_as_part() {
    const FILES: usize = 10_050;
    let mock = Mock::start(&[]);
    let ide = Ide::start(&mock).await;
    let small = ide.new_project().await;
    let project = ide.new_project().await;
    let many = ide.project_dir(&project).join("workspace/many");
    std::fs::create_dir_all(&many).unwrap();
    for i in 0..FILES {
        std::fs::write(many.join(format!("{i}.txt")), "x").unwrap();
    }
    let workspace = ide.project_dir(&small).join("workspace");
    std::fs::create_dir_all(&workspace).unwrap();
    std::fs::write(workspace.join("a.txt"), "x").unwrap();
    for (project, cut) in [(&project, true), (&small, false)] {
        let mut feed = ide.feed(project).await;
        feed.until("the file list", |s| !s.files.is_empty()).await;
        let listed = feed.state.files.len();
        assert_eq!(feed.state.files_cut, cut, "{listed} files listed");
        assert!(listed < FILES, "{listed}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_todo_app_is_built_served_and_edited() {
    let mock = Mock::start(&["--chunk-size", "64"]);
    let ide = Ide::start(&mock).await;
    let project = ide.new_project().await;
    let mut feed = ide.feed(&project).await;
    ide.send(&project, "build a todo app").await;

    feed.until("the dev server", |s| {
        status_of(s, "start") == Some(ActionStatus::Complete)
            && s.previews.first().is_some_and(|p| p.url.is_some())
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
    // The install began as soon as package.json was written, and the
    // answer's own `npm install` joined it: one install process, not two.
    assert!(
        state.terminal.contains("installing dependencies early"),
        "{}",
        state.terminal
    );
    assert_eq!(
        state.terminal.matches("$ npm install").count(),
        1,
        "{}",
        state.terminal
    );
    assert!(state.alerts.is_empty(), "{:?}", state.alerts);

    // The preview is served through the IDE from an origin of its own: the
    // IDE's host (so the same site) on another port.
    let preview = state.previews[0].clone();
    assert_eq!(preview.port, 5173);
    let preview_url = preview.url.unwrap();
    let ide_origin = format!("http://{}/", ide.addr);
    assert!(
        preview_url.starts_with(&format!("http://{}:", ide.addr.ip())),
        "{preview_url}"
    );
    assert_ne!(preview_url, ide_origin);
    let page = ide.http.get(&preview_url).send().await.unwrap();
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
        .header("origin", preview_url.trim_end_matches('/'))
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
    // The failure is a build result too: its stage, command, exit code,
    // plain output and the file to fix.
    let result = &feed.state.build_results[0];
    assert_eq!(result.stage, Stage::Install);
    assert_eq!(result.command.as_deref(), Some("npm install"));
    assert_ne!(result.exit_code, Some(0));
    assert!(result.output.contains("404"), "{}", result.output);
    assert!(!result.output.contains('\u{1b}'), "{}", result.output);
    assert_eq!(result.files, ["package.json"]);
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

// ---------------------------------------------------------------- a port flood

/// An answer whose dev server serves "the app" on 4599, then, once the file
/// `go` exists, opens and closes 400 ports in bursts of 50 over about
/// eleven seconds (each burst open for a second, so a busy machine still
/// sees it and the test can ask for some of its ports), then serves "after
/// the flood" on 4600.
const PORT_FLOOD: &str = r#"#! match: flood ports
A server that floods the ports.

<boltArtifact id="flood" title="Port flood">
<boltAction type="file" filePath="flood.js">
const fs = require('fs');
const net = require('net');
const http = require('http');
const sleep = (ms) => new Promise((done) => setTimeout(done, ms));
const listen = (server, port) => new Promise((done, fail) => {
  server.once('error', fail);
  server.listen(port, '127.0.0.1', () => done(server));
});
const page = (body) => http.createServer((req, res) => res.end(body));
(async () => {
  await listen(page('the app'), 4599);
  while (!fs.existsSync('go')) await sleep(50);
  for (let burst = 0; burst < 8; burst++) {
    const servers = [];
    for (let i = 0; i < 50; i++) {
      servers.push(await listen(net.createServer((c) => c.end()), 20000 + burst * 50 + i));
    }
    await sleep(1000);
    await Promise.all(servers.map((s) => new Promise((done) => s.close(done))));
    await sleep(350);
  }
  await listen(page('after the flood'), 4600);
})();
</boltAction>
<boltAction type="start">
node flood.js
</boltAction>
</boltArtifact>
"#;

const FLOOD_PORTS: std::ops::Range<u16> = 20000..20400;

/// Descriptors the process holds open.
fn descriptors(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/fd"))
        .unwrap()
        .count()
}

fn url_of(state: &SessionState, port: u16) -> Option<Option<String>> {
    state
        .previews
        .iter()
        .find(|p| p.port == port)
        .map(|p| p.url.clone())
}

/// A connection that stays open after one request, as a page showing the
/// preview keeps one; returns it with the reply's body.
async fn visit(url: &str) -> (tokio::net::TcpStream, String) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let authority = url.trim_start_matches("http://").trim_end_matches('/');
    let mut stream = tokio::net::TcpStream::connect(authority).await.unwrap();
    let request = format!(
        "GET / HTTP/1.1\r\nHost: {authority}\r\nAuthorization: {}\r\n\r\n",
        super::support::bearer()
    );
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut reply = Vec::new();
    let mut buf = [0; 4096];
    loop {
        let text = String::from_utf8_lossy(&reply).into_owned();
        if let Some((head, body)) = text.split_once("\r\n\r\n")
            && let Some(length) = head.lines().find_map(|l| {
                l.to_ascii_lowercase()
                    .strip_prefix("content-length: ")
                    .map(str::to_owned)
            })
            && body.len() >= length.trim().parse::<usize>().unwrap()
        {
            return (stream, body.to_owned());
        }
        let n = stream.read(&mut buf).await.unwrap();
        assert!(n > 0, "the preview closed the connection: {text}");
        reply.extend_from_slice(&buf[..n]);
    }
}

/// Waits until nothing accepts connections at `url` any more.
async fn assert_released(url: &str) {
    let authority = url.trim_start_matches("http://").trim_end_matches('/');
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    while tokio::net::TcpStream::connect(authority).await.is_ok() {
        assert!(
            tokio::time::Instant::now() < deadline,
            "{url} still accepts"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_port_flood_does_not_exhaust_the_ides_descriptors() {
    let script = tempfile::tempdir().unwrap();
    std::fs::write(script.path().join("port-flood.txt"), PORT_FLOOD).unwrap();
    let mock = Mock::start_with(script.path(), &["--chunk-size", "256"]);
    let ide = Ide::start(&mock).await;
    let project = ide.new_project().await;
    let mut feed = ide.feed(&project).await;
    ide.send(&project, "flood the ports").await;

    // The dev server's first port is shown without being asked for.
    feed.until("the app's preview", |s| {
        status_of(s, "start") == Some(ActionStatus::Complete)
            && url_of(s, 4599).is_some_and(|url| url.is_some())
    })
    .await;
    let app = url_of(&feed.state, 4599).unwrap().unwrap();
    // A page shows it all along, holding a connection.
    let (_page, body) = visit(&app).await;
    assert_eq!(body, "the app");

    let pid = ide.pid();
    let baseline = descriptors(pid);
    let peak = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(baseline));
    let sampler = tokio::spawn({
        let peak = peak.clone();
        async move {
            loop {
                peak.fetch_max(descriptors(pid), std::sync::atomic::Ordering::Relaxed);
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        }
    });
    let (status, body) = ide
        .call(
            "write_file",
            &[("project", &project), ("path", "go"), ("content", "")],
        )
        .await;
    assert_eq!(status, 200, "{body}");

    // While the ports come and go, the person picks some of them.
    let deadline = tokio::time::Instant::now() + RUN_TIMEOUT;
    let mut asked = std::collections::BTreeSet::new();
    let mut shown = Vec::new();
    let flood_listed = |s: &SessionState| s.previews.iter().any(|p| FLOOD_PORTS.contains(&p.port));
    while url_of(&feed.state, 4600).is_none() || flood_listed(&feed.state) {
        feed.next("the flood to end", deadline).await;
        let unasked = feed
            .state
            .previews
            .iter()
            .find(|p| FLOOD_PORTS.contains(&p.port) && !asked.contains(&p.port));
        if let Some(preview) = unasked
            && asked.len() < 40
        {
            let port = preview.port;
            asked.insert(port);
            let (status, body) = ide
                .call(
                    "open_preview",
                    &[("project", &project), ("port", &port.to_string())],
                )
                .await;
            if status == 200 {
                shown.push(serde_json::from_str::<String>(&body).unwrap());
            } else {
                // The port closed meanwhile.
                assert!(body.contains("nothing listens on port"), "{body}");
            }
        }
    }
    assert!(
        shown.len() >= 10,
        "only {} previews were shown",
        shown.len()
    );

    // Previews of the ports that closed are gone, here and on the server.
    let expected = [(4599, Some(app.clone())), (4600, None)];
    let listed = |s: &SessionState| {
        s.previews
            .iter()
            .map(|p| (p.port, p.url.clone()))
            .collect::<Vec<_>>()
    };
    assert_eq!(listed(&feed.state), expected);
    let mut fresh = ide.feed(&project).await;
    fresh.until("a snapshot", |s| !s.messages.is_empty()).await;
    assert_eq!(listed(&fresh.state), expected);
    for url in &shown {
        assert_released(url).await;
    }

    // The IDE holds about what it held before the flood.
    let settle = tokio::time::Instant::now() + Duration::from_secs(30);
    while descriptors(pid) > baseline + 5 && tokio::time::Instant::now() < settle {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    sampler.abort();
    let (peak, after) = (
        peak.load(std::sync::atomic::Ordering::Relaxed),
        descriptors(pid),
    );
    eprintln!("descriptors of rivet serve: {baseline} before, {peak} at most, {after} after");
    assert!(
        peak <= baseline + 20,
        "{peak} descriptors at the peak, {baseline} before"
    );
    assert!(
        after <= baseline + 5,
        "{after} descriptors after, {baseline} before"
    );

    // The app's preview was in use, so it kept its address; the port opened
    // last gets one when asked.
    let (_, body) = visit(&app).await;
    assert_eq!(body, "the app");
    let (status, body) = ide
        .call("open_preview", &[("project", &project), ("port", "4600")])
        .await;
    assert_eq!(status, 200, "{body}");
    let last: String = serde_json::from_str(&body).unwrap();
    let (_, body) = visit(&last).await;
    assert_eq!(body, "after the flood");
    feed.until("the address of 4600", |s| {
        url_of(s, 4600) == Some(Some(last.clone()))
    })
    .await;
}

/// `rivet serve` killed with SIGKILL in the middle of an answer and started
/// again on the same data directory; the feed of the project after the
/// restart, showing the restored conversation.
async fn restarted_after_kill_9_mid_answer(mock: &Mock) -> (Ide, String, Feed) {
    // Slow enough to be killed in the middle.
    mock.faults(json!({"chunk-delay-ms": 100})).await;
    let ide = Ide::start(mock).await;
    let project = ide.new_project().await;
    let mut feed = ide.feed(&project).await;
    ide.send(&project, "show me a snippet sample").await;
    feed.until("part of the answer", |s| {
        s.messages.len() == 2 && s.messages[1].text().len() >= 40
    })
    .await;
    let seen = feed.state.messages[1].text();
    assert_eq!(feed.state.messages[1].status, MessageStatus::Streaming);
    let data = ide.kill().await;

    let ide = Ide::start_in(mock, data).await;
    let mut feed = ide.feed(&project).await;
    feed.until("the restored conversation", |s| {
        s.messages.len() == 2 && s.messages[1].status.is_final()
    })
    .await;
    let messages = &feed.state.messages;
    assert_eq!(messages[0].text(), "show me a snippet sample");
    // Everything the browser had seen was stored before it was shown.
    assert!(
        messages[1].text().starts_with(&seen),
        "{:?} does not start with {seen:?}",
        messages[1].text()
    );
    assert!(
        matches!(&messages[1].status, MessageStatus::Interrupted { reason } if reason.contains("server stopped")),
        "{:?}",
        messages[1].status
    );
    (ide, project, feed)
}

#[tokio::test(flavor = "multi_thread")]
async fn an_answer_cut_by_kill_9_is_there_after_a_restart_marked_interrupted_and_retry_works() {
    let mock = Mock::start(&[]);
    let (ide, project, mut feed) = restarted_after_kill_9_mid_answer(&mock).await;
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
    assert!(
        feed.state.messages[2]
            .text()
            .starts_with("Here is a small counter component"),
        "{}",
        feed.state.messages[2].text()
    );
    // A second restart finds the finished conversation as it was.
    let data = ide.kill().await;
    let ide = Ide::start_in(&mock, data).await;
    let mut again = ide.feed(&project).await;
    again.until("the snapshot", |s| s.messages.len() == 3).await;
    assert_eq!(again.state.messages, feed.state.messages);
}

#[tokio::test(flavor = "multi_thread")]
async fn an_answer_cut_by_kill_9_continues_after_a_restart_without_repeating_itself() {
    let mock = Mock::start(&[]);
    let (ide, project, mut feed) = restarted_after_kill_9_mid_answer(&mock).await;
    let (status, body) = ide
        .call(
            "continue_answer",
            &[
                ("project", &project),
                ("message_id", &feed.state.messages[1].id),
            ],
        )
        .await;
    assert_eq!(status, 200, "{body}");
    feed.until("the continued answer", |s| {
        s.messages.len() == 2 && s.messages[1].status == MessageStatus::Complete
    })
    .await;
    let text = feed.state.messages[1].text();
    assert_eq!(
        text.matches("Here is a small counter component").count(),
        1,
        "{text}"
    );
    assert!(
        text.trim_end().ends_with("npm install react\n```"),
        "{text}"
    );
}

/// The processes whose command line names `path` (the sandbox's `bwrap`
/// binds the project's folder, so it and everything under it would).
fn processes_naming(path: &std::path::Path) -> Vec<String> {
    let needle = path.to_string_lossy().into_owned();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|entry| std::fs::read(entry.path().join("cmdline")).ok())
        .map(|line| String::from_utf8_lossy(&line).replace('\0', " "))
        .filter(|line| line.contains(&needle))
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn kill_9_during_npm_install_loses_no_file_or_message_and_the_answer_can_run_again() {
    let mock = Mock::start(&["--chunk-size", "64"]);
    let ide = Ide::start(&mock).await;
    let project = ide.new_project().await;
    let mut feed = ide.feed(&project).await;
    ide.send(&project, "build a todo app").await;
    feed.until("npm install to run", |s| {
        status_of(s, "shell") == Some(ActionStatus::Running)
    })
    .await;
    let written: Vec<String> = feed.state.files.iter().cloned().collect();
    assert!(written.iter().any(|f| f == "src/App.jsx"), "{written:?}");
    let data_path = ide.data_dir().to_owned();
    assert!(
        !processes_naming(&data_path).is_empty(),
        "the sandbox runs while npm installs"
    );
    let data = ide.kill().await;

    // The sandbox, npm with it, does not outlive the server.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while !processes_naming(&data_path).is_empty() {
        assert!(
            tokio::time::Instant::now() < deadline,
            "left running: {:?}",
            processes_naming(&data_path)
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }

    let ide = Ide::start_in(&mock, data).await;
    let mut feed = ide.feed(&project).await;
    feed.until("the restored conversation", |s| {
        s.messages.len() == 2 && s.messages[1].status.is_final() && !s.is_busy()
    })
    .await;
    assert_eq!(feed.state.messages[0].text(), "build a todo app");
    // The install that was cut off, and the start after it, are settled.
    assert_eq!(
        status_of(&feed.state, "shell"),
        Some(ActionStatus::Aborted),
        "{:#?}",
        summary(&feed.state)
    );
    assert_eq!(status_of(&feed.state, "start"), Some(ActionStatus::Aborted));
    // Every file written before the kill is there, on disk and in the tree.
    for file in &written {
        assert!(feed.state.files.contains(file), "{file} left the tree");
        let (status, body) = ide
            .call("read_file", &[("project", &project), ("path", file)])
            .await;
        assert_eq!(status, 200, "{file}: {body}");
    }
    // Asked again, the answer installs over the half-done node_modules and
    // the app runs.
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
    feed.until("the dev server of the retried answer", |s| {
        s.messages.len() == 3
            && status_of(s, "start") == Some(ActionStatus::Complete)
            && s.previews.first().is_some_and(|p| p.url.is_some())
    })
    .await;
    assert_eq!(
        status_of(&feed.state, "shell"),
        Some(ActionStatus::Complete)
    );
    let preview = feed.state.previews[0].url.clone().unwrap();
    let page = ide.http.get(&preview).send().await.unwrap();
    assert_eq!(page.status(), 200);
}
