//! The error reporter the preview proxy puts into the previewed app's HTML
//! pages: a small script (`reporter.js`) that tells the IDE's page, with
//! `postMessage` to the IDE's origin only, about uncaught exceptions,
//! unhandled rejections and `console.error` calls (each once, at most 20 a
//! page load). The IDE's page checks where a message comes from and hands it
//! to the server, which makes it a build result (`session::page_report`).
//! The same tag runs the element inspector (`inspector.js`), which selects
//! or edits an element when the IDE's page turns select mode on
//! (`runtime::selection`).
//!
//! Only complete HTML pages are changed: a successful `text/html` response,
//! plain or gzip (HTML requests ask the dev server for no compression, so
//! gzip is rare), up to [`MAX_HTML`]. The script goes right after `<head>`
//! (before any `<meta>` CSP of the page, which then does not apply to it),
//! else before `</body>`, else at the end. A `Content-Security-Policy`
//! header that would block inline scripts gets the script's hash added to
//! its script directive; one that already allows inline scripts is left
//! as it is (a hash would switch `'unsafe-inline'` off for the app).

use std::io::Read;
use std::sync::OnceLock;

use axum::body::Body;
use axum::http::response::Parts;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use base64::Engine;
use bytes::{Bytes, BytesMut};
use futures::StreamExt;
use sha2::Digest;

/// The script, as the page runs it: the error reporter, then the element
/// inspector (`inspector.js`, the preview's select mode), from one tag
/// whose hash covers both.
pub const REPORTER_JS: &str = concat!(include_str!("reporter.js"), include_str!("inspector.js"));
/// The inspector alone (the Select tool), for a WebContainer's previews.
pub const INSPECTOR_JS: &str = include_str!("inspector.js");
/// Largest page (decoded) that gets the script; a larger one passes as it is.
pub const MAX_HTML: usize = 4 * 1024 * 1024;

/// The IDE's origin as the framed preview addressed as `request_host` sees
/// it: the same host name (a preview's own port of the IDE's host, or
/// `localhost` for `{project}-{port}.preview.localhost`) on the IDE's port.
pub fn ide_origin(scheme: &str, request_host: &str, ide_port: Option<u16>) -> Option<String> {
    let name = crate::runtime::preview::host_name(request_host).to_ascii_lowercase();
    if name.is_empty() {
        return None;
    }
    let name = if name.ends_with(".preview.localhost") {
        "localhost".to_owned()
    } else if name.contains(':') && !name.starts_with('[') {
        format!("[{name}]")
    } else {
        name
    };
    Some(match ide_port {
        Some(port) => format!("{scheme}://{name}:{port}"),
        None => format!("{scheme}://{name}"),
    })
}

/// Asks the dev server not to compress a page the browser navigates to,
/// so the script can go in without decompressing it.
pub fn ask_for_identity(headers: &mut HeaderMap) {
    let wants_html = headers
        .get_all(header::ACCEPT)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .any(|v| v.contains("text/html"));
    if wants_html {
        headers.insert(
            header::ACCEPT_ENCODING,
            HeaderValue::from_static("identity"),
        );
    }
}

/// How a page's body is encoded, when the proxy can read it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Encoding {
    Identity,
    Gzip,
}

/// Whether the response is a whole HTML page the script may go into.
fn injectable(parts: &Parts) -> Option<Encoding> {
    let status = parts.status;
    if !status.is_success()
        || status == StatusCode::NO_CONTENT
        || status == StatusCode::PARTIAL_CONTENT
    {
        return None;
    }
    let html = parts
        .headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|v| v.trim().eq_ignore_ascii_case("text/html"));
    if !html {
        return None;
    }
    let declared = parts
        .headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<usize>().ok());
    if declared.is_some_and(|n| n > MAX_HTML) {
        return None;
    }
    match parts
        .headers
        .get(header::CONTENT_ENCODING)
        .map(|v| v.to_str().unwrap_or("?").trim().to_ascii_lowercase())
        .as_deref()
    {
        None | Some("") | Some("identity") => Some(Encoding::Identity),
        Some("gzip") | Some("x-gzip") => Some(Encoding::Gzip),
        Some(_) => None,
    }
}

/// The response body, with the script in it when it is an HTML page; the
/// headers are changed to match (length, encoding, validators, CSP).
pub async fn inject<B>(parts: &mut Parts, body: B, ide_origin: &str) -> Body
where
    B: axum::body::HttpBody<Data = Bytes> + Send + 'static,
    B::Error: Into<axum::BoxError>,
{
    let Some(encoding) = injectable(parts) else {
        return Body::new(body);
    };
    let mut stream = Body::new(body).into_data_stream();
    let mut raw = BytesMut::new();
    while let Some(chunk) = stream.next().await {
        let chunk = match chunk {
            Ok(chunk) => chunk,
            // What arrived, then the error, as the browser would have seen it.
            Err(e) => {
                let head = futures::stream::iter([Ok(raw.freeze()), Err(e)]);
                return Body::from_stream(head);
            }
        };
        raw.extend_from_slice(&chunk);
        if raw.len() > MAX_HTML {
            // Too large to hold: what was read, then the rest, untouched.
            let head = futures::stream::iter([Ok::<_, axum::Error>(raw.freeze())]);
            return Body::from_stream(head.chain(stream));
        }
    }
    Body::from(rewrite(parts, raw.freeze(), encoding, ide_origin))
}

/// The page with the script in it, and the headers to match; the page as
/// it came when it cannot be decoded.
fn rewrite(parts: &mut Parts, raw: Bytes, encoding: Encoding, ide_origin: &str) -> Bytes {
    let html = match encoding {
        Encoding::Identity => raw.to_vec(),
        Encoding::Gzip => match gunzip(&raw) {
            Some(html) => html,
            None => return raw,
        },
    };
    let page = inject_html(&html, &script_tag(ide_origin));
    let headers = &mut parts.headers;
    headers.remove(header::CONTENT_ENCODING);
    // The validators described the page without the script.
    headers.remove(header::ETAG);
    headers.insert(header::CONTENT_LENGTH, HeaderValue::from(page.len()));
    for name in [
        header::CONTENT_SECURITY_POLICY,
        header::CONTENT_SECURITY_POLICY_REPORT_ONLY,
    ] {
        let policies: Vec<String> = headers
            .get_all(&name)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .map(allow_reporter)
            .collect();
        if policies.is_empty() {
            continue;
        }
        headers.remove(&name);
        for policy in policies {
            if let Ok(value) = HeaderValue::from_str(&policy) {
                headers.append(&name, value);
            }
        }
    }
    Bytes::from(page)
}

/// A gzip body, decoded up to [`MAX_HTML`]; `None` when it is not gzip or
/// too large.
fn gunzip(raw: &[u8]) -> Option<Vec<u8>> {
    let mut html = Vec::new();
    let limit = u64::try_from(MAX_HTML).unwrap_or(u64::MAX) + 1;
    flate2::read::GzDecoder::new(raw)
        .take(limit)
        .read_to_end(&mut html)
        .ok()?;
    (html.len() <= MAX_HTML).then_some(html)
}

/// The `<script>` element, which carries the IDE's origin as data so its
/// text (and hash) never changes.
pub fn script_tag(ide_origin: &str) -> String {
    let origin = ide_origin
        .replace('&', "&amp;")
        .replace('"', "&quot;")
        .replace('<', "&lt;")
        .replace('>', "&gt;");
    format!("<script data-rivet-ide=\"{origin}\">{REPORTER_JS}</script>")
}

/// `'sha256-…'`, the script's CSP hash source.
pub fn script_hash() -> &'static str {
    static HASH: OnceLock<String> = OnceLock::new();
    HASH.get_or_init(|| {
        let digest = sha2::Sha256::digest(REPORTER_JS.as_bytes());
        format!(
            "'sha256-{}'",
            base64::engine::general_purpose::STANDARD.encode(digest)
        )
    })
}

/// `html` with `tag` after the `<head>` tag, else before `</body>`, else at
/// the end.
pub fn inject_html(html: &[u8], tag: &str) -> Vec<u8> {
    let lower = html.to_ascii_lowercase();
    let at = head_end(&lower)
        .or_else(|| rfind(&lower, b"</body"))
        .unwrap_or(html.len());
    let mut page = Vec::with_capacity(html.len() + tag.len());
    page.extend_from_slice(&html[..at]);
    page.extend_from_slice(tag.as_bytes());
    page.extend_from_slice(&html[at..]);
    page
}

/// Just after the `<head …>` tag (not `<header>`).
fn head_end(lower: &[u8]) -> Option<usize> {
    let mut from = 0;
    while let Some(found) = find(&lower[from..], b"<head") {
        let after = from + found + b"<head".len();
        match lower.get(after) {
            Some(b'>') => return Some(after + 1),
            Some(b) if b.is_ascii_whitespace() || *b == b'/' => {
                return find(&lower[after..], b">").map(|end| after + end + 1);
            }
            Some(_) => from = after,
            None => return None,
        }
    }
    None
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

fn rfind(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).rposition(|w| w == needle)
}

/// One CSP header value (maybe several policies, comma-separated) with the
/// script's hash allowed where it would be blocked.
pub fn allow_reporter(value: &str) -> String {
    value
        .split(',')
        .map(allow_in_policy)
        .collect::<Vec<_>>()
        .join(",")
}

fn allow_in_policy(policy: &str) -> String {
    let mut directives: Vec<String> = policy.split(';').map(str::to_owned).collect();
    let name_of = |d: &str| {
        d.split_whitespace()
            .next()
            .unwrap_or("")
            .to_ascii_lowercase()
    };
    let governing = ["script-src-elem", "script-src", "default-src"]
        .iter()
        .find_map(|wanted| directives.iter().position(|d| name_of(d) == *wanted));
    let Some(index) = governing else {
        return policy.to_owned();
    };
    let directive = &directives[index];
    let sources: Vec<String> = directive
        .split_whitespace()
        .skip(1)
        .map(str::to_ascii_lowercase)
        .collect();
    let keyed = sources
        .iter()
        .any(|s| s.starts_with("'nonce-") || s.starts_with("'sha") || s == "'strict-dynamic'");
    if sources.iter().any(|s| s == "'unsafe-inline'") && !keyed {
        return policy.to_owned();
    }
    let name = directive.split_whitespace().next().unwrap_or("");
    let kept: Vec<&str> = directive
        .split_whitespace()
        .skip(1)
        .filter(|s| !s.eq_ignore_ascii_case("'none'"))
        .collect();
    let leading = if directive.starts_with(' ') { " " } else { "" };
    let mut rebuilt = format!("{leading}{name}");
    for source in kept {
        rebuilt.push(' ');
        rebuilt.push_str(source);
    }
    rebuilt.push(' ');
    rebuilt.push_str(script_hash());
    directives[index] = rebuilt;
    directives.join(";")
}

#[cfg(test)]
mod tests;
