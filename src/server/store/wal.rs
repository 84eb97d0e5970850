//! The log's checkpoints, off the writer's path. SQLite copies the WAL back
//! into the database file (and syncs it) on the commit that takes the log
//! past 1,000 pages, in the connection that commits: that was the store's
//! writer, and every streaming token waited for it. The writing connection
//! now never checkpoints (`wal_autocheckpoint = 0`); this task does, every
//! [`EVERY`], passively and on a connection of its own: WAL lets a
//! checkpoint run while the writer appends, and a passive one waits for
//! nobody.

use std::sync::Weak;
use std::time::Duration;

use sqlx::SqlitePool;
use tokio::time::MissedTickBehavior;

/// How often the log is copied back.
pub(super) const EVERY: Duration = Duration::from_millis(500);

/// Checkpoints through `pool` until `alive` (held by every clone of the
/// store) is gone.
pub(super) fn start<T: Send + Sync + 'static>(pool: SqlitePool, alive: Weak<T>) {
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(EVERY);
        tick.set_missed_tick_behavior(MissedTickBehavior::Delay);
        loop {
            tick.tick().await;
            if alive.upgrade().is_none() {
                return;
            }
            if let Err(error) = sqlx::query("PRAGMA wal_checkpoint(PASSIVE)")
                .execute(&pool)
                .await
            {
                tracing::warn!(%error, "copying the store's log into the database failed");
            }
        }
    });
}
