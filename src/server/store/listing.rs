//! Listing, searching, renaming and deleting projects in the store, and
//! reading a project's events after a given number (a resumed feed).

use sqlx::Row;

use super::{ProjectRow, Store, StoreError};
use crate::runtime::kind::RuntimeKind;
use crate::runtime::session::Envelope;

/// The name a project has until someone (or its first message) names it.
pub const UNTITLED: &str = "Untitled";

/// The longest name a first message gives its project, in characters.
const NAME_FROM_MESSAGE_CHARS: usize = 60;

/// A project as the project list shows it.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ProjectListing {
    pub id: String,
    pub name: String,
    /// Seconds since the Unix epoch.
    pub created_at: i64,
    pub updated_at: i64,
    pub runtime: RuntimeKind,
    /// When the latest message was saved, if there is one.
    pub last_message_at: Option<i64>,
}

impl Store {
    /// Projects whose name or any message contains `search` (every project
    /// when it is empty), the latest changed first.
    pub async fn find_projects(&self, search: &str) -> Result<Vec<ProjectListing>, StoreError> {
        let pool = self.ready().await?;
        let pattern = like_pattern(search.trim());
        let rows = sqlx::query(
            "SELECT p.id, p.name, p.created_at, p.updated_at, p.runtime, \
             (SELECT MAX(m.updated_at) FROM messages m WHERE m.project = p.id) AS last_message_at \
             FROM projects p \
             WHERE $1 = '%%' OR LOWER(p.name) LIKE $1 ESCAPE '\\' OR EXISTS ( \
               SELECT 1 FROM messages m WHERE m.project = p.id \
               AND LOWER(m.text) LIKE $1 ESCAPE '\\') \
             ORDER BY p.updated_at DESC, p.created_at DESC, p.id",
        )
        .bind(pattern)
        .fetch_all(pool)
        .await?;
        Ok(rows.iter().map(|row| self.listing_from(row)).collect())
    }

    /// Gives the project a new name; false when there is no such project.
    pub async fn rename_project(&self, id: &str, name: &str) -> Result<bool, StoreError> {
        let pool = self.writes().await?;
        let done = sqlx::query("UPDATE projects SET name = $1 WHERE id = $2")
            .bind(name)
            .bind(id)
            .execute(pool)
            .await?;
        Ok(done.rows_affected() > 0)
    }

    /// Names a project still called [`UNTITLED`] after `message` (its first
    /// line, shortened); the name it now has, when it changed.
    pub async fn name_after_message(
        &self,
        id: &str,
        message: &str,
    ) -> Result<Option<String>, StoreError> {
        let Some(name) = name_from_message(message) else {
            return Ok(None);
        };
        let pool = self.writes().await?;
        let done = sqlx::query("UPDATE projects SET name = $1 WHERE id = $2 AND name = $3")
            .bind(&name)
            .bind(id)
            .bind(UNTITLED)
            .execute(pool)
            .await?;
        Ok((done.rows_affected() > 0).then_some(name))
    }

    /// Deletes the project's rows (its messages and events go with it).
    pub async fn delete_project(&self, id: &str) -> Result<bool, StoreError> {
        let pool = self.writes().await?;
        let mut tx = pool.begin().await?;
        for delete in [
            "DELETE FROM events WHERE project = $1",
            "DELETE FROM message_text WHERE project = $1",
            "DELETE FROM messages WHERE project = $1",
        ] {
            sqlx::query(delete).bind(id).execute(&mut *tx).await?;
        }
        let done = sqlx::query("DELETE FROM projects WHERE id = $1")
            .bind(id)
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(done.rows_affected() > 0)
    }

    /// The project's stored events numbered after `after`, in order, or
    /// `None` when some of them are no longer all there to read (the caller
    /// then starts from a snapshot).
    pub async fn events_after(
        &self,
        project: &str,
        after: u64,
        up_to: u64,
    ) -> Result<Option<Vec<Envelope>>, StoreError> {
        let pool = self.ready().await?;
        let rows = sqlx::query(
            "SELECT seq, event FROM events WHERE project = $1 AND seq > $2 AND seq <= $3 \
             ORDER BY seq",
        )
        .bind(project)
        .bind(super::int(after))
        .bind(super::int(up_to))
        .fetch_all(pool)
        .await?;
        let mut events = Vec::with_capacity(rows.len());
        for (expected, row) in (after + 1..).zip(&rows) {
            let seq = u64::try_from(row.get::<i64, _>("seq")).unwrap_or(0);
            let json: String = row.get("event");
            match serde_json::from_str(&json) {
                Ok(event) if seq == expected => events.push(Envelope { seq, event }),
                _ => return Ok(None),
            }
        }
        let complete = events
            .last()
            .map_or(after >= up_to, |last| last.seq == up_to);
        Ok(complete.then_some(events))
    }
}

/// The name a first message gives: its first non-empty line, at most
/// [`NAME_FROM_MESSAGE_CHARS`] characters (cut at a word when it can be).
pub fn name_from_message(message: &str) -> Option<String> {
    let line = message.lines().map(str::trim).find(|l| !l.is_empty())?;
    if line.chars().count() <= NAME_FROM_MESSAGE_CHARS {
        return Some(line.to_owned());
    }
    let cut: String = line.chars().take(NAME_FROM_MESSAGE_CHARS).collect();
    let at_word = match cut.rfind(' ') {
        Some(space) if space > NAME_FROM_MESSAGE_CHARS / 2 => &cut[..space],
        _ => cut.as_str(),
    };
    Some(format!("{}…", at_word.trim_end()))
}

/// `%text%` for a case-insensitive LIKE, with `%`, `_` and `\` escaped.
fn like_pattern(search: &str) -> String {
    let mut pattern = String::from("%");
    for c in search.to_lowercase().chars() {
        if matches!(c, '%' | '_' | '\\') {
            pattern.push('\\');
        }
        pattern.push(c);
    }
    pattern.push('%');
    pattern
}

impl Store {
    /// A project's row as `project_from` reads it, with its last message's time.
    fn listing_from(&self, row: &sqlx::sqlite::SqliteRow) -> ProjectListing {
        ProjectListing {
            last_message_at: row.get("last_message_at"),
            ..self.project_from(row).into()
        }
    }
}

impl From<ProjectRow> for ProjectListing {
    fn from(row: ProjectRow) -> ProjectListing {
        ProjectListing {
            id: row.id,
            name: row.name,
            created_at: row.created_at,
            updated_at: row.updated_at,
            runtime: row.runtime,
            last_message_at: None,
        }
    }
}

#[cfg(test)]
mod tests;
