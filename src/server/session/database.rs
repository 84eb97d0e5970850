//! A project's database, as the data panel and the HTTP API reach it: its
//! tables and the person's own queries. The model's migrations and queries
//! reach it through the runner (`crate::runtime::database`).

use crate::runtime::database::{QueryResult, TableInfo};
use crate::runtime::project::ProjectId;
use crate::server::session::api::ApiError;
use crate::server::state::AppState;

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
