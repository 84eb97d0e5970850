//! The server functions of a project whose actions run in the browser
//! (`crate::server::session::browser` does the work): the answers' text
//! for the tab, what the tab reports back, and the site it builds for a
//! publish.

use leptos::prelude::*;
use leptos::server_fn::codec::{ByteStream, Json, Streaming};

use crate::app::error::RivetError;
use crate::runtime::project::ProjectId;
use crate::runtime::relay::{BrowserSnapshot, FileMirror};
use crate::runtime::session::SessionEvent;

/// The project's answers as newline-delimited [`crate::runtime::relay::RelayEvent`]s,
/// for as long as the response is read. Each piece goes to one tab: the
/// latest that asked.
#[server(endpoint = "browser_answers", output = Streaming)]
pub async fn browser_answers(project: ProjectId) -> Result<ByteStream<RivetError>, RivetError> {
    use futures::StreamExt;
    let state = expect_context::<crate::server::state::AppState>();
    let relay = crate::server::session::browser::answers(&state, &project).await?;
    Ok(ByteStream::from(relay.map(|event| {
        bytes::Bytes::from(crate::runtime::session::encode_line(&event))
    })))
}

/// Publishes the session events the tab's parser and runner made.
#[server(endpoint = "report_events", input = Json)]
pub async fn report_events(
    project: ProjectId,
    events: Vec<SessionEvent>,
) -> Result<(), RivetError> {
    let state = expect_context::<crate::server::state::AppState>();
    Ok(crate::server::session::browser::report(&state, &project, events).await?)
}

/// Repeats a file change of the tab's runtime on the server's copy.
#[server(endpoint = "mirror_file", input = Json)]
pub async fn mirror_file(project: ProjectId, change: FileMirror) -> Result<(), RivetError> {
    let state = expect_context::<crate::server::state::AppState>();
    Ok(crate::server::session::browser::mirror(&state, &project, change).await?)
}

/// The project's files and dev server command, to boot a WebContainer with.
#[server(endpoint = "browser_files")]
pub async fn browser_files(project: ProjectId) -> Result<BrowserSnapshot, RivetError> {
    let state = expect_context::<crate::server::state::AppState>();
    Ok(crate::server::session::browser::snapshot(&state, &project).await?)
}

/// One file of the site the tab is building for the publish `request`.
#[server(endpoint = "site_file", input = Json)]
pub async fn site_file(
    project: ProjectId,
    request: String,
    path: String,
    content: crate::runtime::relay::FileContent,
) -> Result<(), RivetError> {
    use crate::server::session::publish::add_built_file;
    let state = expect_context::<crate::server::state::AppState>();
    Ok(add_built_file(&state, &project, &request, &path, content).await?)
}

/// How the tab's build for the publish `request` ended.
#[server(endpoint = "site_built", input = Json)]
pub async fn site_built(
    project: ProjectId,
    request: String,
    report: crate::runtime::relay::SiteBuildReport,
) -> Result<(), RivetError> {
    use crate::server::session::publish::finish_browser_build;
    let state = expect_context::<crate::server::state::AppState>();
    Ok(finish_browser_build(&state, &project, &request, report).await?)
}
