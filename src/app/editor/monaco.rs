//! Monaco bindings and the glue that keeps it in step with the workbench.

use std::collections::HashMap;

use leptos::prelude::*;
use wasm_bindgen::{JsCast, JsValue, closure::Closure, prelude::wasm_bindgen};

use crate::app::scripts::load_monaco;
use crate::app::workbench::Workbench;

#[wasm_bindgen]
extern "C" {
    type StandaloneEditor;
    type TextModel;
    // Not named `Uri`: a type named like a namespace makes wasm-bindgen nest impls.
    type MonacoUri;

    #[wasm_bindgen(js_namespace = ["monaco", "editor"], js_name = create)]
    fn create_editor(host: &web_sys::HtmlElement, options: &JsValue) -> StandaloneEditor;
    #[wasm_bindgen(js_namespace = ["monaco", "editor"], js_name = createModel)]
    fn create_model(value: &str, language: JsValue, uri: &MonacoUri) -> TextModel;
    #[wasm_bindgen(js_namespace = ["monaco", "editor"], js_name = setTheme)]
    fn set_theme(theme: &str);
    #[wasm_bindgen(js_namespace = ["monaco", "Uri"], js_name = file)]
    fn file_uri(path: &str) -> MonacoUri;

    #[wasm_bindgen(method, js_name = setModel)]
    fn set_model(this: &StandaloneEditor, model: &TextModel);
    #[wasm_bindgen(method, js_name = onDidChangeModelContent)]
    fn on_did_change_model_content(this: &StandaloneEditor, listener: &js_sys::Function);

    #[wasm_bindgen(method, js_name = getValue)]
    fn get_value(this: &TextModel) -> String;
}

/// Loads Monaco once the page is interactive and mounts it into `host`.
pub fn mount(
    host: NodeRef<leptos::html::Div>,
    workbench: Workbench,
    ready: RwSignal<bool>,
    failed: RwSignal<Option<String>>,
) {
    let editor = StoredValue::new_local(None::<StandaloneEditor>);
    let models = StoredValue::new_local(HashMap::<String, TextModel>::new());

    Effect::new(move |_| {
        let Some(element) = host.get() else { return };
        leptos::task::spawn_local(async move {
            if let Err(e) = load_monaco().await {
                failed.set(Some(describe(&e)));
                return;
            }
            let options = js_sys::JSON::parse(
                r#"{"automaticLayout":true,"minimap":{"enabled":false},"fontSize":13,"scrollBeyondLastLine":false}"#,
            )
            .unwrap_or(JsValue::UNDEFINED);
            let instance = create_editor(element.unchecked_ref(), &options);
            set_theme(if prefers_dark() { "vs-dark" } else { "vs" });
            let on_change = Closure::<dyn Fn()>::new(move || {
                let Some(path) = workbench.active_tab.get_untracked() else {
                    return;
                };
                let value = models.with_value(|m| m.get(&path).map(TextModel::get_value));
                if let Some(value) = value {
                    workbench.edit(&path, value);
                }
            });
            instance.on_did_change_model_content(on_change.as_ref().unchecked_ref());
            // The listener lives as long as the page.
            on_change.forget();
            editor.set_value(Some(instance));
            ready.set(true);
        });
    });

    // Shows the active tab's model, creating it from the workbench on first view.
    Effect::new(move |_| {
        let active = workbench.active_tab.get();
        if !ready.get() {
            return;
        }
        let Some(path) = active else { return };
        let content = workbench
            .files
            .with_untracked(|f| f.get(&path).map(|f| f.content.clone()))
            .unwrap_or_default();
        models.update_value(|models| {
            let model = models.entry(path.clone()).or_insert_with(|| {
                create_model(&content, JsValue::UNDEFINED, &file_uri(&format!("/{path}")))
            });
            editor.with_value(|e| {
                if let Some(e) = e {
                    e.set_model(model);
                }
            });
        });
    });
}

fn prefers_dark() -> bool {
    web_sys::window()
        .and_then(|w| w.match_media("(prefers-color-scheme: dark)").ok().flatten())
        .is_some_and(|m| m.matches())
}

fn describe(error: &JsValue) -> String {
    error
        .as_string()
        .or_else(|| {
            js_sys::JSON::stringify(error)
                .ok()
                .and_then(|s| s.as_string())
        })
        .unwrap_or_else(|| "unknown error".to_owned())
}
