//! A project's disk quota (`sandbox.disk_mb`): what its folders take is
//! measured after its files change and while its sandbox runs; once over
//! the quota, everything the project runs is stopped, an alert names the
//! quota and the usage, and nothing new starts until files are deleted.
//! Nothing the project wrote is deleted. No single file can pass the quota
//! either: `limits.rs` caps `RLIMIT_FSIZE` at it.

mod usage;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use tokio::sync::broadcast::error::RecvError;

use self::usage::{Usage, UsageError};
use super::SandboxManager;
use super::runtime::ProjectEntry;
use crate::runtime::host::{Limit, RuntimeError};
use crate::runtime::project::ProjectId;

/// Called with a project that has just gone over its quota, and the
/// sentence that says so.
pub type QuotaExceeded = Box<dyn Fn(&ProjectId, &str) + Send + Sync>;

/// Shortest time between two measures of one project: a busy project
/// (an install writing thousands of files) costs one walk per interval.
const MIN_GAP: Duration = Duration::from_secs(2);
/// How often a project whose sandbox runs is measured without any reported
/// change: writes inside skipped folders (`node_modules`), in the home
/// folder, or to a file held open report nothing.
const IDLE_EVERY: Duration = Duration::from_secs(10);
const MIB: f64 = 1024.0 * 1024.0;

/// One project's standing against its quota. Owned by its `ProjectEntry`.
#[derive(Default)]
pub struct Quota {
    /// Why the project is over its quota ("the project uses 9.1 MiB"), while
    /// it is.
    over: Mutex<Option<String>>,
    /// Whether the project is being watched.
    watched: AtomicBool,
}

impl Quota {
    fn over(&self) -> Option<String> {
        self.over.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// Records the verdict; true when the project has just gone over.
    fn set(&self, over: Option<String>) -> bool {
        let mut current = self.over.lock().unwrap_or_else(|e| e.into_inner());
        let crossed = current.is_none() && over.is_some();
        *current = over;
        crossed
    }
}

/// What the measure says, in words.
enum Verdict {
    Within,
    Over(String),
}

fn mib(bytes: u64) -> String {
    format!("{:.1} MiB", bytes as f64 / MIB)
}

fn verdict(measured: Result<Usage, UsageError>) -> Option<Verdict> {
    match measured {
        Ok(Usage { over: false, .. }) => Some(Verdict::Within),
        Ok(Usage { bytes, .. }) => Some(Verdict::Over(format!(
            "the project uses more than {}",
            mib(bytes)
        ))),
        Err(e @ UsageError::TooDeep { .. }) => Some(Verdict::Over(format!(
            "the project cannot be measured: {e}"
        ))),
        // A folder its owner closed (the IDE runs as that owner) would hide
        // what is inside: that counts as over. Other failures are the IDE's
        // own (out of descriptors, say): the next measure tries again.
        Err(UsageError::Unreadable { source, .. })
            if source.kind() == std::io::ErrorKind::PermissionDenied =>
        {
            Some(Verdict::Over(format!(
                "the project cannot be measured: {source} (give the folder back its read and \
                 search permissions)"
            )))
        }
        Err(error) => {
            tracing::warn!(%error, "cannot measure a project's disk usage");
            None
        }
    }
}

impl SandboxManager {
    /// Has `hook` called whenever a project goes over its disk quota.
    pub fn on_quota_exceeded(&self, hook: QuotaExceeded) {
        self.on_quota
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(hook);
    }

    /// "disk quota of 8 MiB per project reached (sandbox.disk_mb): the
    /// project uses more than 8.0 MiB".
    fn quota_reached(&self, why: &str) -> String {
        format!("{}: {why}", self.limits().reached(Limit::Disk, None))
    }

    /// Why a process of a project over its quota stopped.
    pub(super) fn quota_stop_message(&self, entry: &ProjectEntry) -> Option<String> {
        let why = entry.quota.over()?;
        Some(format!(
            "stopped: {}; its files are kept, and nothing new runs until files are deleted",
            self.quota_reached(&why)
        ))
    }

    /// Measures the project now and records the verdict; on going over,
    /// stops everything it runs. Returns why it is over, if it is.
    async fn check_quota(&self, entry: &ProjectEntry) -> Option<String> {
        let limit = self.limits().disk_quota()?;
        let dirs = self.dirs(&entry.id);
        let roots = vec![dirs.workspace, dirs.home];
        let measured = tokio::task::spawn_blocking(move || usage::measure(&roots, limit)).await;
        let verdict = match measured {
            Ok(measured) => verdict(measured)?,
            Err(error) => {
                tracing::warn!(%error, "the disk usage measure failed");
                return None;
            }
        };
        let why = match verdict {
            Verdict::Within => {
                if entry.quota.set(None) {
                    tracing::info!(project = %entry.id, "back within its disk quota");
                }
                return None;
            }
            Verdict::Over(why) => why,
        };
        if entry.quota.set(Some(why.clone())) {
            self.enforce_quota(&entry.id, &self.quota_reached(&why))
                .await;
        }
        Some(why)
    }

    /// Tells the session (which stops its run and shows the alert), then
    /// kills everything the project runs.
    async fn enforce_quota(&self, project: &ProjectId, message: &str) {
        tracing::warn!(%project, detail = message, "project over its disk quota: stopping it");
        for hook in self
            .on_quota
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
        {
            hook(project, message);
        }
        self.close_project(project).await;
    }

    /// Refuses to start anything in a project over its quota (measured
    /// again first: files may have been deleted since).
    pub(super) async fn admit(&self, entry: &ProjectEntry) -> Result<(), RuntimeError> {
        if entry.quota.over().is_none() {
            return Ok(());
        }
        match self.check_quota(entry).await {
            None => Ok(()),
            Some(why) => Err(RuntimeError::Unavailable(format!(
                "not started: {}; delete files to run commands again",
                self.quota_reached(&why)
            ))),
        }
    }
}

/// Starts watching the project's disk usage, once per project, for as long
/// as the manager lives.
pub(super) fn monitor(manager: &Arc<SandboxManager>, entry: &Arc<ProjectEntry>) {
    if manager.limits().disk_quota().is_none() || entry.quota.watched.swap(true, Ordering::AcqRel) {
        return;
    }
    tokio::spawn(watch_usage(Arc::downgrade(manager), Arc::clone(entry)));
}

/// Measures at once, then after every reported change (at most once per
/// [`MIN_GAP`]) and every [`IDLE_EVERY`] while the sandbox runs.
async fn watch_usage(manager: Weak<SandboxManager>, entry: Arc<ProjectEntry>) {
    let mut files = entry.events.files.subscribe();
    let mut changed = true;
    loop {
        if !changed {
            changed = tokio::select! {
                got = files.recv() => match got {
                    Ok(_) | Err(RecvError::Lagged(_)) => true,
                    Err(RecvError::Closed) => return,
                },
                () = tokio::time::sleep(IDLE_EVERY) => false,
            };
        }
        let Some(manager) = manager.upgrade() else {
            return;
        };
        if changed || manager.running(&entry.id).await.is_some() {
            manager.check_quota(&entry).await;
        }
        drop(manager);
        changed = false;
        tokio::time::sleep(MIN_GAP).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_project_goes_over_once_until_it_is_back_within() {
        let quota = Quota::default();
        assert!(quota.set(Some("uses 9 MiB".into())));
        assert!(!quota.set(Some("uses 10 MiB".into())), "already over");
        assert_eq!(quota.over().as_deref(), Some("uses 10 MiB"));
        assert!(!quota.set(None));
        assert!(quota.over().is_none());
        assert!(quota.set(Some("uses 9 MiB".into())), "over again");
    }

    #[test]
    fn usage_past_the_quota_or_that_cannot_be_measured_is_over() {
        let over = verdict(Ok(Usage {
            bytes: 9 << 20,
            over: true,
        }));
        assert!(
            matches!(over, Some(Verdict::Over(why)) if why == "the project uses more than 9.0 MiB")
        );
        let within = verdict(Ok(Usage {
            bytes: 1,
            over: false,
        }));
        assert!(matches!(within, Some(Verdict::Within)));
        let deep = verdict(Err(UsageError::TooDeep { path: "a/b".into() }));
        assert!(matches!(deep, Some(Verdict::Over(why)) if why.contains("a/b is nested deeper")));
        let closed = verdict(Err(UsageError::Unreadable {
            root: "/w".into(),
            source: std::io::Error::from(std::io::ErrorKind::PermissionDenied),
        }));
        assert!(matches!(closed, Some(Verdict::Over(_))));
        let ides_own = verdict(Err(UsageError::Unreadable {
            root: "/w".into(),
            source: std::io::Error::other("too many open files"),
        }));
        assert!(ides_own.is_none(), "tried again later, not held against it");
    }
}
