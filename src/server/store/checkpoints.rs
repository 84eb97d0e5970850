//! The `checkpoints` table: which commit of a project's checkpoint
//! repository holds its files as of which message.

use sqlx::Row;

use super::{Store, StoreError, now};

/// Why a checkpoint was taken.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CheckpointKind {
    /// After an answer and its actions.
    Answer,
    /// Before an automatic fix is asked for.
    BeforeFix,
    /// The person's own edits.
    Edits,
    /// The state a restore replaced (what Redo puts back).
    BeforeRestore,
    /// The state a redo replaced.
    BeforeRedo,
    /// The files after a pull from the project's git remote.
    Pull,
}

impl CheckpointKind {
    pub fn as_str(self) -> &'static str {
        match self {
            CheckpointKind::Answer => "answer",
            CheckpointKind::BeforeFix => "before_fix",
            CheckpointKind::Edits => "edits",
            CheckpointKind::BeforeRestore => "before_restore",
            CheckpointKind::BeforeRedo => "before_redo",
            CheckpointKind::Pull => "pull",
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct CheckpointRow {
    pub seq: i64,
    pub kind: String,
    pub message_id: Option<String>,
    pub commit_id: String,
    /// For a restore: the messages it marked undone.
    pub undone: Vec<String>,
    pub created_at: i64,
}

impl Store {
    /// Records a checkpoint after the project's others.
    pub async fn add_checkpoint(
        &self,
        project: &str,
        kind: CheckpointKind,
        message_id: Option<&str>,
        commit_id: &str,
        undone: &[String],
    ) -> Result<CheckpointRow, StoreError> {
        let mut tx = self.begin_write().await?;
        let last: Option<i64> =
            sqlx::query("SELECT MAX(seq) AS last FROM checkpoints WHERE project = $1")
                .bind(project)
                .fetch_one(&mut *tx)
                .await?
                .get("last");
        let row = CheckpointRow {
            seq: last.unwrap_or(0) + 1,
            kind: kind.as_str().to_owned(),
            message_id: message_id.map(str::to_owned),
            commit_id: commit_id.to_owned(),
            undone: undone.to_vec(),
            created_at: now(),
        };
        let undone_json =
            (!undone.is_empty()).then(|| serde_json::to_string(undone).unwrap_or_default());
        sqlx::query(
            "INSERT INTO checkpoints (project, seq, kind, message_id, commit_id, undone, \
             created_at) VALUES ($1, $2, $3, $4, $5, $6, $7)",
        )
        .bind(project)
        .bind(row.seq)
        .bind(&row.kind)
        .bind(&row.message_id)
        .bind(&row.commit_id)
        .bind(undone_json)
        .bind(row.created_at)
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok(row)
    }

    /// The project's checkpoints, oldest first.
    pub async fn checkpoints(&self, project: &str) -> Result<Vec<CheckpointRow>, StoreError> {
        let pool = self.ready().await?;
        let rows = sqlx::query(
            "SELECT seq, kind, message_id, commit_id, undone, created_at FROM checkpoints \
             WHERE project = $1 ORDER BY seq",
        )
        .bind(project)
        .fetch_all(pool)
        .await?;
        Ok(rows
            .iter()
            .map(|row| CheckpointRow {
                undone: row
                    .get::<Option<String>, _>("undone")
                    .and_then(|json| serde_json::from_str(&json).ok())
                    .unwrap_or_default(),
                seq: row.get("seq"),
                kind: row.get("kind"),
                message_id: row.get("message_id"),
                commit_id: row.get("commit_id"),
                created_at: row.get("created_at"),
            })
            .collect())
    }

    /// The latest checkpoint of `kind` taken for `message_id`.
    pub async fn checkpoint_for(
        &self,
        project: &str,
        kind: CheckpointKind,
        message_id: &str,
    ) -> Result<Option<CheckpointRow>, StoreError> {
        let all = self.checkpoints(project).await?;
        Ok(all
            .into_iter()
            .rev()
            .find(|c| c.kind == kind.as_str() && c.message_id.as_deref() == Some(message_id)))
    }

    /// Copies a project's conversation into a fork: the messages up to
    /// position `last_message`, the events up to `last_event` and the
    /// checkpoints up to `last_checkpoint`, in one transaction.
    pub async fn copy_conversation(
        &self,
        from: &str,
        to: &str,
        (last_message, last_event, last_checkpoint): (i64, i64, i64),
    ) -> Result<(), StoreError> {
        let mut tx = self.begin_write().await?;
        sqlx::query(
            "INSERT INTO messages (project, id, position, role, text, asked, model, usage, \
             finish_reason, status, status_detail, updated_at, attachments, text_after) \
             SELECT $2, id, position, role, text, asked, model, usage, finish_reason, status, \
             status_detail, updated_at, attachments, text_after FROM messages \
             WHERE project = $1 AND position <= $3",
        )
        .bind(from)
        .bind(to)
        .bind(last_message)
        .execute(&mut *tx)
        .await?;
        sqlx::query(
            "INSERT INTO events (project, seq, event, piece_of, piece) \
             SELECT $2, seq, event, piece_of, piece FROM events \
             WHERE project = $1 AND seq <= $3",
        )
        .bind(from)
        .bind(to)
        .bind(last_event)
        .execute(&mut *tx)
        .await?;
        sqlx::query(
            "INSERT INTO checkpoints (project, seq, kind, message_id, commit_id, undone, \
             created_at) SELECT $2, seq, kind, message_id, commit_id, undone, created_at \
             FROM checkpoints \
             WHERE project = $1 AND seq <= $3",
        )
        .bind(from)
        .bind(to)
        .bind(last_checkpoint)
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::kind::RuntimeKind;
    use crate::runtime::session::{MessageStatus, Role};
    use crate::server::store::{MessageRow, ProjectRow};

    async fn store_with(dir: &std::path::Path, id: &str) -> Store {
        let store = Store::new(dir, RuntimeKind::Sandbox);
        store
            .ensure_project(&ProjectRow {
                id: id.into(),
                name: id.into(),
                created_at: 1,
                updated_at: 1,
                runtime: RuntimeKind::Sandbox,
            })
            .await
            .unwrap();
        store
    }

    #[tokio::test]
    async fn checkpoints_are_numbered_found_by_message_and_keep_what_they_undid() {
        let dir = tempfile::tempdir().unwrap();
        let store = store_with(dir.path(), "p1").await;
        let kinds = [
            (CheckpointKind::Answer, "m2", "a"),
            (CheckpointKind::Answer, "m4", "b"),
            (CheckpointKind::Answer, "m2", "c"),
        ];
        for (kind, message, commit) in kinds {
            store
                .add_checkpoint("p1", kind, Some(message), commit, &[])
                .await
                .unwrap();
        }
        let undone = vec!["m3".to_owned(), "m4".to_owned()];
        let restore = store
            .add_checkpoint(
                "p1",
                CheckpointKind::BeforeRestore,
                Some("m2"),
                "d",
                &undone,
            )
            .await
            .unwrap();
        assert_eq!(restore.seq, 4);
        let found = store
            .checkpoint_for("p1", CheckpointKind::Answer, "m2")
            .await
            .unwrap()
            .unwrap();
        assert_eq!(found.commit_id, "c");
        let back = store
            .checkpoint_for("p1", CheckpointKind::BeforeRestore, "m2")
            .await
            .unwrap()
            .unwrap();
        assert_eq!(back.undone, undone);
        assert!(
            store
                .checkpoint_for("p1", CheckpointKind::Answer, "m9")
                .await
                .unwrap()
                .is_none()
        );
    }

    #[tokio::test]
    async fn an_undone_message_is_stored_with_the_status_it_had() {
        let dir = tempfile::tempdir().unwrap();
        let store = store_with(dir.path(), "p1").await;
        let status = MessageStatus::Undone {
            was: Box::new(MessageStatus::Interrupted {
                reason: "cut".into(),
            }),
        };
        let row = MessageRow {
            id: "m2".into(),
            role: Role::Assistant,
            text: "Hello".into(),
            asked: Some("hi".into()),
            model: None,
            usage: None,
            cost_usd: None,
            finish_reason: None,
            status: status.clone(),
            attachments: Default::default(),
        };
        store.save_message("p1", &row).await.unwrap();
        assert_eq!(store.messages("p1").await.unwrap(), [row]);
    }
}
