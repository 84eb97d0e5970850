//! The preview's Select tool: while it is on, the app in the frame outlines
//! the element under the pointer and a click selects it (the inspector in
//! the page, `sandbox/preview/inspector.js`); the selection becomes a chip
//! in the composer. A double-click edits an element's text in place: when
//! the old text is in the project's source exactly once the file is changed
//! at once, without the model; otherwise the model is asked, with the
//! element attached. Messages go both ways between the IDE and the preview
//! only, each checked against the other's origin. Out of the first load.

use leptos::prelude::*;

use crate::app::context::{Attaching, CurrentProject};

/// The Select button and what it tells of the last in-place edit.
#[component]
pub fn SelectToggle(
    url: Signal<Option<String>>,
    frame: NodeRef<leptos::html::Iframe>,
) -> impl IntoView {
    let attaching = expect_context::<Attaching>();
    let project = expect_context::<CurrentProject>().0;
    let status = RwSignal::new(None::<String>);
    let selecting = attaching.selecting;
    // The page in the frame hears whether it selects, and again whenever
    // it loads (a reload or a navigation starts it afresh).
    Effect::new(move |_| {
        let on = selecting.get();
        url.track();
        tell_frame(frame, url, on);
    });
    #[cfg(feature = "hydrate")]
    follow(project, url, frame, attaching, status);
    #[cfg(not(feature = "hydrate"))]
    let _ = project;
    view! {
        <button
            class="icon-button preview-select"
            class:active=move || selecting.get()
            data-testid="preview-select"
            aria-pressed=move || if selecting.get() { "true" } else { "false" }
            title="Select an element of the app to ask about it; double-click a text to edit it (Escape cancels)"
            disabled=move || url.with(Option::is_none)
            on:click=move |_| {
                status.set(None);
                selecting.update(|on| *on = !*on);
            }
        >
            "Select"
        </button>
        <Show when=move || status.with(Option::is_some)>
            <span class="preview-select-status" data-testid="preview-select-status" role="status">
                {move || status.get().unwrap_or_default()}
            </span>
        </Show>
    }
}

/// Posts `{source: "rivet-ide", kind: "select", on}` to the frame's page,
/// addressed to the preview's origin only.
fn tell_frame(frame: NodeRef<leptos::html::Iframe>, url: Signal<Option<String>>, on: bool) {
    #[cfg(feature = "hydrate")]
    {
        let origin = url
            .get_untracked()
            .as_deref()
            .and_then(crate::app::page_report::origin_of);
        let (Some(frame), Some(origin)) = (frame.get_untracked(), origin) else {
            return;
        };
        let Some(target) = frame.content_window() else {
            return;
        };
        let message = js_sys::Object::new();
        let set = |key: &str, value: wasm_bindgen::JsValue| {
            let _ = js_sys::Reflect::set(&message, &key.into(), &value);
        };
        set("source", "rivet-ide".into());
        set("kind", "select".into());
        set("on", on.into());
        let _ = target.post_message(&message, &origin);
    }
    #[cfg(not(feature = "hydrate"))]
    let _ = (frame, url, on);
}

/// Takes what the inspector posts, from the preview's origin only.
#[cfg(feature = "hydrate")]
fn follow(
    project: crate::runtime::project::ProjectId,
    url: Signal<Option<String>>,
    frame: NodeRef<leptos::html::Iframe>,
    attaching: Attaching,
    status: RwSignal<Option<String>>,
) {
    use crate::runtime::selection::{InspectorMessage, MAX_SELECTIONS, parse};

    let message = window_event_listener(leptos::ev::message, move |event| {
        let expected = url
            .get_untracked()
            .as_deref()
            .and_then(crate::app::page_report::origin_of);
        if expected.as_deref() != Some(event.origin().as_str()) {
            return;
        }
        let parsed = js_sys::JSON::stringify(&event.data())
            .ok()
            .and_then(|json| json.as_string())
            .and_then(|json| parse(&json));
        match parsed {
            Some(InspectorMessage::Selected(element)) => {
                attaching.selecting.set(false);
                attaching.selections.update(|list| {
                    if list.len() < MAX_SELECTIONS && !list.contains(&element) {
                        list.push(element);
                    }
                });
                focus_composer();
            }
            Some(InspectorMessage::Cancelled) => attaching.selecting.set(false),
            Some(InspectorMessage::TextEdited {
                element,
                old_text,
                new_text,
            }) => {
                attaching.selecting.set(false);
                edit(
                    project.clone(),
                    attaching,
                    status,
                    (element, old_text, new_text),
                );
            }
            None => {}
        }
    });
    // Escape on the IDE's own page cancels too.
    let escape = window_event_listener(leptos::ev::keydown, move |event| {
        if event.key() == "Escape" && attaching.selecting.get_untracked() {
            attaching.selecting.set(false);
        }
    });
    let stop_following_loads = frame_loads(frame, move || {
        if attaching.selecting.get_untracked() {
            tell_frame(frame, url, true);
        }
    });
    on_cleanup(move || {
        message.remove();
        escape.remove();
        stop_following_loads();
    });
}

/// Calls `again` each time the frame loads a page, until the returned
/// function is called (which takes the listener off the frame).
#[cfg(feature = "hydrate")]
fn frame_loads(
    frame: NodeRef<leptos::html::Iframe>,
    again: impl Fn() + 'static,
) -> impl FnOnce() + Send + Sync + 'static {
    use leptos::__reexports::send_wrapper::SendWrapper;
    use wasm_bindgen::JsCast;
    let closure = wasm_bindgen::closure::Closure::<dyn Fn()>::new(again);
    let function = closure.as_ref().unchecked_ref::<js_sys::Function>().clone();
    let listened = StoredValue::new_local(None::<web_sys::HtmlIFrameElement>);
    let listener = function.clone();
    Effect::new(move |_| {
        if let Some(frame) = frame.get() {
            let _ = frame.add_event_listener_with_callback("load", &listener);
            listened.set_value(Some(frame));
        }
    });
    let kept = SendWrapper::new((closure, function));
    move || {
        let (closure, function) = kept.take();
        if let Some(frame) = listened.get_value() {
            let _ = frame.remove_event_listener_with_callback("load", &function);
        }
        drop(closure);
    }
}

/// Applies a text edit made in the preview: in the one file that has the
/// old text, or by asking the model with the element attached.
#[cfg(feature = "hydrate")]
fn edit(
    project: crate::runtime::project::ProjectId,
    attaching: Attaching,
    status: RwSignal<Option<String>>,
    (element, old_text, new_text): (crate::runtime::selection::ElementSelection, String, String),
) {
    use crate::app::api::selection::edit_text_in_place;
    use crate::runtime::selection::TextEdit;

    status.set(Some("Applying the change…".to_owned()));
    leptos::task::spawn_local(async move {
        match edit_text_in_place(project, old_text.clone(), new_text.clone()).await {
            Ok(TextEdit::Applied { path }) => status.set(Some(format!("Changed {path}"))),
            Ok(TextEdit::Ambiguous { occurrences }) => {
                let where_ = if occurrences == 0 {
                    "is not in the source as it is".to_owned()
                } else {
                    format!("is in {occurrences} places")
                };
                status.set(Some(format!("The text {where_}: asking the model.")));
                attaching.selections.set(vec![element]);
                attaching.ask.set(Some(crate::app::context::Outgoing {
                    text: format!(
                        "In the selected element, change the text \"{old_text}\" to \"{new_text}\"."
                    ),
                    model: None,
                }));
            }
            Err(error) => status.set(Some(error.to_string())),
        }
    });
}

/// Puts the cursor in the message box, where the selection's chip is.
#[cfg(feature = "hydrate")]
fn focus_composer() {
    use wasm_bindgen::JsCast;
    let input = document()
        .query_selector("[data-testid=chat-input]")
        .ok()
        .flatten()
        .and_then(|e| e.dyn_into::<web_sys::HtmlElement>().ok());
    if let Some(input) = input {
        let _ = input.focus();
    }
}
