//! The project list's server functions: list (and search), rename, delete.

use leptos::prelude::*;
use serde::{Deserialize, Serialize};

use crate::runtime::error::RivetError;
use crate::runtime::project::ProjectId;

/// A project as the list shows it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ProjectSummary {
    pub id: ProjectId,
    pub name: String,
    /// Seconds since the Unix epoch.
    pub updated_at: i64,
    pub last_message_at: Option<i64>,
}

impl ProjectSummary {
    /// When something last happened in the project.
    pub fn last_activity(&self) -> i64 {
        self.last_message_at.unwrap_or(self.updated_at)
    }
}

#[cfg(feature = "ssr")]
impl TryFrom<crate::server::store::ProjectListing> for ProjectSummary {
    type Error = crate::runtime::project::InvalidProjectId;

    fn try_from(row: crate::server::store::ProjectListing) -> Result<Self, Self::Error> {
        Ok(ProjectSummary {
            id: ProjectId::parse(&row.id)?,
            name: row.name,
            updated_at: row.updated_at,
            last_message_at: row.last_message_at,
        })
    }
}

/// Projects whose name or messages contain `search` (all when it is
/// empty), the latest changed first.
#[server(endpoint = "list_projects")]
pub async fn list_projects(search: String) -> Result<Vec<ProjectSummary>, RivetError> {
    use crate::server::session::api::ApiError;
    let state = expect_context::<crate::server::state::AppState>();
    let store_error = |e: crate::server::store::StoreError| RivetError::from(ApiError::from(e));
    let rows = state
        .store
        .find_projects(&search)
        .await
        .map_err(store_error)?;
    Ok(rows
        .into_iter()
        .filter_map(|row| ProjectSummary::try_from(row).ok())
        .collect())
}

#[server(endpoint = "rename_project")]
pub async fn rename_project(
    project: ProjectId,
    name: String,
) -> Result<ProjectSummary, RivetError> {
    use crate::server::session::api::ApiError;
    let state = expect_context::<crate::server::state::AppState>();
    let row = crate::server::session::manage::rename(&state, &project, &name).await?;
    ProjectSummary::try_from(row).map_err(|e| RivetError::from(ApiError::from(e)))
}

/// Deletes the project: its running answer and sandbox, files and rows.
#[server(endpoint = "delete_project")]
pub async fn delete_project(project: ProjectId) -> Result<(), RivetError> {
    let state = expect_context::<crate::server::state::AppState>();
    Ok(crate::server::session::manage::delete(&state, &project).await?)
}
