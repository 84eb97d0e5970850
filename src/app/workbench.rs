//! The workbench store: the files open in the editor, its tabs, and which
//! file the model is writing. It follows the session's events: a file action
//! opens its file and streams its content in, and files written on disk are
//! reloaded unless the person has unsaved changes.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use leptos::prelude::*;

use crate::runtime::project::ProjectId;
use crate::runtime::protocol::{ActionKind, Event};
use crate::runtime::session::SessionEvent;

/// The tab shown before a project has any file.
pub const WELCOME_TAB: &str = "Welcome.md";

pub const WELCOME_TEXT: &str = "# Welcome to Rivet\n\n\
Describe the app you want in the chat on the left. The model writes the files,\n\
installs the packages and starts the dev server; you watch it happen in the file\n\
tree, this editor, the terminal below and the preview on the right.\n\n\
You can edit any file here. Your edits are sent to the model with your next\n\
message, so it builds on them instead of overwriting them.\n";

/// A file open in the workbench.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct OpenFile {
    pub content: String,
    /// Changed in the editor and not yet saved.
    pub dirty: bool,
    /// The model is writing it right now: the editor shows it read-only.
    pub writing: bool,
}

// Edits and events reach the workbench in the browser only.
#[cfg_attr(not(feature = "hydrate"), allow(dead_code))]
#[derive(Clone, Copy)]
pub struct Workbench {
    project: StoredValue<Option<ProjectId>>,
    /// Contents of the files open in tabs, by project-relative path.
    pub files: RwSignal<BTreeMap<String, OpenFile>>,
    /// Open editor tabs, in order.
    pub tabs: RwSignal<Vec<String>>,
    pub active_tab: RwSignal<Option<String>>,
    /// Which open action writes which file while it streams, and whether
    /// the file had a tab before.
    streams: StoredValue<HashMap<(String, String), (String, bool)>>,
    /// Shows the diff of what the last answer changed in the active file.
    pub diff: RwSignal<bool>,
}

#[cfg_attr(not(feature = "hydrate"), allow(dead_code))]
impl Workbench {
    pub fn new(project: Option<ProjectId>) -> Workbench {
        let mut files = BTreeMap::new();
        files.insert(
            WELCOME_TAB.to_owned(),
            OpenFile {
                content: WELCOME_TEXT.to_owned(),
                ..OpenFile::default()
            },
        );
        Workbench {
            project: StoredValue::new(project),
            files: RwSignal::new(files),
            tabs: RwSignal::new(vec![WELCOME_TAB.to_owned()]),
            active_tab: RwSignal::new(Some(WELCOME_TAB.to_owned())),
            streams: StoredValue::new(HashMap::new()),
            diff: RwSignal::new(false),
        }
    }

    pub fn project(&self) -> Option<ProjectId> {
        self.project.get_value()
    }

    /// Opens `path` in a tab (loading it if needed) and shows it.
    pub fn open(&self, path: &str) {
        self.tabs.update(|tabs| {
            if !tabs.iter().any(|t| t == path) {
                tabs.push(path.to_owned());
            }
        });
        self.active_tab.set(Some(path.to_owned()));
        if !self.files.with_untracked(|f| f.contains_key(path)) {
            self.reload(path);
        }
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
        if path != WELCOME_TAB {
            self.files.update(|f| {
                f.remove(path);
            });
        }
    }

    /// Records an edit made in the editor.
    pub fn edit(&self, path: &str, content: String) {
        self.files.update(|files| {
            let file = files.entry(path.to_owned()).or_default();
            if file.content != content && !file.writing {
                file.content = content;
                file.dirty = path != WELCOME_TAB;
            }
        });
    }

    /// Marks a file saved with `content`.
    pub fn saved(&self, path: &str, content: &str) {
        self.files.update(|files| {
            if let Some(file) = files.get_mut(path)
                && file.content == content
            {
                file.dirty = false;
            }
        });
    }

    /// A file the model streamed but that was not written (cut off, or
    /// refused): its tab shows the file as it is, or goes if it was opened
    /// only for the stream.
    fn not_written(&self, path: &str, had_tab: bool) {
        if had_tab {
            self.reload(path);
        } else {
            self.close(path);
        }
    }

    /// Fetches a file's content from the project.
    fn reload(&self, path: &str) {
        let Some(project) = self.project() else {
            return;
        };
        let files = self.files;
        let path = path.to_owned();
        leptos::task::spawn_local(async move {
            let read = match crate::app::api::ProjectPath::parse(&path) {
                Ok(at) => crate::app::api::read_file(project.clone(), at)
                    .await
                    .map_err(|e| e.message),
                Err(e) => Err(e.to_string()),
            };
            let content = read.unwrap_or_else(|e| format!("// {path} could not be read: {e}\n"));
            files.update(|files| {
                let file = files.entry(path).or_default();
                if !file.dirty && !file.writing {
                    file.content = content;
                }
            });
        });
    }

    /// Follows a session event.
    pub fn observe(&self, event: &SessionEvent) {
        match event {
            SessionEvent::Protocol { message_id, event } => {
                self.observe_protocol(message_id, event)
            }
            SessionEvent::FileWritten { path, .. } => {
                let reload = self
                    .files
                    .with_untracked(|f| f.get(path).is_some_and(|f| !f.dirty && !f.writing));
                if reload {
                    self.reload(path);
                }
            }
            SessionEvent::FileRemoved { path } => {
                let prefix = format!("{path}/");
                let gone: Vec<String> = self
                    .tabs
                    .get_untracked()
                    .into_iter()
                    .filter(|t| t == path || t.starts_with(&prefix))
                    .collect();
                for tab in gone {
                    self.close(&tab);
                }
            }
            _ => {}
        }
    }

    fn observe_protocol(&self, message_id: &str, event: &Event) {
        match event {
            Event::ActionOpen {
                action_id, action, ..
            } => {
                if let ActionKind::File { file_path } = &**action
                    && !file_path.is_empty()
                {
                    let had_tab = self.tabs.with_untracked(|tabs| tabs.contains(file_path));
                    self.streams.update_value(|s| {
                        s.insert(
                            (message_id.to_owned(), action_id.to_string()),
                            (file_path.clone(), had_tab),
                        );
                    });
                    self.files.update(|files| {
                        files.insert(
                            file_path.clone(),
                            OpenFile {
                                writing: true,
                                ..OpenFile::default()
                            },
                        );
                    });
                    self.tabs.update(|tabs| {
                        if !tabs.contains(file_path) {
                            tabs.push(file_path.clone());
                        }
                    });
                    self.active_tab.set(Some(file_path.clone()));
                }
            }
            Event::ActionDelta {
                action_id, delta, ..
            } => {
                let key = (message_id.to_owned(), action_id.to_string());
                if let Some((path, _)) = self.streams.with_value(|s| s.get(&key).cloned()) {
                    self.files.update(|files| {
                        if let Some(file) = files.get_mut(&path) {
                            file.content.push_str(delta);
                        }
                    });
                }
            }
            Event::ActionClose {
                action_id, action, ..
            } => {
                let key = (message_id.to_owned(), action_id.to_string());
                let stream = self.streams.try_update_value(|s| s.remove(&key)).flatten();
                if let Some((path, had_tab)) = stream {
                    let written = !action.truncated && action.error.is_none();
                    self.files.update(|files| {
                        if let Some(file) = files.get_mut(&path) {
                            file.writing = false;
                            if written {
                                file.content.clone_from(&action.content);
                            }
                        }
                    });
                    if !written {
                        self.not_written(&path, had_tab);
                    }
                }
            }
            _ => {}
        }
    }

    /// After a snapshot: tabs of files that no longer exist are closed.
    pub fn sync_files(&self, files: &BTreeSet<String>) {
        let stale: Vec<String> = self
            .tabs
            .get_untracked()
            .into_iter()
            .filter(|t| t != WELCOME_TAB && !files.contains(t))
            .filter(|t| {
                self.files
                    .with_untracked(|f| f.get(t).is_none_or(|f| !f.writing))
            })
            .collect();
        for tab in stale {
            self.close(&tab);
        }
    }
}
