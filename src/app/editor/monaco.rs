//! Monaco bindings and the glue that keeps it in step with the workbench:
//! a model per open file, the model's streamed writes appended as they
//! arrive, read-only while the model writes, Ctrl/Cmd+S to save, and a diff
//! editor for what the latest answer changed.

use std::collections::HashMap;

pub(crate) mod bindings;

use leptos::prelude::*;
use wasm_bindgen::{JsCast, JsValue, closure::Closure};

use self::bindings::{
    DiffEditor, StandaloneEditor, TextModel, create_diff_editor, create_editor, create_model,
    create_plain_model, file_uri, set_theme,
};

use crate::app::api::{ProjectPath, answer_diff, write_file};
use crate::app::scripts::{load_monaco, start_language_service};
use crate::app::workbench::Workbench;

/// `KeyMod.CtrlCmd | KeyCode.KeyS` in Monaco's key encoding.
const SAVE_KEYBINDING: u32 = 2048 | 49;

/// A model and the text it was last given, so a streamed write only appends.
struct Model {
    model: TextModel,
    synced: String,
}

impl Model {
    fn sync(&mut self, content: &str) {
        if content == self.synced {
            return;
        }
        if let Some(suffix) = content.strip_prefix(self.synced.as_str()) {
            let line = self.model.line_count();
            let column = self.model.line_max_column(line);
            let edit = js_sys::Object::new();
            let range = js_sys::Object::new();
            for (key, value) in [
                ("startLineNumber", line),
                ("startColumn", column),
                ("endLineNumber", line),
                ("endColumn", column),
            ] {
                let _ = js_sys::Reflect::set(&range, &key.into(), &value.into());
            }
            let _ = js_sys::Reflect::set(&edit, &"range".into(), &range);
            let _ = js_sys::Reflect::set(&edit, &"text".into(), &suffix.into());
            self.model.apply_edits(&js_sys::Array::of1(&edit));
        } else {
            self.model.set_value(content);
        }
        self.synced = content.to_owned();
    }
}

pub(crate) fn json(text: &str) -> JsValue {
    js_sys::JSON::parse(text).unwrap_or(JsValue::UNDEFINED)
}

/// Loads Monaco once the page is interactive and mounts it into `host`,
/// and the diff editor into `diff_host` when asked for.
pub fn mount(
    host: NodeRef<leptos::html::Div>,
    diff_host: NodeRef<leptos::html::Div>,
    workbench: Workbench,
    ready: RwSignal<bool>,
    failed: RwSignal<Option<String>>,
) {
    let editor = StoredValue::new_local(None::<StandaloneEditor>);
    let models = StoredValue::new_local(HashMap::<String, Model>::new());

    Effect::new(move |_| {
        let Some(element) = host.get() else { return };
        leptos::task::spawn_local(async move {
            if let Err(e) = load_monaco().await {
                failed.set(Some(describe(&e)));
                return;
            }
            let instance = create_editor(
                element.unchecked_ref(),
                &json(
                    r#"{"automaticLayout":true,"minimap":{"enabled":false},"fontSize":13,"scrollBeyondLastLine":false}"#,
                ),
            );
            set_theme(if prefers_dark() { "vs-dark" } else { "vs" });
            let on_change = Closure::<dyn Fn()>::new(move || {
                let Some(path) = workbench.active_tab.get_untracked() else {
                    return;
                };
                if workbench
                    .files
                    .with_untracked(|f| f.get(&path).is_none_or(|f| f.writing))
                {
                    return;
                }
                let value = models.with_value(|m| m.get(&path).map(|m| m.model.get_value()));
                if let Some(value) = value {
                    models.update_value(|m| {
                        if let Some(model) = m.get_mut(&path) {
                            model.synced.clone_from(&value);
                        }
                    });
                    workbench.edit(&path, value);
                }
            });
            instance.on_did_change_model_content(on_change.as_ref().unchecked_ref());
            on_change.forget();
            let on_focus = Closure::<dyn Fn()>::new(start_language_service);
            instance.on_did_focus_editor_text(on_focus.as_ref().unchecked_ref());
            on_focus.forget();
            let on_save = Closure::<dyn Fn()>::new(move || save(workbench));
            instance.add_command(SAVE_KEYBINDING, on_save.as_ref().unchecked_ref());
            on_save.forget();
            editor.set_value(Some(instance));
            ready.set(true);
        });
    });

    // Shows the active tab's model and keeps it in step with the workbench.
    Effect::new(move |_| {
        let active = workbench.active_tab.get();
        if !ready.get() {
            return;
        }
        let Some(path) = active else { return };
        let (content, writing) = workbench.files.with(|f| {
            f.get(&path)
                .map(|f| (f.content.clone(), f.writing))
                .unwrap_or_default()
        });
        models.update_value(|models| {
            let model = models.entry(path.clone()).or_insert_with(|| Model {
                model: create_model("", JsValue::UNDEFINED, &file_uri(&format!("/{path}"))),
                synced: String::new(),
            });
            model.sync(&content);
            editor.with_value(|e| {
                if let Some(e) = e {
                    e.set_model(&model.model);
                    let read_only = writing;
                    e.update_options(&json(&format!(r#"{{"readOnly":{read_only}}}"#)));
                }
            });
        });
    });

    // Models of closed tabs are released.
    Effect::new(move |_| {
        let tabs = workbench.tabs.get();
        models.update_value(|models| {
            models.retain(|path, model| {
                let open = tabs.contains(path);
                if !open {
                    model.model.dispose();
                }
                open
            });
        });
    });

    mount_diff(diff_host, workbench, ready);
}

/// The diff editor: what the latest answer changed in the active file.
fn mount_diff(diff_host: NodeRef<leptos::html::Div>, workbench: Workbench, ready: RwSignal<bool>) {
    let diff_editor = StoredValue::new_local(None::<DiffEditor>);
    Effect::new(move |_| {
        let show = workbench.diff.get();
        let active = workbench.active_tab.get();
        let (Some(element), true, true, Some(path), Some(project)) = (
            diff_host.get(),
            show,
            ready.get(),
            active,
            workbench.project(),
        ) else {
            return;
        };
        leptos::task::spawn_local(async move {
            let diff = match ProjectPath::parse(&path) {
                Ok(at) => answer_diff(project.clone(), at).await.ok().flatten(),
                Err(_) => None,
            };
            let (before, after) = match diff {
                Some(diff) => (diff.before.unwrap_or_default(), diff.after),
                None => {
                    let same = workbench
                        .files
                        .with_untracked(|f| f.get(&path).map(|f| f.content.clone()));
                    let same = same.unwrap_or_default();
                    (same.clone(), same)
                }
            };
            if diff_editor.with_value(Option::is_none) {
                let created = create_diff_editor(
                    element.unchecked_ref(),
                    &json(
                        r#"{"automaticLayout":true,"readOnly":true,"renderSideBySide":false,"minimap":{"enabled":false}}"#,
                    ),
                );
                diff_editor.set_value(Some(created));
            }
            let pair = js_sys::Object::new();
            let _ = js_sys::Reflect::set(
                &pair,
                &"original".into(),
                &create_plain_model(&before, JsValue::UNDEFINED),
            );
            let _ = js_sys::Reflect::set(
                &pair,
                &"modified".into(),
                &create_plain_model(&after, JsValue::UNDEFINED),
            );
            diff_editor.with_value(|d| {
                if let Some(d) = d {
                    d.set_diff_model(&pair);
                }
            });
        });
    });
}

/// Saves the active file through the runtime.
fn save(workbench: Workbench) {
    let Some(path) = workbench.active_tab.get_untracked() else {
        return;
    };
    let Some(project) = workbench.project() else {
        return;
    };
    let content = workbench
        .files
        .with_untracked(|f| f.get(&path).filter(|f| f.dirty).map(|f| f.content.clone()));
    let Some(content) = content else { return };
    let Ok(at) = ProjectPath::parse(&path) else {
        return;
    };
    leptos::task::spawn_local(async move {
        if write_file(project.clone(), at, content.clone())
            .await
            .is_ok()
        {
            workbench.saved(&path, &content);
        }
    });
}

pub(crate) fn prefers_dark() -> bool {
    web_sys::window()
        .and_then(|w| w.match_media("(prefers-color-scheme: dark)").ok().flatten())
        .is_some_and(|m| m.matches())
}

pub(crate) fn describe(error: &JsValue) -> String {
    error
        .as_string()
        .or_else(|| {
            js_sys::JSON::stringify(error)
                .ok()
                .and_then(|s| s.as_string())
        })
        .unwrap_or_else(|| "unknown error".to_owned())
}
