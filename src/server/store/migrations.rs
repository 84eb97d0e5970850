//! The store's schema migrations, built into the binary.
//!
//! The files of `migrations/` as `sqlx::migrate!()` would embed them
//! (version, name, SQL and its checksum alike), given to sqlx's
//! `Migrator::with_migrations`. The macro needs sqlx's `macros` feature,
//! whose build compiled sqlx's SQLite driver, and SQLite's C, a second time
//! for the compiler's host. A test holds this list to the folder, so a
//! database migrated by either is accepted by the other.

use std::borrow::Cow;

use sqlx::SqlStr;
use sqlx::migrate::{Migration, MigrationType, Migrator};

/// Each file of `migrations/`: its version, its name (the file's, with
/// spaces for underscores, as sqlx reads it) and its SQL.
const FILES: &[(i64, &str, &str)] = &[
    (
        1,
        "store",
        include_str!(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/migrations/0001_store.sql"
        )),
    ),
    (
        2,
        "checkpoints",
        include_str!(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/migrations/0002_checkpoints.sql"
        )),
    ),
    (
        3,
        "message attachments",
        include_str!(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/migrations/0003_message_attachments.sql"
        )),
    ),
    (
        4,
        "answer text in events",
        include_str!(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/migrations/0004_answer_text_in_events.sql"
        )),
    ),
];

/// The store's migrator.
pub fn migrator() -> Migrator {
    Migrator::with_migrations(migrations())
}

fn migrations() -> Vec<Migration> {
    FILES
        .iter()
        .map(|&(version, name, sql)| {
            // sqlx's own reading of a file: a first line of
            // `-- no-transaction` runs it outside a transaction.
            let no_tx = sql.starts_with("-- no-transaction");
            let sql = SqlStr::from_static(sql);
            Migration::new(
                version,
                Cow::Borrowed(name),
                MigrationType::Simple,
                sql,
                no_tx,
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use sqlx::migrate::MigrationSource;

    use super::*;

    type Key = (i64, String, MigrationType, Vec<u8>, bool);

    fn key(m: &Migration) -> Key {
        let name = m.description.to_string();
        (
            m.version,
            name,
            m.migration_type,
            m.checksum.to_vec(),
            m.no_tx,
        )
    }

    #[tokio::test]
    async fn the_embedded_migrations_are_the_folders_file_for_file() {
        let folder = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/migrations"));
        let read: Vec<Key> = folder.resolve().await.unwrap().iter().map(key).collect();
        let embedded: Vec<Key> = migrator().iter().map(key).collect();
        assert_eq!(embedded, read);
        assert!(!read.is_empty());
    }
}
