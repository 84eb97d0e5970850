//! The database of a project that runs in the browser: it is on the
//! server, so a `supabase` action's migration or query runs there, through
//! the data panel's server functions. The app's own code in the
//! WebContainer cannot reach it, and the chat says so once.

use std::cell::Cell;

use async_trait::async_trait;

use crate::app::data_panel::{database_migrate, database_query};
use crate::runtime::database::{Database, DatabaseError, Migrated, QueryResult};
use crate::runtime::project::ProjectId;

pub struct ServerDatabase {
    project: ProjectId,
    told: Cell<bool>,
}

impl ServerDatabase {
    pub fn new(project: ProjectId) -> ServerDatabase {
        ServerDatabase {
            project,
            told: Cell::new(false),
        }
    }
}

/// A failed call, as the runner reports it: the database's own words when
/// it refused the SQL.
fn failed(error: crate::app::error::RivetError) -> DatabaseError {
    use crate::runtime::error::ErrorCode;
    match error.code {
        ErrorCode::Invalid => DatabaseError::Sql(error.message),
        _ => DatabaseError::Unavailable(error.message),
    }
}

#[async_trait(?Send)]
impl Database for ServerDatabase {
    async fn migrate(&self, name: &str, sql: &str) -> Result<Migrated, DatabaseError> {
        let applied = database_migrate(self.project.clone(), name.to_owned(), sql.to_owned())
            .await
            .map_err(failed)?;
        Ok(if applied {
            Migrated::Applied
        } else {
            Migrated::AlreadyApplied
        })
    }

    async fn query(&self, sql: &str) -> Result<QueryResult, DatabaseError> {
        database_query(self.project.clone(), sql.to_owned())
            .await
            .map_err(failed)
    }

    fn take_note(&self) -> Option<String> {
        (!self.told.replace(true)).then(|| {
            "This project runs in the browser, and its database is on Rivet's server: the action ran there, but the app's own code in the WebContainer cannot reach it. An app with a server part that uses the database needs the sandbox runtime (the project's settings).".to_owned()
        })
    }
}
