//! Errors of the previewed page, forwarded to the server. The preview proxy
//! puts a reporter script into the app's HTML pages; it posts each uncaught
//! exception, unhandled rejection and `console.error` to this page. A
//! message counts only when it comes from the origin of the preview shown
//! and has the reporter's shape; it then goes to `report_page_error`, which
//! makes it a build result of the project.

use serde::Deserialize;

/// Longest message forwarded, in bytes (the reporter sends less).
const MAX_MESSAGE: usize = 16 * 1024;

/// What the reporter posts.
#[derive(Deserialize, Debug, PartialEq, Eq)]
pub struct PageReport {
    source: String,
    pub kind: String,
    pub message: String,
}

/// The report a message's data (as JSON) holds, when it is one.
pub fn parse(json: &str) -> Option<PageReport> {
    let report: PageReport = serde_json::from_str(json).ok()?;
    let valid = report.source == "rivet-preview"
        && matches!(report.kind.as_str(), "error" | "rejection" | "console")
        && !report.message.trim().is_empty()
        && report.message.len() <= MAX_MESSAGE;
    valid.then_some(report)
}

/// The origin of `url` as a browser writes it (`MessageEvent.origin`):
/// scheme, host and a port other than the scheme's default.
pub fn origin_of(url: &str) -> Option<String> {
    let (scheme, rest) = url.split_once("://")?;
    let scheme = scheme.to_ascii_lowercase();
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    let authority = authority
        .rsplit('@')
        .next()
        .unwrap_or_default()
        .to_ascii_lowercase();
    if authority.is_empty() || !matches!(scheme.as_str(), "http" | "https") {
        return None;
    }
    let default_port = if scheme == "http" { ":80" } else { ":443" };
    let authority = authority.strip_suffix(default_port).unwrap_or(&authority);
    Some(format!("{scheme}://{authority}"))
}

/// Listens for the reporter's messages while the preview pane lives.
#[cfg(feature = "hydrate")]
pub fn forward(
    project: crate::runtime::project::ProjectId,
    preview_url: leptos::prelude::Signal<Option<String>>,
) {
    use leptos::prelude::*;

    use crate::app::api::report_page_error;

    let handle = window_event_listener(leptos::ev::message, move |event| {
        let expected = preview_url.get_untracked().as_deref().and_then(origin_of);
        if expected.as_deref() != Some(event.origin().as_str()) {
            return;
        }
        let Some(report) = js_sys::JSON::stringify(&event.data())
            .ok()
            .and_then(|json| json.as_string())
            .and_then(|json| parse(&json))
        else {
            return;
        };
        let project = project.clone();
        leptos::task::spawn_local(async move {
            if let Err(e) = report_page_error(project, report.kind, report.message).await {
                leptos::logging::warn!("the preview's error was not recorded: {e}");
            }
        });
    });
    on_cleanup(move || handle.remove());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_report_has_the_reporters_shape() {
        let report = parse(r#"{"source":"rivet-preview","kind":"error","message":"boom"}"#);
        assert_eq!(
            report.map(|r| (r.kind, r.message)),
            Some(("error".into(), "boom".into()))
        );
    }

    #[test]
    fn a_message_of_another_shape_is_ignored() {
        for json in [
            r#"{"source":"other","kind":"error","message":"boom"}"#,
            r#"{"source":"rivet-preview","kind":"warning","message":"boom"}"#,
            r#"{"source":"rivet-preview","kind":"error","message":"  "}"#,
            r#"{"source":"rivet-preview","kind":"error"}"#,
            r#""just a string""#,
            "null",
        ] {
            assert_eq!(parse(json), None, "{json}");
        }
        let long = format!(
            r#"{{"source":"rivet-preview","kind":"error","message":"{}"}}"#,
            "x".repeat(MAX_MESSAGE + 1)
        );
        assert_eq!(parse(&long), None);
    }

    #[test]
    fn the_origin_of_a_preview_url() {
        assert_eq!(
            origin_of("http://127.0.0.1:41234/").as_deref(),
            Some("http://127.0.0.1:41234")
        );
        assert_eq!(
            origin_of("HTTP://Localhost:80/a?b#c").as_deref(),
            Some("http://localhost")
        );
        assert_eq!(
            origin_of("https://[::1]:8443").as_deref(),
            Some("https://[::1]:8443")
        );
        assert_eq!(origin_of("about:blank"), None);
        assert_eq!(origin_of("javascript://x"), None);
    }
}
