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
//!
//! What is sent is bounded ([`MirrorLimits`]): a file over
//! [`MAX_FILE_BYTES`] is not sent at all, and past [`BYTES_PER_SECOND`] of
//! files within a second the next file waits for the second to end. Either
//! way a note (a line in the terminal's Rivet tab) names the file and the
//! limit.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::hash::{Hash, Hasher};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use futures::{FutureExt, StreamExt};

use super::{FileContent, FileMirror};
use crate::runtime::host::{EventStream, FsEvent, Runtime, RuntimeError, checked_path};
use crate::runtime::runner::{Sleeper, Task};
use crate::runtime::tree::is_inside_skipped_dir;

#[cfg(test)]
mod tests;

/// How long events are gathered before the paths they name are read.
pub const WINDOW: Duration = Duration::from_millis(200);

/// The largest file the mirror sends (8 MiB, before base64): a larger one
/// stays in the browser's runtime only.
pub const MAX_FILE_BYTES: usize = 8 << 20;

/// The most bytes of files the mirror sends within a second (16 MiB).
pub const BYTES_PER_SECOND: usize = 16 << 20;

/// How long a file over the budget waits: until the budget's second ends.
const BUDGET_PERIOD: Duration = Duration::from_secs(1);

/// What the mirror sends at most.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MirrorLimits {
    pub max_file_bytes: usize,
    pub bytes_per_second: usize,
}

impl Default for MirrorLimits {
    /// [`MAX_FILE_BYTES`] and [`BYTES_PER_SECOND`].
    fn default() -> MirrorLimits {
        MirrorLimits {
            max_file_bytes: MAX_FILE_BYTES,
            bytes_per_second: BYTES_PER_SECOND,
        }
    }
}

/// Receives each change to send to the server, in order.
#[cfg(not(target_arch = "wasm32"))]
pub type MirrorSink = Arc<dyn Fn(FileMirror) + Send + Sync>;
#[cfg(target_arch = "wasm32")]
pub type MirrorSink = Arc<dyn Fn(FileMirror)>;

/// Receives a sentence for the person when a file is held back.
#[cfg(not(target_arch = "wasm32"))]
pub type NoteSink = Arc<dyn Fn(String) + Send + Sync>;
#[cfg(target_arch = "wasm32")]
pub type NoteSink = Arc<dyn Fn(String)>;

/// A size in MiB, for notes.
fn mib(bytes: usize) -> String {
    format!("{:.1} MiB", bytes as f64 / f64::from(1u32 << 20))
}

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

    /// Whether the server has `bytes` at `path` already.
    pub fn has(&self, path: &str, bytes: &[u8]) -> bool {
        self.lock().get(&key(path)) == Some(&Some(digest(bytes)))
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
    /// What is sent at most.
    pub limits: MirrorLimits,
    /// Where the notes of held-back files go.
    pub note: NoteSink,
}

/// What the mirror has sent lately and said of it.
#[derive(Default)]
struct Pace {
    /// Bytes sent since the budget's second began.
    spent: usize,
    /// Ends with the budget's second; none before the first byte of it.
    second: Option<Task>,
    /// Files over the size limit already noted (noted again only after
    /// they were mirrored or removed).
    noted: HashSet<String>,
    /// Files that waited for a new second, for the notes.
    waits: usize,
}

impl Pace {
    /// Counts `len` bytes against this second's `budget`; false when they
    /// do not fit and must wait. A file fits a fresh second whatever its
    /// size.
    fn take(&mut self, len: usize, budget: usize, sleep: &Sleeper) -> bool {
        if self
            .second
            .as_mut()
            .is_some_and(|s| s.now_or_never().is_some())
        {
            self.spent = 0;
            self.second = None;
        }
        if self.spent > 0 && self.spent.saturating_add(len) > budget {
            return false;
        }
        self.spent = self.spent.saturating_add(len);
        if self.second.is_none() {
            self.second = Some(sleep(BUDGET_PERIOD));
        }
        true
    }

    /// Waits for the budget's second to end.
    async fn next_second(&mut self) {
        if let Some(second) = self.second.take() {
            second.await;
        }
        self.spent = 0;
    }
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
        let mut pace = Pace::default();
        while let Some(first) = events.next().await {
            let Some(path) = watched(&first) else {
                continue;
            };
            let mut paths = BTreeSet::from([path]);
            let ended = self.gather(&mut events, &mut paths).await;
            for path in paths {
                self.mirror(&path, &mut pace).await;
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

    /// Sends what `path` holds now, unless the server has it already or it
    /// is over the limits.
    async fn mirror(&self, path: &str, pace: &mut Pace) {
        let change = loop {
            match self.runtime.read_file(path).await {
                Ok(bytes) => match self.verdict(path, &bytes, pace) {
                    Verdict::Send => {
                        break self.log.wrote(path, &bytes).then(|| FileMirror::Write {
                            path: path.to_owned(),
                            content: FileContent::new(bytes),
                        });
                    }
                    Verdict::Skip => break None,
                    // Read again after the wait: it may have changed.
                    Verdict::Wait => pace.next_second().await,
                },
                Err(RuntimeError::NotFound { .. }) => {
                    pace.noted.remove(path);
                    break self.log.removed(path).then(|| FileMirror::Remove {
                        path: path.to_owned(),
                    });
                }
                // A folder, or a file that cannot be read now: a later event
                // brings it.
                Err(_) => break None,
            }
        };
        if let Some(change) = change {
            (self.sink)(change);
        }
    }

    /// What to do with `bytes` read at `path`: a file over the size limit
    /// is noted (once) and never sent; one over this second's budget waits
    /// for the next, with a note.
    fn verdict(&self, path: &str, bytes: &[u8], pace: &mut Pace) -> Verdict {
        let limits = self.limits;
        if bytes.len() > limits.max_file_bytes {
            if pace.noted.insert(path.to_owned()) {
                (self.note)(format!(
                    "{path} is not mirrored to the server: {} is over the limit of {} per file",
                    mib(bytes.len()),
                    mib(limits.max_file_bytes)
                ));
            }
            return Verdict::Skip;
        }
        pace.noted.remove(path);
        if self.log.has(path, bytes) {
            return Verdict::Skip;
        }
        if pace.take(bytes.len(), limits.bytes_per_second, &self.sleep) {
            return Verdict::Send;
        }
        pace.waits += 1;
        (self.note)(format!(
            "{path} waits for the next second: files are mirrored to the server at most {} a second ({} waits so far)",
            mib(limits.bytes_per_second),
            pace.waits
        ));
        Verdict::Wait
    }
}

/// What becomes of a file read for the mirror.
enum Verdict {
    Send,
    /// The server has it already, or it is over the size limit.
    Skip,
    /// Over this second's budget: read it again in the next.
    Wait,
}
