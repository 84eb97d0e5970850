//! One folder or file of the tree.

use std::collections::{BTreeMap, BTreeSet};

use leptos::prelude::*;

use super::{alert, confirm, prompt};
use crate::app::api::ProjectPath;
use crate::app::context::CurrentProject;
use crate::app::workbench::Workbench;

#[derive(Clone, Debug, PartialEq)]
pub struct Node {
    pub name: String,
    pub path: String,
    /// `Some` for a folder.
    pub children: Option<Vec<Node>>,
    /// The latest answer changed this file, or something in this folder.
    pub changed: bool,
}

/// A folder holding more entries than this starts closed: drawing
/// thousands of rows at once would hold up the page.
pub const OPEN_AT_MOST: usize = 200;

impl Node {
    /// Whether the folder is open when the tree is drawn: every folder is,
    /// unless it holds more than [`OPEN_AT_MOST`] entries.
    pub fn starts_open(&self) -> bool {
        self.children
            .as_ref()
            .is_some_and(|children| children.len() <= OPEN_AT_MOST)
    }
}

/// The folders the person opened or closed against how they start
/// ([`Node::starts_open`]), by path. The tree keeps it, so a folder stays as
/// the person left it when files change and the tree is drawn again.
#[derive(Clone, Copy)]
pub struct Toggled(pub RwSignal<BTreeSet<String>>);

/// Folders first, then files, each sorted by name.
pub fn build_tree(files: &BTreeSet<String>, changed: &BTreeSet<String>) -> Vec<Node> {
    #[derive(Default)]
    struct Dir {
        dirs: BTreeMap<String, Dir>,
        files: BTreeSet<String>,
    }
    let mut root = Dir::default();
    for path in files {
        let mut dir = &mut root;
        let mut parts: Vec<&str> = path.split('/').collect();
        let Some(file) = parts.pop() else { continue };
        for part in parts {
            dir = dir.dirs.entry(part.to_owned()).or_default();
        }
        dir.files.insert(file.to_owned());
    }
    fn nodes(dir: Dir, prefix: &str, changed: &BTreeSet<String>) -> Vec<Node> {
        let join = |name: &str| {
            if prefix.is_empty() {
                name.to_owned()
            } else {
                format!("{prefix}/{name}")
            }
        };
        let mut out: Vec<Node> = dir
            .dirs
            .into_iter()
            .map(|(name, sub)| {
                let path = join(&name);
                let children = nodes(sub, &path, changed);
                Node {
                    changed: children.iter().any(|c| c.changed),
                    name,
                    path,
                    children: Some(children),
                }
            })
            .collect();
        out.extend(dir.files.into_iter().map(|name| {
            let path = join(&name);
            Node {
                changed: changed.contains(&path),
                name,
                path,
                children: None,
            }
        }));
        out
    }
    nodes(root, "", changed)
}

#[component]
pub fn TreeNode(node: Node, depth: usize) -> impl IntoView {
    let workbench = expect_context::<Workbench>();
    let project = expect_context::<CurrentProject>().0;
    let toggled = expect_context::<Toggled>().0;
    let starts_open = node.starts_open();
    let folder = node.path.clone();
    let open = Memo::new(move |_| starts_open != toggled.with(|t| t.contains(&folder)));
    let folder = node.path.clone();
    let toggle = move |_| {
        toggled.update(|t| {
            if !t.remove(&folder) {
                t.insert(folder.clone());
            }
        })
    };
    let indent = format!("padding-left:{}px", 8 + depth * 12);
    let path = node.path.clone();
    let rename = {
        let (path, project) = (path.clone(), project.clone());
        move |_| {
            let Some(to) = prompt(&format!("Rename {path} to:"), &path) else {
                return;
            };
            let to = to.trim().to_owned();
            if to.is_empty() || to == path {
                return;
            }
            let (from, to) = match (ProjectPath::parse(&path), ProjectPath::parse(&to)) {
                (Ok(from), Ok(to)) => (from, to),
                (Err(e), _) => return alert(&format!("{path}: {e}")),
                (_, Err(e)) => return alert(&format!("{to}: {e}")),
            };
            let project = project.clone();
            leptos::task::spawn_local(async move {
                if let Err(e) = crate::app::api::rename_path(project, from, to).await {
                    alert(&e.message);
                }
            });
        }
    };
    let delete = {
        let path = path.clone();
        move |_| {
            if !confirm(&format!("Delete {path}? This cannot be undone.")) {
                return;
            }
            let path = match ProjectPath::parse(&path) {
                Ok(path) => path,
                Err(e) => return alert(&format!("{path}: {e}")),
            };
            let project = project.clone();
            leptos::task::spawn_local(async move {
                if let Err(e) = crate::app::api::delete_path(project, path).await {
                    alert(&e.message);
                }
            });
        }
    };
    let tools = view! {
        <span class="tree-tools">
            <button class="tree-tool" title="Rename" on:click=rename>"✎"</button>
            <button class="tree-tool" title="Delete" data-testid="file-delete" on:click=delete>"🗑"</button>
        </span>
    };
    match node.children {
        Some(children) => view! {
            <li class="tree-folder">
                <div class="tree-row" style=indent.clone() class:changed=node.changed>
                    <button class="tree-entry" on:click=toggle>
                        <span class="tree-caret">{move || if open.get() { "▾" } else { "▸" }}</span>
                        {node.name.clone()}
                    </button>
                    {tools}
                </div>
                <Show when=move || open.get()>
                    <ul>
                        {children
                            .clone()
                            .into_iter()
                            .map(|child| view! { <TreeNode node=child depth=depth + 1 /> })
                            .collect_view()}
                    </ul>
                </Show>
            </li>
        }
        .into_any(),
        None => view! {
            <li class="tree-file">
                <div class="tree-row" style=indent class:changed=node.changed class:active=move || workbench.active_tab.get().as_deref() == Some(path.as_str())>
                    <button class="tree-entry" data-testid="file-entry" data-path=node.path.clone() on:click={
                        let path = node.path.clone();
                        move |_| workbench.open(&path)
                    }>
                        {node.name.clone()}
                        {node.changed.then(|| view! { <span class="changed-marker" title="Changed by the latest answer">"●"</span> })}
                    </button>
                    {tools}
                </div>
            </li>
        }
        .into_any(),
    }
}
