//! The images of a project's messages: each is a file under the project's
//! `images/` folder named after the SHA-256 of its bytes, so the same image
//! pasted twice is kept once, and a message refers to it by that name
//! (`runtime::attachment::ImageRef`). An image is checked (type, magic
//! bytes, size) before it is kept; its type is read again from its bytes
//! whenever it is served.

use std::path::PathBuf;

use base64::Engine;
use sha2::Digest;

use super::api::{ApiError, open_project};
use crate::runtime::attachment::{self, ImageError, ImageRef, MAX_IMAGES};
use crate::runtime::project::ProjectId;
use crate::runtime::session::Role;
use crate::server::llm::client::ImagePart;
use crate::server::state::AppState;

/// Keeps an image of the project (its bytes named by `declared`, as the
/// browser or the program said) and answers how a message refers to it.
pub async fn upload(
    state: &AppState,
    project: &ProjectId,
    declared: &str,
    bytes: Vec<u8>,
) -> Result<ImageRef, ApiError> {
    open_project(state, project).await?;
    let media_type = attachment::check_image(declared, &bytes)?;
    let sha256 = name_of(&bytes);
    let dir = state.projects.images(project);
    let name = sha256.clone();
    tokio::task::spawn_blocking(move || keep_in(&dir, &name, &bytes))
        .await
        .map_err(|e| ApiError::ImageIo(std::io::Error::other(e)))?
        .map_err(ApiError::ImageIo)?;
    Ok(ImageRef {
        sha256,
        media_type: media_type.to_owned(),
    })
}

/// An image of the project: its bytes and type.
pub async fn read(
    state: &AppState,
    project: &ProjectId,
    sha256: &str,
) -> Result<(Vec<u8>, &'static str), ApiError> {
    open_project(state, project).await?;
    let path = file(state, project, sha256)?;
    let bytes = match tokio::fs::read(&path).await {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(ApiError::ImageNotFound(sha256.to_owned()));
        }
        Err(e) => return Err(ApiError::ImageIo(e)),
    };
    let media_type = attachment::sniff(&bytes).ok_or(ImageError::UnknownType)?;
    Ok((bytes, media_type))
}

/// Keeps images given as base64 (`/api/v1`'s messages), in order.
pub async fn upload_base64(
    state: &AppState,
    project: &ProjectId,
    images: &[(String, String)],
) -> Result<Vec<ImageRef>, ApiError> {
    if images.len() > MAX_IMAGES {
        return Err(ImageError::TooMany.into());
    }
    let mut refs = Vec::with_capacity(images.len());
    for (media_type, data) in images {
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(data.trim())
            .map_err(|_| ImageError::NotThatType(media_type.clone()))?;
        refs.push(upload(state, project, media_type, bytes).await?);
    }
    Ok(refs)
}

/// The images a message refers to, as the model is sent them; fails when
/// there are too many or one is not the project's.
pub async fn parts(
    state: &AppState,
    project: &ProjectId,
    images: &[ImageRef],
) -> Result<Vec<ImagePart>, ApiError> {
    if images.len() > MAX_IMAGES {
        return Err(ImageError::TooMany.into());
    }
    let mut parts = Vec::with_capacity(images.len());
    for image in images {
        let (bytes, media_type) = read(state, project, &image.sha256).await?;
        parts.push(ImagePart {
            media_type: media_type.to_owned(),
            base64: base64::engine::general_purpose::STANDARD.encode(bytes),
        });
    }
    Ok(parts)
}

/// The images of the person's message that the answer `answer_id`
/// answered, for the model (Retry asks it again with them); none when that
/// message had none or they cannot be read.
pub async fn of_question(
    state: &AppState,
    handle: &super::ProjectHandle,
    answer_id: &str,
) -> Vec<ImagePart> {
    let refs = handle.session.read(|s| {
        let at = s.messages.iter().position(|m| m.id == answer_id)?;
        let chat = &s.messages[at].chat;
        let asked = s.messages[..at].iter().rev().find(|m| &m.chat == chat)?;
        (asked.role == Role::User).then(|| asked.attachments.images.clone())
    });
    let refs = refs.unwrap_or_default();
    if refs.is_empty() {
        return Vec::new();
    }
    parts(state, &handle.id, &refs)
        .await
        .unwrap_or_else(|error| {
            tracing::warn!(%error, "the images of a message asked again could not be read");
            Vec::new()
        })
}

/// The image files of a project, for a restored conversation: what the
/// model was sent with each stored message. An image that is gone is left
/// out (and said in the log).
pub fn load_parts(dir: &std::path::Path, images: &[ImageRef]) -> Vec<ImagePart> {
    images
        .iter()
        .filter(|image| ImageRef::valid_hash(&image.sha256))
        .filter_map(|image| match std::fs::read(dir.join(&image.sha256)) {
            Ok(bytes) => Some(ImagePart {
                media_type: attachment::sniff(&bytes)?.to_owned(),
                base64: base64::engine::general_purpose::STANDARD.encode(bytes),
            }),
            Err(error) => {
                tracing::warn!(%error, image = image.sha256, "a message's image is missing");
                None
            }
        })
        .collect()
}

/// Copies a project's images to a fork of it, whose messages refer to them.
pub async fn copy_to(state: &AppState, from: &ProjectId, to: &ProjectId) -> Result<(), ApiError> {
    let (from, to) = (state.projects.images(from), state.projects.images(to));
    tokio::task::spawn_blocking(move || -> std::io::Result<()> {
        let entries = match std::fs::read_dir(&from) {
            Ok(entries) => entries,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
            Err(e) => return Err(e),
        };
        std::fs::create_dir_all(&to)?;
        for entry in entries {
            let entry = entry?;
            let name = entry.file_name();
            if ImageRef::valid_hash(&name.to_string_lossy()) {
                std::fs::copy(entry.path(), to.join(name))?;
            }
        }
        Ok(())
    })
    .await
    .map_err(|e| ApiError::ImageIo(std::io::Error::other(e)))?
    .map_err(ApiError::ImageIo)
}

/// The file an image of the project is kept in.
fn file(state: &AppState, project: &ProjectId, sha256: &str) -> Result<PathBuf, ApiError> {
    if !ImageRef::valid_hash(sha256) {
        return Err(ApiError::ImageNotFound(sha256.to_owned()));
    }
    Ok(state.projects.images(project).join(sha256))
}

/// The name an image's bytes are kept under: their SHA-256, lower-case hex.
pub fn name_of(bytes: &[u8]) -> String {
    sha2::Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Writes an image's bytes into a project's image folder `dir` under
/// `name` (from [`name_of`]), unless they are there already.
pub fn keep_in(dir: &std::path::Path, name: &str, bytes: &[u8]) -> std::io::Result<()> {
    let path = dir.join(name);
    if path.exists() {
        return Ok(());
    }
    std::fs::create_dir_all(dir)?;
    crate::server::atomic::write(&path, bytes)
}
