//! The `projects` table.

use sqlx::Row;

use super::{Store, StoreError};
use crate::runtime::kind::RuntimeKind;
use crate::server::projects::{ProjectMeta, Projects};

#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct ProjectRow {
    pub id: String,
    pub name: String,
    /// Seconds since the Unix epoch.
    pub created_at: i64,
    pub updated_at: i64,
    pub runtime: RuntimeKind,
}

/// Records the project unless it is already recorded, with `executor` (the
/// pool, or a transaction that records more with it); true when it was new.
pub(super) async fn insert<'e>(
    executor: impl sqlx::SqliteExecutor<'e>,
    project: &ProjectRow,
) -> Result<bool, StoreError> {
    let done = sqlx::query(
        "INSERT INTO projects (id, name, created_at, updated_at, runtime) \
         VALUES ($1, $2, $3, $4, $5) ON CONFLICT (id) DO NOTHING",
    )
    .bind(&project.id)
    .bind(&project.name)
    .bind(project.created_at)
    .bind(project.updated_at)
    .bind(project.runtime.as_str())
    .execute(executor)
    .await?;
    Ok(done.rows_affected() > 0)
}

impl Store {
    /// Records the project unless it is already recorded; true when it was new.
    pub async fn ensure_project(&self, project: &ProjectRow) -> Result<bool, StoreError> {
        insert(self.writes().await?, project).await
    }

    pub async fn project(&self, id: &str) -> Result<Option<ProjectRow>, StoreError> {
        let pool = self.ready().await?;
        let row = sqlx::query(
            "SELECT id, name, created_at, updated_at, runtime FROM projects WHERE id = $1",
        )
        .bind(id)
        .fetch_optional(pool)
        .await?;
        Ok(row.as_ref().map(|row| self.project_from(row)))
    }

    /// Every project, the latest changed first.
    pub async fn list_projects(&self) -> Result<Vec<ProjectRow>, StoreError> {
        let pool = self.ready().await?;
        let rows = sqlx::query(
            "SELECT id, name, created_at, updated_at, runtime FROM projects \
             ORDER BY updated_at DESC, created_at DESC, id",
        )
        .fetch_all(pool)
        .await?;
        Ok(rows.iter().map(|row| self.project_from(row)).collect())
    }

    /// Records the projects whose directories hold a `project.json` (how
    /// projects were kept before the store) and are not recorded yet. A
    /// `project.json` that cannot be read is reported and left out. They run
    /// on `[runtime] default`.
    pub async fn import_projects(&self, projects: &Projects) -> Result<usize, StoreError> {
        let mut imported = 0;
        for id in projects.legacy_ids() {
            match projects.read_legacy(&id) {
                Ok(meta) => {
                    if self
                        .ensure_project(&ProjectRow::from_meta(&meta, self.default_runtime))
                        .await?
                    {
                        imported += 1;
                    }
                }
                Err(error) => tracing::warn!(%error, "a project directory could not be imported"),
            }
        }
        Ok(imported)
    }

    /// The runtime a row names. The one place that decides what an unknown
    /// name (a hand-edited database, a newer version's runtime) means: the
    /// configured default, so neither the listing nor the project fails.
    pub(super) fn runtime_of(&self, project: &str, stored: &str) -> RuntimeKind {
        RuntimeKind::parse(stored).unwrap_or_else(|error| {
            tracing::warn!(project, %error, "the stored runtime is unknown; using the default");
            self.default_runtime
        })
    }

    pub(super) fn project_from(&self, row: &sqlx::sqlite::SqliteRow) -> ProjectRow {
        let id: String = row.get("id");
        let runtime = self.runtime_of(&id, row.get("runtime"));
        ProjectRow {
            id,
            name: row.get("name"),
            created_at: row.get("created_at"),
            updated_at: row.get("updated_at"),
            runtime,
        }
    }
}

impl ProjectRow {
    pub fn from_meta(meta: &ProjectMeta, runtime: RuntimeKind) -> ProjectRow {
        let created = super::int(meta.created);
        ProjectRow {
            id: meta.id.as_str().to_owned(),
            name: meta.name.clone(),
            created_at: created,
            updated_at: created,
            runtime,
        }
    }
}
