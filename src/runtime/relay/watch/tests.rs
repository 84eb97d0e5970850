//! The watch mirror on the in-memory runtime, with a single-threaded
//! executor and windows that end only when the test ends them.

use std::sync::{Arc, Mutex, MutexGuard};

use futures::FutureExt;
use futures::channel::oneshot;
use futures::executor::{LocalPool, block_on};
use futures::task::LocalSpawnExt;

use super::*;
use crate::runtime::host::CommandSpec;
use crate::runtime::host::fake::{FakeRuntime, Script};

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|p| p.into_inner())
}

struct Watch {
    runtime: FakeRuntime,
    log: MirrorLog,
    pool: LocalPool,
    windows: Arc<Mutex<Vec<oneshot::Sender<()>>>>,
    sent: Arc<Mutex<Vec<FileMirror>>>,
}

impl Watch {
    fn new() -> Watch {
        let runtime = FakeRuntime::new();
        runtime.otherwise(Script::exits(0, ""));
        let log = MirrorLog::default();
        let windows = Arc::new(Mutex::new(Vec::new()));
        let sent = Arc::new(Mutex::new(Vec::new()));
        let (timers, sink) = (Arc::clone(&windows), Arc::clone(&sent));
        let mirror = WatchMirror {
            runtime: Arc::new(runtime.clone()),
            sleep: Arc::new(move |_| {
                let (end, ended) = oneshot::channel();
                lock(&timers).push(end);
                async move {
                    let _ = ended.await;
                }
                .boxed()
            }),
            sink: Arc::new(move |change| lock(&sink).push(change)),
            log: log.clone(),
            window: WINDOW,
        };
        let pool = LocalPool::new();
        let events = runtime.fs_events();
        pool.spawner()
            .spawn_local(mirror.run(events))
            .expect("the pool runs");
        Watch {
            runtime,
            log,
            pool,
            windows,
            sent,
        }
    }

    fn write(&self, path: &str, bytes: &[u8]) {
        block_on(self.runtime.write_file(path, bytes)).unwrap();
    }

    /// Lets the mirror gather what happened, ends its window and returns
    /// what it sent.
    fn settle(&mut self) -> Vec<FileMirror> {
        self.pool.run_until_stalled();
        for window in lock(&self.windows).drain(..) {
            let _ = window.send(());
        }
        self.pool.run_until_stalled();
        std::mem::take(&mut *lock(&self.sent))
    }
}

fn write(path: &str, bytes: &[u8]) -> FileMirror {
    FileMirror::Write {
        path: path.into(),
        content: FileContent::new(bytes),
    }
}

#[test]
fn a_file_written_by_a_command_is_mirrored() {
    let mut watch = Watch::new();
    let create = Script::exits(0, "").writing("package.json", r#"{"name":"app"}"#);
    watch.runtime.script("npm create", create);
    let command = CommandSpec::command("npm create vite@latest .");
    block_on(watch.runtime.spawn(command)).unwrap();
    assert_eq!(
        watch.settle(),
        [write("package.json", br#"{"name":"app"}"#)]
    );
}

#[test]
fn a_binary_file_written_by_a_command_is_mirrored_byte_exact() {
    let mut watch = Watch::new();
    let png = [0x89, b'P', b'N', b'G', 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0xff];
    watch.write("public/logo.png", &png);
    assert_eq!(watch.settle(), [write("public/logo.png", &png)]);
}

#[test]
fn a_removed_file_is_mirrored_as_removed() {
    let mut watch = Watch::new();
    watch.write("src/old.js", b"x");
    assert_eq!(watch.settle().len(), 1);
    block_on(watch.runtime.remove("src/old.js")).unwrap();
    let removed = FileMirror::Remove {
        path: "src/old.js".into(),
    };
    assert_eq!(watch.settle(), [removed]);
}

#[test]
fn a_burst_of_writes_to_one_path_sends_one_mirror() {
    let mut watch = Watch::new();
    for n in 0..5 {
        watch.write("src/App.jsx", format!("version {n}").as_bytes());
    }
    assert_eq!(watch.settle(), [write("src/App.jsx", b"version 4")]);
}

#[test]
fn files_under_node_modules_are_not_mirrored() {
    let mut watch = Watch::new();
    watch.write("node_modules/react/index.js", b"module.exports = {}");
    watch.write("web/node_modules/x/y.js", b"y");
    watch.write("dist/index.html", b"<p>built</p>");
    assert_eq!(watch.settle(), []);
    assert!(lock(&watch.windows).is_empty(), "no window was opened");
    // A file in the same burst as skipped ones is still mirrored, alone.
    watch.write("node_modules/.package-lock.json", b"{}");
    watch.write("src/main.js", b"main");
    assert_eq!(watch.settle(), [write("src/main.js", b"main")]);
}

#[test]
fn a_write_the_runner_mirrored_itself_is_not_sent_again() {
    let mut watch = Watch::new();
    assert!(watch.log.wrote("src/App.jsx", b"same"));
    watch.write("src/App.jsx", b"same");
    assert_eq!(watch.settle(), []);
    watch.write("src/App.jsx", b"changed");
    assert_eq!(watch.settle(), [write("src/App.jsx", b"changed")]);
}

#[test]
fn a_removed_folder_is_mirrored_as_one_removal() {
    let mut watch = Watch::new();
    watch.write("src/old/a.js", b"a");
    watch.write("src/old/b.js", b"b");
    assert_eq!(watch.settle().len(), 2);
    block_on(watch.runtime.remove("src/old")).unwrap();
    let removed = FileMirror::Remove {
        path: "src/old".into(),
    };
    assert_eq!(watch.settle(), [removed]);
}

#[test]
fn mirror_log_remembers_removed_folders_until_written_again() {
    let log = MirrorLog::default();
    assert!(log.wrote("src/old/a.js", b"a"));
    assert!(log.removed("src/old"));
    assert!(!log.removed("src/old"), "told already");
    assert!(!log.removed("src/old/a.js"), "its folder went");
    assert!(log.wrote("src/old/a.js", b"a"), "forgotten with its folder");
    assert!(log.removed("src/old/a.js"));
}

#[test]
fn mirror_log_follows_renames() {
    let log = MirrorLog::default();
    log.wrote("src/a.js", b"a");
    log.wrote("src/lib/b.js", b"b");
    log.renamed("src", "app");
    assert!(!log.wrote("app/a.js", b"a"));
    assert!(!log.wrote("app/lib/b.js", b"b"));
    assert!(!log.removed("src/a.js"), "its folder moved away");
}
