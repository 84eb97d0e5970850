//! The projects on this server: one directory each under
//! `<data_dir>/projects/<id>/`, holding `project.json` (its metadata) and
//! `workspace/` (the files the project's code lives in).

use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use crate::runtime::project::ProjectId;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ProjectMeta {
    pub id: ProjectId,
    pub name: String,
    /// Seconds since the Unix epoch.
    pub created: u64,
}

#[derive(Debug, thiserror::Error)]
pub enum ProjectError {
    #[error("no project {0}")]
    NotFound(ProjectId),
    #[error("project storage failed at {path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("project metadata at {path} is unreadable: {source}")]
    Corrupt {
        path: PathBuf,
        source: serde_json::Error,
    },
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> ProjectError + '_ {
    move |source| ProjectError::Io {
        path: path.to_owned(),
        source,
    }
}

#[derive(Clone, Debug)]
pub struct Projects {
    root: PathBuf,
}

impl Projects {
    pub fn new(data_dir: &Path) -> Projects {
        Projects {
            root: data_dir.join("projects"),
        }
    }

    pub fn dir(&self, id: &ProjectId) -> PathBuf {
        self.root.join(id.as_str())
    }

    /// Where the project's own files live.
    pub fn workspace(&self, id: &ProjectId) -> PathBuf {
        self.dir(id).join("workspace")
    }

    pub fn create(&self, name: &str) -> Result<ProjectMeta, ProjectError> {
        let id = ProjectId::from_random(rand::random());
        let dir = self.dir(&id);
        let workspace = self.workspace(&id);
        std::fs::create_dir_all(&workspace).map_err(io(&workspace))?;
        let meta = ProjectMeta {
            id,
            name: name.to_owned(),
            created: SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0, |d| d.as_secs()),
        };
        let path = dir.join("project.json");
        let json = serde_json::to_vec_pretty(&meta).map_err(|source| ProjectError::Corrupt {
            path: path.clone(),
            source,
        })?;
        std::fs::write(&path, json).map_err(io(&path))?;
        Ok(meta)
    }

    pub fn get(&self, id: &ProjectId) -> Result<ProjectMeta, ProjectError> {
        let path = self.dir(id).join("project.json");
        let bytes = match std::fs::read(&path) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(ProjectError::NotFound(id.clone()));
            }
            Err(source) => return Err(ProjectError::Io { path, source }),
        };
        serde_json::from_slice(&bytes).map_err(|source| ProjectError::Corrupt { path, source })
    }

    /// Every project, newest first. Directories that are not projects are skipped.
    pub fn list(&self) -> Result<Vec<ProjectMeta>, ProjectError> {
        let entries = match std::fs::read_dir(&self.root) {
            Ok(entries) => entries,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(source) => {
                return Err(ProjectError::Io {
                    path: self.root.clone(),
                    source,
                });
            }
        };
        let mut projects: Vec<ProjectMeta> = entries
            .filter_map(Result::ok)
            .filter_map(|entry| ProjectId::parse(&entry.file_name().to_string_lossy()).ok())
            .filter_map(|id| self.get(&id).ok())
            .collect();
        projects.sort_by(|a, b| b.created.cmp(&a.created).then(a.id.cmp(&b.id)));
        Ok(projects)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn created_projects_are_listed_and_found() {
        let dir = tempfile::tempdir().unwrap();
        let projects = Projects::new(dir.path());
        assert!(projects.list().unwrap().is_empty());
        let a = projects.create("first").unwrap();
        let b = projects.create("second").unwrap();
        assert!(projects.workspace(&a.id).is_dir());
        assert_eq!(projects.get(&b.id).unwrap().name, "second");
        let listed: Vec<_> = projects.list().unwrap().into_iter().map(|p| p.id).collect();
        assert_eq!(listed.len(), 2);
        assert!(listed.contains(&a.id) && listed.contains(&b.id));
    }

    #[test]
    fn unknown_projects_are_not_found() {
        let dir = tempfile::tempdir().unwrap();
        let projects = Projects::new(dir.path());
        let id = ProjectId::parse("nothere").unwrap();
        assert!(matches!(projects.get(&id), Err(ProjectError::NotFound(_))));
        std::fs::create_dir_all(dir.path().join("projects/stray")).unwrap();
        assert!(projects.list().unwrap().is_empty());
    }
}
