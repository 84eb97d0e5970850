//! The `messages` table: each message whole, as the model sent it.

use sqlx::{Row, Sqlite, Transaction};

use std::collections::HashMap;

use super::{Store, StoreError, events, now};
use crate::runtime::attachment::Attachments;
use crate::runtime::llm::{FinishReason, TokenUsage};
use crate::runtime::session::{MessageStatus, Role};

#[derive(Clone, Debug, PartialEq)]
pub struct MessageRow {
    pub id: String,
    pub role: Role,
    /// The user's text, or the answer as streamed so far (artifacts included).
    pub text: String,
    /// For an answer: the user message it answers.
    pub asked: Option<String>,
    pub model: Option<String>,
    pub usage: Option<TokenUsage>,
    /// What the answer cost in dollars, when its model's price was known
    /// (kept beside the counts in the `usage` column).
    pub cost_usd: Option<f64>,
    pub finish_reason: Option<FinishReason>,
    pub status: MessageStatus,
    /// A person's message: its images and selected elements (the
    /// `attachments` column, JSON).
    pub attachments: Attachments,
}

impl MessageRow {
    /// Messages are numbered `m1`, `m2`, … within a project.
    pub fn position(&self) -> i64 {
        self.id.trim_start_matches('m').parse::<i64>().unwrap_or(0)
    }
}

fn status_columns(status: &MessageStatus) -> (&'static str, Option<String>) {
    match status {
        MessageStatus::Streaming => ("streaming", None),
        MessageStatus::Complete => ("complete", None),
        MessageStatus::Stopped => ("stopped", None),
        MessageStatus::Interrupted { reason } => ("interrupted", Some(reason.clone())),
        MessageStatus::Failed { error } => ("failed", Some(error.clone())),
        // The status Redo gives back, as JSON.
        MessageStatus::Undone { was } => ("undone", serde_json::to_string(was).ok()),
    }
}

fn status_from(name: &str, detail: Option<String>) -> MessageStatus {
    let detail = detail.unwrap_or_default();
    match name {
        "streaming" => MessageStatus::Streaming,
        "complete" => MessageStatus::Complete,
        "stopped" => MessageStatus::Stopped,
        "interrupted" => MessageStatus::Interrupted { reason: detail },
        "undone" => MessageStatus::Undone {
            was: Box::new(serde_json::from_str(&detail).unwrap_or(MessageStatus::Complete)),
        },
        _ => MessageStatus::Failed { error: detail },
    }
}

/// The column holds the reason's serde name (older rows its lower-cased
/// `Debug` text, which serde also accepts), so there is one spelling of each
/// reason: the type's.
fn finish_reason_text(reason: FinishReason) -> Option<String> {
    match serde_json::to_value(reason) {
        Ok(serde_json::Value::String(text)) => Some(text),
        _ => None,
    }
}

/// A reason this version does not know leaves the message without one
/// rather than failing the conversation it belongs to.
fn finish_reason_from(text: Option<String>) -> Option<FinishReason> {
    let text = text?;
    match serde_json::from_value(serde_json::Value::String(text)) {
        Ok(reason) => Some(reason),
        Err(error) => {
            tracing::warn!(%error, "a stored finish reason is unknown; reading none");
            None
        }
    }
}

fn role_name(role: Role) -> &'static str {
    match role {
        Role::User => "user",
        Role::Assistant => "assistant",
    }
}

impl Store {
    /// The project's messages in order, a streaming answer's with the
    /// text stored since its row was saved.
    pub async fn messages(&self, project: &str) -> Result<Vec<MessageRow>, StoreError> {
        let pool = self.ready().await?;
        let rows = sqlx::query(
            "SELECT id, role, text, asked, model, usage, finish_reason, status, status_detail, \
             attachments, text_after FROM messages WHERE project = $1 ORDER BY position",
        )
        .bind(project)
        .fetch_all(pool)
        .await?;
        let mut messages: Vec<MessageRow> = rows.iter().map(message_from).collect();
        let mut pieces = Pieces::default();
        let stored = sqlx::query(
            "SELECT message_id, piece, after_event FROM message_text WHERE project = $1 \
             ORDER BY seq",
        )
        .bind(project)
        .fetch_all(pool)
        .await?;
        for piece in stored {
            // Rows older than `after_event` come before any that rode on events.
            let after = piece.get::<Option<i64>, _>("after_event").unwrap_or(-1);
            pieces.add(piece.get("message_id"), (after, false), piece.get("piece"));
        }
        for (message, row) in messages.iter().zip(&rows) {
            let Some(after) = row.get::<Option<i64>, _>("text_after") else {
                continue;
            };
            if message.status != MessageStatus::Streaming {
                continue;
            }
            for (seq, text) in events::pieces_after(pool, project, &message.id, after).await? {
                // A piece that rode on event `seq` was stored after event `seq - 1`.
                pieces.add(message.id.clone(), (seq - 1, true), text);
            }
        }
        for message in &mut messages {
            message.text.push_str(&pieces.text_of(&message.id));
        }
        Ok(messages)
    }

    /// Saves one message now (outside the session's writer).
    pub async fn save_message(
        &self,
        project: &str,
        message: &MessageRow,
    ) -> Result<(), StoreError> {
        let mut tx = self.begin_write().await?;
        upsert(&mut tx, project, message, None).await?;
        tx.commit().await?;
        Ok(())
    }
}

/// The pieces of text stored after their answers' rows were saved, by
/// answer, each with its place: the event published before it, and
/// whether it rode on the event after it (the last piece before that event).
#[derive(Default)]
struct Pieces(HashMap<String, Vec<(Place, String)>>);

/// Where a piece goes: after which event, and whether it rode on the next.
type Place = (i64, bool);

impl Pieces {
    fn add(&mut self, message_id: String, place: Place, text: String) {
        self.0.entry(message_id).or_default().push((place, text));
    }

    /// The answer's pieces in order (stably: those of one place keep the
    /// order they were read in).
    fn text_of(&mut self, message_id: &str) -> String {
        let Some(mut pieces) = self.0.remove(message_id) else {
            return String::new();
        };
        pieces.sort_by_key(|(place, _)| *place);
        pieces.into_iter().map(|(_, text)| text).collect()
    }
}

fn message_from(row: &sqlx::sqlite::SqliteRow) -> MessageRow {
    let role: String = row.get("role");
    let usage: Option<String> = row.get("usage");
    let status: String = row.get("status");
    MessageRow {
        id: row.get("id"),
        role: if role == "user" {
            Role::User
        } else {
            Role::Assistant
        },
        text: row.get("text"),
        asked: row.get("asked"),
        model: row.get("model"),
        usage: usage
            .as_deref()
            .and_then(|json| serde_json::from_str(json).ok()),
        cost_usd: usage.as_deref().and_then(cost_from),
        finish_reason: finish_reason_from(row.get("finish_reason")),
        status: status_from(&status, row.get("status_detail")),
        attachments: attachments_from(row.get("attachments")),
    }
}

/// An `attachments` column: none when empty, or when it cannot be read (a
/// corrupt row loses its attachments, not the conversation).
fn attachments_from(json: Option<String>) -> Attachments {
    let Some(json) = json else {
        return Attachments::default();
    };
    serde_json::from_str(&json).unwrap_or_else(|error| {
        tracing::warn!(%error, "a message's stored attachments could not be read");
        Attachments::default()
    })
}

/// The cost kept in a `usage` column's JSON, if any.
fn cost_from(json: &str) -> Option<f64> {
    let value: serde_json::Value = serde_json::from_str(json).ok()?;
    value.get("cost_usd")?.as_f64()
}

/// The `usage` column: the counts, and the cost when known.
fn usage_json(message: &MessageRow) -> Option<String> {
    let mut value = serde_json::to_value(message.usage?).ok()?;
    if let (Some(cost), Some(object)) = (message.cost_usd, value.as_object_mut()) {
        object.insert("cost_usd".to_owned(), serde_json::json!(cost));
    }
    Some(value.to_string())
}

/// Saves the message's row whole; `text_after` is the last event published
/// when it was saved (by a session's writer), after which the pieces of
/// text that ride on events follow the row's text.
pub(super) async fn upsert(
    tx: &mut Transaction<'_, Sqlite>,
    project: &str,
    message: &MessageRow,
    text_after: Option<u64>,
) -> Result<(), StoreError> {
    let (status, detail) = status_columns(&message.status);
    let usage = usage_json(message);
    let finish_reason = message.finish_reason.and_then(finish_reason_text);
    sqlx::query(
        "INSERT INTO messages (project, id, position, role, text, asked, model, usage, \
         finish_reason, status, status_detail, updated_at, attachments, text_after) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14) \
         ON CONFLICT (project, id) DO UPDATE SET text = excluded.text, \
         model = excluded.model, usage = excluded.usage, \
         finish_reason = excluded.finish_reason, status = excluded.status, \
         status_detail = excluded.status_detail, updated_at = excluded.updated_at, \
         text_after = excluded.text_after",
    )
    .bind(project)
    .bind(&message.id)
    .bind(message.position())
    .bind(role_name(message.role))
    .bind(&message.text)
    .bind(&message.asked)
    .bind(&message.model)
    .bind(usage)
    .bind(finish_reason)
    .bind(status)
    .bind(detail)
    .bind(now())
    .bind(
        (!message.attachments.is_empty())
            .then(|| serde_json::to_string(&message.attachments).ok())
            .flatten(),
    )
    .bind(text_after.map(super::int))
    .execute(&mut **tx)
    .await?;
    // The whole text is in the row now.
    sqlx::query("DELETE FROM message_text WHERE project = $1 AND message_id = $2")
        .bind(project)
        .bind(&message.id)
        .execute(&mut **tx)
        .await?;
    sqlx::query("UPDATE projects SET updated_at = $1 WHERE id = $2")
        .bind(now())
        .bind(project)
        .execute(&mut **tx)
        .await?;
    Ok(())
}

/// Drops the text of answer `message_id` that rode on the project's events
/// after `from` up to `to`, if the answer's row holds the text up to `to`
/// (only the pieces after the row's `text_after` are read).
pub(super) async fn forget_pieces(
    tx: &mut Transaction<'_, Sqlite>,
    project: &str,
    message_id: &str,
    (from, to): (u64, u64),
) -> Result<(), StoreError> {
    sqlx::query(
        "UPDATE events SET piece_of = NULL, piece = NULL WHERE project = $1 \
         AND seq > $2 AND seq <= $3 AND piece_of = $4 AND EXISTS (SELECT 1 FROM messages \
         WHERE project = $1 AND id = $4 AND text_after >= $3)",
    )
    .bind(project)
    .bind(super::int(from))
    .bind(super::int(to))
    .bind(message_id)
    .execute(&mut **tx)
    .await?;
    Ok(())
}

/// Stores one more piece of a streaming answer's text as piece `seq`.
pub(super) async fn append(
    tx: &mut Transaction<'_, Sqlite>,
    pieces: &[Piece<'_>],
) -> Result<(), StoreError> {
    for chunk in pieces.chunks(PIECES_PER_INSERT) {
        let mut insert = sqlx::QueryBuilder::<Sqlite>::new(
            "INSERT INTO message_text (project, seq, message_id, piece, after_event) ",
        );
        insert.push_values(chunk, |mut row, piece| {
            row.push_bind(piece.project)
                .push_bind(piece.seq)
                .push_bind(piece.message_id)
                .push_bind(piece.text)
                .push_bind(super::int(piece.after_event));
        });
        insert.build().execute(&mut **tx).await?;
    }
    Ok(())
}

/// One piece of a streaming answer's text, numbered in its project.
pub(super) struct Piece<'a> {
    pub project: &'a str,
    pub seq: i64,
    pub message_id: &'a str,
    pub text: &'a str,
    /// The last event published before it.
    pub after_event: u64,
}

/// Pieces one multi-row `INSERT` carries at most (5 parameters each).
const PIECES_PER_INSERT: usize = 256;

/// The number of the project's last stored piece of answer text.
pub(super) async fn last_piece(
    tx: &mut Transaction<'_, Sqlite>,
    project: &str,
) -> Result<i64, StoreError> {
    let last: Option<i64> =
        sqlx::query("SELECT MAX(seq) AS last FROM message_text WHERE project = $1")
            .bind(project)
            .fetch_one(&mut **tx)
            .await?
            .get("last");
    Ok(last.unwrap_or(0))
}
