//! The user interface: Leptos components rendered on the server and hydrated
//! in the browser. Browser-only glue (Monaco, xterm.js) lives behind the
//! `hydrate` feature inside the component that needs it.

pub mod api;
mod browser_runtime;
mod chat;
mod context;
mod data_panel;
mod editor;
pub mod error;
mod file_tree;
mod ide;
mod lazy;
pub mod lazy_page;
mod markdown;
mod page;
// Most of it runs in the browser only; its checks are tested natively.
#[cfg_attr(not(feature = "hydrate"), allow(dead_code))]
mod page_report;
#[cfg(feature = "hydrate")]
mod post;
mod preview;
pub mod projects;
mod runtime_choice;
#[cfg(feature = "hydrate")]
mod scripts;
mod session;
mod settings;
#[cfg_attr(not(feature = "hydrate"), allow(dead_code))]
mod shell_lines;
mod splitter;
mod terminal;
pub mod transfer;
#[cfg(feature = "hydrate")]
mod webcontainer;
mod workbench;

use leptos::either::EitherOf5;
use leptos::prelude::*;
use leptos_meta::{HashedStylesheet, MetaTags, Title, provide_meta_context};

/// The HTML document around the app.
pub fn shell(options: LeptosOptions) -> impl IntoView {
    view! {
        <!DOCTYPE html>
        <html lang="en">
            <head>
                <meta charset="utf-8" />
                <meta name="viewport" content="width=device-width, initial-scale=1" />
                <meta name="color-scheme" content="light dark" />
                <link rel="icon" href="/favicon.svg" type="image/svg+xml" />
                // `rivet.css`, or its hashed name when the build hashed the
                // files (see `page::hashed_site`).
                <HashedStylesheet options=options.clone() id="leptos" />
                <AutoReload options=options.clone() />
                <HydrationScripts options />
                <MetaTags />
            </head>
            <body>
                <App />
            </body>
        </html>
    }
}

/// The page is chosen from the path by hand rather than by `leptos_router`:
/// the router type-erases the page, which keeps a second (asynchronous)
/// hydration of every component in the WASM bundle, and a quarter of the
/// first load went to that and the router itself. In the browser only the
/// IDE and the small error pages hydrate through `App`
/// (see [`lazy_page`]).
#[component]
pub fn App() -> impl IntoView {
    provide_meta_context();
    let page = match page::page_for(&page::current_path()) {
        page::Page::Project(project) => EitherOf5::A(view! { <ide::Ide project /> }),
        page::Page::BadProject => EitherOf5::B(view! {
            <p class="not-found">"This is not a project address. " <a href="/">"Open your projects"</a></p>
        }),
        page::Page::Import => EitherOf5::C(lazy_page::import()),
        page::Page::Projects => EitherOf5::E(lazy_page::projects()),
        page::Page::NotFound => EitherOf5::D(view! { <p class="not-found">"Page not found."</p> }),
    };
    view! {
        <Title text="Rivet" />
        {page}
    }
}
