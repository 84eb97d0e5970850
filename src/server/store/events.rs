//! The `events` table: every event a project's session published, in order.

use sqlx::{Row, Sqlite, Transaction};

use super::{Store, StoreError};
use crate::runtime::session::{Envelope, SessionEvent};

/// A project's stored events, ready to be folded again.
#[derive(Debug, Default)]
pub struct Replay {
    pub events: Vec<Envelope>,
    /// Sequence numbers of rows that could not be read (reported, skipped).
    pub skipped: Vec<i64>,
    /// The highest sequence number stored, readable or not.
    pub last_seq: u64,
}

impl Store {
    /// The project's events in order. A row that does not parse is
    /// reported and skipped: one bad row does not cost the rest.
    pub async fn events(&self, project: &str) -> Result<Replay, StoreError> {
        let pool = self.ready().await?;
        let rows = sqlx::query("SELECT seq, event FROM events WHERE project = $1 ORDER BY seq")
            .bind(project)
            .fetch_all(pool)
            .await?;
        let mut replay = Replay::default();
        for row in rows {
            let seq: i64 = row.get("seq");
            let json: String = row.get("event");
            replay.last_seq = replay.last_seq.max(u64::try_from(seq).unwrap_or(0));
            match serde_json::from_str::<SessionEvent>(&json) {
                Ok(event) => replay.events.push(Envelope {
                    seq: u64::try_from(seq).unwrap_or(0),
                    event,
                }),
                Err(error) => {
                    tracing::warn!(project, seq, %error, "skipping a stored session event that does not parse");
                    replay.skipped.push(seq);
                }
            }
        }
        Ok(replay)
    }
}

pub(super) async fn append(
    tx: &mut Transaction<'_, Sqlite>,
    project: &str,
    envelope: &Envelope,
) -> Result<(), StoreError> {
    // Serialising our own types cannot fail.
    let json = serde_json::to_string(&envelope.event).unwrap_or_default();
    sqlx::query("INSERT INTO events (project, seq, event) VALUES ($1, $2, $3)")
        .bind(project)
        .bind(i64::try_from(envelope.seq).unwrap_or(i64::MAX))
        .bind(json)
        .execute(&mut **tx)
        .await?;
    Ok(())
}
