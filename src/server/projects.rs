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
        crate::server::atomic::write(&path, &json).map_err(io(&path))?;
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

    /// Gives the project a new name in its `project.json`.
    pub fn rename(&self, id: &ProjectId, name: &str) -> Result<ProjectMeta, ProjectError> {
        let mut meta = self.get(id)?;
        meta.name = name.to_owned();
        let path = self.dir(id).join("project.json");
        let json = serde_json::to_vec_pretty(&meta).map_err(|source| ProjectError::Corrupt {
            path: path.clone(),
            source,
        })?;
        crate::server::atomic::write(&path, &json).map_err(io(&path))?;
        Ok(meta)
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

    /// The directories named like a project id (whether or not they hold
    /// a readable `project.json`).
    pub fn ids(&self) -> Vec<ProjectId> {
        std::fs::read_dir(&self.root)
            .map(|entries| {
                entries
                    .filter_map(Result::ok)
                    .filter(|entry| entry.path().join("project.json").exists())
                    .filter_map(|entry| ProjectId::parse(&entry.file_name().to_string_lossy()).ok())
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Every project, newest first. Directories that are not projects (no
    /// `project.json`) are skipped; a `project.json` that cannot be read or
    /// parsed is an error naming it, never silently left out.
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
        let mut projects = entries
            .filter_map(Result::ok)
            .filter_map(|entry| ProjectId::parse(&entry.file_name().to_string_lossy()).ok())
            .filter_map(|id| match self.get(&id) {
                Err(ProjectError::NotFound(_)) => None,
                found => Some(found),
            })
            .collect::<Result<Vec<ProjectMeta>, ProjectError>>()?;
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
    fn a_corrupt_project_json_is_reported_naming_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let projects = Projects::new(dir.path());
        let good = projects.create("good").unwrap();
        let bad = projects.create("bad").unwrap();
        let path = projects.dir(&bad.id).join("project.json");
        // What a write cut off by a crash used to leave behind.
        std::fs::write(&path, br#"{"id":"#).unwrap();
        for err in [
            projects.list().unwrap_err(),
            projects.get(&bad.id).unwrap_err(),
        ] {
            assert!(matches!(err, ProjectError::Corrupt { .. }), "{err:?}");
            assert!(
                err.to_string().contains(&path.display().to_string()),
                "{err}"
            );
        }
        assert_eq!(projects.get(&good.id).unwrap().name, "good");
    }

    #[test]
    fn project_json_is_written_whole_with_no_temporary_file_left() {
        let dir = tempfile::tempdir().unwrap();
        let projects = Projects::new(dir.path());
        let meta = projects.create("atomic").unwrap();
        let mut names: Vec<String> = std::fs::read_dir(projects.dir(&meta.id))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        assert_eq!(names, ["project.json", "workspace"]);
        assert_eq!(projects.get(&meta.id).unwrap(), meta);
    }

    #[test]
    fn a_project_is_renamed_and_deleted() {
        let dir = tempfile::tempdir().unwrap();
        let projects = Projects::new(dir.path());
        let meta = projects.create("before").unwrap();
        assert_eq!(projects.rename(&meta.id, "after").unwrap().name, "after");
        assert_eq!(projects.get(&meta.id).unwrap().name, "after");
        projects.delete(&meta.id).unwrap();
        assert!(!projects.dir(&meta.id).exists());
        assert!(matches!(
            projects.delete(&meta.id),
            Err(ProjectError::NotFound(_))
        ));
        assert!(matches!(
            projects.rename(&meta.id, "x"),
            Err(ProjectError::NotFound(_))
        ));
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
