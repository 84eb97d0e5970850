//! What is done in one project's database: making its role and database,
//! migrations, queries and the list of tables. Every statement the SQL
//! text does not come from the model is written here.

use sha2::{Digest, Sha256};
use tokio_postgres::{Client, NoTls, SimpleQueryMessage};

use super::DatabaseUnavailable;
use crate::runtime::database::{ColumnInfo, DatabaseError, Migrated, QueryResult, TableInfo};

/// Tables the data panel lists at most.
const MAX_TABLES: usize = 200;

/// Opens a connection; its driver runs on its own task until the client
/// is dropped.
pub async fn connect(config: &tokio_postgres::Config) -> Result<Client, DatabaseError> {
    let (client, connection) = config.connect(NoTls).await.map_err(|e| {
        DatabaseError::Unavailable(format!(
            "the project's database cannot be reached: {}",
            describe(&e, None)
        ))
    })?;
    tokio::spawn(async move {
        if let Err(error) = connection.await {
            tracing::debug!(%error, "a database connection ended");
        }
    });
    Ok(client)
}

/// A connection as the server's superuser, for the statements below.
async fn connect_admin(admin: &tokio_postgres::Config) -> Result<Client, DatabaseUnavailable> {
    connect(admin)
        .await
        .map_err(|e| DatabaseUnavailable(e.to_string()))
}

/// A quoted identifier.
fn ident(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

/// Makes the role and the database if they do not exist, and (again, in
/// case it changed) sets the password and shuts every other role out.
/// `role`, `database` and `password` are Rivet's own letters and digits.
pub async fn provision(
    admin: &tokio_postgres::Config,
    role: &str,
    database: &str,
    password: &str,
) -> Result<(), DatabaseUnavailable> {
    let failed = |e: tokio_postgres::Error| {
        DatabaseUnavailable(format!(
            "the project's database could not be made: {}",
            describe(&e, None)
        ))
    };
    let client = connect_admin(admin).await?;
    let has_role = client
        .query_opt("SELECT 1 FROM pg_roles WHERE rolname = $1", &[&role])
        .await
        .map_err(failed)?
        .is_some();
    let verb = if has_role { "ALTER" } else { "CREATE" };
    client
        .batch_execute(&format!(
            "{verb} ROLE {} LOGIN PASSWORD '{password}' NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS CONNECTION LIMIT 40",
            ident(role)
        ))
        .await
        .map_err(failed)?;
    let has_database = client
        .query_opt("SELECT 1 FROM pg_database WHERE datname = $1", &[&database])
        .await
        .map_err(failed)?
        .is_some();
    if !has_database {
        client
            .batch_execute(&format!(
                "CREATE DATABASE {} OWNER {} ENCODING 'UTF8' TEMPLATE template0",
                ident(database),
                ident(role)
            ))
            .await
            .map_err(failed)?;
    }
    client
        .batch_execute(&format!(
            "REVOKE ALL ON DATABASE {db} FROM PUBLIC; GRANT CONNECT, TEMPORARY ON DATABASE {db} TO {role}",
            db = ident(database),
            role = ident(role)
        ))
        .await
        .map_err(failed)
}

/// Drops a deleted project's database (its connections closed first) and
/// its role.
pub async fn drop(
    admin: &tokio_postgres::Config,
    role: &str,
    database: &str,
) -> Result<(), DatabaseUnavailable> {
    let client = connect_admin(admin).await?;
    // One statement a call: DROP DATABASE cannot run in a transaction,
    // which several statements in one call are.
    for statement in [
        format!("DROP DATABASE IF EXISTS {} WITH (FORCE)", ident(database)),
        format!("DROP ROLE IF EXISTS {}", ident(role)),
    ] {
        client.batch_execute(&statement).await.map_err(|e| {
            DatabaseUnavailable(format!(
                "the project's database could not be dropped: {}",
                describe(&e, None)
            ))
        })?;
    }
    Ok(())
}

/// Drops a project's database (its connections closed first), keeping its
/// role: `provision` makes it again, empty.
pub async fn drop_database(
    admin: &tokio_postgres::Config,
    database: &str,
) -> Result<(), DatabaseUnavailable> {
    let client = connect_admin(admin).await?;
    client
        .batch_execute(&format!(
            "DROP DATABASE IF EXISTS {} WITH (FORCE)",
            ident(database)
        ))
        .await
        .map_err(|e| {
            DatabaseUnavailable(format!(
                "the project's database could not be dropped: {}",
                describe(&e, None)
            ))
        })
}

/// On Rivet's own server: no project role may connect to the databases
/// every server has.
pub async fn close_shared_databases(
    admin: &tokio_postgres::Config,
) -> Result<(), DatabaseUnavailable> {
    let client = connect_admin(admin).await?;
    client
        .batch_execute("REVOKE CONNECT ON DATABASE postgres FROM PUBLIC; REVOKE CONNECT ON DATABASE template1 FROM PUBLIC")
        .await
        .map_err(|e| DatabaseUnavailable(format!("Rivet's PostgreSQL could not be closed to projects: {}", describe(&e, None))))
}

/// Runs a migration once, in one transaction with its record.
pub async fn migrate(
    client: &mut Client,
    name: &str,
    sql: &str,
) -> Result<Migrated, DatabaseError> {
    let failed = |e: tokio_postgres::Error| DatabaseError::Sql(describe(&e, None));
    client
        .batch_execute(
            "CREATE SCHEMA IF NOT EXISTS rivet; CREATE TABLE IF NOT EXISTS rivet.migrations (name text PRIMARY KEY, sha256 text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())",
        )
        .await
        .map_err(failed)?;
    let digest = digest(sql);
    let transaction = client.transaction().await.map_err(failed)?;
    // Two migrations of one project never run side by side.
    transaction
        .batch_execute("LOCK TABLE rivet.migrations IN EXCLUSIVE MODE")
        .await
        .map_err(failed)?;
    let applied = transaction
        .query_opt(
            "SELECT sha256 FROM rivet.migrations WHERE name = $1",
            &[&name],
        )
        .await
        .map_err(failed)?;
    if let Some(row) = applied {
        let before: String = row.get(0);
        return if before == digest {
            Ok(Migrated::AlreadyApplied)
        } else {
            Err(DatabaseError::Changed {
                name: name.to_owned(),
            })
        };
    }
    transaction
        .batch_execute(sql)
        .await
        .map_err(|e| DatabaseError::Sql(describe(&e, Some(sql))))?;
    transaction
        .execute(
            "INSERT INTO rivet.migrations (name, sha256) VALUES ($1, $2)",
            &[&name, &digest],
        )
        .await
        .map_err(failed)?;
    transaction.commit().await.map_err(failed)?;
    Ok(Migrated::Applied)
}

/// Runs `sql` with the simple protocol (every value comes back as text)
/// and keeps the last statement's result.
pub async fn query(client: &Client, sql: &str) -> Result<QueryResult, DatabaseError> {
    let messages = client
        .simple_query(sql)
        .await
        .map_err(|e| DatabaseError::Sql(describe(&e, Some(sql))))?;
    let mut last = QueryResult::default();
    let mut current = QueryResult::default();
    for message in messages {
        match message {
            SimpleQueryMessage::RowDescription(columns) => {
                current.columns = columns.iter().map(|c| c.name().to_owned()).collect();
            }
            SimpleQueryMessage::Row(row) => {
                let values = (0..row.len())
                    .map(|i| row.get(i).map(str::to_owned))
                    .collect();
                current.push_row(values);
            }
            SimpleQueryMessage::CommandComplete(count) => {
                current.total_rows = count;
                last = std::mem::take(&mut current);
            }
            _ => {}
        }
    }
    Ok(last)
}

/// The tables outside the system's schemas and Rivet's own, with their
/// columns in order and their rows counted.
pub async fn tables(client: &Client) -> Result<Vec<TableInfo>, DatabaseError> {
    let failed = |e: tokio_postgres::Error| DatabaseError::Sql(describe(&e, None));
    let rows = client
        .query(
            "SELECT c.table_schema, c.table_name, c.column_name, c.data_type
             FROM information_schema.columns c
             JOIN information_schema.tables t
               ON t.table_schema = c.table_schema AND t.table_name = c.table_name
             WHERE t.table_type = 'BASE TABLE'
               AND c.table_schema NOT IN ('pg_catalog', 'information_schema', 'rivet')
               AND c.table_schema NOT LIKE 'pg_%'
             ORDER BY c.table_schema, c.table_name, c.ordinal_position",
            &[],
        )
        .await
        .map_err(failed)?;
    let mut tables: Vec<(String, String, TableInfo)> = Vec::new();
    for row in rows {
        let (schema, table): (String, String) = (row.get(0), row.get(1));
        let column = ColumnInfo {
            name: row.get(2),
            kind: row.get(3),
        };
        let full = tables.len() >= MAX_TABLES;
        match tables.last_mut() {
            Some((s, t, info)) if *s == schema && *t == table => info.columns.push(column),
            _ if full => break,
            _ => {
                let name = if schema == "public" {
                    table.clone()
                } else {
                    format!("{schema}.{table}")
                };
                tables.push((
                    schema,
                    table,
                    TableInfo {
                        name,
                        columns: vec![column],
                        rows: 0,
                    },
                ));
            }
        }
    }
    for (schema, table, info) in &mut tables {
        let count = client
            .query_one(
                &format!("SELECT count(*) FROM {}.{}", ident(schema), ident(table)),
                &[],
            )
            .await
            .map_err(failed)?;
        info.rows = u64::try_from(count.get::<_, i64>(0)).unwrap_or(0);
    }
    Ok(tables.into_iter().map(|(_, _, info)| info).collect())
}

/// The database's own words: message, detail, hint, and the line the error
/// is on when the position is known.
fn describe(error: &tokio_postgres::Error, sql: Option<&str>) -> String {
    let Some(db) = error.as_db_error() else {
        return error.to_string();
    };
    let mut text = db.message().to_owned();
    if let (Some(tokio_postgres::error::ErrorPosition::Original(at)), Some(sql)) =
        (db.position(), sql)
    {
        let at = usize::try_from(*at).unwrap_or(0).saturating_sub(1);
        let line = sql.chars().take(at).filter(|c| *c == '\n').count() + 1;
        text.push_str(&format!(" (line {line})"));
    }
    if let Some(detail) = db.detail() {
        text.push_str(&format!("\nDETAIL: {detail}"));
    }
    if let Some(hint) = db.hint() {
        text.push_str(&format!("\nHINT: {hint}"));
    }
    text
}

/// How a migration's text is recorded: its SHA-256, in hex.
pub fn digest(sql: &str) -> String {
    Sha256::digest(sql.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The migrations the database has run: name and digest, oldest first.
pub async fn applied(client: &Client) -> Result<Vec<(String, String)>, DatabaseError> {
    let failed = |e: tokio_postgres::Error| DatabaseError::Sql(describe(&e, None));
    let exists = client
        .query_one("SELECT to_regclass('rivet.migrations') IS NOT NULL", &[])
        .await
        .map_err(failed)?;
    if !exists.get::<_, bool>(0) {
        return Ok(Vec::new());
    }
    let rows = client
        .query(
            "SELECT name, sha256 FROM rivet.migrations ORDER BY applied_at, name",
            &[],
        )
        .await
        .map_err(failed)?;
    Ok(rows.iter().map(|r| (r.get(0), r.get(1))).collect())
}
