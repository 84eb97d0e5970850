//! Errors of the previewed page, forwarded to the server. The preview proxy
//! puts a reporter script into the app's HTML pages; it posts each uncaught
//! exception, unhandled rejection and `console.error` to this page. A
//! message counts only when it comes from the origin of the preview shown
//! and has the reporter's shape; it then goes to `report_page_error`, which
//! makes it a build result of the project.
//!
//! A `webcontainer` project's previews are the WebContainer's own pages: it
//! reports their errors itself (`preview-message`, converted by
//! `page_report/preview_message.rs`), and the window's messages are not
//! forwarded for it, so each error is reported by one path only.
//!
//! The preview pane forwards the window's messages and the WebContainer
//! driver its `preview-message` events; this module is below both, so the
//! runtime in the tab does not depend on the pane.

pub mod preview_message;

use serde::Deserialize;

use crate::runtime::kind::RuntimeKind;

/// Longest message forwarded, in bytes (the reporter sends less).
const MAX_MESSAGE: usize = 16 * 1024;

/// An error of the previewed page, as `report_page_error` takes it.
#[derive(Debug, PartialEq, Eq)]
pub struct PageReport {
    /// `error`, `rejection` or `console`.
    pub kind: String,
    pub message: String,
}

impl PageReport {
    /// The report, when it has a known kind and a message of a sane size.
    fn checked(kind: &str, message: String) -> Option<PageReport> {
        let valid = matches!(kind, "error" | "rejection" | "console")
            && !message.trim().is_empty()
            && message.len() <= MAX_MESSAGE;
        valid.then(|| PageReport {
            kind: kind.to_owned(),
            message,
        })
    }
}

/// What the proxy's reporter posts.
#[derive(Deserialize)]
struct Posted {
    source: String,
    kind: String,
    message: String,
}

/// The report a message's data (as JSON) holds, when it is one.
pub fn parse(json: &str) -> Option<PageReport> {
    let posted: Posted = serde_json::from_str(json).ok()?;
    if posted.source != "rivet-preview" {
        return None;
    }
    PageReport::checked(&posted.kind, posted.message)
}

/// Whether the window's messages report the page errors of a project that
/// runs on `runtime` (unknown until the server answers): not for a
/// WebContainer project, whose WebContainer reports them.
pub fn window_reports(runtime: Option<RuntimeKind>) -> bool {
    runtime != Some(RuntimeKind::Webcontainer)
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

/// Sends a report to the server, which makes it a build result.
#[cfg(feature = "hydrate")]
pub fn send(project: crate::runtime::project::ProjectId, report: PageReport) {
    use crate::app::api::report_page_error;

    leptos::task::spawn_local(async move {
        if let Err(e) = report_page_error(project, report.kind, report.message).await {
            leptos::logging::warn!("the preview's error was not recorded: {e}");
        }
    });
}

/// Listens for the reporter's messages while the preview pane lives, for a
/// project whose runtime (`runtime`) does not report them itself.
#[cfg(feature = "hydrate")]
pub fn forward(
    project: crate::runtime::project::ProjectId,
    preview_url: leptos::prelude::Signal<Option<String>>,
    runtime: Option<leptos::prelude::RwSignal<Option<RuntimeKind>>>,
) {
    use leptos::prelude::*;

    let handle = window_event_listener(leptos::ev::message, move |event| {
        if !window_reports(runtime.and_then(|kind| kind.get_untracked())) {
            return;
        }
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
        send(project.clone(), report);
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
    fn a_webcontainer_projects_page_errors_are_not_taken_from_the_window() {
        assert!(!window_reports(Some(RuntimeKind::Webcontainer)));
        assert!(window_reports(Some(RuntimeKind::Sandbox)));
        assert!(window_reports(None));
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
