//! The Monaco diff editor of a confirmation card: mounted once Monaco has
//! loaded (the editor pane loads it; this waits for the same load), and
//! disposed with the card.

use leptos::prelude::*;
use wasm_bindgen::{JsCast, JsValue};

use super::language;
use crate::app::editor::monaco::bindings::{
    DiffEditor, TextModel, create_diff_editor, create_plain_model,
};
use crate::app::editor::monaco::json;
use crate::app::scripts::load_monaco;
use crate::runtime::session::StepChange;

const OPTIONS: &str = r#"{"automaticLayout":true,"readOnly":true,"originalEditable":false,"renderSideBySide":false,"minimap":{"enabled":false},"scrollBeyondLastLine":false,"fontSize":12}"#;

/// What a mounted card owns, released together.
struct Mounted {
    editor: DiffEditor,
    models: [TextModel; 2],
}

/// Mounts a read-only inline diff of `change` into `host`; `mounted`
/// becomes true once it shows (until then, and if Monaco fails to load,
/// the card keeps its text diff).
pub fn mount(host: NodeRef<leptos::html::Div>, change: StepChange, mounted: RwSignal<bool>) {
    let owned = StoredValue::new_local(None::<Mounted>);
    Effect::new(move |_| {
        let Some(element) = host.get() else { return };
        let change = change.clone();
        leptos::task::spawn_local(async move {
            if load_monaco().await.is_err() {
                return;
            }
            // Not twice, and not for a card that went away meanwhile.
            if owned.try_with_value(Option::is_none) != Some(true) {
                return;
            }
            let language = JsValue::from_str(language(&change.path));
            let models = [
                create_plain_model(&change.before, language.clone()),
                create_plain_model(&change.after, language),
            ];
            let editor = create_diff_editor(element.unchecked_ref(), &json(OPTIONS));
            let pair = js_sys::Object::new();
            let _ = js_sys::Reflect::set(&pair, &"original".into(), &models[0]);
            let _ = js_sys::Reflect::set(&pair, &"modified".into(), &models[1]);
            editor.set_diff_model(&pair);
            match owned.try_set_value(Some(Mounted { editor, models })) {
                // The card went away while Monaco loaded.
                Some(Some(orphan)) => orphan.dispose(),
                _ => {
                    let _ = mounted.try_set(true);
                }
            }
        });
    });
    on_cleanup(move || {
        if let Some(Some(done)) = owned.try_update_value(Option::take) {
            done.dispose();
        }
    });
}

impl Mounted {
    fn dispose(&self) {
        self.editor.dispose_diff_editor();
        for model in &self.models {
            model.dispose();
        }
    }
}
