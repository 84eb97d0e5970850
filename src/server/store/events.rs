//! The `events` table: every event a project's session published, in order.

use sqlx::{QueryBuilder, Row, Sqlite, Transaction};

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

/// Rows read at a time when a project's events are read back, so reopening
/// a project with a long record holds one page of rows at a time.
pub const EVENT_PAGE: i64 = 1000;

/// What reading a project's events back found, besides the events.
#[derive(Debug, Default)]
pub struct ReadBack {
    /// Sequence numbers of rows that could not be read (reported, skipped).
    pub skipped: Vec<i64>,
    /// The highest sequence number stored, readable or not.
    pub last_seq: u64,
    /// Pages of at most [`EVENT_PAGE`] rows read.
    pub pages: usize,
}

impl Store {
    /// The project's events in order. A row that does not parse is
    /// reported and skipped: one bad row does not cost the rest.
    pub async fn events(&self, project: &str) -> Result<Replay, StoreError> {
        let mut events = Vec::new();
        let read = self
            .fold_events(project, |event| events.push(event))
            .await?;
        Ok(Replay {
            events,
            skipped: read.skipped,
            last_seq: read.last_seq,
        })
    }

    /// Hands the project's events to `fold` in order, reading them
    /// [`EVENT_PAGE`] rows at a time. A row that does not parse is reported
    /// and skipped.
    pub async fn fold_events(
        &self,
        project: &str,
        mut fold: impl FnMut(Envelope),
    ) -> Result<ReadBack, StoreError> {
        let pool = self.ready().await?;
        let mut read = ReadBack::default();
        let mut after = 0;
        loop {
            let rows = page(pool, project, after).await?;
            if rows.is_empty() {
                return Ok(read);
            }
            read.pages += 1;
            let full = rows.len() == usize::try_from(EVENT_PAGE).unwrap_or(usize::MAX);
            for (seq, json) in rows {
                after = seq;
                read.last_seq = read.last_seq.max(u64::try_from(seq).unwrap_or(0));
                match parse(project, seq, &json) {
                    Some(envelope) => fold(envelope),
                    None => read.skipped.push(seq),
                }
            }
            if !full {
                return Ok(read);
            }
        }
    }
}

/// The next [`EVENT_PAGE`] rows after `after`, as (seq, JSON).
async fn page(
    pool: &sqlx::SqlitePool,
    project: &str,
    after: i64,
) -> Result<Vec<(i64, String)>, StoreError> {
    let rows = sqlx::query(
        "SELECT seq, event FROM events WHERE project = $1 AND seq > $2 ORDER BY seq LIMIT $3",
    )
    .bind(project)
    .bind(after)
    .bind(EVENT_PAGE)
    .fetch_all(pool)
    .await?;
    Ok(rows
        .iter()
        .map(|row| (row.get("seq"), row.get("event")))
        .collect())
}

fn parse(project: &str, seq: i64, json: &str) -> Option<Envelope> {
    match serde_json::from_str::<SessionEvent>(json) {
        Ok(event) => Some(Envelope {
            seq: u64::try_from(seq).unwrap_or(0),
            event,
        }),
        Err(error) => {
            tracing::warn!(project, seq, %error, "skipping a stored session event that does not parse");
            None
        }
    }
}

pub(super) async fn append(
    tx: &mut Transaction<'_, Sqlite>,
    project: &str,
    envelope: &Envelope,
) -> Result<(), StoreError> {
    let row = EventRow {
        project,
        envelope,
        piece: None,
    };
    append_many(tx, &[row]).await
}

/// One event's row.
pub(super) struct EventRow<'a> {
    pub project: &'a str,
    pub envelope: &'a Envelope,
    /// A piece of an answer's text that rides on this row: (the answer's
    /// id, the text), queued just before the event.
    pub piece: Option<(&'a str, &'a str)>,
}

/// Rows one multi-row `INSERT` carries at most (5 parameters each, well
/// under SQLite's limit on parameters).
const ROWS_PER_INSERT: usize = 256;

/// Stores many events, of any projects, with one statement per
/// [`ROWS_PER_INSERT`] rows rather than one each.
pub(super) async fn append_many(
    tx: &mut Transaction<'_, Sqlite>,
    rows: &[EventRow<'_>],
) -> Result<(), StoreError> {
    for chunk in rows.chunks(ROWS_PER_INSERT) {
        let mut insert = QueryBuilder::<Sqlite>::new(
            "INSERT INTO events (project, seq, event, piece_of, piece) ",
        );
        insert.push_values(chunk, |mut row, event| {
            // Serialising our own types cannot fail.
            let json = serde_json::to_string(&event.envelope.event).unwrap_or_default();
            let (piece_of, piece) = event.piece.unzip();
            row.push_bind(event.project)
                .push_bind(super::int(event.envelope.seq))
                .push_bind(json)
                .push_bind(piece_of)
                .push_bind(piece);
        });
        insert.build().execute(&mut **tx).await?;
    }
    Ok(())
}

/// The pieces of answer `message_id` that rode on the project's events
/// numbered after `after`, as (the event's number, the text), in order.
pub(super) async fn pieces_after(
    pool: &sqlx::SqlitePool,
    project: &str,
    message_id: &str,
    after: i64,
) -> Result<Vec<(i64, String)>, StoreError> {
    let rows = sqlx::query(
        "SELECT seq, piece FROM events \
         WHERE project = $1 AND seq > $2 AND piece_of = $3 ORDER BY seq",
    )
    .bind(project)
    .bind(after)
    .bind(message_id)
    .fetch_all(pool)
    .await?;
    Ok(rows
        .iter()
        .map(|row| (row.get("seq"), row.get("piece")))
        .collect())
}
