//! A WebContainer project's site is built where its processes run: in the
//! browser tab that runs the project. The server asks that tab through the
//! relay (`RelayEvent::BuildSite`), the tab builds with the same rule as
//! the server (`runtime::ship::build`), sends each file of the output
//! ([`add_file`]) and says how the build ended ([`finish`]). The files go
//! straight into the new version, within its limits; the publish waits
//! for the tab, and fails clearly when no tab runs the project, the tab
//! goes, or the build outlasts its time.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use futures::channel::oneshot;

use super::super::ProjectHandle;
use super::super::api::{ApiError, open_project};
use crate::runtime::project::ProjectId;
use crate::runtime::relay::{FileContent, RelayEvent, SiteBuildReport};
use crate::server::publish::{PublishError, VersionWriter, off_thread};
use crate::server::state::AppState;

/// How often the waiting publish checks that the tab is still there.
const TAB_CHECK: Duration = Duration::from_millis(500);

/// The site a project's tab is building, while it builds.
#[derive(Default)]
pub struct BrowserBuild {
    slot: Mutex<Option<Pending>>,
}

struct Pending {
    request: String,
    writer: VersionWriter,
    /// Files taken so far.
    files: u64,
    /// Told how the build ended: by the tab, or by a file it could not add.
    done: Option<oneshot::Sender<Result<(), PublishError>>>,
}

impl BrowserBuild {
    fn lock(&self) -> std::sync::MutexGuard<'_, Option<Pending>> {
        self.slot.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The pending build `request`, to change.
    fn with<T>(
        &self,
        request: &str,
        change: impl FnOnce(&mut Pending) -> Result<T, PublishError>,
    ) -> Result<T, PublishError> {
        let mut slot = self.lock();
        match slot.as_mut() {
            Some(pending) if pending.request == request => change(pending),
            _ => Err(PublishError::NoBuild(request.to_owned())),
        }
    }
}

impl Pending {
    fn end(&mut self, outcome: Result<(), PublishError>) {
        if let Some(done) = self.done.take() {
            // The publish may have stopped waiting; then nobody needs it.
            let _ = done.send(outcome);
        }
    }
}

/// Has the tab running `handle`'s project build `command` into `writer`;
/// the writer back, holding the whole site, once the tab says it is built.
pub async fn build_in_tab(
    handle: &Arc<ProjectHandle>,
    command: &str,
    writer: VersionWriter,
    timeout: Duration,
) -> Result<VersionWriter, ApiError> {
    let request = format!("{:016x}", rand::random::<u64>());
    let (done, finished) = oneshot::channel();
    *handle.site_build.lock() = Some(Pending {
        request: request.clone(),
        writer,
        files: 0,
        done: Some(done),
    });
    let asked = handle.browser.ask(RelayEvent::BuildSite {
        request,
        command: command.to_owned(),
        timeout_secs: timeout.as_secs(),
    });
    let outcome = if asked {
        wait(handle, finished, timeout).await
    } else {
        Err(no_tab())
    };
    let pending = handle.site_build.lock().take();
    outcome?;
    let pending = pending.ok_or_else(|| PublishError::NoBuild("the finished build".into()))?;
    Ok(pending.writer)
}

fn no_tab() -> PublishError {
    PublishError::NeedsTab(
        "it runs in the browser and no tab has it open: open the project, then publish".into(),
    )
}

/// Waits for the tab's word: an install and a build may each take
/// `timeout`, and sending the files as long again.
async fn wait(
    handle: &ProjectHandle,
    finished: oneshot::Receiver<Result<(), PublishError>>,
    timeout: Duration,
) -> Result<(), PublishError> {
    let deadline = tokio::time::sleep(timeout * 3);
    tokio::pin!(deadline, finished);
    let mut checks = tokio::time::interval(TAB_CHECK);
    loop {
        tokio::select! {
            outcome = &mut finished => {
                return outcome.unwrap_or_else(|_| Err(PublishError::BuildFailed(
                    "the build in the browser was abandoned".into(),
                )));
            }
            () = &mut deadline => {
                return Err(PublishError::BuildFailed(format!(
                    "the browser tab did not finish the build within {} s",
                    (timeout * 3).as_secs()
                )));
            }
            _ = checks.tick() => {
                if !handle.browser.has_tab() {
                    return Err(PublishError::NeedsTab(
                        "the browser tab building it closed before the build ended".into(),
                    ));
                }
            }
        }
    }
}

/// Adds a file the tab built to the pending version; a file the version
/// cannot take ends the build with that error. The file is written (and
/// synced, and perhaps compressed) off the async threads ([`off_thread`]).
pub async fn add_file(
    state: &AppState,
    project: &ProjectId,
    request: &str,
    path: &str,
    content: FileContent,
) -> Result<(), ApiError> {
    let handle = open_project(state, project).await?;
    let (request, path) = (request.to_owned(), path.to_owned());
    let add = move || {
        handle.site_build.with(&request, |pending| {
            let added = pending.writer.add(&path, content.as_bytes());
            match added {
                Ok(()) => {
                    pending.files += 1;
                    Ok(())
                }
                Err(error) => {
                    let said = error.to_string();
                    pending.end(Err(error));
                    Err(PublishError::BuildFailed(said))
                }
            }
        })
    };
    Ok(off_thread(add).await?)
}

/// Ends the pending build as the tab reports; a report of more files than
/// arrived is a failure.
pub async fn finish(
    state: &AppState,
    project: &ProjectId,
    request: &str,
    report: SiteBuildReport,
) -> Result<(), ApiError> {
    let handle = open_project(state, project).await?;
    Ok(handle.site_build.with(request, |pending| {
        let outcome = match report {
            SiteBuildReport::Built { files, .. } if files == pending.files => Ok(()),
            SiteBuildReport::Built { files, root } => Err(PublishError::BuildFailed(format!(
                "the browser built {files} files in {root}/ but {} arrived",
                pending.files
            ))),
            SiteBuildReport::NothingToPublish { reason } => {
                Err(PublishError::NothingToPublish(reason))
            }
            SiteBuildReport::Failed { reason } => Err(PublishError::BuildFailed(reason)),
        };
        pending.end(outcome);
        Ok(())
    })?)
}

#[cfg(test)]
mod tests;
