//! A project's database, as the action runner sees it: the `supabase`
//! action's migrations and queries go through [`Database`], so the runner
//! does not know which database serves them.
//!
//! The server gives each project its own PostgreSQL database
//! (`crate::server::database`); a project with none (a WebContainer one,
//! or a server whose PostgreSQL cannot start) gets an answer saying why.
//! A Supabase project connected by URL and key would be one more
//! implementation.

#[cfg(all(not(target_arch = "wasm32"), test))]
pub mod fake;

use async_trait::async_trait;
use serde::{Deserialize, Serialize};

use crate::runtime::host::MaybeSendSync;

/// Rows a query's result keeps; the count of the rest is kept.
pub const MAX_ROWS: usize = 100;
/// Bytes of one value a query's result keeps.
pub const MAX_VALUE_BYTES: usize = 1024;

/// What a migration did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Migrated {
    /// It ran now, in one transaction, and is recorded.
    Applied,
    /// It ran before with the same text, and was not run again.
    AlreadyApplied,
}

/// The result of a query: its columns and first rows, every value as the
/// database writes it as text (`None` for NULL).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct QueryResult {
    pub columns: Vec<String>,
    /// At most [`MAX_ROWS`].
    pub rows: Vec<Vec<Option<String>>>,
    /// Rows the statement returned or changed, kept or not.
    pub total_rows: u64,
}

impl QueryResult {
    /// Adds a row, unless [`MAX_ROWS`] are kept already; it counts either
    /// way. Long values are cut at a character boundary.
    pub fn push_row(&mut self, row: Vec<Option<String>>) {
        self.total_rows += 1;
        if self.rows.len() < MAX_ROWS {
            self.rows
                .push(row.into_iter().map(|v| v.map(cut_value)).collect());
        }
    }

    /// How it reads in a terminal or a model's message: a header, the rows,
    /// and a count.
    pub fn to_text(&self) -> String {
        let mut text = String::new();
        if !self.columns.is_empty() {
            text.push_str(&self.columns.join(" | "));
            text.push('\n');
            for row in &self.rows {
                let cells: Vec<&str> = row.iter().map(|v| v.as_deref().unwrap_or("NULL")).collect();
                text.push_str(&cells.join(" | "));
                text.push('\n');
            }
        }
        let shown = self.rows.len() as u64;
        match (self.columns.is_empty(), self.total_rows) {
            (true, n) => text.push_str(&format!("({n} rows affected)")),
            (false, n) if n > shown => text.push_str(&format!("({n} rows, first {shown} shown)")),
            (false, 1) => text.push_str("(1 row)"),
            (false, n) => text.push_str(&format!("({n} rows)")),
        }
        text
    }
}

fn cut_value(mut value: String) -> String {
    if value.len() > MAX_VALUE_BYTES {
        let mut end = MAX_VALUE_BYTES;
        while !value.is_char_boundary(end) {
            end -= 1;
        }
        value.truncate(end);
        value.push('…');
    }
    value
}

/// A table of the project's database, as the data panel lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TableInfo {
    /// Schema-qualified unless it is in `public`.
    pub name: String,
    pub columns: Vec<ColumnInfo>,
    /// Its rows, counted.
    pub rows: u64,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ColumnInfo {
    pub name: String,
    /// The column's type, as the database names it (`integer`, `text`).
    #[serde(rename = "type")]
    pub kind: String,
}

/// Why a migration or query did not run.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, Serialize, Deserialize)]
pub enum DatabaseError {
    /// The project has no database here: says why, and what would give it
    /// one.
    #[error("{0}")]
    Unavailable(String),
    /// The database refused the SQL; the database's own error text.
    #[error("{0}")]
    Sql(String),
    /// A migration of this name ran before with other text. Migrations run
    /// once: a change is a new migration.
    #[error(
        "the migration {name} already ran with different contents, and migrations run once; write the change as a new migration file"
    )]
    Changed { name: String },
}

/// A project's database.
#[cfg_attr(target_arch = "wasm32", async_trait(?Send))]
#[cfg_attr(not(target_arch = "wasm32"), async_trait)]
pub trait Database: MaybeSendSync {
    /// Runs `sql` in one transaction and records `name` as applied, unless
    /// it was applied before (then only its text is compared).
    async fn migrate(&self, name: &str, sql: &str) -> Result<Migrated, DatabaseError>;
    /// Runs `sql` (one or more statements) and returns the last result.
    async fn query(&self, sql: &str) -> Result<QueryResult, DatabaseError>;

    /// Something the person should know about where the SQL ran, said once
    /// after an action that ran (the browser runtime's database is on the
    /// server).
    fn take_note(&self) -> Option<String> {
        None
    }
}

/// The database of a project that has none: every call says why.
pub struct NoDatabase(pub String);

#[cfg_attr(target_arch = "wasm32", async_trait(?Send))]
#[cfg_attr(not(target_arch = "wasm32"), async_trait)]
impl Database for NoDatabase {
    async fn migrate(&self, _name: &str, _sql: &str) -> Result<Migrated, DatabaseError> {
        Err(DatabaseError::Unavailable(self.0.clone()))
    }

    async fn query(&self, _sql: &str) -> Result<QueryResult, DatabaseError> {
        Err(DatabaseError::Unavailable(self.0.clone()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_result_keeps_its_first_rows_and_counts_the_rest() {
        let mut result = QueryResult {
            columns: vec!["n".into()],
            ..QueryResult::default()
        };
        for n in 0..(MAX_ROWS + 5) {
            result.push_row(vec![Some(n.to_string())]);
        }
        assert_eq!(result.rows.len(), MAX_ROWS);
        assert_eq!(result.total_rows, (MAX_ROWS + 5) as u64);
        assert!(result.to_text().ends_with("(105 rows, first 100 shown)"));
    }

    #[test]
    fn a_long_value_is_cut_at_a_character_boundary() {
        let mut result = QueryResult::default();
        result.push_row(vec![Some("é".repeat(MAX_VALUE_BYTES)), None]);
        let value = result.rows[0][0].as_deref().unwrap();
        assert!(value.len() <= MAX_VALUE_BYTES + '…'.len_utf8());
        assert!(value.ends_with('…'));
        assert_eq!(result.rows[0][1], None);
    }

    #[test]
    fn a_result_reads_as_a_table_or_a_count() {
        let mut table = QueryResult {
            columns: vec!["id".into(), "title".into()],
            ..QueryResult::default()
        };
        table.push_row(vec![Some("1".into()), None]);
        assert_eq!(table.to_text(), "id | title\n1 | NULL\n(1 row)");
        let changed = QueryResult {
            total_rows: 3,
            ..QueryResult::default()
        };
        assert_eq!(changed.to_text(), "(3 rows affected)");
    }
}
