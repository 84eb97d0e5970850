//! A database in memory for the runner's tests: migrations are recorded by
//! name and text as a real one records them, SQL containing a chosen
//! fragment is refused with a chosen message, and queries answer a chosen
//! result.

use std::collections::BTreeMap;
use std::sync::{Mutex, MutexGuard};

use async_trait::async_trait;

use super::{Database, DatabaseError, Migrated, QueryResult};

#[derive(Default)]
pub struct FakeDatabase {
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    applied: BTreeMap<String, String>,
    /// Every SQL text run, in order.
    ran: Vec<String>,
    refusals: Vec<(String, String)>,
    unavailable: Option<String>,
    note: Option<String>,
    answer: QueryResult,
}

impl FakeDatabase {
    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// SQL containing `fragment` fails with `message`.
    pub fn refuse(&self, fragment: &str, message: &str) {
        self.state()
            .refusals
            .push((fragment.to_owned(), message.to_owned()));
    }

    /// Every call fails as a project with no database fails.
    pub fn unavailable(&self, why: &str) {
        self.state().unavailable = Some(why.to_owned());
    }

    /// Said once, after the next action that runs.
    pub fn note(&self, note: &str) {
        self.state().note = Some(note.to_owned());
    }

    /// What every query returns.
    pub fn answer(&self, result: QueryResult) {
        self.state().answer = result;
    }

    /// The SQL run so far, in order.
    pub fn ran(&self) -> Vec<String> {
        self.state().ran.clone()
    }

    fn run(&self, sql: &str) -> Result<(), DatabaseError> {
        let mut state = self.state();
        if let Some(why) = &state.unavailable {
            return Err(DatabaseError::Unavailable(why.clone()));
        }
        if let Some((_, message)) = state.refusals.iter().find(|(f, _)| sql.contains(f)) {
            return Err(DatabaseError::Sql(message.clone()));
        }
        state.ran.push(sql.to_owned());
        Ok(())
    }
}

#[async_trait]
impl Database for FakeDatabase {
    async fn migrate(&self, name: &str, sql: &str) -> Result<Migrated, DatabaseError> {
        if let Some(why) = &self.state().unavailable {
            return Err(DatabaseError::Unavailable(why.clone()));
        }
        match self.state().applied.get(name) {
            Some(text) if text == sql => return Ok(Migrated::AlreadyApplied),
            Some(_) => {
                return Err(DatabaseError::Changed {
                    name: name.to_owned(),
                });
            }
            None => {}
        }
        self.run(sql)?;
        self.state().applied.insert(name.to_owned(), sql.to_owned());
        Ok(Migrated::Applied)
    }

    async fn query(&self, sql: &str) -> Result<QueryResult, DatabaseError> {
        self.run(sql)?;
        Ok(self.state().answer.clone())
    }

    fn take_note(&self) -> Option<String> {
        self.state().note.take()
    }
}
