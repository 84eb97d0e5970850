//! Lazy loading of the vendored browser libraries (Monaco, xterm.js), served
//! from our own origin because COEP forbids CDNs.

/// Monaco's AMD loader and modules.
pub const MONACO_VS: &str = "/vendor/monaco/vs";
pub const XTERM_JS: &str = "/vendor/xterm/xterm.js";
pub const XTERM_CSS: &str = "/vendor/xterm/xterm.css";
pub const XTERM_FIT_JS: &str = "/vendor/xterm/addon-fit.js";

pub use browser::{load_monaco, load_xterm, start_language_service};

mod browser {
    use std::cell::RefCell;
    use std::collections::HashMap;

    use js_sys::{Array, Function, Promise, Reflect};
    use wasm_bindgen::{JsCast, JsValue, closure::Closure};
    use wasm_bindgen_futures::JsFuture;

    use super::*;

    thread_local! {
        /// One promise per script, so each loads once however often it is asked for.
        static LOADED: RefCell<HashMap<String, Promise>> = RefCell::new(HashMap::new());
        /// Resolves the promise the TypeScript worker waits for, until called.
        static LANGUAGE_SERVICE: RefCell<Option<Function>> = const { RefCell::new(None) };
        /// Whether Monaco's `getWorker` has been wrapped (once per page).
        static HELD: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    }

    fn document() -> Result<web_sys::Document, JsValue> {
        web_sys::window()
            .and_then(|w| w.document())
            .ok_or_else(|| JsValue::from_str("no document"))
    }

    /// Appends `<script src>` once and resolves when it has run.
    async fn load_script(src: &str) -> Result<(), JsValue> {
        let promise = LOADED.with(|loaded| {
            loaded
                .borrow_mut()
                .entry(src.to_owned())
                .or_insert_with(|| {
                    let src = src.to_owned();
                    Promise::new(&mut |resolve, reject| {
                        let result = (|| {
                            let script: web_sys::HtmlScriptElement =
                                document()?.create_element("script")?.unchecked_into();
                            script.set_src(&src);
                            script.set_onload(Some(&resolve));
                            script.set_onerror(Some(&reject));
                            document()?
                                .head()
                                .ok_or_else(|| JsValue::from_str("no <head>"))?
                                .append_child(&script)?;
                            Ok::<_, JsValue>(())
                        })();
                        if let Err(e) = result {
                            let _ = reject.call1(&JsValue::NULL, &e);
                        }
                    })
                })
                .clone()
        });
        JsFuture::from(promise).await.map(|_| ())
    }

    fn load_stylesheet(href: &str) -> Result<(), JsValue> {
        let document = document()?;
        let selector = format!("link[href=\"{href}\"]");
        if document.query_selector(&selector)?.is_none() {
            let link = document.create_element("link")?;
            link.set_attribute("rel", "stylesheet")?;
            link.set_attribute("href", href)?;
            document
                .head()
                .ok_or_else(|| JsValue::from_str("no <head>"))?
                .append_child(&link)?;
        }
        Ok(())
    }

    /// Loads xterm.js and its fit addon. They must run before Monaco's AMD
    /// loader exists, or they register as AMD modules instead of globals.
    pub async fn load_xterm() -> Result<(), JsValue> {
        load_stylesheet(XTERM_CSS)?;
        load_script(XTERM_JS).await?;
        load_script(XTERM_FIT_JS).await
    }

    /// Loads Monaco through its AMD loader; afterwards `globalThis.monaco` exists.
    pub async fn load_monaco() -> Result<(), JsValue> {
        load_xterm().await?;
        load_script(&format!("{MONACO_VS}/loader.js")).await?;
        let window = web_sys::window().ok_or_else(|| JsValue::from_str("no window"))?;
        if Reflect::has(&window, &"monaco".into())? {
            return Ok(());
        }
        let require: Function = Reflect::get(&window, &"require".into())?.dyn_into()?;
        let config: Function = Reflect::get(&require, &"config".into())?.dyn_into()?;
        let paths = js_sys::Object::new();
        Reflect::set(&paths, &"vs".into(), &MONACO_VS.into())?;
        let options = js_sys::Object::new();
        Reflect::set(&options, &"paths".into(), &paths)?;
        config.call1(&require, &options)?;
        let loaded = Promise::new(&mut |resolve, reject| {
            let modules = Array::of1(&"vs/editor/editor.main".into());
            let on_load = Closure::once_into_js(move || {
                let _ = resolve.call0(&JsValue::NULL);
            });
            let _ = require.call3(&JsValue::NULL, &modules, &on_load, &reject);
        });
        JsFuture::from(loaded).await?;
        hold_language_service(&window)
    }

    /// Monaco's TypeScript service (completions, hovers and error marks in
    /// JavaScript and TypeScript files) is its costliest part: a 7 MB worker
    /// that checks each such file an editor shows, about 2 s of CPU a page.
    /// Its worker is made only once [`start_language_service`] is called,
    /// when a person first focuses the editor, so the files an answer writes
    /// are shown without it. The other workers are made as Monaco asks.
    fn hold_language_service(window: &web_sys::Window) -> Result<(), JsValue> {
        if HELD.with(|held| held.replace(true)) {
            return Ok(());
        }
        let env = Reflect::get(window, &"MonacoEnvironment".into())?;
        let make: Function = Reflect::get(&env, &"getWorker".into())?.dyn_into()?;
        let mut start = None;
        let wanted = Promise::new(&mut |resolve, _| start = Some(resolve));
        LANGUAGE_SERVICE.with(|s| *s.borrow_mut() = start);
        let then: Function = Reflect::get(&wanted, &"then".into())?.dyn_into()?;
        let env_for_worker = env.clone();
        let get_worker = Closure::<dyn Fn(JsValue, JsValue) -> JsValue>::new(
            move |id: JsValue, label: JsValue| {
                let env = env_for_worker.clone();
                let typescript = matches!(
                    label.as_string().as_deref(),
                    Some("typescript" | "javascript")
                );
                if !typescript {
                    return make.call2(&env, &id, &label).unwrap_or(JsValue::UNDEFINED);
                }
                let make = make.clone();
                let later = Closure::once_into_js(move |_: JsValue| -> JsValue {
                    make.call2(&env, &id, &label).unwrap_or(JsValue::UNDEFINED)
                });
                then.call1(&wanted, &later).unwrap_or(JsValue::UNDEFINED)
            },
        );
        Reflect::set(&env, &"getWorker".into(), get_worker.as_ref())?;
        get_worker.forget();
        Ok(())
    }

    /// Lets Monaco make its TypeScript worker (see `hold_language_service`).
    pub fn start_language_service() {
        if let Some(start) = LANGUAGE_SERVICE.with(|s| s.borrow_mut().take()) {
            let _ = start.call0(&JsValue::NULL);
        }
    }
}
