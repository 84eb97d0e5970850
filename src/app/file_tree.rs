//! The project's files as a tree of folders, with the files the latest
//! answer changed marked, and new / rename / delete.

mod node;

use leptos::prelude::*;

use self::node::build_tree;
use super::context::CurrentProject;
use super::session::SessionStore;
use super::workbench::Workbench;
use crate::app::api::ProjectPath;

#[component]
pub fn FileTree() -> impl IntoView {
    let store = expect_context::<SessionStore>();
    let project = expect_context::<CurrentProject>().0;
    provide_context(node::Toggled(RwSignal::new(Default::default())));
    // Memos: a change that leaves the tree as it was (a file's content
    // saved, a snapshot after a reconnect) draws nothing again.
    let tree = Memo::new(move |_| {
        store.files.track();
        store.with(|s| build_tree(&s.files, &s.changed_by_last_answer))
    });
    let cut = Memo::new(move |_| {
        store.files.track();
        store.with(|s| s.files_cut)
    });
    let new_file = move |_| {
        let Some(path) = prompt("New file (path in the project):", "") else {
            return;
        };
        let path = path.trim().trim_start_matches("./");
        if path.is_empty() {
            return;
        }
        let path = match ProjectPath::parse(path) {
            Ok(path) => path,
            Err(e) => return alert(&format!("{path}: {e}")),
        };
        let project = project.clone();
        let workbench = expect_context::<Workbench>();
        leptos::task::spawn_local(async move {
            match crate::app::api::write_file(project, path.clone(), String::new()).await {
                Ok(()) => workbench.open(path.as_str()),
                Err(e) => alert(&e.message),
            }
        });
    };
    view! {
        <nav class="file-tree" data-testid="file-tree" aria-label="Files">
            <div class="pane-title">
                <span>"Files"</span>
                <button class="icon-button small" title="New file" data-testid="file-new" on:click=new_file>
                    "+"
                </button>
            </div>
            <Show when=move || cut.get()>
                <p class="empty-state" data-testid="files-cut" role="status">
                    "Part of the project: it has more files and folders than one listing holds, \
                     so some are not shown here."
                </p>
            </Show>
            <Show
                when=move || tree.with(|t| !t.is_empty())
                fallback=|| view! { <p class="empty-state">"No files yet."</p> }
            >
                <ul class="tree-root">
                    {move || tree.get().into_iter().map(|node| view! { <node::TreeNode node depth=0 /> }).collect_view()}
                </ul>
            </Show>
        </nav>
    }
}

/// Asks the person for a line of text (`None` when cancelled).
pub(crate) fn prompt(message: &str, default: &str) -> Option<String> {
    window()
        .prompt_with_message_and_default(message, default)
        .ok()
        .flatten()
}

pub(crate) fn confirm(message: &str) -> bool {
    window().confirm_with_message(message).unwrap_or(false)
}

/// Tells the person why something they asked for did not happen.
pub(crate) fn alert(message: &str) {
    let _ = window().alert_with_message(message);
}

// The tree's shape is computed by a pure function, tested without a browser.
#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::node::{Node, OPEN_AT_MOST, build_tree};

    fn render(nodes: &[Node], depth: usize, out: &mut Vec<String>) {
        for node in nodes {
            let marker = if node.changed { " *" } else { "" };
            let slash = if node.children.is_some() { "/" } else { "" };
            out.push(format!(
                "{}{}{slash}{marker}",
                "  ".repeat(depth),
                node.name
            ));
            if let Some(children) = &node.children {
                render(children, depth + 1, out);
            }
        }
    }

    fn check(files: &[&str], changed: &[&str], expected: &[&str]) {
        let files: BTreeSet<String> = files.iter().map(|s| s.to_string()).collect();
        let changed: BTreeSet<String> = changed.iter().map(|s| s.to_string()).collect();
        let mut out = Vec::new();
        render(&build_tree(&files, &changed), 0, &mut out);
        assert_eq!(out, expected);
    }

    #[test]
    fn folders_come_first_then_files() {
        check(
            &[
                "package.json",
                "src/main.jsx",
                "src/App.jsx",
                "src/lib/util.js",
                "index.html",
            ],
            &["src/App.jsx"],
            &[
                "src/ *",
                "  lib/",
                "    util.js",
                "  App.jsx *",
                "  main.jsx",
                "index.html",
                "package.json",
            ],
        );
    }

    #[test]
    fn an_empty_project_has_no_nodes() {
        check(&[], &[], &[]);
    }

    #[test]
    fn a_folder_starts_open_unless_it_holds_more_than_can_be_drawn_at_once() {
        let mut files: BTreeSet<String> = (0..=OPEN_AT_MOST)
            .map(|i| format!("many/{i}.txt"))
            .collect();
        files.extend((0..OPEN_AT_MOST).map(|i| format!("some/{i}.txt")));
        let tree = build_tree(&files, &BTreeSet::new());
        let open: Vec<(&str, bool)> = tree
            .iter()
            .map(|node| (node.name.as_str(), node.starts_open()))
            .collect();
        assert_eq!(open, [("many", false), ("some", true)]);
    }
}
