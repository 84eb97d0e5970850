//! The projects' directories on this server: one each under
//! `<data_dir>/projects/<id>/`, holding `workspace/` (the files the
//! project's code lives in), `checkpoints.git` and `images/` (its messages'
//! images). A project's record (its
//! name, runtime and dates) is its row in the store, and nothing else.

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

    /// Where the images of the project's messages are kept, each named
    /// after the SHA-256 of its bytes.
    pub fn images(&self, id: &ProjectId) -> PathBuf {
        self.dir(id).join("images")
    }

    /// Makes a new project's directories, under a fresh id. The project is
    /// not recorded until its row is in the store (`session::manage::create`).
    pub fn create(&self, name: &str) -> Result<ProjectMeta, ProjectError> {
        let id = ProjectId::from_random(rand::random());
        let workspace = self.workspace(&id);
        std::fs::create_dir_all(&workspace).map_err(io(&workspace))?;
        Ok(ProjectMeta {
            id,
            name: name.to_owned(),
            created: SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0, |d| d.as_secs()),
        })
    }

    /// Removes the project's directory and everything in it.
    pub fn delete(&self, id: &ProjectId) -> Result<(), ProjectError> {
        let dir = self.dir(id);
        match std::fs::remove_dir_all(&dir) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                Err(ProjectError::NotFound(id.clone()))
            }
            Err(source) => Err(ProjectError::Io { path: dir, source }),
        }
    }

    /// The directories holding a `project.json`, as versions before the
    /// store kept a project's record; read once, by the store's import.
    pub fn legacy_ids(&self) -> Vec<ProjectId> {
        std::fs::read_dir(&self.root)
            .map(|entries| {
                entries
                    .filter_map(Result::ok)
                    .filter(|entry| entry.path().join(LEGACY_FILE).exists())
                    .filter_map(|entry| ProjectId::parse(&entry.file_name().to_string_lossy()).ok())
                    .collect()
            })
            .unwrap_or_default()
    }

    /// A project's `project.json`, as versions before the store wrote it.
    pub fn read_legacy(&self, id: &ProjectId) -> Result<ProjectMeta, ProjectError> {
        let path = self.dir(id).join(LEGACY_FILE);
        let bytes = match std::fs::read(&path) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(ProjectError::NotFound(id.clone()));
            }
            Err(source) => return Err(ProjectError::Io { path, source }),
        };
        serde_json::from_slice(&bytes).map_err(|source| ProjectError::Corrupt { path, source })
    }
}

/// Where versions before the store kept a project's record.
const LEGACY_FILE: &str = "project.json";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_new_project_has_its_workspace_and_no_file_of_its_own() {
        let dir = tempfile::tempdir().unwrap();
        let projects = Projects::new(dir.path());
        let a = projects.create("first").unwrap();
        let b = projects.create("second").unwrap();
        assert_ne!(a.id, b.id);
        assert!(projects.workspace(&a.id).is_dir());
        let names: Vec<String> = std::fs::read_dir(projects.dir(&a.id))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        // The store is the record: no project.json beside the files.
        assert_eq!(names, ["workspace"]);
        assert!(projects.legacy_ids().is_empty());
    }

    #[test]
    fn a_corrupt_legacy_project_json_is_reported_naming_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let projects = Projects::new(dir.path());
        let bad = projects.create("bad").unwrap();
        let path = projects.dir(&bad.id).join(LEGACY_FILE);
        // What a write cut off by a crash used to leave behind.
        std::fs::write(&path, br#"{"id":"#).unwrap();
        assert_eq!(projects.legacy_ids(), std::slice::from_ref(&bad.id));
        let err = projects.read_legacy(&bad.id).unwrap_err();
        assert!(matches!(err, ProjectError::Corrupt { .. }), "{err:?}");
        assert!(
            err.to_string().contains(&path.display().to_string()),
            "{err}"
        );
    }

    #[test]
    fn a_project_directory_is_deleted_once() {
        let dir = tempfile::tempdir().unwrap();
        let projects = Projects::new(dir.path());
        let meta = projects.create("before").unwrap();
        projects.delete(&meta.id).unwrap();
        assert!(!projects.dir(&meta.id).exists());
        assert!(matches!(
            projects.delete(&meta.id),
            Err(ProjectError::NotFound(_))
        ));
    }

    #[test]
    fn unknown_projects_are_not_found() {
        let dir = tempfile::tempdir().unwrap();
        let projects = Projects::new(dir.path());
        let id = ProjectId::parse("nothere").unwrap();
        assert!(matches!(
            projects.read_legacy(&id),
            Err(ProjectError::NotFound(_))
        ));
        std::fs::create_dir_all(dir.path().join("projects/stray")).unwrap();
        assert!(projects.legacy_ids().is_empty());
    }
}
