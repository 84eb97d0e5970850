//! Lazy loading of the vendored browser libraries (Monaco, xterm.js), served
//! from our own origin because COEP forbids CDNs.

/// Monaco's AMD loader and modules.
pub const MONACO_VS: &str = "/vendor/monaco/vs";
pub const XTERM_JS: &str = "/vendor/xterm/xterm.js";
pub const XTERM_CSS: &str = "/vendor/xterm/xterm.css";
pub const XTERM_FIT_JS: &str = "/vendor/xterm/addon-fit.js";

pub use browser::{load_monaco, load_xterm};

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
        JsFuture::from(loaded).await.map(|_| ())
    }
}
