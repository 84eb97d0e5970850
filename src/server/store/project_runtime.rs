//! The runtime a project runs on, changed after its creation.

use super::{Store, StoreError, now};
use crate::runtime::kind::RuntimeKind;

impl Store {
    /// Records that the project now runs on `runtime`; false when no such
    /// project is recorded.
    pub async fn set_project_runtime(
        &self,
        id: &str,
        runtime: RuntimeKind,
    ) -> Result<bool, StoreError> {
        let pool = self.writes().await?;
        let done = sqlx::query("UPDATE projects SET runtime = $1, updated_at = $2 WHERE id = $3")
            .bind(runtime.as_str())
            .bind(now())
            .bind(id)
            .execute(pool)
            .await?;
        Ok(done.rows_affected() > 0)
    }
}

#[cfg(test)]
mod tests {
    use super::super::ProjectRow;
    use super::*;

    #[tokio::test]
    async fn a_changed_runtime_is_kept_across_a_reopened_store() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::new(dir.path(), RuntimeKind::Sandbox);
        let row = ProjectRow {
            id: "p1".to_owned(),
            name: "p1".to_owned(),
            created_at: 1,
            updated_at: 1,
            runtime: RuntimeKind::Webcontainer,
        };
        store.ensure_project(&row).await.unwrap();
        assert!(
            store
                .set_project_runtime("p1", RuntimeKind::Sandbox)
                .await
                .unwrap()
        );
        drop(store);

        let reopened = Store::new(dir.path(), RuntimeKind::Sandbox);
        let got = reopened.project("p1").await.unwrap().unwrap();
        assert_eq!(got.runtime, RuntimeKind::Sandbox);
        assert!(got.updated_at > 1);
        // Recording the project again does not undo the change.
        reopened.ensure_project(&row).await.unwrap();
        assert_eq!(
            reopened.project("p1").await.unwrap().unwrap().runtime,
            RuntimeKind::Sandbox
        );
    }

    #[tokio::test]
    async fn runtime_of_unknown_project_is_not_set() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::new(dir.path(), RuntimeKind::Sandbox);
        assert!(
            !store
                .set_project_runtime("nope", RuntimeKind::Sandbox)
                .await
                .unwrap()
        );
        assert!(store.project("nope").await.unwrap().is_none());
    }
}
