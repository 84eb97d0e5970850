//! The limits on the output a project's processes print, in the one place
//! every output event passes before it is stored: the "Rivet" terminal's
//! [`SessionEvent::Terminal`] events, whoever publishes them (the action
//! runner, the agent's commands, a WebContainer tab).
//!
//! Output that arrives within [`OUTPUT_WINDOW`] becomes one event of at most
//! [`OUTPUT_EVENT_MAX`] bytes (the end of what arrived; the rest is counted
//! and said), so a process that prints without end adds a few events a
//! second, not one per chunk. The store keeps the last [`OUTPUT_KEPT`] bytes
//! of a project's output ([`compact`]); older output rows are removed and
//! the newest removed row says how much went.

use std::time::Duration;

use sqlx::{Row, Sqlite, Transaction};

use super::{Store, StoreError};
use crate::runtime::session::SessionEvent;

/// Output arriving within this time of the first piece becomes one event.
pub const OUTPUT_WINDOW: Duration = Duration::from_millis(100);
/// The most one output event holds: the end of its window's output is kept,
/// the bytes before it are dropped and counted. With [`OUTPUT_WINDOW`] this
/// bounds the output stored to 320 KiB a second. Half the terminal's tail
/// (`TERMINAL_TAIL`), so the line that says what was dropped is shown.
pub const OUTPUT_EVENT_MAX: usize = 32 * 1024;
/// Bytes of a project's terminal output the store keeps (so also of any one
/// action's): past it, the oldest output rows are removed, and the newest
/// removed row is replaced by a line that says how many bytes went.
pub const OUTPUT_KEPT: u64 = 1024 * 1024;

/// The line shown where output was dropped.
pub fn dropped_line(bytes: u64) -> String {
    format!("\r\n[… {bytes} bytes of output dropped …]\r\n")
}

/// Output published in the current window, not yet an event: the end of
/// it (at most [`OUTPUT_EVENT_MAX`] bytes) and the count of what was cut.
#[derive(Default)]
pub struct OutputGate {
    text: String,
    dropped: u64,
    open: bool,
}

impl OutputGate {
    /// Adds a piece of output; true when it opens a window (the caller
    /// starts the window's clock).
    pub fn push(&mut self, text: &str) -> bool {
        let opens = !self.open;
        self.open = true;
        self.text.push_str(text);
        if self.text.len() > OUTPUT_EVENT_MAX {
            let mut cut = self.text.len() - OUTPUT_EVENT_MAX;
            while !self.text.is_char_boundary(cut) {
                cut += 1;
            }
            self.text.drain(..cut);
            self.dropped += u64::try_from(cut).unwrap_or(u64::MAX);
        }
        opens
    }

    /// The window's output as the text of one event, saying first what was
    /// dropped; `None` when no window is open.
    pub fn take(&mut self) -> Option<String> {
        let gate = std::mem::take(self);
        gate.open.then(|| match gate.dropped {
            0 => gate.text,
            dropped => dropped_line(dropped) + &gate.text,
        })
    }

    /// Bytes held, waiting for the window to end.
    pub fn held(&self) -> usize {
        self.text.len()
    }
}

/// Whether the event is output, whose rows [`compact`] may delete (the rows
/// it picks by their JSON's `type`, `terminal`).
pub fn is_output(event: &SessionEvent) -> bool {
    matches!(event, SessionEvent::Terminal { .. })
}

/// The bytes of output an event adds to the terminal (0 for other events).
pub fn output_bytes(event: &SessionEvent) -> u64 {
    match event {
        SessionEvent::Terminal { text } => u64::try_from(text.len()).unwrap_or(u64::MAX),
        _ => 0,
    }
}

impl Store {
    /// Keeps the last [`OUTPUT_KEPT`] bytes of the project's stored output
    /// (see [`compact`]); returns the bytes dropped now. The writer calls it
    /// as output is written, and reopening a project before reading it.
    pub async fn compact_output(&self, project: &str) -> Result<u64, StoreError> {
        let mut tx = self.begin_write().await?;
        let dropped = compact(&mut tx, project).await?;
        tx.commit().await?;
        Ok(dropped)
    }
}

/// Keeps the last [`OUTPUT_KEPT`] bytes of the project's stored output: the
/// older output rows are deleted, except the newest of them, which becomes
/// the line that says how many bytes were dropped (those of earlier such
/// lines included). Returns the bytes dropped now.
async fn compact(tx: &mut Transaction<'_, Sqlite>, project: &str) -> Result<u64, StoreError> {
    let Some(cut) = cut(tx, project).await? else {
        return Ok(0);
    };
    let dropped: i64 = sqlx::query(
        "SELECT COALESCE(SUM(COALESCE(json_extract(event, '$.dropped'),
                                      length(CAST(json_extract(event, '$.text') AS BLOB)))), 0)
         FROM events
         WHERE project = $1 AND seq <= $2 AND json_extract(event, '$.type') = 'terminal'",
    )
    .bind(project)
    .bind(cut)
    .fetch_one(&mut **tx)
    .await?
    .get(0);
    sqlx::query(
        "DELETE FROM events
         WHERE project = $1 AND seq < $2 AND json_extract(event, '$.type') = 'terminal'",
    )
    .bind(project)
    .bind(cut)
    .execute(&mut **tx)
    .await?;
    let dropped = u64::try_from(dropped).unwrap_or(0);
    sqlx::query("UPDATE events SET event = $3 WHERE project = $1 AND seq = $2")
        .bind(project)
        .bind(cut)
        .bind(marker(dropped))
        .execute(&mut **tx)
        .await?;
    Ok(dropped)
}

/// The newest output row that falls outside the kept bytes, if any.
async fn cut(tx: &mut Transaction<'_, Sqlite>, project: &str) -> Result<Option<i64>, StoreError> {
    let row = sqlx::query(
        "SELECT seq FROM (
             SELECT seq, SUM(length(CAST(json_extract(event, '$.text') AS BLOB)))
                 OVER (ORDER BY seq DESC) AS newer
             FROM events
             WHERE project = $1 AND json_extract(event, '$.type') = 'terminal'
         )
         WHERE newer > $2
         ORDER BY seq DESC LIMIT 1",
    )
    .bind(project)
    .bind(super::int(OUTPUT_KEPT))
    .fetch_optional(&mut **tx)
    .await?;
    Ok(row.map(|row| row.get(0)))
}

/// The stored row that stands for dropped output: a terminal event saying
/// so, which also records the count (`dropped`) for the next compaction.
fn marker(dropped: u64) -> String {
    let mut json = serde_json::to_value(SessionEvent::Terminal {
        text: dropped_line(dropped),
    })
    .unwrap_or_default();
    if let Some(object) = json.as_object_mut() {
        object.insert("dropped".to_owned(), dropped.into());
    }
    json.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pieces_of_one_window_become_one_event() {
        let mut gate = OutputGate::default();
        assert!(gate.push("a"));
        assert!(!gate.push("b"));
        assert!(!gate.push(""));
        assert_eq!(gate.take().as_deref(), Some("ab"));
        assert_eq!(gate.take(), None);
        assert!(gate.push("d"), "a new window opens after a take");
    }

    #[test]
    fn a_window_over_the_limit_keeps_its_end_and_says_what_it_dropped() {
        let mut gate = OutputGate::default();
        for i in 0..100 {
            gate.push(&format!("{i:04}").repeat(4096));
            assert!(gate.held() <= OUTPUT_EVENT_MAX);
        }
        let text = gate.take().unwrap();
        let dropped = 100 * 4 * 4096 - OUTPUT_EVENT_MAX;
        assert!(
            text.starts_with(&dropped_line(dropped as u64)),
            "{}",
            &text[..80]
        );
        assert_eq!(
            text.len(),
            dropped_line(dropped as u64).len() + OUTPUT_EVENT_MAX
        );
        assert!(text.ends_with("0099"));
    }

    #[test]
    fn a_cut_never_splits_a_character() {
        let mut gate = OutputGate::default();
        gate.push(&"é".repeat(OUTPUT_EVENT_MAX));
        assert!(gate.take().unwrap().ends_with('é'));
    }

    #[test]
    fn the_marker_row_is_a_terminal_event_that_says_the_count() {
        let event: SessionEvent = serde_json::from_str(&marker(42)).unwrap();
        assert_eq!(
            event,
            SessionEvent::Terminal {
                text: dropped_line(42)
            }
        );
    }
}
