//! Writing a whole imported conversation at once.

use super::{ProjectRow, Store, StoreError, events, messages, projects};
use crate::runtime::session::Envelope;
use crate::server::store::MessageRow;

impl Store {
    /// Records `project` with its messages and events, in one transaction:
    /// all of it or nothing.
    pub async fn import_conversation(
        &self,
        project: &ProjectRow,
        messages: &[MessageRow],
        events: &[Envelope],
    ) -> Result<(), StoreError> {
        let pool = self.writes().await?;
        let mut tx = pool.begin().await?;
        projects::insert(&mut *tx, project).await?;
        for message in messages {
            messages::upsert(&mut tx, &project.id, message, None).await?;
        }
        for envelope in events {
            events::append(&mut tx, &project.id, envelope).await?;
        }
        tx.commit().await?;
        Ok(())
    }
}
