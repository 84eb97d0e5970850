//! Published sites: each project's published versions under
//! `<data_dir>/published/<project>/` (`v1/`, `v2/`… hold the files, never
//! changed once written; `site.json` says which version is live and who
//! may see it), and where a site is served (`<project>.<domain>`, see
//! `serve.rs`). Building the files is the session's
//! (`session/publish.rs`); this layer keeps and serves what it is given.

mod serve;
mod version;

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

pub use serve::{ENTER_PATH, site_guard};
pub use version::{VersionWriter, WriteLimits};

use crate::runtime::project::ProjectId;
use crate::server::config::Config;

pub use crate::runtime::ship::{Version, Visibility};

/// A project's site: its versions and which one is served.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Site {
    pub live: Option<u32>,
    pub visibility: Visibility,
    pub versions: Vec<Version>,
}

#[derive(Debug, thiserror::Error)]
pub enum PublishError {
    #[error("the project has nothing to publish: {0}")]
    NothingToPublish(String),
    #[error("the build failed: {0}")]
    BuildFailed(String),
    #[error("the site is too large: {0}")]
    TooLarge(String),
    #[error("the site has no version {0}")]
    NoVersion(u32),
    #[error("the project is not published")]
    NotPublished,
    #[error("the project cannot be built now: {0}")]
    NeedsTab(String),
    #[error("no site build {0} is waiting for files")]
    NoBuild(String),
    #[error("cannot keep the published site: {0}")]
    Io(#[from] std::io::Error),
    #[error("the site's record {path} is damaged: {message}")]
    Corrupt { path: String, message: String },
}

/// Runs `work`, file work of a publish (writing, syncing, compressing,
/// copying or removing a version's files), on a blocking thread: on an
/// async thread it would hold up every answer and page that thread serves.
pub async fn off_thread<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, PublishError> + Send + 'static,
) -> Result<T, PublishError> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|e| PublishError::Io(std::io::Error::other(e)))?
}

/// Every project's published sites, on disk.
#[derive(Clone)]
pub struct Sites {
    root: PathBuf,
    /// One publish, rollback or unpublish at a time.
    lock: std::sync::Arc<tokio::sync::Mutex<()>>,
}

impl Sites {
    pub fn new(data_dir: &std::path::Path) -> Sites {
        Sites {
            root: data_dir.join("published"),
            lock: Default::default(),
        }
    }

    pub async fn lock(&self) -> tokio::sync::MutexGuard<'_, ()> {
        self.lock.lock().await
    }

    fn dir(&self, project: &ProjectId) -> PathBuf {
        self.root.join(project.as_str())
    }

    fn record(&self, project: &ProjectId) -> PathBuf {
        self.dir(project).join("site.json")
    }

    /// A folder for the work of one operation on the site (the copy a
    /// pages push commits); the caller removes it.
    pub fn scratch(&self, project: &ProjectId) -> PathBuf {
        self.dir(project).join(".scratch")
    }

    /// Where version `version` of a project's site keeps its files.
    pub fn version_dir(&self, project: &ProjectId, version: u32) -> PathBuf {
        self.dir(project).join(format!("v{version}"))
    }

    /// The project's site; an empty one when it was never published.
    pub fn site(&self, project: &ProjectId) -> Result<Site, PublishError> {
        let path = self.record(project);
        let text = match std::fs::read(&path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Site::default()),
            Err(e) => return Err(e.into()),
        };
        serde_json::from_slice(&text).map_err(|e| PublishError::Corrupt {
            path: path.display().to_string(),
            message: e.to_string(),
        })
    }

    /// Keeps the site's record (atomically). The caller holds the lock.
    pub fn save(&self, project: &ProjectId, site: &Site) -> Result<(), PublishError> {
        std::fs::create_dir_all(self.dir(project))?;
        let text = serde_json::to_vec_pretty(site).map_err(std::io::Error::other)?;
        crate::server::atomic::write(&self.record(project), &text)?;
        Ok(())
    }

    /// A writer for the project's next version. The caller holds the lock.
    pub fn next_version(
        &self,
        project: &ProjectId,
        limits: WriteLimits,
    ) -> Result<(u32, VersionWriter), PublishError> {
        let site = self.site(project)?;
        let next = site.versions.iter().map(|v| v.version).max().unwrap_or(0) + 1;
        let writer = VersionWriter::start(self.dir(project), next, limits)?;
        Ok((next, writer))
    }

    /// Forgets a deleted project's site, every version with it.
    pub fn remove(&self, project: &ProjectId) -> Result<(), PublishError> {
        match std::fs::remove_dir_all(self.dir(project)) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e.into()),
            _ => Ok(()),
        }
    }
}

/// The address a project's site is served at.
pub fn site_url(config: &Config, project: &ProjectId) -> String {
    let publish = &config.publish;
    if !publish.url.trim().is_empty() {
        return publish.url.replace("{project}", project.as_str());
    }
    let port = config
        .server
        .addr
        .rsplit_once(':')
        .map_or("80", |(_, port)| port);
    format!("http://{project}.{}:{port}/", publish.domain)
}

/// What a private site's visitors must carry: derived from the IDE's token
/// for this one project, so it opens nothing else.
pub fn site_key(access: &crate::server::access::Access, project: &ProjectId) -> Option<String> {
    access.derived_key(&format!("site:{project}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_site_is_served_at_its_projects_own_address() {
        let mut config = Config::defaults();
        config.server.addr = "127.0.0.1:3100".into();
        let id = ProjectId::parse("abc123").unwrap();
        assert_eq!(site_url(&config, &id), "http://abc123.site.localhost:3100/");
        config.publish.url = "https://{project}.apps.example.com/".into();
        assert_eq!(site_url(&config, &id), "https://abc123.apps.example.com/");
    }

    #[test]
    fn a_damaged_site_record_is_a_clear_error() {
        let dir = tempfile::tempdir().unwrap();
        let sites = Sites::new(dir.path());
        let id = ProjectId::parse("p1").unwrap();
        assert_eq!(sites.site(&id).unwrap(), Site::default());
        std::fs::create_dir_all(dir.path().join("published/p1")).unwrap();
        std::fs::write(dir.path().join("published/p1/site.json"), "{not json").unwrap();
        let error = sites.site(&id).unwrap_err();
        assert!(matches!(error, PublishError::Corrupt { .. }), "{error}");
        assert!(error.to_string().contains("site.json"), "{error}");
    }

    #[tokio::test]
    async fn file_work_runs_on_another_thread_and_a_panic_in_it_is_an_error() {
        let here = std::thread::current().id();
        let there = off_thread(|| Ok(std::thread::current().id()))
            .await
            .unwrap();
        assert_ne!(here, there);
        let error = off_thread(|| -> Result<(), PublishError> { panic!("disk on fire") })
            .await
            .unwrap_err();
        assert!(matches!(error, PublishError::Io(_)), "{error}");
    }
}
