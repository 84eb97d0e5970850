//! The server functions of a project whose actions run in the browser
//! (`crate::server::session::browser` does the work): the answers' text
//! for the tab, and what the tab reports back.

use leptos::prelude::*;
use leptos::server_fn::codec::{ByteStream, Json, Streaming};

use crate::runtime::relay::{BrowserSnapshot, FileMirror};
use crate::runtime::session::SessionEvent;

/// The project's answers as newline-delimited [`crate::runtime::relay::RelayEvent`]s,
/// for as long as the response is read. Each piece goes to one tab: the
/// latest that asked.
#[server(endpoint = "browser_answers", output = Streaming)]
pub async fn browser_answers(project: String) -> Result<ByteStream, ServerFnError> {
    use futures::StreamExt;
    let state = expect_context::<crate::server::state::AppState>();
    let relay = crate::server::session::browser::answers(&state, &project)
        .await
        .map_err(ServerFnError::new)?;
    Ok(ByteStream::from(relay.map(|event| {
        // Serialising our own type cannot fail; an empty line is skipped.
        let mut line = serde_json::to_vec(&event).unwrap_or_default();
        line.push(b'\n');
        bytes::Bytes::from(line)
    })))
}

/// Publishes the session events the tab's parser and runner made.
#[server(endpoint = "report_events", input = Json)]
pub async fn report_events(
    project: String,
    events: Vec<SessionEvent>,
) -> Result<(), ServerFnError> {
    let state = expect_context::<crate::server::state::AppState>();
    crate::server::session::browser::report(&state, &project, events)
        .await
        .map_err(ServerFnError::new)
}

/// Repeats a file change of the tab's runtime on the server's copy.
#[server(endpoint = "mirror_file", input = Json)]
pub async fn mirror_file(project: String, change: FileMirror) -> Result<(), ServerFnError> {
    let state = expect_context::<crate::server::state::AppState>();
    crate::server::session::browser::mirror(&state, &project, change)
        .await
        .map_err(ServerFnError::new)
}

/// The project's files and dev server command, to boot a WebContainer with.
#[server(endpoint = "browser_files")]
pub async fn browser_files(project: String) -> Result<BrowserSnapshot, ServerFnError> {
    let state = expect_context::<crate::server::state::AppState>();
    crate::server::session::browser::snapshot(&state, &project)
        .await
        .map_err(ServerFnError::new)
}
