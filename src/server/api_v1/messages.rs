//! `/api/v1/projects/{id}/messages`: send one (the answer streams on its
//! own task) and list them.

use axum::Json;
use axum::extract::rejection::JsonRejection;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use serde::{Deserialize, Serialize};

use super::{V1Error, project_id};
use crate::runtime::project::ProjectId;
use crate::runtime::session::{Chat, ChatId, MessageStatus, Role};
use crate::server::session::{api, images};
use crate::server::state::AppState;
use crate::server::store::MessageRow;

#[derive(Deserialize)]
pub struct NewMessage {
    text: String,
    /// `"model"` (one of the provider's; the configured one when left out)
    /// and `"mode"` (`build`, `agent` or `plan`; the conversation's when
    /// left out).
    #[serde(flatten)]
    options: api::SendOptions,
    /// Images for the model, as base64 with their type.
    #[serde(default)]
    images: Vec<NewImage>,
}

#[derive(Deserialize)]
pub struct NewImage {
    media_type: String,
    data: String,
}

/// An image a message carries, where to read it.
#[derive(Serialize, Debug, PartialEq)]
pub struct ImageJson {
    pub media_type: String,
    pub url: String,
}

#[derive(Serialize)]
pub struct Sent {
    user_message_id: String,
    assistant_message_id: String,
}

#[derive(Serialize, Debug, PartialEq)]
pub struct MessageJson {
    pub id: String,
    pub role: Role,
    /// The user's text, or the answer as streamed so far.
    pub text: String,
    /// `streaming`, `complete`, `failed`, `interrupted` (stopped by the
    /// person, or cut off) or `undone` (a restore went back past it).
    pub status: &'static str,
    /// Why a `failed` answer failed, as the chat says it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The model that answered (answers only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// The answer's tokens and, when its model's price is known, its cost.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub usage: Option<UsageJson>,
    /// The images a person's message carries.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub images: Vec<ImageJson>,
}

#[derive(Serialize, Debug, PartialEq)]
pub struct UsageJson {
    pub prompt_tokens: u32,
    pub completion_tokens: u32,
    pub cost_usd: Option<f64>,
}

impl MessageJson {
    fn of(project: &ProjectId, row: MessageRow) -> MessageJson {
        let error = match &row.status {
            MessageStatus::Failed { error } => Some(error.clone()),
            _ => None,
        };
        let status = match row.status {
            MessageStatus::Streaming => "streaming",
            MessageStatus::Complete => "complete",
            MessageStatus::Stopped | MessageStatus::Interrupted { .. } => "interrupted",
            MessageStatus::Failed { .. } => "failed",
            MessageStatus::Undone { .. } => "undone",
        };
        let images = row
            .attachments
            .images
            .iter()
            .map(|image| ImageJson {
                media_type: image.media_type.clone(),
                url: image.url(project),
            })
            .collect();
        MessageJson {
            images,
            id: row.id,
            role: row.role,
            text: row.text,
            status,
            error,
            model: row.model,
            usage: row.usage.map(|usage| UsageJson {
                prompt_tokens: usage.prompt_tokens,
                completion_tokens: usage.completion_tokens,
                cost_usd: row.cost_usd,
            }),
        }
    }
}

/// Sends to the project's first chat (or the body's `"chat"`).
pub async fn send(
    State(state): State<AppState>,
    Path(id): Path<String>,
    body: Result<Json<NewMessage>, JsonRejection>,
) -> Result<(StatusCode, Json<Sent>), V1Error> {
    send_to(state, &id, None, body?.0).await
}

/// Sends to the chat the path names.
pub async fn send_in_chat(
    State(state): State<AppState>,
    Path((id, chat)): Path<(String, String)>,
    body: Result<Json<NewMessage>, JsonRejection>,
) -> Result<(StatusCode, Json<Sent>), V1Error> {
    send_to(state, &id, Some(chat_id(&chat)?), body?.0).await
}

async fn send_to(
    state: AppState,
    id: &str,
    chat: Option<ChatId>,
    NewMessage {
        text,
        mut options,
        images,
    }: NewMessage,
) -> Result<(StatusCode, Json<Sent>), V1Error> {
    if chat.is_some() {
        options.chat = chat;
    }
    let project = project_id(id)?;
    let images: Vec<(String, String)> = images
        .into_iter()
        .map(|image| (image.media_type, image.data))
        .collect();
    let kept = images::upload_base64(&state, &project, &images).await?;
    options.attachments.images.extend(kept);
    let sent = api::send(&state, &project, text, options).await?;
    Ok((
        StatusCode::ACCEPTED,
        Json(Sent {
            user_message_id: sent.user_message_id,
            assistant_message_id: sent.assistant_message_id,
        }),
    ))
}

/// The first chat's messages.
pub async fn list(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Json<Vec<MessageJson>>, V1Error> {
    list_of(state, &id, ChatId::main()).await
}

/// The messages of the chat the path names.
pub async fn list_in_chat(
    State(state): State<AppState>,
    Path((id, chat)): Path<(String, String)>,
) -> Result<Json<Vec<MessageJson>>, V1Error> {
    list_of(state, &id, chat_id(&chat)?).await
}

async fn list_of(
    state: AppState,
    id: &str,
    chat: ChatId,
) -> Result<Json<Vec<MessageJson>>, V1Error> {
    let project = project_id(id)?;
    let rows = api::messages(&state, &project, &chat).await?;
    Ok(Json(
        rows.into_iter()
            .map(|row| MessageJson::of(&project, row))
            .collect(),
    ))
}

/// The project's chats, the first one first.
pub async fn chats(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Json<Vec<Chat>>, V1Error> {
    Ok(Json(api::chats(&state, &project_id(&id)?).await?))
}

/// Opens another chat on the project.
pub async fn open_chat(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<(StatusCode, Json<Chat>), V1Error> {
    let chat = api::open_chat(&state, &project_id(&id)?).await?;
    Ok((StatusCode::CREATED, Json(chat)))
}

fn chat_id(text: &str) -> Result<ChatId, V1Error> {
    ChatId::parse(text).ok_or_else(|| api::ApiError::ChatNotFound(text.to_owned()).into())
}
