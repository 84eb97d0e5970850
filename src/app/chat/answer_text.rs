//! A text part of an answer as markdown, with its fenced code blocks
//! highlighted by Monaco's colorizer once the answer has settled. Monaco
//! loads lazily for the editor anyway; colorizing while tokens still arrive
//! would redo every block on every token.

use leptos::prelude::*;

use crate::app::markdown;

#[component]
pub fn AnswerText(text: String, settled: bool) -> impl IntoView {
    let node = NodeRef::<leptos::html::Div>::new();
    #[cfg(feature = "hydrate")]
    {
        // The markdown renderer is not in the first load: it is fetched the
        // first time an answer shows (see `markdown::render_lazy`). Until
        // then the element keeps what the server rendered, or stays empty
        // for the few milliseconds the chunk takes to arrive.
        let html = RwSignal::new(None::<String>);
        leptos::task::spawn_local(async move {
            html.set(Some(markdown::render_lazy(text).await));
        });
        Effect::new(move |_| {
            if let (Some(element), true, true) = (node.get(), html.with(Option::is_some), settled) {
                leptos::task::spawn_local(browser::highlight(element.into()));
            }
        });
        view! {
            <div class="markdown" node_ref=node inner_html=move || html.get().unwrap_or_default()></div>
        }
    }
    #[cfg(not(feature = "hydrate"))]
    {
        let _ = settled;
        view! { <div class="markdown" node_ref=node inner_html=markdown::render(&text)></div> }
    }
}

/// Monaco's language id for a fence's info string.
#[cfg_attr(not(feature = "hydrate"), allow(dead_code))]
pub(super) fn monaco_language(fence: &str) -> &str {
    match fence {
        "js" | "jsx" | "mjs" | "cjs" => "javascript",
        "ts" | "tsx" => "typescript",
        "sh" | "bash" | "shell" | "console" | "zsh" => "shell",
        "py" => "python",
        "rs" => "rust",
        "yml" => "yaml",
        "md" => "markdown",
        "htm" => "html",
        other => other,
    }
}

#[cfg(feature = "hydrate")]
mod browser {
    use wasm_bindgen::{JsCast, JsValue, prelude::wasm_bindgen};
    use wasm_bindgen_futures::JsFuture;

    use super::monaco_language;
    use crate::app::scripts::load_monaco;

    #[wasm_bindgen]
    extern "C" {
        #[wasm_bindgen(js_namespace = ["monaco", "editor"], js_name = colorizeElement)]
        fn colorize_element(element: &web_sys::HtmlElement, options: &JsValue) -> js_sys::Promise;
    }

    /// Colorizes every `<code class="language-…">` inside `root`, marking
    /// each done with `data-highlighted` so a block is never colorized twice.
    pub async fn highlight(root: web_sys::HtmlElement) {
        let Ok(blocks) = root.query_selector_all("pre > code[class^=\"language-\"]") else {
            return;
        };
        if blocks.length() == 0 || load_monaco().await.is_err() {
            return;
        }
        for i in 0..blocks.length() {
            let Some(code) = blocks
                .item(i)
                .and_then(|n| n.dyn_into::<web_sys::HtmlElement>().ok())
            else {
                continue;
            };
            if code.has_attribute("data-highlighted") {
                continue;
            }
            let class = code.class_name();
            let fence = class.trim_start_matches("language-");
            let _ = code.set_attribute("data-lang", monaco_language(fence));
            if JsFuture::from(colorize_element(&code, &js_sys::Object::new()))
                .await
                .is_ok()
            {
                let _ = code.set_attribute("data-highlighted", "true");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::monaco_language;

    #[test]
    fn fences_name_monaco_languages() {
        for (fence, language) in [
            ("jsx", "javascript"),
            ("tsx", "typescript"),
            ("bash", "shell"),
            ("json", "json"),
            ("css", "css"),
        ] {
            assert_eq!(monaco_language(fence), language, "{fence}");
        }
    }
}
