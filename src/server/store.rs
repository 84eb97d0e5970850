//! The record of projects and conversations: SQLite in
//! `<data_dir>/rivet.db` (WAL, foreign keys, the migrations in
//! `migrations/` run before first use). A session is stored as the events
//! its reducer folds, so a reopened project rebuilds exactly what the UI
//! showed; messages are stored whole too, for the model's history and Retry.
//! Queries are checked at run time, so builds never need a database.

mod checkpoints;
mod events;
mod listing;
mod messages;
mod migrations;
mod output;
mod project_runtime;
mod projects;
#[cfg(test)]
mod tests;
mod transfer;
mod wal;
mod writer;

use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};
use std::time::{SystemTime, UNIX_EPOCH};

use sqlx::SqlitePool;
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous};
use tokio::sync::OnceCell;

use crate::runtime::kind::RuntimeKind;

pub use checkpoints::{CheckpointKind, CheckpointRow};
pub use events::{EVENT_PAGE, ReadBack, Replay};
pub use listing::{ProjectListing, UNTITLED, name_from_message};
pub use messages::MessageRow;
pub use output::{OUTPUT_EVENT_MAX, OUTPUT_KEPT, OUTPUT_WINDOW, OutputGate, dropped_line};
pub use projects::ProjectRow;
pub use writer::{EventWriter, QUEUE_LIMIT, Room};

/// Connections that read at once.
const READERS: u32 = 4;

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("cannot create the data directory {path}: {source}")]
    Dir {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("the database {path} could not be migrated: {message}")]
    Migrate { path: PathBuf, message: String },
    #[error("database error: {0}")]
    Sql(#[from] sqlx::Error),
}

/// Cheap to clone: the pools are shared.
///
/// Writes go through one connection of their own ([`Store::writes`]), so
/// the IDE's writers queue for it in this process, in order, and SQLite
/// never finds its write lock taken by another of them: a writer that does
/// sleeps in SQLite's busy handler, in steps of up to 100 ms, and every
/// streaming token waits for the event writer's commit. Reads use the other
/// pool, which refuses to write (`query_only`); WAL lets them run beside
/// the writer.
#[derive(Clone)]
pub struct Store {
    path: PathBuf,
    /// Reads: up to [`READERS`] connections, each `query_only`.
    pool: SqlitePool,
    /// Writes: one connection, which never copies the log back (`wal.rs`).
    writes: SqlitePool,
    /// Copies the log back (`wal.rs`): one connection.
    wal: SqlitePool,
    /// Migrations run once, before the first query (or at start, by `serve`).
    ready: Arc<OnceCell<Result<(), String>>>,
    /// `[runtime] default`: what a project row naming no runtime this
    /// version knows is read as.
    default_runtime: RuntimeKind,
    /// The one task that writes the sessions' events (`writer.rs`),
    /// started with the first session.
    writer: Arc<OnceLock<writer::SharedWriter>>,
}

impl Store {
    /// The store of `data_dir`; nothing is opened until the first use.
    /// `default_runtime` is `[runtime] default`.
    pub fn new(data_dir: &Path, default_runtime: RuntimeKind) -> Store {
        let path = data_dir.join("rivet.db");
        let options = SqliteConnectOptions::new()
            .filename(&path)
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
            // With WAL, NORMAL survives a killed process; only a power loss
            // may drop the latest transactions.
            .synchronous(SqliteSynchronous::Normal)
            .foreign_keys(true);
        let writes = SqlitePoolOptions::new()
            .max_connections(1)
            .connect_lazy_with(options.clone().pragma("wal_autocheckpoint", "0"));
        let wal = SqlitePoolOptions::new()
            .max_connections(1)
            .connect_lazy_with(options.clone());
        // The write connection creates the file and sets WAL (kept in the
        // file) before the first read: reads wait for the migrations.
        let pool = SqlitePoolOptions::new()
            .max_connections(READERS)
            .connect_lazy_with(options.pragma("query_only", "ON"));
        Store {
            path,
            pool,
            writes,
            wal,
            ready: Arc::new(OnceCell::new()),
            default_runtime,
            writer: Arc::new(OnceLock::new()),
        }
    }

    /// The store's writing task, started on first use (inside the runtime).
    fn shared_writer(&self) -> writer::SharedWriter {
        self.writer
            .get_or_init(|| writer::SharedWriter::start(self.clone()))
            .clone()
    }

    /// A transaction that writes. It takes the write lock when it begins
    /// (`BEGIN IMMEDIATE`), so a transaction that reads before it writes
    /// waits for another writer instead of failing with "database is
    /// locked" when that writer commits first.
    async fn begin_write(&self) -> Result<sqlx::Transaction<'static, sqlx::Sqlite>, StoreError> {
        Ok(self.writes().await?.begin_with("BEGIN IMMEDIATE").await?)
    }

    /// Creates the database and runs the migrations, once; then the pool
    /// that reads.
    pub async fn ready(&self) -> Result<&SqlitePool, StoreError> {
        let outcome = self
            .ready
            .get_or_init(|| async { self.migrate().await.map_err(|e| e.to_string()) })
            .await;
        match outcome {
            Ok(()) => Ok(&self.pool),
            Err(message) => Err(StoreError::Migrate {
                path: self.path.clone(),
                message: message.clone(),
            }),
        }
    }

    /// The one connection that writes (a pool of one), once migrated. A
    /// write holds it until it commits: never wait for another write, or
    /// anything slow, while holding it.
    pub async fn writes(&self) -> Result<&SqlitePool, StoreError> {
        self.ready().await?;
        Ok(&self.writes)
    }

    async fn migrate(&self) -> Result<(), StoreError> {
        if let Some(dir) = self.path.parent() {
            std::fs::create_dir_all(dir).map_err(|source| StoreError::Dir {
                path: dir.to_owned(),
                source,
            })?;
        }
        migrations::migrator()
            .run(&self.writes)
            .await
            .map_err(|e| StoreError::Migrate {
                path: self.path.clone(),
                message: e.to_string(),
            })?;
        wal::start(self.wal.clone(), Arc::downgrade(&self.ready));
        Ok(())
    }
}

/// Seconds since the Unix epoch.
pub fn now() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| int(d.as_secs()))
}

/// A count, number or time as SQLite stores it: an `i64`, saturating at
/// `i64::MAX` instead of wrapping to a negative number.
pub fn int(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}
