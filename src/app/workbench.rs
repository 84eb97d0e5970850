//! The workbench store: the project's files as the UI knows them, and the
//! editor's tabs. Components read and write it through Leptos signals.

use std::collections::BTreeMap;

use leptos::prelude::*;

/// The tab shown before a project has any file.
pub const WELCOME_TAB: &str = "Welcome.md";

pub const WELCOME_TEXT: &str = "# Welcome to Rivet\n\n\
Describe the app you want in the chat on the left. The model writes the files,\n\
installs the packages and starts the dev server; you watch it happen in the file\n\
tree, this editor, the terminal below and the preview on the right.\n\n\
You can edit any file here. Your edits are sent to the model with your next\n\
message, so it builds on them instead of overwriting them.\n";

/// A file open in the workbench.
#[derive(Clone, Debug, PartialEq)]
pub struct OpenFile {
    pub content: String,
    /// Changed in the editor and not yet saved.
    pub dirty: bool,
}

#[derive(Clone, Copy)]
pub struct Workbench {
    /// Files by project-relative path.
    pub files: RwSignal<BTreeMap<String, OpenFile>>,
    /// Open editor tabs, in order.
    pub tabs: RwSignal<Vec<String>>,
    pub active_tab: RwSignal<Option<String>>,
}

impl Workbench {
    pub fn new() -> Workbench {
        let mut files = BTreeMap::new();
        files.insert(
            WELCOME_TAB.to_owned(),
            OpenFile {
                content: WELCOME_TEXT.to_owned(),
                dirty: false,
            },
        );
        Workbench {
            files: RwSignal::new(files),
            tabs: RwSignal::new(vec![WELCOME_TAB.to_owned()]),
            active_tab: RwSignal::new(Some(WELCOME_TAB.to_owned())),
        }
    }

    /// Opens `path` in a tab (adding the tab if needed) and shows it.
    pub fn open(&self, path: &str) {
        self.tabs.update(|tabs| {
            if !tabs.iter().any(|t| t == path) {
                tabs.push(path.to_owned());
            }
        });
        self.active_tab.set(Some(path.to_owned()));
    }

    /// Closes a tab and shows its neighbour.
    pub fn close(&self, path: &str) {
        let mut next = None;
        self.tabs.update(|tabs| {
            if let Some(index) = tabs.iter().position(|t| t == path) {
                tabs.remove(index);
                next = tabs.get(index.saturating_sub(1)).or(tabs.first()).cloned();
            }
        });
        if self.active_tab.get_untracked().as_deref() == Some(path) {
            self.active_tab.set(next);
        }
    }

    /// Records an edit made in the editor.
    #[cfg_attr(not(feature = "hydrate"), allow(dead_code))]
    pub fn edit(&self, path: &str, content: String) {
        self.files.update(|files| {
            let file = files.entry(path.to_owned()).or_insert(OpenFile {
                content: String::new(),
                dirty: false,
            });
            if file.content != content {
                file.content = content;
                file.dirty = path != WELCOME_TAB;
            }
        });
    }
}

impl Default for Workbench {
    fn default() -> Self {
        Self::new()
    }
}
