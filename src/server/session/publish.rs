//! Publishing a project as a static site: build it in its runtime (its
//! latest `build` action's command, else `npm run build` when package.json
//! has a build script, else its files as they are when it has an
//! `index.html`), copy the output through the runtime into a new version,
//! and make that version live. Versions never change; rollback makes an
//! older one live, unpublish makes none live. `server::publish` keeps and
//! serves them.

mod branch;

use std::time::Duration;

use futures::StreamExt;
use serde::Deserialize;

use super::ProjectHandle;
use super::api::{ApiError, open_project};
use crate::runtime::host::{CommandSpec, EntryKind, Runtime, RuntimeError};
use crate::runtime::kind::RuntimeKind;
use crate::runtime::project::ProjectId;
use crate::runtime::protocol::ActionKind;
use crate::runtime::session::SessionState;
use crate::server::publish::{
    PublishError, Site, Version, VersionWriter, Visibility, WriteLimits, site_key, site_url,
};
use crate::server::state::AppState;

pub use branch::{DEFAULT_PAGES_BRANCH, publish_to_branch};

/// The folders a build's output is looked for in, in order.
const OUTPUT_DIRS: &[&str] = &["dist", "build", "out"];
/// The most files one version may hold.
const MAX_FILES: u64 = 20_000;
/// How much of a failed build's output its error keeps.
const ERROR_TAIL: usize = 2_000;

/// What a publish asks for.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PublishInput {
    #[serde(default)]
    pub visibility: Option<Visibility>,
}

pub use crate::runtime::ship::{Published, SiteView};

/// Where a build's output is, and what made it.
struct Output {
    root: String,
    built_with: Option<String>,
}

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
    if row.is_some_and(|row| row.runtime == RuntimeKind::Webcontainer) {
        let why = "its files are built in the browser; switch it to the sandbox to publish";
        return Err(PublishError::Unsupported(why.to_owned()).into());
    }
    let _guard = state.sites.lock().await;
    let timeout = Duration::from_secs(state.config.publish.build_timeout_secs);
    let output = build(&handle, timeout).await?;
    let limits = WriteLimits {
        max_bytes: state.config.publish.max_mb << 20,
        max_files: MAX_FILES,
    };
    let (version, mut writer) = state.sites.next_version(project, limits)?;
    copy(handle.runtime.as_ref(), &output.root, &mut writer).await?;
    let (files, bytes) = writer.finish()?;
    let mut site = state.sites.site(project)?;
    site.versions.push(Version {
        version,
        created_at: crate::server::store::now(),
        files,
        bytes,
        built_with: output.built_with,
    });
    site.live = Some(version);
    if let Some(visibility) = input.visibility {
        site.visibility = visibility;
    }
    state.sites.save(project, &site)?;
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
    state.sites.save(project, &site)?;
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
    state.sites.save(project, &site)?;
    tracing::info!(%project, "unpublished");
    Ok(view(state, project, site))
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

/// The latest `build` action's command.
fn build_action(state: &SessionState) -> Option<String> {
    state
        .artifacts
        .iter()
        .rev()
        .flat_map(|artifact| artifact.actions.iter().rev())
        .find(|action| action.kind == ActionKind::Build && action.closed)
        .map(|action| action.content.trim().to_owned())
        .filter(|command| !command.is_empty())
}

/// Whether package.json has a `build` script.
async fn has_build_script(runtime: &dyn Runtime) -> bool {
    let Ok(bytes) = runtime.read_file("package.json").await else {
        return false;
    };
    serde_json::from_slice::<serde_json::Value>(&bytes)
        .is_ok_and(|package| package["scripts"]["build"].is_string())
}

async fn build(handle: &ProjectHandle, timeout: Duration) -> Result<Output, ApiError> {
    let runtime = handle.runtime.as_ref();
    let command = match handle.session.read(build_action) {
        Some(command) => Some(command),
        None if has_build_script(runtime).await => Some("npm run build".to_owned()),
        None => None,
    };
    let Some(command) = command else {
        if runtime.read_file("index.html").await.is_ok() {
            return Ok(Output {
                root: String::new(),
                built_with: None,
            });
        }
        let why = "it has no build script and no index.html at its root";
        return Err(PublishError::NothingToPublish(why.to_owned()).into());
    };
    let installed = runtime.list("node_modules").await.is_ok();
    if !installed && runtime.read_file("package.json").await.is_ok() {
        run(runtime, "npm install", timeout).await?;
    }
    run(runtime, &command, timeout).await?;
    for dir in OUTPUT_DIRS {
        if runtime
            .read_file(&format!("{dir}/index.html"))
            .await
            .is_ok()
        {
            return Ok(Output {
                root: (*dir).to_owned(),
                built_with: Some(command),
            });
        }
    }
    let why = format!(
        "`{command}` wrote no {} with an index.html in it",
        OUTPUT_DIRS.join("/, ") + "/"
    );
    Err(PublishError::NothingToPublish(why).into())
}

/// Runs `command` to its end; a failure keeps the end of its output.
async fn run(runtime: &dyn Runtime, command: &str, timeout: Duration) -> Result<(), ApiError> {
    let process = runtime
        .spawn(CommandSpec::command(command).with_timeout(timeout))
        .await?;
    let output = process.take_output();
    let tail = async {
        let mut tail = Vec::new();
        if let Some(mut output) = output {
            while let Some(chunk) = output.next().await {
                tail.extend_from_slice(&chunk);
                let excess = tail.len().saturating_sub(ERROR_TAIL * 2);
                tail.drain(..excess);
            }
        }
        tail
    };
    let (status, tail) = tokio::join!(process.wait(), tail);
    if status.success() {
        return Ok(());
    }
    let said = String::from_utf8_lossy(&tail);
    // Its last ERROR_TAIL characters.
    let from = said
        .char_indices()
        .rev()
        .nth(ERROR_TAIL - 1)
        .map_or(0, |(at, _)| at);
    let said = &said[from..];
    let why = status
        .message
        .clone()
        .unwrap_or_else(|| format!("exit code {:?}", status.code));
    Err(PublishError::BuildFailed(format!("`{command}` failed ({why}):\n{}", said.trim())).into())
}

/// Copies every file under `root` into the version, folder by folder, but
/// what a site never holds ([`kept_in_site`]). It reads each folder itself,
/// not the project's listing: the listing leaves out the insides of
/// `build/`, `dist/` and the like, which a built site may well have.
async fn copy(
    runtime: &dyn Runtime,
    root: &str,
    writer: &mut VersionWriter,
) -> Result<(), ApiError> {
    let prefix = if root.is_empty() {
        String::new()
    } else {
        format!("{root}/")
    };
    let mut folders = vec![root.to_owned()];
    while let Some(folder) = folders.pop() {
        for entry in runtime.list(&folder).await? {
            let Some(relative) = entry.path.strip_prefix(&prefix) else {
                continue;
            };
            let name = relative.rsplit('/').next().unwrap_or(relative);
            if !kept_in_site(name) {
                continue;
            }
            match entry.kind {
                EntryKind::Dir => folders.push(entry.path),
                EntryKind::File => add(runtime, &entry.path, relative, writer).await?,
                _ => {}
            }
        }
    }
    Ok(())
}

/// Adds one file of the build's output to the version.
async fn add(
    runtime: &dyn Runtime,
    path: &str,
    relative: &str,
    writer: &mut VersionWriter,
) -> Result<(), ApiError> {
    match runtime.read_file(path).await {
        Ok(content) => Ok(writer.add(relative, &content)?),
        // Removed since the listing: not part of the site.
        Err(RuntimeError::NotFound { .. }) => Ok(()),
        Err(error) => Err(error.into()),
    }
}

/// Whether a file or folder of this name goes into a site: not hidden ones
/// (`.env`, `.git`…) and not dependencies.
fn kept_in_site(name: &str) -> bool {
    !name.starts_with('.') && name != "node_modules" && name != "bower_components"
}

#[cfg(test)]
mod tests;
