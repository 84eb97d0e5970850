//! Import and export of projects (`docs/api.md`, "Import and export"):
//! a project's files as a zip, its conversation as JSON, and new projects
//! made from a zip, uploaded files, a git URL or a conversation JSON.
//!
//! Every import is written to a temporary place, checked against
//! [`Limits`] while it is written, and becomes a project only whole: a
//! refused import leaves nothing behind.

pub mod archive;
pub mod conversation;
pub mod export;
pub mod git;
pub mod staging;
pub mod walk;

use std::path::PathBuf;

use base64::Engine;
use std::sync::Arc;

use crate::runtime::host::{Runtime, RuntimeError};
use crate::runtime::project::ProjectId;
use crate::server::projects::ProjectError;
use crate::server::session::{self, api};
use crate::server::state::AppState;
use crate::server::store::{MessageRow, ProjectRow, StoreError};
use conversation::{ExportedFile, ExportedMessage, ExportedProject};
pub use staging::{Limits, Staging};

#[derive(Debug, thiserror::Error)]
pub enum TransferError {
    #[error("{entry}: refused because {reason}")]
    UnsafePath { entry: String, reason: &'static str },
    #[error("{entry} is a symbolic link; imports refuse links")]
    Symlink { entry: String },
    #[error("{entry} is larger than the limit of {limit} bytes per file")]
    EntryTooLarge { entry: String, limit: u64 },
    #[error("the import is larger than the limit of {limit} bytes in all (at {entry})")]
    TotalTooLarge { entry: String, limit: u64 },
    #[error("the import has more than the limit of {limit} files and folders (at {entry})")]
    TooManyEntries { entry: String, limit: usize },
    #[error("the project has more than the export limit of {limit} files and folders (at {entry})")]
    ExportTooManyEntries { entry: String, limit: usize },
    #[error("{entry} is nested deeper than the export limit of {limit} folders")]
    ExportTooDeep { entry: String, limit: usize },
    #[error("not a readable zip archive: {0}")]
    Archive(String),
    #[error("not a Rivet conversation: {0}")]
    Conversation(String),
    #[error("the git URL {url:?} is refused: {reason}")]
    GitUrl { url: String, reason: String },
    #[error("git clone failed: {0}")]
    Clone(String),
    #[error("the project needs a name")]
    EmptyName,
    #[error("no template {0:?}; GET /api/v1/templates lists them")]
    UnknownTemplate(String),
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(transparent)]
    Api(#[from] api::ApiError),
    #[error(transparent)]
    Project(#[from] ProjectError),
    #[error(transparent)]
    Runtime(#[from] RuntimeError),
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The database's dump, for an export with the data.
    #[error(transparent)]
    Database(#[from] crate::runtime::database::DatabaseError),
}

/// Where imports are staged: the data directory's file system, so placing
/// one is a rename.
fn imports_dir(state: &AppState) -> PathBuf {
    state.config.server.data_dir.join("imports")
}

fn limits(state: &AppState) -> Limits {
    Limits::from_config(&state.config.import)
}

/// A new, empty staging area under `[import]`'s limits.
pub fn staging(state: &AppState) -> Result<Staging, TransferError> {
    Staging::new(&imports_dir(state), limits(state))
}

/// A project's export (its zip, or its conversation JSON), written and
/// rewound, ready to be streamed.
pub struct FileExport {
    /// The project's name.
    pub name: String,
    /// The export, already unlinked: it goes away when this is dropped.
    pub file: tokio::fs::File,
    pub len: u64,
}

/// Where exports are written before they are sent: the data directory's
/// file system, not a `/tmp` that may be small or in memory.
fn exports_dir(state: &AppState) -> PathBuf {
    state.config.server.data_dir.join("exports")
}

/// The project's name and a zip of its files, written to a temporary file
/// from its workspace on the host (see [`walk`] for how the walk stays
/// inside it). Every project's files are there, a `webcontainer`
/// project's too: the server keeps the copy its tab mirrors.
/// Where an export with the data holds the database's dump (`pg_dump`'s
/// SQL, which `psql` replays into an empty database).
pub const DUMP_NAME: &str = "rivet-database.sql";

pub async fn export_zip(
    state: &AppState,
    id: &ProjectId,
    with_data: bool,
) -> Result<FileExport, TransferError> {
    let name = session::manage::require(state, id).await?.name;
    let workspace = state.projects.workspace(id);
    let exports = exports_dir(state);
    let dump = if with_data {
        let out = export::temp_file(&exports)?;
        state
            .databases
            .dump(id, out)
            .await?
            .map(|(file, len)| export::Extra {
                name: DUMP_NAME,
                file,
                len,
            })
    } else {
        None
    };
    let (file, len) = tokio::task::spawn_blocking(move || {
        let out = export::temp_file(&exports)?;
        export::write_zip(&workspace, walk::WalkLimits::default(), out, dump)
    })
    .await
    .map_err(|e| TransferError::Archive(e.to_string()))??;
    Ok(FileExport {
        name,
        file: tokio::fs::File::from_std(file),
        len,
    })
}

/// Writes the project's files at `workspace` into `doc`, one at a time,
/// walked as the zip's are ([`walk`]): every file, or a clear refusal past
/// the walk's limits, where a listing through the runtime stops at its own
/// limit and would have left the rest out unsaid.
async fn write_files(
    workspace: PathBuf,
    mut doc: conversation::Streamed,
) -> Result<conversation::Streamed, TransferError> {
    tokio::task::spawn_blocking(move || {
        walk::walk(&workspace, walk::WalkLimits::default(), &mut |found| {
            use std::io::Read;
            let mut bytes = Vec::new();
            found
                .file
                .take(found.size)
                .read_to_end(&mut bytes)
                .map_err(export::io_error(std::path::Path::new(found.path)))?;
            doc.file(&ExportedFile::new(found.path.to_owned(), bytes))
        })?;
        Ok(doc)
    })
    .await
    .map_err(|e| TransferError::Archive(e.to_string()))?
}

/// The project's conversation JSON (messages, events and files), written
/// to a temporary file one event and one file at a time (see
/// [`conversation::Streamed`]).
pub async fn export_conversation(
    state: &AppState,
    id: &ProjectId,
) -> Result<FileExport, TransferError> {
    let (row, handle) = api::open_project_row(state, id).await?;
    // What was published is in the store before it is read.
    handle.session.flush().await;
    let messages: Vec<ExportedMessage> = state
        .store
        .messages(handle.id.as_str())
        .await?
        .into_iter()
        .map(Into::into)
        .collect();
    let project = ExportedProject {
        name: row.name.clone(),
        created_at: row.created_at,
    };
    let out = export::temp_file(&exports_dir(state))?;
    let mut doc = conversation::Streamed::begin(out, &project, &messages)?;
    let mut failed = None;
    state
        .store
        .fold_events(handle.id.as_str(), |event| {
            if failed.is_none() {
                failed = doc.event(&event).err();
            }
        })
        .await?;
    if let Some(error) = failed {
        return Err(error);
    }
    doc.files()?;
    let mut doc = write_files(state.projects.workspace(id), doc).await?;
    doc.images()?;
    for image in unique_images(&messages) {
        let Ok((bytes, media_type)) =
            crate::server::session::images::read(state, id, &image.sha256).await
        else {
            tracing::warn!(
                image = image.sha256,
                "a message's image is missing from the export"
            );
            continue;
        };
        doc.image(&conversation::ExportedImage {
            sha256: image.sha256.clone(),
            media_type: media_type.to_owned(),
            data: base64::engine::general_purpose::STANDARD.encode(bytes),
        })?;
    }
    let (file, len) = doc.finish()?;
    Ok(FileExport {
        name: row.name,
        file: tokio::fs::File::from_std(file),
        len,
    })
}

/// The images the messages carry, each once.
fn unique_images(messages: &[ExportedMessage]) -> Vec<&crate::runtime::attachment::ImageRef> {
    let mut seen = std::collections::HashSet::new();
    messages
        .iter()
        .flat_map(|m| &m.attachments.images)
        .filter(|image| seen.insert(image.sha256.as_str()))
        .collect()
}

/// Keeps an imported conversation's images in the new project; one whose
/// bytes are not what its name or type says is left out.
fn place_images(
    dir: &std::path::Path,
    images: &[conversation::ExportedImage],
) -> Result<(), TransferError> {
    use crate::server::session::images::{keep_in, name_of};
    for image in images {
        let Ok(bytes) = base64::engine::general_purpose::STANDARD.decode(&image.data) else {
            continue;
        };
        let sha256 = name_of(&bytes);
        let checked = crate::runtime::attachment::check_image(&image.media_type, &bytes);
        if sha256 != image.sha256 || checked.is_err() {
            tracing::warn!(
                image = image.sha256,
                "an imported image does not match its name; left out"
            );
            continue;
        }
        keep_in(dir, &sha256, &bytes).map_err(|source| TransferError::Io {
            path: dir.join(&sha256),
            source,
        })?;
    }
    Ok(())
}

/// `name` trimmed, or `fallback` when it is missing or blank.
pub fn project_name(name: Option<&str>, fallback: &str) -> Result<String, TransferError> {
    let name = name
        .map(str::trim)
        .filter(|n| !n.is_empty())
        .unwrap_or(fallback);
    let name = name.trim();
    if name.is_empty() {
        return Err(TransferError::EmptyName);
    }
    Ok(name.to_owned())
}

/// Makes the staged files a new project named `name`.
pub async fn finish(
    state: &AppState,
    name: &str,
    staging: Staging,
) -> Result<ProjectRow, TransferError> {
    let meta = state.projects.create(name)?;
    if let Err(error) = staging.place(&state.projects.workspace(&meta.id)) {
        remove_project(state, &meta.id).await;
        return Err(error);
    }
    let row = ProjectRow::from_meta(&meta, state.config.runtime.default);
    if let Err(error) = state.store.ensure_project(&row).await {
        remove_project(state, &meta.id).await;
        return Err(error.into());
    }
    Ok(row)
}

/// Removes what a failed import made of a project.
async fn remove_project(state: &AppState, id: &ProjectId) {
    state.sandbox.close_project(id).await;
    let dir = state.projects.dir(id);
    if let Err(error) = std::fs::remove_dir_all(&dir) {
        tracing::warn!(path = %dir.display(), %error, "a failed import could not be removed");
    }
}

/// A new project from a zip archive.
pub async fn import_zip(
    state: &AppState,
    name: Option<&str>,
    zip: bytes::Bytes,
) -> Result<ProjectRow, TransferError> {
    let name = project_name(name, "imported project")?;
    let mut staged = staging(state)?;
    let staged =
        tokio::task::spawn_blocking(move || archive::extract(&zip, &mut staged).map(|()| staged))
            .await
            .map_err(|e| TransferError::Archive(e.to_string()))??;
    finish(state, &name, staged).await
}

/// A new project cloned from a git URL, inside its own sandbox.
pub async fn import_git(
    state: &AppState,
    name: Option<&str>,
    url: &str,
) -> Result<ProjectRow, TransferError> {
    let url = git::check_url(url)?;
    let name = project_name(name, &git::repository_name(&url))?;
    let meta = state.projects.create(&name)?;
    let runtime: Arc<dyn Runtime> = state.sandbox.runtime(&meta.id);
    let workspace = state.projects.workspace(&meta.id);
    if let Err(error) = git::clone_into(&*runtime, &url, &workspace, limits(state)).await {
        remove_project(state, &meta.id).await;
        return Err(error);
    }
    let row = ProjectRow::from_meta(&meta, state.config.runtime.default);
    if let Err(error) = state.store.ensure_project(&row).await {
        remove_project(state, &meta.id).await;
        return Err(error.into());
    }
    Ok(row)
}

/// A new project restored from a conversation JSON: its files, messages
/// and events.
pub async fn import_conversation(
    state: &AppState,
    name: Option<&str>,
    json: bytes::Bytes,
) -> Result<ProjectRow, TransferError> {
    let conversation = conversation::parse(&json)?;
    let name = project_name(name, &conversation.project.name)?;
    let mut staged = staging(state)?;
    for file in &conversation.files {
        staged.add_file(&file.path, &mut file.bytes()?.as_slice(), false)?;
    }
    let meta = state.projects.create(&name)?;
    let placed = staged
        .place(&state.projects.workspace(&meta.id))
        .and_then(|()| place_images(&state.projects.images(&meta.id), &conversation.images));
    if let Err(error) = placed {
        remove_project(state, &meta.id).await;
        return Err(error);
    }
    let mut row = ProjectRow::from_meta(&meta, state.config.runtime.default);
    row.created_at = conversation.project.created_at;
    let messages: Vec<MessageRow> = conversation.messages.into_iter().map(Into::into).collect();
    let stored = state
        .store
        .import_conversation(&row, &messages, &conversation.events)
        .await;
    if let Err(error) = stored {
        remove_project(state, &meta.id).await;
        return Err(error.into());
    }
    Ok(state.store.project(&row.id).await?.unwrap_or(row))
}
