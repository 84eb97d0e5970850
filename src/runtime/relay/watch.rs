//! Mirrors the file changes nobody announced: what a command (`npm create`,
//! a build step, a shell) writes or removes inside the browser's runtime
//! reaches the server through the runtime's file events, so the server's
//! record, checkpoints and export miss nothing.
//!
//! Events are gathered for a short window from the first one, then each
//! path is read once: a file is sent as a write, a missing path as a
//! removal, a folder not at all (its files have events of their own).
//! Paths inside skipped folders (`runtime::tree`) are never read. A change
//! the server already has (the runner's own writes, the files mounted from
//! the server, a write repeated with the same bytes) is not sent again:
//! [`MirrorLog`] remembers what the server was last told of each path.

use std::collections::{BTreeSet, HashMap};
use std::hash::{Hash, Hasher};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use futures::{FutureExt, StreamExt};

use super::{FileContent, FileMirror};
use crate::runtime::host::{EventStream, FsEvent, Runtime, RuntimeError, checked_path};
use crate::runtime::runner::Sleeper;
use crate::runtime::tree::is_inside_skipped_dir;

#[cfg(test)]
mod tests;

/// How long events are gathered before the paths they name are read.
pub const WINDOW: Duration = Duration::from_millis(200);

/// Receives each change to send to the server, in order.
#[cfg(not(target_arch = "wasm32"))]
pub type MirrorSink = Arc<dyn Fn(FileMirror) + Send + Sync>;
#[cfg(target_arch = "wasm32")]
pub type MirrorSink = Arc<dyn Fn(FileMirror)>;

/// What the server was last told of each path: a digest of the bytes it
/// has, or that it has nothing there. Cheap to clone; clones share it.
#[derive(Clone, Default)]
pub struct MirrorLog {
    known: Arc<Mutex<HashMap<String, Option<u64>>>>,
}

fn digest(bytes: &[u8]) -> u64 {
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    bytes.hash(&mut hasher);
    hasher.finish()
}

/// A path as the log keeps it: normalised like every runtime's paths.
fn key(path: &str) -> String {
    checked_path(path).map_or_else(|_| path.to_owned(), |p| p.as_str().to_owned())
}

/// The folders above a path, nearest first.
fn ancestors(path: &str) -> impl Iterator<Item = &str> {
    path.rmatch_indices('/').map(move |(at, _)| &path[..at])
}

impl MirrorLog {
    fn lock(&self) -> MutexGuard<'_, HashMap<String, Option<u64>>> {
        self.known.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Records that the server has `bytes` at `path`; false when it had
    /// them already.
    pub fn wrote(&self, path: &str, bytes: &[u8]) -> bool {
        let (path, digest) = (key(path), Some(digest(bytes)));
        let path = path.as_str();
        let mut known = self.lock();
        for folder in ancestors(path) {
            if known.get(folder) == Some(&None) {
                known.remove(folder);
            }
        }
        known.insert(path.to_owned(), digest) != Some(digest)
    }

    /// Records that the server has nothing at `path` nor under it; false
    /// when it was told so already (of the path or a folder above it).
    pub fn removed(&self, path: &str) -> bool {
        let path = key(path);
        let path = path.as_str();
        let mut known = self.lock();
        if ancestors(path).any(|folder| known.get(folder) == Some(&None)) {
            return false;
        }
        let under = format!("{path}/");
        known.retain(|p, _| !p.starts_with(&under));
        known.insert(path.to_owned(), None) != Some(None)
    }

    /// Records that the server moved `from` (and what is under it) to `to`.
    pub fn renamed(&self, from: &str, to: &str) {
        let (from, to) = (key(from), key(to));
        let (from, to) = (from.as_str(), to.as_str());
        let mut known = self.lock();
        let under = format!("{from}/");
        let moved: Vec<(String, Option<u64>)> = known
            .iter()
            .filter(|(p, _)| *p == from || p.starts_with(&under))
            .map(|(p, digest)| (format!("{to}{}", &p[from.len()..]), *digest))
            .collect();
        known.retain(|p, _| !p.starts_with(&under));
        known.insert(from.to_owned(), None);
        known.extend(moved);
    }
}

/// Follows a runtime's file events and sends what changed.
pub struct WatchMirror {
    /// Where changed files are read.
    pub runtime: Arc<dyn Runtime>,
    pub sleep: Sleeper,
    pub sink: MirrorSink,
    /// Shared with whatever else tells the server of changes.
    pub log: MirrorLog,
    /// How long events are gathered ([`WINDOW`]).
    pub window: Duration,
}

/// The project path an event names, unless it is outside the project or
/// inside a skipped folder.
fn watched(event: &FsEvent) -> Option<String> {
    let path = checked_path(&event.path).ok()?;
    let path = path.as_str();
    (!path.is_empty() && !is_inside_skipped_dir(path)).then(|| path.to_owned())
}

impl WatchMirror {
    /// Mirrors the changes `events` announce until the stream ends.
    pub async fn run(self, mut events: EventStream<FsEvent>) {
        while let Some(first) = events.next().await {
            let Some(path) = watched(&first) else {
                continue;
            };
            let mut paths = BTreeSet::from([path]);
            let ended = self.gather(&mut events, &mut paths).await;
            for path in paths {
                self.mirror(&path).await;
            }
            if ended {
                return;
            }
        }
    }

    /// Adds the paths of the events of one window; true when the stream
    /// ended.
    async fn gather(
        &self,
        events: &mut EventStream<FsEvent>,
        paths: &mut BTreeSet<String>,
    ) -> bool {
        let window = (self.sleep)(self.window).fuse();
        futures::pin_mut!(window);
        loop {
            futures::select! {
                event = events.next().fuse() => match event {
                    Some(event) => paths.extend(watched(&event)),
                    None => return true,
                },
                () = window => return false,
            }
        }
    }

    /// Sends what `path` holds now, unless the server has it already.
    async fn mirror(&self, path: &str) {
        let change = match self.runtime.read_file(path).await {
            Ok(bytes) => self.log.wrote(path, &bytes).then(|| FileMirror::Write {
                path: path.to_owned(),
                content: FileContent::new(bytes),
            }),
            Err(RuntimeError::NotFound { .. }) => {
                self.log.removed(path).then(|| FileMirror::Remove {
                    path: path.to_owned(),
                })
            }
            // A folder, or a file that cannot be read now: a later event
            // brings it.
            Err(_) => None,
        };
        if let Some(change) = change {
            (self.sink)(change);
        }
    }
}
