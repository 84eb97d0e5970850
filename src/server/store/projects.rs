//! The `projects` table.

use sqlx::Row;

use super::{Store, StoreError};

#[derive(Clone, Debug, PartialEq)]
pub struct ProjectRow {
    pub id: String,
    pub name: String,
    /// Seconds since the Unix epoch.
    pub created_at: i64,
    pub updated_at: i64,
    pub runtime: String,
}

impl Store {
    /// Records the project unless it is already recorded.
    pub async fn ensure_project(&self, project: &ProjectRow) -> Result<(), StoreError> {
        let pool = self.ready().await?;
        sqlx::query(
            "INSERT INTO projects (id, name, created_at, updated_at, runtime) \
             VALUES ($1, $2, $3, $4, $5) ON CONFLICT (id) DO NOTHING",
        )
        .bind(&project.id)
        .bind(&project.name)
        .bind(project.created_at)
        .bind(project.updated_at)
        .bind(&project.runtime)
        .execute(pool)
        .await?;
        Ok(())
    }

    pub async fn project(&self, id: &str) -> Result<Option<ProjectRow>, StoreError> {
        let pool = self.ready().await?;
        let row = sqlx::query(
            "SELECT id, name, created_at, updated_at, runtime FROM projects WHERE id = $1",
        )
        .bind(id)
        .fetch_optional(pool)
        .await?;
        Ok(row.map(|row| ProjectRow {
            id: row.get("id"),
            name: row.get("name"),
            created_at: row.get("created_at"),
            updated_at: row.get("updated_at"),
            runtime: row.get("runtime"),
        }))
    }
}
