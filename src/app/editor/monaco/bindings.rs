//! The few Monaco calls Rivet makes, bound with wasm-bindgen: the file
//! editor (`monaco.rs`) and the agent's confirmation cards share them.

use wasm_bindgen::JsValue;
use wasm_bindgen::prelude::wasm_bindgen;

#[wasm_bindgen]
extern "C" {
    pub(crate) type StandaloneEditor;
    pub(crate) type DiffEditor;
    pub(crate) type TextModel;
    // Not named `Uri`: a type named like a namespace makes wasm-bindgen nest impls.
    pub(crate) type MonacoUri;

    #[wasm_bindgen(js_namespace = ["monaco", "editor"], js_name = create)]
    pub(crate) fn create_editor(host: &web_sys::HtmlElement, options: &JsValue)
    -> StandaloneEditor;
    #[wasm_bindgen(js_namespace = ["monaco", "editor"], js_name = createDiffEditor)]
    pub(crate) fn create_diff_editor(host: &web_sys::HtmlElement, options: &JsValue) -> DiffEditor;
    #[wasm_bindgen(js_namespace = ["monaco", "editor"], js_name = createModel)]
    pub(crate) fn create_model(value: &str, language: JsValue, uri: &MonacoUri) -> TextModel;
    #[wasm_bindgen(js_namespace = ["monaco", "editor"], js_name = createModel)]
    pub(crate) fn create_plain_model(value: &str, language: JsValue) -> TextModel;
    #[wasm_bindgen(js_namespace = ["monaco", "editor"], js_name = setTheme)]
    pub(crate) fn set_theme(theme: &str);
    #[wasm_bindgen(js_namespace = ["monaco", "Uri"], js_name = file)]
    pub(crate) fn file_uri(path: &str) -> MonacoUri;

    #[wasm_bindgen(method, js_name = setModel)]
    pub(crate) fn set_model(this: &StandaloneEditor, model: &TextModel);
    #[wasm_bindgen(method, js_name = onDidChangeModelContent)]
    pub(crate) fn on_did_change_model_content(this: &StandaloneEditor, listener: &js_sys::Function);
    #[wasm_bindgen(method, js_name = onDidFocusEditorText)]
    pub(crate) fn on_did_focus_editor_text(this: &StandaloneEditor, listener: &js_sys::Function);
    #[wasm_bindgen(method, js_name = updateOptions)]
    pub(crate) fn update_options(this: &StandaloneEditor, options: &JsValue);
    #[wasm_bindgen(method, js_name = addCommand)]
    pub(crate) fn add_command(this: &StandaloneEditor, keybinding: u32, handler: &js_sys::Function);

    #[wasm_bindgen(method, js_name = setModel)]
    pub(crate) fn set_diff_model(this: &DiffEditor, models: &JsValue);
    #[wasm_bindgen(method, js_name = dispose)]
    pub(crate) fn dispose_diff_editor(this: &DiffEditor);

    #[wasm_bindgen(method, js_name = getValue)]
    pub(crate) fn get_value(this: &TextModel) -> String;
    #[wasm_bindgen(method, js_name = setValue)]
    pub(crate) fn set_value(this: &TextModel, value: &str);
    #[wasm_bindgen(method, js_name = getLineCount)]
    pub(crate) fn line_count(this: &TextModel) -> u32;
    #[wasm_bindgen(method, js_name = getLineMaxColumn)]
    pub(crate) fn line_max_column(this: &TextModel, line: u32) -> u32;
    #[wasm_bindgen(method, js_name = applyEdits)]
    pub(crate) fn apply_edits(this: &TextModel, edits: &JsValue);
    #[wasm_bindgen(method)]
    pub(crate) fn dispose(this: &TextModel);
}
