//! Publishing a project as a static site: build it in its runtime with
//! the shared rule (`runtime::ship::build`: its latest `build` action's
//! command, else `npm run build` when package.json has a build script,
//! else its files as they are when it has an `index.html`), copy the
//! output into a new version, and make that version live. A sandbox
//! project builds on the server; a WebContainer project in the browser tab
//! that runs it, which sends the output (`browser.rs`). Versions never
//! change; rollback makes an older one live, unpublish makes none live.
//! `server::publish` keeps and serves them.

mod branch;
mod browser;

use std::time::Duration;

use serde::Deserialize;

use super::api::{ApiError, open_project};
use crate::runtime::host::Runtime;
use crate::runtime::kind::RuntimeKind;
use crate::runtime::project::ProjectId;
use crate::runtime::ship::build::{
    self, BuildFailure, BuildPlan, build_action, read_site_file, site_files,
};
use crate::server::publish::{
    PublishError, Site, Version, VersionWriter, Visibility, WriteLimits, off_thread, site_key,
    site_url,
};
use crate::server::state::AppState;

pub use branch::{DEFAULT_PAGES_BRANCH, publish_to_branch};
pub use browser::{BrowserBuild, add_file as add_built_file, finish as finish_browser_build};

/// The most files one version may hold.
const MAX_FILES: u64 = 20_000;

/// What a publish asks for.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PublishInput {
    #[serde(default)]
    pub visibility: Option<Visibility>,
}

pub use crate::runtime::ship::{Published, SiteView};

/// Builds the project and publishes the output as its live version.
pub async fn publish(
    state: &AppState,
    project: &ProjectId,
    input: PublishInput,
) -> Result<Published, ApiError> {
    let handle = open_project(state, project).await?;
    if super::conversation::is_busy(&handle) {
        return Err(ApiError::Busy);
    }
    let row = state.store.project(project.as_str()).await?;
    let in_browser = row.is_some_and(|row| row.runtime == RuntimeKind::Webcontainer);
    let _guard = state.sites.lock().await;
    let timeout = Duration::from_secs(state.config.publish.build_timeout_secs);
    let runtime = handle.runtime.as_ref();
    let plan = build::plan(runtime, handle.session.read(build_action)).await?;
    let limits = WriteLimits {
        max_bytes: state.config.publish.max_mb << 20,
        max_files: MAX_FILES,
    };
    let (version, mut writer) = {
        let (sites, project) = (state.sites.clone(), project.clone());
        off_thread(move || sites.next_version(&project, limits)).await?
    };
    let built_with = match plan {
        BuildPlan::AsIs => {
            writer = copy(runtime, "", writer).await?;
            None
        }
        BuildPlan::Command(command) if in_browser => {
            writer = browser::build_in_tab(&handle, &command, writer, timeout).await?;
            Some(command)
        }
        BuildPlan::Command(command) => {
            let root = build::build(runtime, &command, timeout, &|_| {}).await?;
            writer = copy(runtime, &root, writer).await?;
            Some(command)
        }
    };
    let (files, bytes) = off_thread(move || writer.finish()).await?;
    let mut site = state.sites.site(project)?;
    site.versions.push(Version {
        version,
        created_at: crate::server::store::now(),
        files,
        bytes,
        built_with,
    });
    site.live = Some(version);
    if let Some(visibility) = input.visibility {
        site.visibility = visibility;
    }
    save(state, project, site).await?;
    let url = site_url(&state.config, project);
    tracing::info!(%project, version, files, bytes, url, "published");
    Ok(Published { version, url })
}

/// The project's site: its address, versions and the live one.
pub async fn site(state: &AppState, project: &ProjectId) -> Result<SiteView, ApiError> {
    super::manage::require(state, project).await?;
    Ok(view(state, project, state.sites.site(project)?))
}

/// Makes an earlier version live again.
pub async fn rollback(
    state: &AppState,
    project: &ProjectId,
    version: u32,
) -> Result<SiteView, ApiError> {
    super::manage::require(state, project).await?;
    let _guard = state.sites.lock().await;
    let mut site = state.sites.site(project)?;
    if !site.versions.iter().any(|v| v.version == version) {
        return Err(PublishError::NoVersion(version).into());
    }
    site.live = Some(version);
    let site = save(state, project, site).await?;
    tracing::info!(%project, version, "rolled back the published site");
    Ok(view(state, project, site))
}

/// Serves nothing at the site's address any more; the versions are kept.
pub async fn unpublish(state: &AppState, project: &ProjectId) -> Result<SiteView, ApiError> {
    super::manage::require(state, project).await?;
    let _guard = state.sites.lock().await;
    let mut site = state.sites.site(project)?;
    if site.live.take().is_none() {
        return Err(PublishError::NotPublished.into());
    }
    let site = save(state, project, site).await?;
    tracing::info!(%project, "unpublished");
    Ok(view(state, project, site))
}

/// Keeps the site's record, off the async threads: writing it syncs the
/// file to disk. The caller holds the sites' lock.
async fn save(state: &AppState, project: &ProjectId, site: Site) -> Result<Site, PublishError> {
    let (sites, project) = (state.sites.clone(), project.clone());
    off_thread(move || sites.save(&project, &site).map(|()| site)).await
}

/// Forgets a deleted project's site.
pub fn forget(state: &AppState, project: &ProjectId) {
    if let Err(error) = state.sites.remove(project) {
        tracing::error!(%project, %error, "the deleted project's published site is left on disk");
    }
}

fn view(state: &AppState, project: &ProjectId, site: Site) -> SiteView {
    let url = site_url(&state.config, project);
    let owner_link = (site.visibility == Visibility::Private)
        .then(|| site_key(&state.access, project))
        .flatten()
        .map(|key| {
            let path = crate::server::publish::ENTER_PATH;
            format!("{}{}?key={key}", url.trim_end_matches('/'), path)
        });
    SiteView {
        url,
        live: site.live,
        visibility: site.visibility,
        versions: site.versions,
        owner_link,
    }
}

impl From<BuildFailure> for ApiError {
    fn from(failure: BuildFailure) -> ApiError {
        match failure {
            BuildFailure::NothingToPublish(why) => PublishError::NothingToPublish(why).into(),
            BuildFailure::Failed(why) => PublishError::BuildFailed(why).into(),
            BuildFailure::Runtime(error) => error.into(),
        }
    }
}

/// Copies the site's files under `root` (`runtime::ship::build::site_files`)
/// into the version, each off the async threads ([`off_thread`]).
async fn copy(
    runtime: &dyn Runtime,
    root: &str,
    mut writer: VersionWriter,
) -> Result<VersionWriter, ApiError> {
    for file in site_files(runtime, root).await? {
        if let Some(content) = read_site_file(runtime, &file).await? {
            let path = file.relative;
            writer = off_thread(move || writer.add(&path, &content).map(|()| writer)).await?;
        }
    }
    Ok(writer)
}

#[cfg(test)]
mod tests;
