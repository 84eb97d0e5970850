//! What a step card shows the person to approve: a file change in a
//! read-only Monaco diff editor (whole file before and after), or, for a
//! command, a file too large to keep whole, on the server's render and
//! until Monaco has loaded, the unified diff as coloured text.

#[cfg(feature = "hydrate")]
mod editor;

use leptos::prelude::*;

use super::card_memory::CardMemory;
use crate::runtime::session::StepChange;

/// The change (or command) of step `step_id`, under a "Change" heading
/// that is open while the step waits unless the person closed it.
#[component]
pub fn StepDiff(
    step_id: String,
    text: String,
    change: Option<StepChange>,
    waiting: bool,
) -> impl IntoView {
    let memory = use_context::<CardMemory>().unwrap_or_default();
    let key = CardMemory::key(&step_id, "change");
    let open = memory.is_open(&key, waiting);
    let mounted = RwSignal::new(false);
    let editor = change.map(|change| {
        let host = NodeRef::<leptos::html::Div>::new();
        #[cfg(feature = "hydrate")]
        editor::mount(host, change, mounted);
        #[cfg(not(feature = "hydrate"))]
        let _ = change;
        view! {
            <div
                class="agent-diff-editor"
                data-testid="agent-diff-editor"
                node_ref=host
                class:hidden=move || !mounted.get()
            ></div>
        }
    });
    view! {
        <details class="agent-step-preview" open=open on:toggle=move |ev| memory.remember_toggle(&key, &ev)>
            <summary>"Change"</summary>
            <div class="agent-diff" data-testid="agent-diff">
                {editor}
                <DiffText text hidden=mounted />
            </div>
        </details>
    }
}

/// A unified diff (or a command), its lines coloured by their first sign;
/// still in the page (for its text) when `hidden`.
#[component]
fn DiffText(text: String, hidden: RwSignal<bool>) -> impl IntoView {
    let lines = text
        .lines()
        .map(|line| {
            let class = line_class(line);
            view! { <span class=class>{format!("{line}\n")}</span> }
        })
        .collect_view();
    view! { <pre class="agent-diff-text" class:hidden=move || hidden.get()>{lines}</pre> }
}

fn line_class(line: &str) -> &'static str {
    match line.chars().next() {
        _ if line.starts_with("+++") || line.starts_with("---") => "diff-head",
        Some('+') => "diff-add",
        Some('-') => "diff-del",
        Some('@') => "diff-hunk",
        _ => "diff-ctx",
    }
}

/// Monaco's language id for a file, by its extension.
#[cfg_attr(not(feature = "hydrate"), allow(dead_code))]
fn language(path: &str) -> &str {
    let name = path.rsplit('/').next().unwrap_or(path);
    match name.rsplit_once('.') {
        Some((stem, extension)) if !stem.is_empty() => {
            super::answer_text::monaco_language(extension)
        }
        _ => "plaintext",
    }
}

#[cfg(test)]
mod tests {
    use super::{language, line_class};

    #[test]
    fn diff_lines_are_classed_by_their_first_sign() {
        assert_eq!(line_class("--- a/x"), "diff-head");
        assert_eq!(line_class("+++ b/x"), "diff-head");
        assert_eq!(line_class("+added"), "diff-add");
        assert_eq!(line_class("-removed"), "diff-del");
        assert_eq!(line_class("@@ -1 +1 @@"), "diff-hunk");
        assert_eq!(line_class(" same"), "diff-ctx");
        assert_eq!(line_class("$ npm test"), "diff-ctx");
    }

    #[test]
    fn files_get_monaco_languages_by_extension() {
        assert_eq!(language("src/App.jsx"), "javascript");
        assert_eq!(language("index.html"), "html");
        assert_eq!(language("a/b/style.css"), "css");
        assert_eq!(language("Makefile"), "plaintext");
        assert_eq!(language(".gitignore"), "plaintext");
        assert_eq!(language("dir.d/README"), "plaintext");
    }
}
