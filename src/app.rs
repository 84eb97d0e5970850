//! The user interface: Leptos components rendered on the server and hydrated
//! in the browser. Browser-only glue (Monaco, xterm.js) lives behind the
//! `hydrate` feature inside the component that needs it.

pub mod api;
mod chat;
mod editor;
pub mod error;
mod file_tree;
mod ide;
mod markdown;
mod preview;
pub mod projects;
#[cfg(feature = "hydrate")]
mod scripts;
mod session;
mod settings;
mod splitter;
mod terminal;
mod workbench;

use leptos::prelude::*;
use leptos_meta::{MetaTags, Stylesheet, Title, provide_meta_context};
use leptos_router::{
    ParamSegment, StaticSegment,
    components::{Route, Router, Routes},
};

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

#[component]
pub fn App() -> impl IntoView {
    provide_meta_context();
    view! {
        <Stylesheet id="leptos" href="/pkg/rivet.css" />
        <Title text="Rivet" />
        <Router>
            <Routes fallback=|| view! { <p class="not-found">"Page not found."</p> }>
                <Route path=StaticSegment("") view=projects::ProjectsPage />
                <Route path=(StaticSegment("p"), ParamSegment("project")) view=ide::Ide />
            </Routes>
        </Router>
    }
}
