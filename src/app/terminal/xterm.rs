//! xterm.js bindings (the `@xterm/xterm` global build) and the fit addon.

use leptos::prelude::*;
use wasm_bindgen::{JsCast, JsValue, closure::Closure, prelude::wasm_bindgen};

use crate::app::scripts::load_xterm;

/// The first line of the Rivet tab.
const BANNER: &str =
    "Rivet terminal: the commands the model runs, and their output, appear here.\r\n";

#[wasm_bindgen]
extern "C" {
    pub type Terminal;
    #[wasm_bindgen(constructor)]
    fn new(options: &JsValue) -> Terminal;
    #[wasm_bindgen(method)]
    fn open(this: &Terminal, host: &web_sys::HtmlElement);
    #[wasm_bindgen(method)]
    pub fn write(this: &Terminal, data: &str);
    #[wasm_bindgen(method, js_name = loadAddon)]
    fn load_addon(this: &Terminal, addon: &Fit);
}

// The fit addon's global build exposes its class as `FitAddon.FitAddon`. The
// Rust type must not share the namespace's name, or wasm-bindgen nests impls.
#[wasm_bindgen]
extern "C" {
    #[wasm_bindgen(js_namespace = FitAddon, js_name = FitAddon)]
    type Fit;
    #[wasm_bindgen(constructor, js_namespace = FitAddon, js_class = FitAddon)]
    fn new() -> Fit;
    #[wasm_bindgen(method)]
    fn fit(this: &Fit);
}

/// Loads xterm.js once the page is interactive and opens a terminal in `host`
/// that follows the pane's size.
pub fn mount(host: NodeRef<leptos::html::Div>, failed: RwSignal<Option<String>>) {
    Effect::new(move |_| {
        let Some(element) = host.get() else { return };
        leptos::task::spawn_local(async move {
            if let Err(e) = load_xterm().await {
                failed.set(Some(format!("{e:?}")));
                return;
            }
            let options = js_sys::JSON::parse(&theme_options()).unwrap_or(JsValue::UNDEFINED);
            let terminal = Terminal::new(&options);
            let fit = Fit::new();
            terminal.load_addon(&fit);
            terminal.open(element.unchecked_ref());
            terminal.write(BANNER);
            fit.fit();
            let on_resize = Closure::<dyn Fn()>::new(move || fit.fit());
            if let Ok(observer) = web_sys::ResizeObserver::new(on_resize.as_ref().unchecked_ref()) {
                observer.observe(&element);
            }
            // The observer and terminal live as long as the page.
            on_resize.forget();
            std::mem::forget(terminal);
        });
    });
}

fn theme_options() -> String {
    let dark = web_sys::window()
        .and_then(|w| w.match_media("(prefers-color-scheme: dark)").ok().flatten())
        .is_some_and(|m| m.matches());
    let (background, foreground) = if dark {
        ("#1e1e1e", "#d4d4d4")
    } else {
        ("#ffffff", "#1f2328")
    };
    format!(
        r#"{{"convertEol":false,"fontSize":13,"cursorBlink":true,"theme":{{"background":"{background}","foreground":"{foreground}","cursor":"{foreground}"}}}}"#
    )
}
