//! wasm-bindgen declarations of `glue.js`, the flattened surface of
//! `@webcontainer/api` that Rivet uses.

use js_sys::{Function, Promise, Uint8Array};
use wasm_bindgen::prelude::*;

#[wasm_bindgen(module = "/src/app/webcontainer/glue.js")]
extern "C" {
    /// Imports the package from `url` and boots the page's one instance
    /// (`coep: 'credentialless'`); later calls get the same instance.
    #[wasm_bindgen(js_name = wcBoot)]
    pub fn boot(url: &str) -> Promise;
    #[wasm_bindgen(js_name = wcReadFile)]
    pub fn read_file(wc: &JsValue, path: &str) -> Promise;
    #[wasm_bindgen(js_name = wcWriteFile)]
    pub fn write_file(wc: &JsValue, path: &str, data: &Uint8Array) -> Promise;
    #[wasm_bindgen(js_name = wcMkdir)]
    pub fn mkdir(wc: &JsValue, path: &str) -> Promise;
    #[wasm_bindgen(js_name = wcRm)]
    pub fn rm(wc: &JsValue, path: &str) -> Promise;
    #[wasm_bindgen(js_name = wcRename)]
    pub fn rename(wc: &JsValue, from: &str, to: &str) -> Promise;
    #[wasm_bindgen(js_name = wcReaddir)]
    pub fn readdir(wc: &JsValue, path: &str) -> Promise;
    /// Returns the function that stops watching.
    #[wasm_bindgen(js_name = wcWatch)]
    pub fn watch(wc: &JsValue, listener: &Function) -> Function;
    /// Returns the function that unsubscribes.
    #[wasm_bindgen(js_name = wcOn)]
    pub fn on(wc: &JsValue, event: &str, listener: &Function) -> Function;
    #[wasm_bindgen(js_name = wcSpawn)]
    pub fn spawn(
        wc: &JsValue,
        command: &str,
        cols: u16,
        rows: u16,
        on_output: &Function,
    ) -> Promise;
}

#[wasm_bindgen(module = "/src/app/webcontainer/glue.js")]
extern "C" {
    /// An interactive `jsh` of the page's WebContainer (booted from `url`
    /// if nothing booted it yet); resolves to a [`ShellProcess`], rejects
    /// when the boot fails.
    #[wasm_bindgen(js_name = wcShell)]
    pub fn shell(url: &str, cols: u16, rows: u16, on_output: &Function) -> Promise;

    /// A process `wcShell` started.
    pub type ShellProcess;
    /// Resolves to the exit code.
    #[wasm_bindgen(method, getter)]
    pub fn exit(this: &ShellProcess) -> Promise;
    #[wasm_bindgen(method)]
    pub fn write(this: &ShellProcess, text: &str);
    #[wasm_bindgen(method)]
    pub fn resize(this: &ShellProcess, cols: u16, rows: u16);
    #[wasm_bindgen(method)]
    pub fn kill(this: &ShellProcess);
}
