//! A project's database, as the data panel and the HTTP API reach it: its
//! tables and the person's own queries. The model's migrations and queries
//! reach it through the runner (`crate::runtime::database`).

use std::collections::BTreeMap;

use crate::runtime::database::{QueryResult, TableInfo};
use crate::runtime::host::{EntryKind, Runtime};
use crate::runtime::project::ProjectId;
use crate::server::database::migration_digest;
use crate::server::session::ProjectHandle;
use crate::server::session::api::{ApiError, open_project};
use crate::server::state::AppState;

/// Where a project's migrations are kept, one `.sql` file each, run in the
/// order of their names.
pub const MIGRATIONS_DIR: &str = "supabase/migrations";

/// Runs a migration the browser's runner was given (a project that runs
/// in the browser); whether it ran now.
pub async fn migrate(
    state: &AppState,
    project: &ProjectId,
    name: &str,
    sql: &str,
) -> Result<bool, ApiError> {
    super::manage::require(state, project).await?;
    crate::runtime::host::checked_path(name)?;
    let migrated = state
        .databases
        .for_project(project)
        .migrate(name, sql)
        .await?;
    Ok(migrated == crate::runtime::database::Migrated::Applied)
}

/// Drops the deleted project's database and role, if it had them; a
/// failure is logged (the project goes all the same).
pub async fn forget(state: &AppState, project: &ProjectId) {
    if let Err(error) = state.databases.forget(project).await {
        tracing::warn!(%project, %error, "the deleted project's database could not be dropped");
    }
}

/// Longest SQL text a person's query may have.
pub const MAX_SQL_BYTES: usize = 256 * 1024;

/// The project's tables, with their columns and row counts; its database
/// is made if it has none yet.
pub async fn tables(state: &AppState, project: &ProjectId) -> Result<Vec<TableInfo>, ApiError> {
    super::manage::require(state, project).await?;
    Ok(state.databases.tables(project).await?)
}

/// Runs the person's SQL as the project's role: the last statement's
/// columns and first rows.
pub async fn query(
    state: &AppState,
    project: &ProjectId,
    sql: &str,
) -> Result<QueryResult, ApiError> {
    super::manage::require(state, project).await?;
    if sql.trim().is_empty() {
        return Err(
            crate::runtime::database::DatabaseError::Sql("the query is empty".to_owned()).into(),
        );
    }
    if sql.len() > MAX_SQL_BYTES {
        return Err(crate::runtime::database::DatabaseError::Sql(format!(
            "the query is longer than {} KiB",
            MAX_SQL_BYTES / 1024
        ))
        .into());
    }
    tracing::info!(%project, bytes = sql.len(), "a query from the data panel or the API");
    Ok(state.databases.query(project, sql).await?)
}

/// The project's migration files (path and text), in the order of their
/// paths.
async fn migration_files(runtime: &dyn Runtime) -> Result<Vec<(String, String)>, ApiError> {
    let entries = match runtime.list(MIGRATIONS_DIR).await {
        Ok(entries) => entries,
        Err(crate::runtime::host::RuntimeError::NotFound { .. }) => return Ok(Vec::new()),
        Err(error) => return Err(error.into()),
    };
    let mut paths: Vec<String> = entries
        .into_iter()
        .filter(|e| e.kind == EntryKind::File && e.path.ends_with(".sql"))
        .map(|e| e.path)
        .collect();
    paths.sort();
    let mut files = Vec::new();
    for path in paths {
        let bytes = runtime.read_file(&path).await?;
        let text = String::from_utf8(bytes).map_err(|_| ApiError::NotText(path.clone()))?;
        files.push((path, text));
    }
    Ok(files)
}

/// Replaces the project's database by one made from its migration files
/// alone: its data goes. Answers the migrations run.
pub async fn rebuild(state: &AppState, project: &ProjectId) -> Result<Vec<String>, ApiError> {
    let handle = open_project(state, project).await?;
    let files = migration_files(handle.runtime.as_ref()).await?;
    tracing::info!(%project, migrations = files.len(), "the database is rebuilt from its migrations");
    Ok(state.databases.rebuild(project, &files).await?)
}

/// How the files and the database differ after the files went back to a
/// checkpoint: migrations the database ran whose file is gone or changed,
/// and migration files it never ran. `None` when they agree, or when the
/// project has no database.
pub async fn drift(state: &AppState, handle: &ProjectHandle) -> Option<String> {
    let applied = match state.databases.applied(&handle.id).await {
        Ok(Some(applied)) => applied,
        Ok(None) => return None,
        Err(error) => {
            return Some(format!(
                "The database could not be compared with the files: {error}"
            ));
        }
    };
    let files: BTreeMap<String, String> = migration_files(handle.runtime.as_ref())
        .await
        .ok()?
        .into_iter()
        .map(|(path, text)| (path, migration_digest(&text)))
        .collect();
    let only_in_database: Vec<&str> = applied
        .iter()
        .filter(|(name, digest)| files.get(name) != Some(digest))
        .map(|(name, _)| name.as_str())
        .collect();
    let only_in_files: Vec<&str> = files
        .keys()
        .filter(|path| !applied.iter().any(|(name, _)| name == *path))
        .map(String::as_str)
        .collect();
    if only_in_database.is_empty() && only_in_files.is_empty() {
        return None;
    }
    let mut note =
        String::from("Restoring files does not rewind the database; its data is as it was.");
    if !only_in_database.is_empty() {
        note.push_str(&format!(
            " The database has run migrations the files no longer have (or have changed): {}.",
            only_in_database.join(", ")
        ));
    }
    if !only_in_files.is_empty() {
        note.push_str(&format!(
            " The files have migrations the database has not run: {}.",
            only_in_files.join(", ")
        ));
    }
    note.push_str(" To match the files, rebuild the database from the migrations (Database tab): that deletes its data.");
    Some(note)
}

/// After a fork: a fork gets the files, not the data, so when its files
/// hold migrations its chat says its database is empty and how to make it.
pub async fn after_fork(state: &AppState, fork: &ProjectId, written: &[String]) {
    let migrations: Vec<&str> = written
        .iter()
        .map(String::as_str)
        .filter(|p| p.starts_with(MIGRATIONS_DIR) && p.ends_with(".sql"))
        .collect();
    if migrations.is_empty() {
        return;
    }
    let handle = state.open_projects.open(state, fork).await;
    handle.runner.alert(
        "The fork's database is empty".to_owned(),
        format!(
            "A fork gets the files, not the data. The files have migrations the database has not run: {}. Rebuild the database from the migrations (Database tab) to create its tables.",
            migrations.join(", ")
        ),
        None,
    );
}

/// After a restore or redo: says so in the chat when the database and the
/// files no longer agree.
pub async fn after_rewind(state: &AppState, handle: &ProjectHandle) {
    if let Some(note) = drift(state, handle).await {
        handle.runner.alert(
            "The database did not go back with the files".to_owned(),
            note,
            None,
        );
    }
}
