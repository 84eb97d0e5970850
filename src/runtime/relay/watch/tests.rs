//! The watch mirror on the in-memory runtime, with a single-threaded
//! executor and windows that end only when the test ends them.

use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

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

/// The timers the mirror is waiting on: how long each was asked for, and
/// its end.
type Timers = Arc<Mutex<Vec<(Duration, oneshot::Sender<()>)>>>;

struct Watch {
    runtime: FakeRuntime,
    log: MirrorLog,
    pool: LocalPool,
    windows: Timers,
    sent: Arc<Mutex<Vec<FileMirror>>>,
    notes: Arc<Mutex<Vec<String>>>,
}

impl Watch {
    fn new() -> Watch {
        let runtime = FakeRuntime::new();
        runtime.otherwise(Script::exits(0, ""));
        let log = MirrorLog::default();
        let windows = Arc::new(Mutex::new(Vec::new()));
        let sent = Arc::new(Mutex::new(Vec::new()));
        let notes = Arc::new(Mutex::new(Vec::new()));
        let (timers, sink, noted) = (Arc::clone(&windows), Arc::clone(&sent), Arc::clone(&notes));
        let mirror = WatchMirror {
            runtime: Arc::new(runtime.clone()),
            sleep: Arc::new(move |duration| {
                let (end, ended) = oneshot::channel();
                lock(&timers).push((duration, end));
                async move {
                    let _ = ended.await;
                }
                .boxed()
            }),
            sink: Arc::new(move |change| lock(&sink).push(change)),
            log: log.clone(),
            window: WINDOW,
            limits: MirrorLimits::default(),
            note: Arc::new(move |note: String| lock(&noted).push(note)),
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
            notes,
        }
    }

    fn write(&self, path: &str, bytes: &[u8]) {
        block_on(self.runtime.write_file(path, bytes)).unwrap();
    }

    /// Lets the mirror gather what happened, ends its window and returns
    /// what it sent.
    fn settle(&mut self) -> Vec<FileMirror> {
        self.pool.run_until_stalled();
        for (_, window) in lock(&self.windows).drain(..) {
            let _ = window.send(());
        }
        self.pool.run_until_stalled();
        std::mem::take(&mut *lock(&self.sent))
    }

    /// The notes made since the last call.
    fn notes(&self) -> Vec<String> {
        std::mem::take(&mut *lock(&self.notes))
    }

    /// How long each timer the mirror waits on now was asked for.
    fn pending_timers(&self) -> Vec<Duration> {
        lock(&self.windows).iter().map(|(d, _)| *d).collect()
    }
}

fn paths(sent: &[FileMirror]) -> Vec<&str> {
    sent.iter()
        .map(|change| match change {
            FileMirror::Write { path, .. } | FileMirror::Remove { path } => path.as_str(),
            FileMirror::Rename { to, .. } => to.as_str(),
        })
        .collect()
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

#[test]
fn a_file_larger_than_the_mirror_cap_is_not_mirrored_and_a_note_says_so() {
    let mut watch = Watch::new();
    let big = vec![b'v'; MAX_FILE_BYTES + 1];
    watch.write("public/video.mp4", &big);
    watch.write("src/App.jsx", b"app");
    assert_eq!(watch.settle(), [write("src/App.jsx", b"app")]);
    let notes = watch.notes();
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert!(notes[0].contains("public/video.mp4"), "{}", notes[0]);
    assert!(notes[0].contains("8.0 MiB per file"), "{}", notes[0]);
    // Written again, still too large: not sent, not noted twice.
    watch.write("public/video.mp4", &[b'w'; MAX_FILE_BYTES + 2]);
    assert_eq!(watch.settle(), []);
    assert_eq!(watch.notes(), Vec::<String>::new());
    // Within the cap again, it is mirrored.
    watch.write("public/video.mp4", b"small");
    assert_eq!(watch.settle(), [write("public/video.mp4", b"small")]);
    // A file of exactly the cap is sent.
    let at_cap = vec![b'c'; MAX_FILE_BYTES];
    watch.write("public/at-cap.bin", &at_cap);
    assert_eq!(paths(&watch.settle()), ["public/at-cap.bin"]);
}

#[test]
fn mirroring_past_the_per_second_budget_waits_or_is_noted() {
    let mut watch = Watch::new();
    let six_mib = vec![b'6'; 6 << 20];
    for path in ["a.bin", "b.bin", "c.bin"] {
        watch.write(path, &six_mib);
    }
    // 18 MiB in one second is over the 16 MiB budget: the third file waits
    // for the second to end, and a note says so.
    assert_eq!(paths(&watch.settle()), ["a.bin", "b.bin"]);
    assert_eq!(watch.pending_timers(), [Duration::from_secs(1)]);
    let notes = watch.notes();
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert!(notes[0].contains("c.bin"), "{}", notes[0]);
    assert!(notes[0].contains("16.0 MiB a second"), "{}", notes[0]);
    // Once the second is over it goes, read again: the bytes of now.
    watch.write("c.bin", b"changed while it waited");
    let sent = watch.settle();
    assert_eq!(sent[0], write("c.bin", b"changed while it waited"));
    // A new second: the budget is whole again.
    for path in ["d.bin", "e.bin"] {
        watch.write(path, &six_mib);
    }
    assert_eq!(paths(&watch.settle()), ["d.bin", "e.bin"]);
    assert_eq!(watch.notes(), Vec::<String>::new());
}
