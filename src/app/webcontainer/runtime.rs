//! [`Runtime`] on the page's WebContainer: files through its `fs`, commands
//! through `jsh`, ports from its `port` and `server-ready` events.

use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::rc::Rc;
use std::time::Duration;

use async_trait::async_trait;
use futures::channel::mpsc;
use futures::future::{LocalBoxFuture, Shared};
use futures::{FutureExt, StreamExt};
use js_sys::{Array, Function, Promise, Reflect, Uint8Array};
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;

use super::bindings as js;
use crate::runtime::host::{
    CommandKind, CommandSpec, DirEntry, EntryKind, EventStream, ExitStatus, FsEvent, Limit,
    PortEvent, Process, PtySize, Runtime, RuntimeError, checked_path,
};
use crate::runtime::mask::{Masker, masked_stream};
use crate::runtime::tree::{is_inside_skipped_dir, is_skipped_dir};

/// Wall-clock limit of a command that sets none.
const COMMAND_TIMEOUT: Duration = Duration::from_secs(600);

/// The text of a JavaScript error.
pub fn error_text(error: &JsValue) -> String {
    error
        .as_string()
        .or_else(|| {
            Reflect::get(error, &"message".into())
                .ok()
                .and_then(|m| m.as_string())
        })
        .unwrap_or_else(|| format!("{error:?}"))
}

fn fs_error(op: &str, path: &str, error: &JsValue) -> RuntimeError {
    let message = error_text(error);
    if message.contains("ENOENT") {
        RuntimeError::NotFound {
            path: path.to_owned(),
        }
    } else {
        RuntimeError::Io {
            op: op.to_owned(),
            path: path.to_owned(),
            message,
        }
    }
}

/// The WebContainer's name for a checked project path.
fn wc_path(path: &str) -> Result<String, RuntimeError> {
    let path = checked_path(path)?;
    Ok(if path.is_root() {
        ".".to_owned()
    } else {
        path.as_str().to_owned()
    })
}

async fn settle(promise: Promise) -> Result<JsValue, JsValue> {
    JsFuture::from(promise).await
}

/// Resolves after `duration`, on the page's timer.
pub async fn sleep(duration: Duration) {
    let (tx, rx) = futures::channel::oneshot::channel::<()>();
    leptos::prelude::set_timeout(
        move || {
            let _ = tx.send(());
        },
        duration,
    );
    let _ = rx.await;
}

/// A WebContainer event listener (`port`, `server-ready`, `fs.watch`).
type Listener = Closure<dyn FnMut(JsValue, JsValue, JsValue)>;

#[derive(Default)]
struct Listeners {
    /// Listening ports and their addresses.
    ports: BTreeMap<u16, String>,
    port_subscribers: Vec<mpsc::UnboundedSender<PortEvent>>,
    fs_subscribers: Vec<mpsc::UnboundedSender<FsEvent>>,
}

impl Listeners {
    fn port(&mut self, event: PortEvent) {
        self.port_subscribers
            .retain(|tx| tx.unbounded_send(event).is_ok());
    }

    fn fs(&mut self, event: FsEvent) {
        self.fs_subscribers
            .retain(|tx| tx.unbounded_send(event.clone()).is_ok());
    }
}

/// Where a spawn finds the project's app secrets (names and values), asked
/// again for every process, as the sandbox reads them when it starts one.
pub type SecretSource = Rc<dyn Fn() -> LocalBoxFuture<'static, Vec<(String, String)>>>;

/// How long output that may begin a secret's value waits for the rest
/// before it is shown as it is.
const MASK_HOLD: Duration = Duration::from_millis(100);

/// The page's WebContainer as a [`Runtime`].
pub struct WebContainerRuntime {
    wc: JsValue,
    listeners: Rc<RefCell<Listeners>>,
    next_pid: Cell<u32>,
    secrets: Option<SecretSource>,
    /// Kept alive as long as the runtime: the WebContainer calls them.
    _callbacks: Vec<Listener>,
}

impl WebContainerRuntime {
    /// Wraps a booted WebContainer and starts following its ports and files.
    pub fn new(wc: JsValue) -> WebContainerRuntime {
        let listeners = Rc::new(RefCell::new(Listeners::default()));
        let ports = {
            let listeners = Rc::clone(&listeners);
            Listener::new(move |port: JsValue, open: JsValue, url: JsValue| {
                let Some(port) = port.as_f64().and_then(|p| u16::try_from(p as i64).ok()) else {
                    return;
                };
                let mut l = listeners.borrow_mut();
                if open.as_bool().unwrap_or(false) {
                    let url = url.as_string().unwrap_or_default();
                    if l.ports.insert(port, url).is_none() {
                        l.port(PortEvent::Opened { port });
                    }
                } else if l.ports.remove(&port).is_some() {
                    l.port(PortEvent::Closed { port });
                }
            })
        };
        let files = {
            let listeners = Rc::clone(&listeners);
            let wc = wc.clone();
            Listener::new(move |path: JsValue, _: JsValue, _: JsValue| {
                let Some(path) = path.as_string() else { return };
                // Nothing follows what happens in skipped folders (an
                // install's thousands of `node_modules` files): no check.
                if is_inside_skipped_dir(path.trim_start_matches("./")) {
                    return;
                }
                let (listeners, wc) = (Rc::clone(&listeners), wc.clone());
                leptos::task::spawn_local(async move {
                    let removed = !exists(&wc, &path).await;
                    listeners.borrow_mut().fs(FsEvent { path, removed });
                });
            })
        };
        let as_function = |c: &Listener| c.as_ref().unchecked_ref::<Function>().clone();
        js::on(&wc, "port", &as_function(&ports));
        js::on(&wc, "server-ready", &as_function(&ports));
        js::watch(&wc, &as_function(&files));
        WebContainerRuntime {
            wc,
            listeners,
            next_pid: Cell::new(1),
            secrets: None,
            _callbacks: vec![ports, files],
        }
    }

    /// Gives every process it starts the project's app secrets, masked in
    /// the process's output.
    pub fn with_secrets(mut self, source: SecretSource) -> WebContainerRuntime {
        self.secrets = Some(source);
        self
    }

    /// The address the WebContainer gave `port`, while it listens.
    pub fn url_of(&self, port: u16) -> Option<String> {
        self.listeners.borrow().ports.get(&port).cloned()
    }

    /// Calls `report(message)` for every error the WebContainer reports.
    pub fn on_error(&self, report: impl Fn(String) + 'static) {
        let callback = Closure::<dyn FnMut(JsValue)>::new(move |message: JsValue| {
            report(message.as_string().unwrap_or_default());
        });
        js::on(&self.wc, "error", callback.as_ref().unchecked_ref());
        // Lives as long as the page's one WebContainer.
        callback.forget();
    }

    async fn read_dir(&self, path: &str) -> Result<Vec<DirEntry>, RuntimeError> {
        let entries = settle(js::readdir(&self.wc, &wc_path(path)?))
            .await
            .map_err(|e| fs_error("readdir", path, &e))?;
        let prefix = checked_path(path)?;
        let mut listed = Vec::new();
        for entry in Array::from(&entries).iter() {
            let pair = Array::from(&entry);
            let name = pair.get(0).as_string().unwrap_or_default();
            let kind = match pair.get(1).as_string().as_deref() {
                Some("dir") => EntryKind::Dir,
                Some("file") => EntryKind::File,
                _ => EntryKind::Other,
            };
            let path = if prefix.is_root() {
                name
            } else {
                format!("{}/{name}", prefix.as_str())
            };
            listed.push(DirEntry {
                path,
                kind,
                size: 0,
                // WebContainer's readdir gives names and kinds only.
                modified: None,
            });
        }
        listed.sort_by(|a, b| a.path.cmp(&b.path));
        Ok(listed)
    }
}

/// Whether `path` is a file or a directory in the WebContainer.
async fn exists(wc: &JsValue, path: &str) -> bool {
    match settle(js::read_file(wc, path)).await {
        Ok(_) => true,
        Err(e) if error_text(&e).contains("ENOENT") => settle(js::readdir(wc, path)).await.is_ok(),
        Err(_) => true,
    }
}

#[async_trait(?Send)]
impl Runtime for WebContainerRuntime {
    async fn read_file(&self, path: &str) -> Result<Vec<u8>, RuntimeError> {
        let bytes = settle(js::read_file(&self.wc, &wc_path(path)?))
            .await
            .map_err(|e| fs_error("read", path, &e))?;
        Ok(Uint8Array::new(&bytes).to_vec())
    }

    async fn write_file(&self, path: &str, contents: &[u8]) -> Result<(), RuntimeError> {
        let target = wc_path(path)?;
        if let Some((parent, _)) = target.rsplit_once('/') {
            self.mkdir(parent).await?;
        }
        let data = Uint8Array::from(contents);
        settle(js::write_file(&self.wc, &target, &data))
            .await
            .map_err(|e| fs_error("write", path, &e))?;
        Ok(())
    }

    async fn mkdir(&self, path: &str) -> Result<(), RuntimeError> {
        settle(js::mkdir(&self.wc, &wc_path(path)?))
            .await
            .map_err(|e| fs_error("mkdir", path, &e))?;
        Ok(())
    }

    async fn remove(&self, path: &str) -> Result<(), RuntimeError> {
        let target = wc_path(path)?;
        if target == "." {
            return Err(RuntimeError::InvalidPath {
                path: path.to_owned(),
                reason: "the project's root cannot be removed".to_owned(),
            });
        }
        settle(js::rm(&self.wc, &target))
            .await
            .map_err(|e| fs_error("remove", path, &e))?;
        Ok(())
    }

    async fn rename(&self, from: &str, to: &str) -> Result<(), RuntimeError> {
        let (source, target) = (wc_path(from)?, wc_path(to)?);
        if let Some((parent, _)) = target.rsplit_once('/') {
            self.mkdir(parent).await?;
        }
        settle(js::rename(&self.wc, &source, &target))
            .await
            .map_err(|e| fs_error("rename", from, &e))?;
        Ok(())
    }

    async fn list(&self, path: &str) -> Result<Vec<DirEntry>, RuntimeError> {
        self.read_dir(path).await
    }

    async fn list_tree(&self, path: &str) -> Result<Vec<DirEntry>, RuntimeError> {
        let mut all = Vec::new();
        let mut dirs = vec![checked_path(path)?.as_str().to_owned()];
        while let Some(dir) = dirs.pop() {
            for entry in self.read_dir(&dir).await? {
                let name = entry.path.rsplit('/').next().unwrap_or_default();
                if entry.kind == EntryKind::Dir && !is_skipped_dir(name) {
                    dirs.push(entry.path.clone());
                }
                all.push(entry);
            }
        }
        all.sort_by(|a, b| a.path.cmp(&b.path));
        Ok(all)
    }

    fn fs_events(&self) -> EventStream<FsEvent> {
        let (tx, rx) = mpsc::unbounded();
        self.listeners.borrow_mut().fs_subscribers.push(tx);
        rx.boxed_local()
    }

    async fn spawn(&self, mut spec: CommandSpec) -> Result<Box<dyn Process>, RuntimeError> {
        let pid = self.next_pid.get();
        self.next_pid.set(pid + 1);
        let secrets = match &self.secrets {
            Some(source) => source().await,
            None => Vec::new(),
        };
        let masker = Masker::new(secrets.iter().map(|(n, v)| (n.as_str(), v.as_str())));
        // The command's own variables come later, so they win.
        spec.env = secrets.into_iter().chain(spec.env).collect();
        let process = WcProcess::start(&self.wc, pid, &spec, masker).await?;
        Ok(Box::new(process))
    }

    fn port_events(&self) -> EventStream<PortEvent> {
        let (tx, rx) = mpsc::unbounded();
        self.listeners.borrow_mut().port_subscribers.push(tx);
        rx.boxed_local()
    }

    async fn open_ports(&self) -> Vec<u16> {
        self.listeners.borrow().ports.keys().copied().collect()
    }
}

/// The command line jsh runs: the variables exported first.
fn command_line(spec: &CommandSpec) -> String {
    let mut line = String::new();
    for (name, value) in &spec.env {
        line.push_str(&format!(
            "export {name}='{}'; ",
            value.replace('\'', r"'\''")
        ));
    }
    line.push_str(&spec.command);
    line
}

/// A process of the WebContainer.
struct WcProcess {
    pid: u32,
    handle: JsValue,
    output: RefCell<Option<EventStream<Vec<u8>>>>,
    exit: Shared<LocalBoxFuture<'static, ExitStatus>>,
    _on_output: Closure<dyn FnMut(JsValue)>,
}

impl WcProcess {
    async fn start(
        wc: &JsValue,
        pid: u32,
        spec: &CommandSpec,
        masker: Masker,
    ) -> Result<WcProcess, RuntimeError> {
        let (tx, rx) = mpsc::unbounded();
        let on_output = Closure::<dyn FnMut(JsValue)>::new(move |chunk: JsValue| {
            if let Some(text) = chunk.as_string() {
                let _ = tx.unbounded_send(text.into_bytes());
            }
        });
        let size = spec.pty.unwrap_or_default();
        let handle = settle(js::spawn(
            wc,
            &command_line(spec),
            size.cols,
            size.rows,
            on_output.as_ref().unchecked_ref(),
        ))
        .await
        .map_err(|e| {
            RuntimeError::Unavailable(format!(
                "the WebContainer cannot run commands: {}",
                error_text(&e)
            ))
        })?;
        let exit = exit_future(&handle, spec).shared();
        Ok(WcProcess {
            pid,
            handle,
            output: RefCell::new(Some(masked(rx, masker))),
            exit,
            _on_output: on_output,
        })
    }

    fn call(&self, method: &str, args: &[JsValue]) -> Result<JsValue, RuntimeError> {
        let function: Function = Reflect::get(&self.handle, &method.into())
            .map_err(|e| RuntimeError::Unavailable(error_text(&e)))?
            .unchecked_into();
        function
            .apply(&self.handle, &args.iter().collect::<Array>())
            .map_err(|e| RuntimeError::Unavailable(error_text(&e)))
    }
}

/// The process's output with the secrets' values masked.
fn masked(output: mpsc::UnboundedReceiver<Vec<u8>>, masker: Masker) -> EventStream<Vec<u8>> {
    masked_stream(output, masker, MASK_HOLD, |d| sleep(d).boxed_local())
}

/// How the process ends: its exit code, or the wall-clock limit of a
/// command (which kills it).
fn exit_future(handle: &JsValue, spec: &CommandSpec) -> LocalBoxFuture<'static, ExitStatus> {
    let exit = Reflect::get(handle, &"exit".into())
        .map(|p| p.unchecked_into::<Promise>())
        .ok();
    let kill = Reflect::get(handle, &"kill".into())
        .ok()
        .map(|k| (k.unchecked_into::<Function>(), handle.clone()));
    let limit = match spec.kind {
        CommandKind::Command => Some(spec.timeout.unwrap_or(COMMAND_TIMEOUT)),
        CommandKind::Server => None,
    };
    async move {
        let exited = async move {
            let code = match exit {
                Some(exit) => settle(exit).await.ok().and_then(|c| c.as_f64()),
                None => None,
            };
            ExitStatus {
                code: code.map(|c| c as i32),
                ..ExitStatus::default()
            }
        };
        let Some(limit) = limit else {
            return exited.await;
        };
        futures::select! {
            status = exited.fuse() => status,
            () = sleep(limit).fuse() => {
                if let Some((kill, this)) = kill {
                    let _ = kill.call0(&this);
                }
                ExitStatus {
                    limit_hit: Some(Limit::WallClock),
                    timed_out: true,
                    message: Some(format!("stopped: wall-clock limit of {} s reached", limit.as_secs())),
                    ..ExitStatus::default()
                }
            }
        }
    }
    .boxed_local()
}

#[async_trait(?Send)]
impl Process for WcProcess {
    fn pid(&self) -> u32 {
        self.pid
    }

    fn take_output(&self) -> Option<EventStream<Vec<u8>>> {
        self.output.borrow_mut().take()
    }

    async fn wait(&self) -> ExitStatus {
        self.exit.clone().await
    }

    async fn kill(&self) -> Result<(), RuntimeError> {
        self.call("kill", &[]).map(drop)
    }

    async fn write_stdin(&self, data: &[u8]) -> Result<(), RuntimeError> {
        let text = String::from_utf8_lossy(data).into_owned();
        let written = self.call("write", &[text.into()])?;
        settle(written.unchecked_into())
            .await
            .map_err(|e| RuntimeError::Unavailable(error_text(&e)))?;
        Ok(())
    }

    async fn close_stdin(&self) {
        let _ = self.call("close", &[]);
    }

    async fn resize(&self, size: PtySize) -> Result<(), RuntimeError> {
        self.call("resize", &[size.cols.into(), size.rows.into()])
            .map(drop)
    }
}
