//! What the next message carries, in the composer: images pasted, dropped
//! or picked (kept on the server at once, shown as thumbnails, removable)
//! and the elements selected in the preview, as chips. Out of the first
//! load: a chunk of its own with `cargo leptos build --split`.

#[cfg(feature = "hydrate")]
mod upload;

use leptos::prelude::*;
use leptos::server_fn::codec::Json;

use crate::app::context::{Attaching, CurrentProject, OpenChat, Outgoing};
use crate::app::error::RivetError;
use crate::runtime::attachment::{Attachments, ImageRef, MAX_IMAGES};
use crate::runtime::project::ProjectId;
use crate::runtime::session::ChatId;

/// Sends the person's message with the images (kept already) and the
/// selected elements it carries, as `send_message` sends one without.
#[server(endpoint = "send_attached", input = Json)]
pub async fn send_attached(
    project: ProjectId,
    text: String,
    #[server(default)] model: Option<String>,
    #[server(default)] chat: Option<ChatId>,
    attachments: Attachments,
) -> Result<(), RivetError> {
    let state = expect_context::<crate::server::state::AppState>();
    let options = crate::server::session::api::SendOptions {
        model,
        mode: None,
        chat,
        attachments,
    };
    crate::server::session::api::send(&state, &project, text, options).await?;
    Ok(())
}

/// A person's message's images and selections, in the conversation, out of
/// the first load (`super::part`).
pub fn message_attachments(attachments: crate::runtime::attachment::Carried) -> AnyView {
    view! { <MessageAttachments attachments /> }.into_any()
}

/// The thumbnails, chips and the Image button, with the paste and drop
/// handlers of the composer (in the composer's tools chunk).
#[component]
pub fn AttachmentsBar() -> impl IntoView {
    let attaching = expect_context::<Attaching>();
    let project = expect_context::<CurrentProject>().0;
    let error = RwSignal::new(None::<String>);
    let uploading = RwSignal::new(0usize);
    #[cfg(feature = "hydrate")]
    let taker = upload::taker(project.clone(), attaching, error, uploading);
    #[cfg(feature = "hydrate")]
    upload::listen(taker.clone());
    let on_pick = move |_ev: leptos::ev::Event| {
        #[cfg(feature = "hydrate")]
        {
            use wasm_bindgen::JsCast;
            let input = _ev
                .target()
                .and_then(|t| t.dyn_into::<web_sys::HtmlInputElement>().ok());
            if let Some(input) = input {
                if let Some(files) = input.files() {
                    taker.take(files);
                }
                input.set_value("");
            }
        }
    };
    send_when_asked(project.clone(), attaching);
    let full = move || attaching.images.with(Vec::len) + uploading.get() >= MAX_IMAGES;
    let images = move || attaching.images.get();
    let chips = move || {
        attaching
            .selections
            .get()
            .into_iter()
            .enumerate()
            .collect::<Vec<_>>()
    };
    view! {
        <div class="composer-attachments">
            <For each=images key=|image| image.sha256.clone() let:image>
                <Thumbnail image=image.clone() project=project.clone() />
            </For>
            <Show when=move || { uploading.get() > 0 }>
                <span class="composer-uploading" data-testid="composer-uploading">"Adding image…"</span>
            </Show>
            <For each=chips key=|(i, s)| format!("{i}{}", s.selector) let:item>
                <SelectionChip index=item.0 selection=item.1 />
            </For>
            <label class="composer-attach-button" class:disabled=full title="Attach images (PNG, JPEG, WebP or GIF, up to 5 MB, 4 a message); you can also paste or drop them">
                "Image"
                <input
                    type="file"
                    data-testid="composer-attach"
                    accept="image/png,image/jpeg,image/webp,image/gif"
                    multiple
                    disabled=full
                    on:change=on_pick
                />
            </label>
            <Show when=move || error.with(Option::is_some)>
                <span class="composer-attach-error" data-testid="composer-attach-error" role="alert">
                    {move || error.get().unwrap_or_default()}
                </span>
            </Show>
        </div>
    }
}

/// Sends each message asked for with what is attached; a refused one gives
/// its attachments back and its text to the composer.
fn send_when_asked(project: ProjectId, attaching: Attaching) {
    let chat = expect_context::<OpenChat>().0;
    let send = Action::new(move |(outgoing, attachments): &(Outgoing, Attachments)| {
        let (project, outgoing, attachments) =
            (project.clone(), outgoing.clone(), attachments.clone());
        let chat = Some(chat.get_untracked());
        async move {
            let sent = send_attached(
                project,
                outgoing.text.clone(),
                outgoing.model.clone(),
                chat,
                attachments.clone(),
            )
            .await;
            if let Err(refusal) = sent {
                attaching.give_back(attachments);
                attaching.refused.set(Some((refusal, outgoing.text)));
            }
        }
    });
    Effect::new(move |_| {
        if let Some(outgoing) = attaching.ask.get() {
            attaching.ask.set(None);
            attaching.refused.set(None);
            send.dispatch((outgoing, attaching.take()));
        }
    });
    Effect::new(move |_| attaching.sending.set(send.pending().get()));
}

#[component]
fn SelectionChip(
    index: usize,
    selection: crate::runtime::selection::ElementSelection,
) -> impl IntoView {
    let attaching = expect_context::<Attaching>();
    view! {
        <span class="composer-selection" data-testid="composer-selection" title=selection.selector.clone()>
            {selection.label()}
            <button
                type="button"
                class="chip-remove"
                aria-label="Remove the selected element"
                on:click=move |_| attaching.selections.update(|list| {
                    if index < list.len() {
                        list.remove(index);
                    }
                })
            >
                "×"
            </button>
        </span>
    }
}

#[component]
fn Thumbnail(image: ImageRef, project: crate::runtime::project::ProjectId) -> impl IntoView {
    let attaching = expect_context::<Attaching>();
    let src = image.url(&project);
    let sha = image.sha256.clone();
    view! {
        <span class="composer-image" data-testid="composer-image">
            <img src=src alt="An image for the message" />
            <button
                type="button"
                class="chip-remove"
                aria-label="Remove the image"
                on:click=move |_| attaching.images.update(|list| list.retain(|i| i.sha256 != sha))
            >
                "×"
            </button>
        </span>
    }
}

#[component]
fn MessageAttachments(attachments: crate::runtime::attachment::Carried) -> impl IntoView {
    let project = expect_context::<CurrentProject>().0;
    let images = attachments
        .images
        .iter()
        .map(|image| {
            let src = image.url(&project);
            let href = src.clone();
            view! {
                <a href=href target="_blank" rel="noopener">
                    <img class="message-image" data-testid="message-image" src=src alt="An image sent with the message" />
                </a>
            }
        })
        .collect_view();
    let chips = attachments
        .selections
        .iter()
        .map(|label| {
            view! {
                <span class="message-selection" data-testid="message-selection">
                    {label.clone()}
                </span>
            }
        })
        .collect_view();
    view! { <div class="message-attachments">{images}{chips}</div> }
}
