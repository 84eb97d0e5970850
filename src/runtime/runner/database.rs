//! The `supabase` action: a migration writes its file, then runs once in
//! one transaction; a query runs and its result goes to the action's card
//! and the "Rivet" terminal. The SQL runs on the project's
//! [`Database`](crate::runtime::database::Database).

#[cfg(test)]
mod tests;

use std::sync::Arc;

use super::{Job, Runner, command_line};
use crate::runtime::build_result::{BuildResult, Stage};
use crate::runtime::database::{DatabaseError, Migrated};
use crate::runtime::path::ProjectPath;
use crate::runtime::protocol::SupabaseOperation;
use crate::runtime::session::SessionEvent;

impl Runner {
    pub(super) async fn supabase(
        &self,
        job: &Job,
        operation: SupabaseOperation,
        path: Option<ProjectPath>,
        sql: &str,
    ) -> Result<(), String> {
        let outcome = match operation {
            SupabaseOperation::Migration => {
                let Some(path) = path else {
                    let reason = "a migration needs filePath (for example filePath=\"supabase/migrations/001_create_todos.sql\"); it was not run";
                    self.action_failed("An action was not run", reason, &job.action);
                    return Err(reason.to_owned());
                };
                self.write_file(job.turn, path.as_str(), sql).await?;
                self.migration(path.as_str(), sql).await
            }
            SupabaseOperation::Query => self.query(job, sql).await,
        };
        outcome.map_err(|error| self.database_failed(job, &error))?;
        if let Some(note) = self.inner.cx.database.take_note() {
            self.alert(
                "The database is on the server".to_owned(),
                note,
                Some(&job.action),
            );
        }
        Ok(())
    }

    async fn migration(&self, name: &str, sql: &str) -> Result<(), DatabaseError> {
        self.terminal(command_line(&format!("migration {name}")));
        let database = Arc::clone(&self.inner.cx.database);
        let said = match database.migrate(name, sql).await? {
            Migrated::Applied => "applied",
            Migrated::AlreadyApplied => "already applied with this text; not run again",
        };
        self.terminal(format!("{said}\r\n"));
        Ok(())
    }

    async fn query(&self, job: &Job, sql: &str) -> Result<(), DatabaseError> {
        let first_line = sql.lines().map(str::trim).find(|l| !l.is_empty());
        self.terminal(command_line(&format!("query {}", first_line.unwrap_or(""))));
        let database = Arc::clone(&self.inner.cx.database);
        let result = database.query(sql).await?;
        self.terminal(format!("{}\r\n", result.to_text().replace('\n', "\r\n")));
        self.emit(SessionEvent::QueryResult {
            action: job.action.clone(),
            result,
        });
        Ok(())
    }

    /// Says why the SQL did not run: an alert, and for SQL the database
    /// refused, a build result for the fix loop with the database's words.
    /// A project with no database gets the alert only; another answer
    /// cannot change that.
    fn database_failed(&self, job: &Job, error: &DatabaseError) -> String {
        let reason = error.to_string();
        self.terminal(format!(
            "\x1b[31m{}\x1b[0m\r\n",
            reason.replace('\n', "\r\n")
        ));
        match error {
            DatabaseError::Unavailable(_) => {
                self.alert(
                    "No database for this project".to_owned(),
                    reason.clone(),
                    Some(&job.action),
                );
            }
            DatabaseError::Sql(_) | DatabaseError::Changed { .. } => {
                self.alert(
                    Stage::Database.describe().to_owned(),
                    reason.clone(),
                    Some(&job.action),
                );
                self.build_result(
                    BuildResult::new(Stage::Database, None, None, &reason),
                    Some(&job.action),
                );
            }
        }
        reason
    }
}
