//! The server functions the UI calls. Their bodies run only on the server and
//! delegate to `crate::server`; this file is the IDE's browser-facing API
//! (the project list's is `crate::app::projects::api`). Every one fails with
//! a [`RivetError`], whose code the UI can match.

pub mod selection;

use leptos::prelude::*;
use leptos::server_fn::codec::{ByteStream, Streaming};

pub use crate::app::error::{ErrorCode, RivetError};
pub use crate::runtime::action::ProjectPath;
pub use crate::runtime::project::ProjectId;
pub use crate::runtime::session::{Decision, FileChange, Mode};

/// The server's state, which every server function hands to its one call.
#[cfg(feature = "ssr")]
fn state() -> crate::server::state::AppState {
    expect_context::<crate::server::state::AppState>()
}

/// The project's events as newline-delimited JSON envelopes: a snapshot
/// first, then every event, for as long as the response is read.
#[server(endpoint = "session_feed", output = Streaming)]
pub async fn session_feed(project: ProjectId) -> Result<ByteStream<RivetError>, RivetError> {
    Ok(crate::server::session::api::feed(&state(), &project).await?)
}

/// Sends the person's message; the answer and its actions arrive on the
/// feed. Fails with [`ErrorCode::Busy`] while another answer streams. (A
/// message with images or selected elements goes through
/// `chat::attach::send_attached`, out of the first load.)
#[server(endpoint = "send_message")]
pub async fn send_message(
    project: ProjectId,
    text: String,
    #[server(default)] model: Option<String>,
    #[server(default)] mode: Option<Mode>,
    #[server(default)] chat: Option<crate::runtime::session::ChatId>,
) -> Result<(), RivetError> {
    let options = crate::server::session::api::SendOptions {
        model,
        mode,
        chat,
        attachments: Default::default(),
    };
    Ok(
        crate::server::session::api::send(&state(), &project, text, options)
            .await
            .map(drop)?,
    )
}

/// The app secrets' names and values, for the WebContainer that runs the
/// project's processes in this tab; none for a sandbox project.
#[server(endpoint = "browser_secrets")]
pub async fn browser_secrets(project: ProjectId) -> Result<Vec<(String, String)>, RivetError> {
    Ok(crate::server::session::secrets::for_browser(&state(), &project).await?)
}

/// Opens another chat on the project (see `session::chats`).
#[server(endpoint = "open_chat")]
pub async fn open_chat(project: ProjectId) -> Result<crate::runtime::session::Chat, RivetError> {
    Ok(crate::server::session::api::open_chat(&state(), &project).await?)
}

/// The models the configured provider lists, for the composer's picker.
#[server(endpoint = "answer_models")]
pub async fn answer_models() -> Result<Vec<String>, RivetError> {
    let state = state();
    Ok(state.llm.list_models(&state.llm.resolve()).await)
}

/// Stops the streaming answer, the running command and every pending action.
#[server(endpoint = "stop_run")]
pub async fn stop_run(project: ProjectId) -> Result<(), RivetError> {
    Ok(crate::server::session::api::stop(&state(), &project).await?)
}

/// Continues an interrupted answer where it stopped.
#[server(endpoint = "continue_answer")]
pub async fn continue_answer(project: ProjectId, message_id: String) -> Result<(), RivetError> {
    Ok(crate::server::session::api::continue_answer(&state(), &project, &message_id).await?)
}

/// Asks again for an answer that failed or was interrupted.
#[server(endpoint = "retry_answer")]
pub async fn retry_answer(project: ProjectId, message_id: String) -> Result<(), RivetError> {
    Ok(crate::server::session::api::retry(&state(), &project, &message_id).await?)
}

/// A file's text. A path outside the project is refused as
/// [`ErrorCode::Invalid`] before anything reads it.
#[server(endpoint = "read_file")]
pub async fn read_file(project: ProjectId, path: ProjectPath) -> Result<String, RivetError> {
    Ok(crate::server::session::api::read_file(&state(), &project, &path).await?)
}

/// Saves a file from the editor; the edit goes to the model with the next message.
#[server(endpoint = "write_file")]
pub async fn write_file(
    project: ProjectId,
    path: ProjectPath,
    content: String,
) -> Result<(), RivetError> {
    Ok(
        crate::server::session::api::write_file(&state(), &project, &path, content.into_bytes())
            .await?,
    )
}

#[server(endpoint = "rename_path")]
pub async fn rename_path(
    project: ProjectId,
    from: ProjectPath,
    to: ProjectPath,
) -> Result<(), RivetError> {
    Ok(crate::server::session::api::rename(&state(), &project, &from, &to).await?)
}

#[server(endpoint = "delete_path")]
pub async fn delete_path(project: ProjectId, path: ProjectPath) -> Result<(), RivetError> {
    Ok(crate::server::session::api::delete(&state(), &project, &path).await?)
}

/// What the last answer changed in `path`, for the diff view.
#[server(endpoint = "answer_diff")]
pub async fn answer_diff(
    project: ProjectId,
    path: ProjectPath,
) -> Result<Option<FileChange>, RivetError> {
    Ok(crate::server::session::api::answer_diff(&state(), &project, &path).await?)
}

/// Records an error of the previewed page, which its reporter posted to
/// the IDE's page (`kind`: `error`, `rejection` or `console`); false when
/// it was a repeat or one too many.
#[server(endpoint = "report_page_error")]
pub async fn report_page_error(
    project: ProjectId,
    kind: String,
    message: String,
) -> Result<bool, RivetError> {
    use crate::server::session::page_report::{Outcome, report};
    Ok(report(&state(), &project, &kind, &message).await? == Outcome::Recorded)
}

/// "Try again" on the fix loop's stop alert `alert`: automatic attempts
/// start again with a fresh count.
#[server(endpoint = "try_fix_again")]
pub async fn try_fix_again(project: ProjectId, alert: u64) -> Result<(), RivetError> {
    Ok(crate::server::session::fix::try_again(&state(), &project, alert).await?)
}

/// Gives a port the project's servers listen on a preview address, and
/// returns it. Only the dev server of a `start` gets one without asking.
#[server(endpoint = "open_preview")]
pub async fn open_preview(project: ProjectId, port: u16) -> Result<String, RivetError> {
    Ok(crate::server::session::api::open_preview(&state(), &project, port).await?)
}

/// Puts the files back as they were right after the answer `message_id`;
/// later messages are kept, marked undone.
#[server(endpoint = "restore_to_message")]
pub async fn restore_to_message(project: ProjectId, message_id: String) -> Result<(), RivetError> {
    crate::server::session::checkpoints::restore(&state(), &project, &message_id).await?;
    Ok(())
}

/// Undoes the latest restore to the answer `message_id`.
#[server(endpoint = "redo_restore")]
pub async fn redo_restore(project: ProjectId, message_id: String) -> Result<(), RivetError> {
    crate::server::session::checkpoints::redo(&state(), &project, &message_id).await?;
    Ok(())
}

/// A new project with the files and the conversation up to the answer
/// `message_id`; returns its id.
#[server(endpoint = "fork_from_message")]
pub async fn fork_from_message(
    project: ProjectId,
    message_id: String,
) -> Result<String, RivetError> {
    let fork = crate::server::session::checkpoints::fork(&state(), &project, &message_id).await?;
    Ok(fork.id)
}

/// The conversation's mode: the one chosen, else `[agent] default_mode`.
#[server(endpoint = "conversation_mode")]
pub async fn conversation_mode(project: ProjectId) -> Result<Mode, RivetError> {
    Ok(crate::server::session::api::mode(&state(), &project).await?)
}

/// Switches the conversation between Build and Agent mode.
#[server(endpoint = "set_conversation_mode")]
pub async fn set_conversation_mode(project: ProjectId, mode: Mode) -> Result<(), RivetError> {
    Ok(crate::server::session::api::set_mode(&state(), &project, mode).await?)
}

/// Approves or denies an agent step that waits for the person.
#[server(endpoint = "decide_step")]
pub async fn decide_step(
    project: ProjectId,
    step_id: String,
    decision: Decision,
) -> Result<(), RivetError> {
    Ok(crate::server::session::api::decide_step(&state(), &project, &step_id, decision).await?)
}
