//! Building the project's site in this tab when the server asks
//! (`RelayEvent::BuildSite`, for a publish): the shared rule
//! (`runtime::ship::build`) runs the build in the WebContainer with its
//! output in the Rivet terminal, then each file of the output goes to the
//! server, and the server hears how it ended.

use std::rc::Rc;
use std::time::Duration;

use futures::channel::mpsc;

use super::runtime::WebContainerRuntime;
use crate::app::browser_runtime::{site_built, site_file};
use crate::runtime::host::Runtime;
use crate::runtime::project::ProjectId;
use crate::runtime::relay::{FileContent, SiteBuildReport};
use crate::runtime::session::SessionEvent;
use crate::runtime::ship::build::{BuildFailure, build, read_site_file, site_files};

/// What the server asked for.
pub struct SiteRequest {
    pub request: String,
    pub command: String,
    pub timeout: Duration,
}

/// Builds and sends the site in the background.
pub fn build_site(
    project: ProjectId,
    runtime: Rc<WebContainerRuntime>,
    outbox: mpsc::UnboundedSender<SessionEvent>,
    asked: SiteRequest,
) {
    leptos::task::spawn_local(async move {
        let say = |text: &str| {
            let _ = outbox.unbounded_send(SessionEvent::Terminal {
                text: text.to_owned(),
            });
        };
        say(&format!("\x1b[1m$ {}\x1b[0m  # publish\r\n", asked.command));
        let output = |chunk: &[u8]| say(&String::from_utf8_lossy(chunk));
        let built = build(runtime.as_ref(), &asked.command, asked.timeout, &output).await;
        let report = match built {
            Ok(root) => send(&project, &asked.request, runtime.as_ref(), &root).await,
            Err(BuildFailure::NothingToPublish(reason)) => {
                SiteBuildReport::NothingToPublish { reason }
            }
            Err(failure) => SiteBuildReport::Failed {
                reason: failure.to_string(),
            },
        };
        if let SiteBuildReport::Failed { reason } | SiteBuildReport::NothingToPublish { reason } =
            &report
        {
            say(&format!(
                "\x1b[31m# Rivet: not published: {reason}\x1b[0m\r\n"
            ));
        }
        if let Err(e) = site_built(project, asked.request, report).await {
            leptos::logging::warn!("the server did not take the site's build: {e}");
        }
    });
}

/// Sends every file of the site under `root`; how that went.
async fn send(
    project: &ProjectId,
    request: &str,
    runtime: &dyn Runtime,
    root: &str,
) -> SiteBuildReport {
    let failed = |reason: String| SiteBuildReport::Failed { reason };
    let files = match site_files(runtime, root).await {
        Ok(files) => files,
        Err(e) => return failed(format!("the built site could not be listed: {e}")),
    };
    let mut sent = 0;
    for file in &files {
        let content = match read_site_file(runtime, file).await {
            Ok(Some(bytes)) => FileContent::new(bytes),
            Ok(None) => continue,
            Err(e) => return failed(format!("{}: {e}", file.path)),
        };
        let taken = site_file(
            project.clone(),
            request.to_owned(),
            file.relative.clone(),
            content,
        )
        .await;
        if let Err(e) = taken {
            return failed(format!("{} was not taken: {e}", file.path));
        }
        sent += 1;
    }
    SiteBuildReport::Built {
        root: root.to_owned(),
        files: sent,
    }
}
