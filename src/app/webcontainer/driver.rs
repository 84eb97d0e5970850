//! Runs a `webcontainer` project in this tab: boots the page's WebContainer,
//! mounts the project's files from the server and starts its dev server
//! again, then parses the answers the server relays and runs their actions
//! with the shared runner. Every session event is sent to the server, which
//! records and publishes it; this tab folds it when it comes back on the
//! feed, like any other tab. Every file change is repeated on the server:
//! the runner's as it makes them, the ones commands make by the watch
//! mirror (`runtime::relay::watch`). A publish's build runs here too
//! (`site.rs`).

use std::collections::HashMap;
use std::rc::Rc;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use futures::channel::mpsc;
use futures::{FutureExt, StreamExt};
use leptos::prelude::*;
use wasm_bindgen::{JsCast, JsValue, closure::Closure};

use super::bindings as js;
use super::runtime::{WebContainerRuntime, error_text, sleep};
use super::site::{SiteRequest, build_site};
use crate::app::browser_runtime::{browser_answers, browser_files, mirror_file, report_events};
use crate::app::page_report::preview_message::PreviewMessage;
use crate::app::page_report::{origin_of, send as send_page_report};
use crate::runtime::host::{
    CommandSpec, DirEntry, EventStream, FsEvent, PortEvent, Process, PtySize, Runtime, RuntimeError,
};
use crate::runtime::kind::BootFailure;
use crate::runtime::project::ProjectId;
use crate::runtime::protocol::{Event, Parser};
use crate::runtime::relay::watch::{MirrorLimits, MirrorLog, WINDOW, WatchMirror};
use crate::runtime::relay::{FileContent, FileMirror, RelayEvent};
use crate::runtime::runner::{OpenedPreview, PreviewError, PreviewHooks, Runner, RunnerContext};
use crate::runtime::session::{LineDecoder, SessionEvent};

/// Where the server serves `@webcontainer/api` (or, in tests, its double).
pub const PACKAGE_URL: &str = "/vendor/webcontainer/index.js";
/// How long a boot may take before StackBlitz counts as unreachable.
const BOOT_TIMEOUT: Duration = Duration::from_secs(60);
const START_TIMEOUT: Duration = Duration::from_secs(180);
const TERMINAL: PtySize = PtySize {
    cols: 120,
    rows: 30,
};

type Outbox = mpsc::UnboundedSender<SessionEvent>;

/// Boots the WebContainer and runs the project here until the page closes;
/// a failed boot is set on `failure`.
pub fn start(project: ProjectId, failure: RwSignal<Option<BootFailure>>) {
    leptos::task::spawn_local(async move { run_lazy(project, failure).await });
}

/// The driver, loaded on first use: a build with `cargo leptos build
/// --split` moves it, the bindings, and the parser and runner only it uses
/// into a WASM chunk of its own, so sandbox projects never download them.
#[leptos::lazy]
fn run_lazy(project: ProjectId, failure: RwSignal<Option<BootFailure>>) {
    leptos::task::spawn_local(async move {
        let wc = match boot().await {
            Ok(wc) => wc,
            Err(cause) => {
                failure.set(Some(cause));
                return;
            }
        };
        let runtime = Rc::new(WebContainerRuntime::new(wc.clone()).with_secrets(secrets(&project)));
        forward_page_errors(&wc, &project, &runtime);
        let outbox = report(project.clone());
        {
            let outbox = outbox.clone();
            runtime.on_error(move |message| {
                terminal(
                    &outbox,
                    &format!("\x1b[31m# WebContainer: {message}\x1b[0m\r\n"),
                );
            });
        }
        let log = MirrorLog::default();
        let mirrored = mirrored(&project, &runtime, &log);
        watch(&project, &mirrored, &runtime, log.clone(), &outbox);
        let runner = runner(&project, &mirrored, &runtime, &outbox);
        resume(&project, &runtime, &outbox, &log).await;
        follow_answers(project, runtime, runner, outbox).await;
    });
}

/// The project's app secrets, asked of the server for each process (none
/// when the server cannot say: the process starts without them).
fn secrets(project: &ProjectId) -> super::runtime::SecretSource {
    let project = project.clone();
    Rc::new(move || {
        let project = project.clone();
        async move {
            crate::app::api::browser_secrets(project)
                .await
                .unwrap_or_default()
        }
        .boxed_local()
    })
}

async fn boot() -> Result<wasm_bindgen::JsValue, BootFailure> {
    let booted = wasm_bindgen_futures::JsFuture::from(js::boot(PACKAGE_URL)).fuse();
    let timeout = sleep(BOOT_TIMEOUT).fuse();
    futures::pin_mut!(booted, timeout);
    futures::select! {
        result = booted => result.map_err(|e| BootFailure::from_boot_error(&error_text(&e))),
        () = timeout => Err(BootFailure::from_boot_error(&format!(
            "the WebContainer did not boot: timed out after {} s",
            BOOT_TIMEOUT.as_secs()
        ))),
    }
}

/// Reports the errors of the WebContainer's previews (its `preview-message`
/// events) as the sandbox preview's reporter does: each becomes a build
/// result of the project.
fn forward_page_errors(wc: &JsValue, project: &ProjectId, runtime: &Rc<WebContainerRuntime>) {
    let (project, runtime) = (project.clone(), Rc::clone(runtime));
    let listener = Closure::<dyn Fn(String)>::new(move |json: String| {
        let Some(message) = PreviewMessage::parse(&json) else {
            return;
        };
        let origin = message
            .port
            .and_then(|port| runtime.url_of(port))
            .and_then(|url| origin_of(&url));
        if let Some(report) = message.report(origin.as_deref()) {
            send_page_report(project.clone(), report);
        }
    });
    js::on(wc, "preview-message", listener.as_ref().unchecked_ref());
    // Lives as long as the page's one WebContainer.
    listener.forget();
}

/// Sends session events to the server in order, in batches.
fn report(project: ProjectId) -> Outbox {
    let (tx, rx) = mpsc::unbounded::<SessionEvent>();
    leptos::task::spawn_local(async move {
        let mut batches = rx.ready_chunks(256);
        while let Some(events) = batches.next().await {
            if let Err(e) = report_events(project.clone(), events).await {
                leptos::logging::warn!("the server did not take the runner's events: {e}");
            }
        }
    });
    tx
}

// The browser's callbacks are not `Send`; the runner's `Arc`s hold them all
// the same.
#[allow(clippy::arc_with_non_send_sync)]
fn mirrored(
    project: &ProjectId,
    runtime: &Rc<WebContainerRuntime>,
    log: &MirrorLog,
) -> Arc<dyn Runtime> {
    Arc::new(Mirrored {
        inner: Rc::clone(runtime),
        project: project.clone(),
        log: log.clone(),
    })
}

/// Repeats on the server the file changes of commands (an install, a
/// build, a shell), in order, within the mirror's limits; a file held back
/// is noted in the Rivet tab.
fn watch(
    project: &ProjectId,
    mirrored: &Arc<dyn Runtime>,
    runtime: &WebContainerRuntime,
    log: MirrorLog,
    outbox: &Outbox,
) {
    let (tx, mut rx) = mpsc::unbounded::<FileMirror>();
    let project = project.clone();
    leptos::task::spawn_local(async move {
        while let Some(change) = rx.next().await {
            if let Err(e) = mirror_file(project.clone(), change).await {
                leptos::logging::warn!("the server did not take a file change: {e}");
            }
        }
    });
    let mirror = WatchMirror {
        runtime: Arc::clone(mirrored),
        sleep: Arc::new(|duration| sleep(duration).boxed_local()),
        sink: Arc::new(move |change| {
            let _ = tx.unbounded_send(change);
        }),
        log,
        window: WINDOW,
        limits: MirrorLimits::default(),
        note: {
            let outbox = outbox.clone();
            Arc::new(move |note: String| {
                terminal(&outbox, &format!("\x1b[33m# Rivet: {note}\x1b[0m\r\n"))
            })
        },
    };
    leptos::task::spawn_local(mirror.run(runtime.fs_events()));
}

fn terminal(outbox: &Outbox, text: &str) {
    let _ = outbox.unbounded_send(SessionEvent::Terminal {
        text: text.to_owned(),
    });
}

// The browser's callbacks are not `Send`; the runner's `Arc`s hold them all
// the same.
#[allow(clippy::arc_with_non_send_sync)]
fn runner(
    project: &ProjectId,
    mirrored: &Arc<dyn Runtime>,
    runtime: &Rc<WebContainerRuntime>,
    outbox: &Outbox,
) -> Runner {
    let (url_of, open_of) = (Rc::clone(runtime), Rc::clone(runtime));
    let sink = outbox.clone();
    Runner::new(RunnerContext {
        runtime: Arc::clone(mirrored),
        database: Arc::new(super::database::ServerDatabase::new(project.clone())),
        sink: Arc::new(move |event| {
            let _ = sink.unbounded_send(event);
        }),
        spawn: Arc::new(leptos::task::spawn_local),
        sleep: Arc::new(|duration| sleep(duration).boxed_local()),
        previews: PreviewHooks {
            url: Arc::new(move |port| url_of.url_of(port)),
            open: Arc::new(move |port| {
                open_of
                    .url_of(port)
                    .map(|url| OpenedPreview {
                        url,
                        closed: Vec::new(),
                    })
                    .ok_or(PreviewError::NotListening { port })
            }),
            closed: Arc::new(|_| {}),
        },
        start_timeout: START_TIMEOUT,
    })
}

/// Mounts the project's files from the server (noted in `log`: the server
/// has them), installs its dependencies and starts its dev server again.
async fn resume(
    project: &ProjectId,
    runtime: &WebContainerRuntime,
    outbox: &Outbox,
    log: &MirrorLog,
) {
    let snapshot = match browser_files(project.clone()).await {
        Ok(snapshot) => snapshot,
        Err(e) => {
            terminal(
                outbox,
                &format!("\x1b[31m# Rivet: the project's files did not load: {e}\x1b[0m\r\n"),
            );
            return;
        }
    };
    for file in &snapshot.files {
        log.wrote(&file.path, file.content.as_bytes());
        if let Err(e) = runtime
            .write_file(&file.path, file.content.as_bytes())
            .await
        {
            terminal(outbox, &format!("\x1b[31m# Rivet: {e}\x1b[0m\r\n"));
        }
    }
    let Some(start) = snapshot.start else { return };
    let has_manifest = snapshot.files.iter().any(|f| f.path == "package.json");
    if has_manifest && !run_shown(runtime, outbox, CommandSpec::command("npm install")).await {
        return;
    }
    run_shown(runtime, outbox, CommandSpec::server(start)).await;
}

/// Runs a command with its output in the Rivet tab; a server is left
/// running. True when it succeeded (or keeps running).
async fn run_shown(runtime: &WebContainerRuntime, outbox: &Outbox, spec: CommandSpec) -> bool {
    terminal(outbox, &format!("\x1b[1m$ {}\x1b[0m\r\n", spec.command));
    let server = spec.kind == crate::runtime::host::CommandKind::Server;
    let process = match runtime.spawn(spec.with_pty(TERMINAL)).await {
        Ok(process) => process,
        Err(e) => {
            terminal(outbox, &format!("\x1b[31m# Rivet: {e}\x1b[0m\r\n"));
            return false;
        }
    };
    if let Some(mut output) = process.take_output() {
        let outbox = outbox.clone();
        leptos::task::spawn_local(async move {
            while let Some(chunk) = output.next().await {
                terminal(&outbox, &String::from_utf8_lossy(&chunk));
            }
        });
    }
    if server {
        // The process lives on; the WebContainer keeps it.
        std::mem::forget(process);
        return true;
    }
    process.wait().await.success()
}

/// Parses and runs every answer the server relays, and builds the site
/// when it asks, reconnecting after a drop.
async fn follow_answers(
    project: ProjectId,
    runtime: Rc<WebContainerRuntime>,
    runner: Runner,
    outbox: Outbox,
) {
    let mut parsers: HashMap<String, Parser> = HashMap::new();
    let mut backoff_ms = 250;
    loop {
        if let Ok(stream) = browser_answers(project.clone()).await {
            backoff_ms = 250;
            let mut lines = LineDecoder::default();
            let mut chunks = stream.into_inner();
            while let Some(Ok(chunk)) = chunks.next().await {
                for line in lines.push(&chunk) {
                    match serde_json::from_slice::<RelayEvent>(&line) {
                        Ok(RelayEvent::Replaced) => {
                            leptos::logging::log!("another tab runs this project's answers now");
                            return;
                        }
                        Ok(RelayEvent::BuildSite {
                            request,
                            command,
                            timeout_secs,
                        }) => {
                            let asked = SiteRequest {
                                request,
                                command,
                                timeout: Duration::from_secs(timeout_secs),
                            };
                            let (project, runtime) = (project.clone(), Rc::clone(&runtime));
                            build_site(project, runtime, outbox.clone(), asked);
                        }
                        Ok(event) => apply(event, &mut parsers, &runner, &outbox),
                        Err(e) => leptos::logging::warn!("unreadable relayed text: {e}"),
                    }
                }
            }
        }
        sleep(Duration::from_millis(backoff_ms)).await;
        backoff_ms = (backoff_ms * 2).min(5000);
    }
}

fn apply(
    event: RelayEvent,
    parsers: &mut HashMap<String, Parser>,
    runner: &Runner,
    outbox: &Outbox,
) {
    match event {
        RelayEvent::Delta { message_id, text } => {
            let parser = parsers.entry(message_id.clone()).or_insert_with(|| {
                runner.begin_turn();
                Parser::new(message_id.clone())
            });
            let events: Vec<Event> = parser.push(&text).collect();
            forward(&message_id, events, runner, outbox);
        }
        RelayEvent::End {
            message_id,
            stopped,
        } => {
            if let Some(parser) = parsers.remove(&message_id) {
                forward(&message_id, parser.finish(), runner, outbox);
            }
            if stopped {
                runner.abort();
            }
        }
        RelayEvent::Stop => runner.abort(),
        // `follow_answers` takes these.
        RelayEvent::Replaced | RelayEvent::BuildSite { .. } => {}
    }
}

/// The session learns of an action before the runner reports on it.
fn forward(message_id: &str, events: Vec<Event>, runner: &Runner, outbox: &Outbox) {
    for event in events {
        let _ = outbox.unbounded_send(SessionEvent::Protocol {
            message_id: message_id.to_owned(),
            event: event.clone(),
        });
        runner.observe(message_id, &event);
    }
}

/// The WebContainer, with every file change repeated on the server's copy
/// of the project (so its record, checkpoints and export are complete).
struct Mirrored {
    inner: Rc<WebContainerRuntime>,
    project: ProjectId,
    /// Tells the watch mirror what the server has already.
    log: MirrorLog,
}

impl Mirrored {
    async fn mirror(&self, path: &str, change: FileMirror) -> Result<(), RuntimeError> {
        mirror_file(self.project.clone(), change)
            .await
            .map_err(|e| RuntimeError::Io {
                op: "record on the server".to_owned(),
                path: path.to_owned(),
                message: e.to_string(),
            })
    }
}

#[async_trait(?Send)]
impl Runtime for Mirrored {
    async fn read_file(&self, path: &str) -> Result<Vec<u8>, RuntimeError> {
        self.inner.read_file(path).await
    }

    async fn write_file(&self, path: &str, contents: &[u8]) -> Result<(), RuntimeError> {
        self.log.wrote(path, contents);
        self.inner.write_file(path, contents).await?;
        let change = FileMirror::Write {
            path: path.to_owned(),
            content: FileContent::new(contents),
        };
        self.mirror(path, change).await
    }

    async fn mkdir(&self, path: &str) -> Result<(), RuntimeError> {
        self.inner.mkdir(path).await
    }

    async fn remove(&self, path: &str) -> Result<(), RuntimeError> {
        self.log.removed(path);
        self.inner.remove(path).await?;
        let change = FileMirror::Remove {
            path: path.to_owned(),
        };
        self.mirror(path, change).await
    }

    async fn rename(&self, from: &str, to: &str) -> Result<(), RuntimeError> {
        self.inner.rename(from, to).await?;
        self.log.renamed(from, to);
        let change = FileMirror::Rename {
            from: from.to_owned(),
            to: to.to_owned(),
        };
        self.mirror(from, change).await
    }

    async fn list(&self, path: &str) -> Result<Vec<DirEntry>, RuntimeError> {
        self.inner.list(path).await
    }

    async fn list_tree(&self, path: &str) -> Result<Vec<DirEntry>, RuntimeError> {
        self.inner.list_tree(path).await
    }

    fn fs_events(&self) -> EventStream<FsEvent> {
        self.inner.fs_events()
    }

    async fn spawn(&self, spec: CommandSpec) -> Result<Box<dyn Process>, RuntimeError> {
        self.inner.spawn(spec).await
    }

    fn port_events(&self) -> EventStream<PortEvent> {
        self.inner.port_events()
    }

    async fn open_ports(&self) -> Vec<u16> {
        self.inner.open_ports().await
    }
}
