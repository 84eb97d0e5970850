//! Markdown for chat messages, rendered to HTML the page can trust: the
//! model's raw HTML is shown as text, and links may only use web schemes.

use pulldown_cmark::{CowStr, Event, Options, Parser, Tag, html};

/// Renders `text` to HTML. Fenced code blocks keep their language as a
/// `language-*` class, which the chat uses to highlight them.
pub fn render(text: &str) -> String {
    let options =
        Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH | Options::ENABLE_TASKLISTS;
    let events = Parser::new_ext(text, options).map(|event| match event {
        // The model's HTML is content, never markup.
        Event::Html(raw) | Event::InlineHtml(raw) => Event::Text(raw),
        Event::Start(Tag::Link {
            link_type,
            dest_url,
            title,
            id,
        }) => Event::Start(Tag::Link {
            link_type,
            dest_url: safe_url(dest_url),
            title,
            id,
        }),
        Event::Start(Tag::Image {
            link_type,
            dest_url,
            title,
            id,
        }) => Event::Start(Tag::Image {
            link_type,
            dest_url: safe_url(dest_url),
            title,
            id,
        }),
        other => other,
    });
    let mut out = String::with_capacity(text.len() * 3 / 2);
    html::push_html(&mut out, events);
    out
}

/// [`render`] for the browser, loaded on first use: a build with
/// `cargo leptos build --split` moves the markdown parser into its own WASM
/// chunk, so the first load does not carry it. Other builds call it directly.
#[cfg(feature = "hydrate")]
#[leptos::lazy]
pub fn render_lazy(text: String) -> String {
    render(&text)
}

/// Keeps http(s), mailto and in-page links; anything else (`javascript:`,
/// `data:`, …) becomes a dead link.
fn safe_url(url: CowStr<'_>) -> CowStr<'_> {
    let lower = url.trim_start().to_ascii_lowercase();
    let has_scheme = lower.find(':').is_some_and(|colon| {
        lower[..colon]
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"+-.".contains(&b))
    });
    let allowed = ["http:", "https:", "mailto:"]
        .iter()
        .any(|s| lower.starts_with(s));
    if has_scheme && !allowed {
        CowStr::Borrowed("#")
    } else {
        url
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(markdown: &str, expected_html: &str) {
        assert_eq!(render(markdown).trim_end(), expected_html, "{markdown:?}");
    }

    #[test]
    fn renders_common_markdown() {
        check(
            "**bold** and `code`",
            "<p><strong>bold</strong> and <code>code</code></p>",
        );
        check("- a\n- b", "<ul>\n<li>a</li>\n<li>b</li>\n</ul>");
        check(
            "```jsx\nconst a = <b/>;\n```",
            "<pre><code class=\"language-jsx\">const a = &lt;b/&gt;;\n</code></pre>",
        );
    }

    #[test]
    fn raw_html_is_shown_as_text() {
        check(
            "<script>alert(1)</script>",
            "&lt;script&gt;alert(1)&lt;/script&gt;",
        );
        check(
            "a <img src=x onerror=alert(1)> b",
            "<p>a &lt;img src=x onerror=alert(1)&gt; b</p>",
        );
    }

    #[test]
    fn only_web_links_survive() {
        check(
            "[x](https://example.com)",
            "<p><a href=\"https://example.com\">x</a></p>",
        );
        check("[x](/docs)", "<p><a href=\"/docs\">x</a></p>");
        check("[x](javascript:alert(1))", "<p><a href=\"#\">x</a></p>");
        check("[x]( JavaScript:alert(1))", "<p><a href=\"#\">x</a></p>");
        check(
            "![i](data:image/png;base64,AAAA)",
            "<p><img src=\"#\" alt=\"i\" /></p>",
        );
    }
}
