//! Rivet: a web IDE where a person chats with an LLM that builds a web app.
//!
//! The crate is compiled twice: with `ssr` into the server binary and with
//! `hydrate` into the WASM bundle that brings the server-rendered page to life.

#![recursion_limit = "256"]

pub mod app;
pub mod runtime;
#[cfg(feature = "ssr")]
pub mod server;

/// Entry point of the WASM bundle: hydrates the server-rendered page.
#[cfg(feature = "hydrate")]
#[wasm_bindgen::prelude::wasm_bindgen]
pub fn hydrate() {
    console_error_panic_hook::set_once();
    app::lazy_page::hydrate();
}
