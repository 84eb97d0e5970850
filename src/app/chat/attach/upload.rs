//! Taking images into the composer: from the file input, a paste into the
//! message box or a drop on the composer. Each is checked as the server
//! checks it (type, size, how many), then kept on the server at once
//! (`POST /api/v1/projects/{id}/images`, logged in by the session cookie),
//! so the message refers to it by its SHA-256.

use leptos::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::{File, FileList};

use crate::app::context::Attaching;
use crate::runtime::attachment::{ImageError, ImageRef, MAX_IMAGE_BYTES, MAX_IMAGES, MEDIA_TYPES};
use crate::runtime::project::ProjectId;

/// Where taken images go, and what the composer shows meanwhile.
#[derive(Clone)]
pub struct Taker {
    project: ProjectId,
    attaching: Attaching,
    error: RwSignal<Option<String>>,
    uploading: RwSignal<usize>,
}

pub fn taker(
    project: ProjectId,
    attaching: Attaching,
    error: RwSignal<Option<String>>,
    uploading: RwSignal<usize>,
) -> Taker {
    Taker {
        project,
        attaching,
        error,
        uploading,
    }
}

impl Taker {
    /// Takes the image files of `files`, as many as the message has room for.
    pub fn take(&self, files: FileList) {
        self.error.set(None);
        for index in 0..files.length() {
            let Some(file) = files.get(index) else {
                continue;
            };
            let taken =
                self.attaching.images.with_untracked(Vec::len) + self.uploading.get_untracked();
            if taken >= MAX_IMAGES {
                self.error.set(Some(ImageError::TooMany.to_string()));
                return;
            }
            if let Err(refused) = check(&file) {
                self.error.set(Some(refused));
                continue;
            }
            self.upload(file);
        }
    }

    fn upload(&self, file: File) {
        let Taker {
            project,
            attaching,
            error,
            uploading,
        } = self.clone();
        uploading.update(|n| *n += 1);
        leptos::task::spawn_local(async move {
            match post(&project, &file).await {
                Ok(image) => attaching.images.update(|list| {
                    if !list.contains(&image) {
                        list.push(image);
                    }
                }),
                Err(message) => error.set(Some(message)),
            }
            uploading.update(|n| *n = n.saturating_sub(1));
        });
    }
}

/// What the browser knows of a file, checked before it is sent.
fn check(file: &File) -> Result<(), String> {
    if !MEDIA_TYPES.contains(&file.type_().as_str()) {
        return Err(format!("{}: {}", file.name(), ImageError::UnknownType));
    }
    let size = file.size() as usize;
    if size > MAX_IMAGE_BYTES {
        return Err(format!("{}: {}", file.name(), ImageError::TooLarge(size)));
    }
    Ok(())
}

/// Pastes into the message box and drops on the composer take their images.
pub fn listen(taker: Taker) {
    let pasted = taker.clone();
    let paste = window_event_listener(leptos::ev::paste, move |ev| {
        if !in_composer(ev.target()) {
            return;
        }
        let files = ev.clipboard_data().and_then(|data| data.files());
        if let Some(files) = files.filter(|f| f.length() > 0) {
            ev.prevent_default();
            pasted.take(files);
        }
    });
    let over = window_event_listener(leptos::ev::dragover, move |ev| {
        if in_composer(ev.target()) {
            ev.prevent_default();
        }
    });
    let drop = window_event_listener(leptos::ev::drop, move |ev| {
        if !in_composer(ev.target()) {
            return;
        }
        ev.prevent_default();
        if let Some(files) = ev.data_transfer().and_then(|data| data.files()) {
            taker.take(files);
        }
    });
    on_cleanup(move || {
        paste.remove();
        over.remove();
        drop.remove();
    });
}

/// Whether an event happened inside the composer.
fn in_composer(target: Option<web_sys::EventTarget>) -> bool {
    target
        .and_then(|t| t.dyn_into::<web_sys::Element>().ok())
        .and_then(|element| element.closest(".composer").ok().flatten())
        .is_some()
}

/// Keeps the image on the server; its reference, or the server's words.
async fn post(project: &ProjectId, file: &File) -> Result<ImageRef, String> {
    let url = format!("/api/v1/projects/{}/images", project.as_str());
    let answer = crate::app::post::post(&url, file.as_ref(), Some(&file.type_())).await?;
    if answer.ok {
        return serde_json::from_value(answer.json)
            .map_err(|_| "the server's answer was not understood".to_owned());
    }
    let status = answer.status;
    let message = answer.message_or(|| format!("the image was not kept ({status})"));
    Err(format!("{}: {message}", file.name()))
}
