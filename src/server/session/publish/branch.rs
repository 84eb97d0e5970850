//! "Publish to a git branch": the live version's files as a commit on a
//! branch of the project's git remote (`gh-pages` unless told), for static
//! hosts that deploy from git. The commit goes on top of the branch as the
//! remote has it, so its history is kept and a push is never forced.

use std::path::Path;

use crate::runtime::project::ProjectId;
use crate::runtime::ship::Pushed;
use crate::server::checkpoint::git::{Author, Repo};
use crate::server::publish::{PublishError, off_thread};
use crate::server::remote::{RemoteError, check_branch};
use crate::server::session::api::ApiError;
use crate::server::state::AppState;

/// The branch static hosts deploy from when none is given.
pub const DEFAULT_PAGES_BRANCH: &str = "gh-pages";

/// Pushes the live version to `branch` of the project's remote.
pub async fn publish_to_branch(
    state: &AppState,
    project: &ProjectId,
    branch: Option<String>,
) -> Result<Pushed, ApiError> {
    crate::server::session::manage::require(state, project).await?;
    let remote = state.remotes.get(project)?.ok_or(RemoteError::NotSet)?;
    let branch = branch.unwrap_or_else(|| DEFAULT_PAGES_BRANCH.to_owned());
    check_branch(&branch)?;
    let _guard = state.sites.lock().await;
    let live = state
        .sites
        .site(project)?
        .live
        .ok_or(PublishError::NotPublished)?;
    let scratch = state.sites.scratch(project);
    let outcome = push_version(state, project, live, &scratch, &remote, &branch).await;
    let removed = off_thread(move || Ok(std::fs::remove_dir_all(&scratch)?)).await;
    if let Err(error) = removed {
        tracing::warn!(%project, %error, "the scratch copy of a pages push is left on disk");
    }
    let commit = outcome?;
    tracing::info!(%project, commit, branch, version = live, "published to a git branch");
    Ok(Pushed { commit, branch })
}

async fn push_version(
    state: &AppState,
    project: &ProjectId,
    live: u32,
    scratch: &Path,
    remote: &crate::server::remote::Remote,
    branch: &str,
) -> Result<String, ApiError> {
    let tree = scratch.join("tree");
    let (from, to) = (state.sites.version_dir(project, live), tree.clone());
    off_thread(move || copy_site(&from, &to)).await?;
    let git = &state.config.git;
    let repo = Repo::new(scratch.join("pages.git"), &tree)
        .with_author(Author::new(&git.author_name, &git.author_email))
        .with_every_folder();
    let credentials = super::super::remote::credentials(remote);
    let parent = repo.fetch(&remote.url, branch, credentials).await?;
    if let Some(parent) = &parent {
        repo.start_at(parent)
            .await
            .map_err(crate::server::checkpoint::git::sync::SyncError::from)?;
    }
    let message = format!("Publish version {live}\n\nRivet-Publish: {project} v{live}\n");
    let commit = repo
        .snapshot(&message)
        .await
        .map_err(crate::server::checkpoint::git::sync::SyncError::from)?;
    let credentials = super::super::remote::credentials(remote);
    repo.push(&remote.url, branch, credentials).await?;
    Ok(commit)
}

/// Copies a version's files into `to`, without the gzip copies publishing
/// made of them.
fn copy_site(from: &Path, to: &Path) -> Result<(), PublishError> {
    let _ = std::fs::remove_dir_all(to);
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let (path, kind) = (entry.path(), entry.file_type()?);
        let target = to.join(entry.file_name());
        if kind.is_dir() {
            copy_site(&path, &target)?;
        } else if kind.is_file() && !is_gzip_copy(&path) {
            std::fs::copy(&path, &target)?;
        }
    }
    Ok(())
}

/// `x.js.gz` beside `x.js`: made by publishing, not part of the site.
fn is_gzip_copy(path: &Path) -> bool {
    path.extension().is_some_and(|e| e == "gz") && path.with_extension("").is_file()
}
