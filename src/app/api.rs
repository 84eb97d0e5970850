//! The server functions the UI calls. Their bodies run only on the server and
//! delegate to `crate::server`; this file is the IDE's browser-facing API
//! (the project list's is `crate::app::projects::api`). Every one fails with
//! a [`RivetError`], whose code the UI can match.

use leptos::prelude::*;
use leptos::server_fn::codec::{ByteStream, Streaming};

pub use crate::app::error::{ErrorCode, RivetError};
pub use crate::runtime::project::ProjectId;
pub use crate::runtime::session::FileChange;

/// The project's events as newline-delimited JSON envelopes: a snapshot
/// first, then every event, for as long as the response is read.
#[server(endpoint = "session_feed", output = Streaming)]
pub async fn session_feed(project: ProjectId) -> Result<ByteStream<RivetError>, RivetError> {
    Ok(crate::server::session::api::feed(project.as_str()).await?)
}

/// Sends the person's message; the answer and its actions arrive on the
/// feed. Fails with [`ErrorCode::Busy`] while another answer streams.
#[server(endpoint = "send_message")]
pub async fn send_message(project: ProjectId, text: String) -> Result<(), RivetError> {
    Ok(crate::server::session::api::send(project.as_str(), text).await?)
}

/// Stops the streaming answer, the running command and every pending action.
#[server(endpoint = "stop_run")]
pub async fn stop_run(project: ProjectId) -> Result<(), RivetError> {
    Ok(crate::server::session::api::stop(project.as_str()).await?)
}

/// Continues an interrupted answer where it stopped.
#[server(endpoint = "continue_answer")]
pub async fn continue_answer(project: ProjectId, message_id: String) -> Result<(), RivetError> {
    Ok(crate::server::session::api::continue_answer(project.as_str(), &message_id).await?)
}

/// Asks again for an answer that failed or was interrupted.
#[server(endpoint = "retry_answer")]
pub async fn retry_answer(project: ProjectId, message_id: String) -> Result<(), RivetError> {
    Ok(crate::server::session::api::retry(project.as_str(), &message_id).await?)
}

#[server(endpoint = "read_file")]
pub async fn read_file(project: ProjectId, path: String) -> Result<String, RivetError> {
    Ok(crate::server::session::api::read_file(project.as_str(), &path).await?)
}

/// Saves a file from the editor; the edit goes to the model with the next message.
#[server(endpoint = "write_file")]
pub async fn write_file(
    project: ProjectId,
    path: String,
    content: String,
) -> Result<(), RivetError> {
    Ok(crate::server::session::api::write_file(project.as_str(), &path, content).await?)
}

#[server(endpoint = "rename_path")]
pub async fn rename_path(project: ProjectId, from: String, to: String) -> Result<(), RivetError> {
    Ok(crate::server::session::api::rename(project.as_str(), &from, &to).await?)
}

#[server(endpoint = "delete_path")]
pub async fn delete_path(project: ProjectId, path: String) -> Result<(), RivetError> {
    Ok(crate::server::session::api::delete(project.as_str(), &path).await?)
}

/// What the last answer changed in `path`, for the diff view.
#[server(endpoint = "answer_diff")]
pub async fn answer_diff(
    project: ProjectId,
    path: String,
) -> Result<Option<FileChange>, RivetError> {
    Ok(crate::server::session::api::answer_diff(project.as_str(), &path).await?)
}

/// Gives a port the project's servers listen on a preview address, and
/// returns it. Only the dev server of a `start` gets one without asking.
#[server(endpoint = "open_preview")]
pub async fn open_preview(project: ProjectId, port: u16) -> Result<String, RivetError> {
    Ok(crate::server::session::api::open_preview(project.as_str(), port).await?)
}
