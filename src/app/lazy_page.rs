//! The pages other than the IDE, out of its first load.
//!
//! The server renders every page with [`super::App`]. In the browser,
//! [`hydrate`] picks the page from the path: the IDE is hydrated at once;
//! the projects and import pages are hydrated by one `#[leptos::lazy]`
//! function, which `cargo leptos build --split` moves (with the pages'
//! code) out of the main module: one split point for both, so the code
//! they share is not cut into modules of its own (`chat/part.rs`). The
//! server's HTML shows meanwhile, so nothing is lost but the few
//! milliseconds the chunk takes.

use leptos::prelude::*;

/// The projects page as the server renders it.
#[cfg(not(feature = "hydrate"))]
pub fn projects() -> impl IntoView {
    view! { <super::projects::ProjectsPage /> }
}

/// In the browser [`hydrate`] never renders the projects page through
/// `App`, so its code stays in its chunk.
#[cfg(feature = "hydrate")]
pub fn projects() -> impl IntoView {}

/// The import page as the server renders it.
#[cfg(not(feature = "hydrate"))]
pub fn import() -> impl IntoView {
    view! { <super::transfer::ImportPage /> }
}

/// See [`projects`].
#[cfg(feature = "hydrate")]
pub fn import() -> impl IntoView {}

/// Hydrates the server-rendered page the path names.
#[cfg(feature = "hydrate")]
pub fn hydrate() {
    use super::page::{Page, current_path, page_for};
    match page_for(&current_path()) {
        Page::Projects => wasm_bindgen_futures::spawn_local(hydrate_page(false)),
        Page::Import => wasm_bindgen_futures::spawn_local(hydrate_page(true)),
        _ => leptos::mount::hydrate_body(super::App),
    }
}

/// The projects page's hydration, or the import page's, as `App` renders
/// them on the server.
#[cfg(feature = "hydrate")]
#[leptos::lazy]
fn hydrate_page(import: bool) {
    if import {
        leptos::mount::hydrate_body(|| {
            leptos_meta::provide_meta_context();
            view! {
                <leptos_meta::Title text="Rivet" />
                <super::transfer::ImportPage />
            }
        });
    } else {
        leptos::mount::hydrate_body(|| {
            leptos_meta::provide_meta_context();
            view! {
                <leptos_meta::Title text="Rivet" />
                <super::projects::ProjectsPage />
            }
        });
    }
}
