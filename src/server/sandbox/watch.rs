//! Watches the project's files with inotify, inside the sandbox, and reports
//! changed paths in small batches.

use std::collections::{BTreeSet, HashMap};
use std::ffi::OsStr;
use std::os::fd::{AsFd, AsRawFd, RawFd};
use std::path::{Path, PathBuf};
use std::time::Duration;

use nix::sys::inotify::{AddWatchFlags, InitFlags, Inotify, WatchDescriptor};
use tokio::io::unix::AsyncFd;
use tokio::sync::mpsc;

use crate::runtime::tree::{is_inside_skipped_dir, is_skipped_path};
use crate::server::atomic::is_temp_name;

/// Most directories watched in one project; beyond that, deeper changes go
/// unreported (the kernel's per-user budget is shared).
const MAX_WATCHES: usize = 16_384;
/// Changes closer together than this are reported together.
const BATCH: Duration = Duration::from_millis(50);

struct Fd(Inotify);

impl AsRawFd for Fd {
    fn as_raw_fd(&self) -> RawFd {
        self.0.as_fd().as_raw_fd()
    }
}

struct Watcher {
    inotify: AsyncFd<Fd>,
    root: PathBuf,
    dirs: HashMap<WatchDescriptor, String>,
}

fn mask() -> AddWatchFlags {
    AddWatchFlags::IN_CREATE
        | AddWatchFlags::IN_DELETE
        | AddWatchFlags::IN_CLOSE_WRITE
        | AddWatchFlags::IN_MOVED_FROM
        | AddWatchFlags::IN_MOVED_TO
        | AddWatchFlags::IN_ONLYDIR
        | AddWatchFlags::IN_DONT_FOLLOW
}

fn join(dir: &str, name: &OsStr) -> Option<String> {
    let name = name.to_str()?;
    Some(if dir.is_empty() {
        name.to_owned()
    } else {
        format!("{dir}/{name}")
    })
}

impl Watcher {
    /// Watches `rel` and every directory below it.
    fn add_tree(&mut self, rel: &str) {
        let mut stack = vec![rel.to_owned()];
        while let Some(dir) = stack.pop() {
            if self.dirs.len() >= MAX_WATCHES || is_skipped_path(&dir) {
                continue;
            }
            let full = self.root.join(&dir);
            let Ok(wd) = self.inotify.get_ref().0.add_watch(&full, mask()) else {
                continue;
            };
            self.dirs.insert(wd, dir.clone());
            let Ok(entries) = std::fs::read_dir(&full) else {
                continue;
            };
            for entry in entries.filter_map(Result::ok) {
                let is_dir = entry.file_type().is_ok_and(|t| t.is_dir());
                if let (true, Some(child)) = (is_dir, join(&dir, &entry.file_name())) {
                    stack.push(child);
                }
            }
        }
    }

    /// Reads every event that is ready and adds its path to `changed`.
    fn drain(&mut self, changed: &mut BTreeSet<String>) -> std::io::Result<()> {
        loop {
            let events = match self.inotify.get_ref().0.read_events() {
                Ok(events) => events,
                Err(nix::errno::Errno::EAGAIN) => return Ok(()),
                Err(e) => return Err(e.into()),
            };
            self.record(events, changed);
        }
    }

    fn record(
        &mut self,
        events: Vec<nix::sys::inotify::InotifyEvent>,
        changed: &mut BTreeSet<String>,
    ) {
        for event in events {
            if event.mask.contains(AddWatchFlags::IN_IGNORED) {
                self.dirs.remove(&event.wd);
                continue;
            }
            let Some(dir) = self.dirs.get(&event.wd).cloned() else {
                continue;
            };
            let Some(rel) = event.name.as_deref().and_then(|name| join(&dir, name)) else {
                continue;
            };
            // A skipped folder itself is reported, nothing inside it; nor
            // the temporary files of atomic writes.
            let name = rel.rsplit('/').next().unwrap_or(&rel);
            if is_inside_skipped_dir(&rel) || is_temp_name(name) {
                continue;
            }
            let new_dir = event.mask.contains(AddWatchFlags::IN_ISDIR)
                && event
                    .mask
                    .intersects(AddWatchFlags::IN_CREATE | AddWatchFlags::IN_MOVED_TO);
            if new_dir {
                self.add_tree(&rel);
            }
            if !rel.split('/').any(|part| part == ".git") {
                changed.insert(rel);
            }
        }
    }
}

/// Watches `root` until `out` is closed, sending batches of changed paths.
pub async fn watch_tree(root: &Path, out: mpsc::Sender<Vec<String>>) -> std::io::Result<()> {
    let inotify = Inotify::init(InitFlags::IN_NONBLOCK | InitFlags::IN_CLOEXEC)?;
    let mut watcher = Watcher {
        // SAFETY: the wrapped Inotify owns its descriptor for as long as the
        // AsyncFd lives and always returns the same one.
        inotify: unsafe { AsyncFd::register(Fd(inotify)) }?,
        root: root.to_owned(),
        dirs: HashMap::new(),
    };
    watcher.add_tree("");
    loop {
        let mut changed = BTreeSet::new();
        // Clearing readiness before reading to EAGAIN cannot lose an event.
        watcher.inotify.readable().await?.clear_ready();
        watcher.drain(&mut changed)?;
        // Gathers the rest of a burst (an npm install, a save) into one batch.
        tokio::time::sleep(BATCH).await;
        watcher.drain(&mut changed)?;
        if !changed.is_empty() && out.send(changed.into_iter().collect()).await.is_err() {
            return Ok(());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn changes_are_batched_and_new_directories_followed() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().to_owned();
        let (tx, mut rx) = mpsc::channel(16);
        let task = tokio::spawn({
            let root = root.clone();
            async move { watch_tree(&root, tx).await }
        });
        // Lets the watcher install its watches first.
        tokio::time::sleep(Duration::from_millis(100)).await;
        std::fs::create_dir_all(root.join("src")).unwrap();
        tokio::time::sleep(Duration::from_millis(100)).await;
        std::fs::write(root.join("src/App.jsx"), "x").unwrap();
        std::fs::create_dir_all(root.join("node_modules/react")).unwrap();
        std::fs::write(root.join("node_modules/react/index.js"), "x").unwrap();
        let mut seen = BTreeSet::new();
        while !seen.contains("src/App.jsx") {
            let batch = tokio::time::timeout(Duration::from_secs(5), rx.recv())
                .await
                .unwrap()
                .unwrap();
            seen.extend(batch);
        }
        assert!(seen.contains("src"));
        assert!(
            !seen.iter().any(|p| p.starts_with("node_modules/")),
            "{seen:?}"
        );
        task.abort();
    }
}
