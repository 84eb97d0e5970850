//! The composer's Enhance button: the draft rewritten by the model into a
//! clearer request, streamed into the box, with Undo giving the draft back.

use leptos::prelude::*;
use leptos::server_fn::codec::{ByteStream, Streaming};

use crate::app::context::CurrentProject;
use crate::app::error::RivetError;
use crate::runtime::project::ProjectId;

/// The rewrite as newline-delimited JSON [`crate::runtime::llm::RewriteLine`]s.
#[server(endpoint = "enhance_draft", output = Streaming)]
pub async fn enhance_draft(
    project: ProjectId,
    draft: String,
) -> Result<ByteStream<RivetError>, RivetError> {
    use futures::StreamExt;
    let state = expect_context::<crate::server::state::AppState>();
    let lines = crate::server::session::enhance::rewrite(&state, &project, &draft).await?;
    Ok(ByteStream::from(lines.map(|line| {
        // Serialising our own type cannot fail; an empty line is skipped.
        let mut bytes = serde_json::to_vec(&line).unwrap_or_default();
        bytes.push(b'\n');
        bytes::Bytes::from(bytes)
    })))
}

/// The button, out of the first load (in the composer's tools chunk).
#[component]
pub fn Enhance(draft: RwSignal<String>) -> impl IntoView {
    let project = expect_context::<CurrentProject>().0;
    // The draft before the last rewrite, while Undo can give it back.
    let before = RwSignal::new(None::<String>);
    let running = RwSignal::new(false);
    let error = RwSignal::new(None::<String>);
    let start = move |_| {
        let text = draft.get_untracked();
        if text.trim().is_empty() || running.get_untracked() {
            return;
        }
        running.set(true);
        error.set(None);
        before.set(Some(text.clone()));
        let project = project.clone();
        leptos::task::spawn_local(async move {
            let failed = stream_into(draft, project, text.clone()).await;
            if let Some(failed) = failed {
                draft.set(text);
                before.set(None);
                error.set(Some(failed));
            }
            running.set(false);
        });
    };
    // A sent message ends what Undo could give back.
    Effect::new(move || {
        if draft.with(String::is_empty) && !running.get_untracked() {
            before.set(None);
        }
    });
    let undo = move |_| {
        if let Some(text) = before.get_untracked() {
            draft.set(text);
            before.set(None);
        }
    };
    view! {
        <button
            type="button"
            class="secondary"
            data-testid="composer-enhance"
            title="Rewrite the draft into a clearer request"
            disabled=move || running.get() || draft.with(|d| d.trim().is_empty())
            on:click=start
        >
            {move || if running.get() { "Enhancing…" } else { "Enhance" }}
        </button>
        <Show when=move || before.with(Option::is_some) && !running.get()>
            <button type="button" class="secondary" data-testid="composer-enhance-undo" on:click=undo>
                "Undo"
            </button>
        </Show>
        <Show when=move || error.with(Option::is_some)>
            <span class="composer-enhance-error" role="alert" data-testid="composer-enhance-error">
                {move || error.get()}
            </span>
        </Show>
    }
}

/// Streams the rewrite of `text` into `draft`; the reason when it failed.
async fn stream_into(draft: RwSignal<String>, project: ProjectId, text: String) -> Option<String> {
    use futures::StreamExt;

    use crate::runtime::llm::RewriteLine;
    use crate::runtime::session::LineDecoder;

    let stream = match enhance_draft(project, text).await {
        Ok(stream) => stream,
        Err(e) => return Some(e.to_string()),
    };
    draft.set(String::new());
    let (mut lines, mut chunks) = (LineDecoder::default(), stream.into_inner());
    while let Some(chunk) = chunks.next().await {
        let chunk = match chunk {
            Ok(chunk) => chunk,
            Err(e) => return Some(e.to_string()),
        };
        for line in lines.push(&chunk) {
            match serde_json::from_slice::<RewriteLine>(&line) {
                Ok(RewriteLine::Delta { text }) => draft.update(|d| d.push_str(&text)),
                Ok(RewriteLine::Failed { error }) => return Some(error),
                Err(_) => {}
            }
        }
    }
    if draft.with(|d| d.trim().is_empty()) {
        return Some("The model gave no rewrite.".to_owned());
    }
    draft.update(|d| *d = d.trim().to_owned());
    None
}
