use std::io::Write;

use axum::http::Response;

use super::*;

const ORIGIN: &str = "http://127.0.0.1:3000";

fn parts(headers: &[(&str, &str)]) -> Parts {
    let mut builder = Response::builder().status(200);
    for (name, value) in headers {
        builder = builder.header(*name, *value);
    }
    builder.body(()).unwrap().into_parts().0
}

async fn run(parts: &mut Parts, body: Vec<u8>) -> Vec<u8> {
    let body = inject(parts, Body::from(body), ORIGIN).await;
    axum::body::to_bytes(body, usize::MAX)
        .await
        .unwrap()
        .to_vec()
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    encoder.write_all(bytes).unwrap();
    encoder.finish().unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8(bytes.to_vec()).unwrap()
}

#[tokio::test]
async fn the_script_goes_right_after_head() {
    let mut parts = parts(&[("content-type", "text/html; charset=utf-8")]);
    let html = b"<!doctype html><html><HEAD lang=\"en\"><meta charset=\"utf-8\"></head><body></body></html>";
    let page = text(&run(&mut parts, html.to_vec()).await);
    let tag = script_tag(ORIGIN);
    assert!(
        page.starts_with(&format!(
            "<!doctype html><html><HEAD lang=\"en\">{tag}<meta"
        )),
        "{page}"
    );
    assert_eq!(parts.headers["content-length"], page.len().to_string());
}

#[tokio::test]
async fn a_page_without_head_gets_it_before_the_end_of_body() {
    let mut parts = parts(&[("content-type", "text/html")]);
    let html = b"<header>top</header><p>hi</p></BODY>";
    let page = text(&run(&mut parts, html.to_vec()).await);
    assert_eq!(
        page,
        format!("<header>top</header><p>hi</p>{}</BODY>", script_tag(ORIGIN))
    );
}

#[test]
fn a_fragment_without_head_or_body_gets_it_at_the_end() {
    let page = inject_html(b"<p>hi</p>", "<script></script>");
    assert_eq!(page, b"<p>hi</p><script></script>");
}

#[tokio::test]
async fn a_gzip_page_is_decoded_and_sent_plain() {
    let html = b"<html><head></head><body>gz</body></html>";
    let mut parts = parts(&[
        ("content-type", "text/html"),
        ("content-encoding", "gzip"),
        ("etag", "\"abc\""),
    ]);
    let page = text(&run(&mut parts, gzip(html)).await);
    assert!(page.contains("data-rivet-ide"), "{page}");
    assert!(page.ends_with("<body>gz</body></html>"));
    assert!(!parts.headers.contains_key("content-encoding"));
    assert!(!parts.headers.contains_key("etag"));
    assert_eq!(parts.headers["content-length"], page.len().to_string());
}

#[tokio::test]
async fn a_broken_gzip_page_passes_untouched() {
    let mut parts = parts(&[("content-type", "text/html"), ("content-encoding", "gzip")]);
    let body = b"not gzip at all".to_vec();
    assert_eq!(run(&mut parts, body.clone()).await, body);
    assert_eq!(parts.headers["content-encoding"], "gzip");
}

#[tokio::test]
async fn a_brotli_page_passes_untouched() {
    let mut parts = parts(&[("content-type", "text/html"), ("content-encoding", "br")]);
    let body = vec![1, 2, 3];
    assert_eq!(run(&mut parts, body.clone()).await, body);
}

#[tokio::test]
async fn non_html_passes_untouched() {
    for content_type in [
        "application/javascript",
        "text/css",
        "image/svg+xml",
        "text/plain",
    ] {
        let mut parts = parts(&[("content-type", content_type), ("content-length", "14")]);
        let body = b"<head></head>x".to_vec();
        assert_eq!(run(&mut parts, body.clone()).await, body, "{content_type}");
        assert_eq!(parts.headers["content-length"], "14");
    }
}

#[tokio::test]
async fn an_error_status_passes_untouched() {
    let mut parts = parts(&[("content-type", "text/html")]);
    parts.status = StatusCode::NOT_MODIFIED;
    assert_eq!(run(&mut parts, Vec::new()).await, b"");
}

#[tokio::test]
async fn a_page_larger_than_the_limit_passes_untouched() {
    let mut parts = parts(&[("content-type", "text/html")]);
    let mut body = b"<head></head>".to_vec();
    body.resize(MAX_HTML + 10, b'x');
    let out = run(&mut parts, body.clone()).await;
    assert_eq!(out.len(), body.len());
    assert_eq!(out, body);
}

#[tokio::test]
async fn a_declared_length_over_the_limit_passes_untouched() {
    let big = (MAX_HTML + 1).to_string();
    let mut parts = parts(&[("content-type", "text/html"), ("content-length", &big)]);
    let body = b"<head></head>".to_vec();
    assert_eq!(run(&mut parts, body.clone()).await, body);
}

#[test]
fn html_requests_ask_for_no_compression() {
    let mut headers = HeaderMap::new();
    headers.insert(
        header::ACCEPT,
        HeaderValue::from_static("text/html,*/*;q=0.8"),
    );
    headers.insert(
        header::ACCEPT_ENCODING,
        HeaderValue::from_static("gzip, br"),
    );
    ask_for_identity(&mut headers);
    assert_eq!(headers[header::ACCEPT_ENCODING], "identity");
    let mut module = HeaderMap::new();
    module.insert(header::ACCEPT, HeaderValue::from_static("*/*"));
    module.insert(header::ACCEPT_ENCODING, HeaderValue::from_static("gzip"));
    ask_for_identity(&mut module);
    assert_eq!(module[header::ACCEPT_ENCODING], "gzip");
}

#[test]
fn the_ide_origin_follows_the_host_the_preview_was_opened_with() {
    assert_eq!(
        ide_origin("http", "127.0.0.1:41234", Some(3000)).as_deref(),
        Some("http://127.0.0.1:3000")
    );
    assert_eq!(
        ide_origin("https", "p1-5173.preview.localhost:3000", Some(3000)).as_deref(),
        Some("https://localhost:3000")
    );
    assert_eq!(
        ide_origin("http", "[::1]:41234", Some(3000)).as_deref(),
        Some("http://[::1]:3000")
    );
    assert_eq!(ide_origin("http", "", Some(3000)), None);
}

#[test]
fn a_hostile_origin_cannot_leave_the_attribute() {
    let tag = script_tag("http://x\"><img src=x onerror=alert(1)>");
    assert!(
        tag.starts_with("<script data-rivet-ide=\"http://x&quot;&gt;&lt;img"),
        "{tag}"
    );
}

#[test]
fn a_csp_without_inline_scripts_gets_the_scripts_hash() {
    let hash = script_hash();
    assert!(
        hash.starts_with("'sha256-") && hash.ends_with("='"),
        "{hash}"
    );
    assert_eq!(
        allow_reporter("default-src 'self'; img-src *"),
        format!("default-src 'self' {hash}; img-src *")
    );
    assert_eq!(
        allow_reporter("script-src 'self' 'nonce-abc'; default-src 'none'"),
        format!("script-src 'self' 'nonce-abc' {hash}; default-src 'none'")
    );
    assert_eq!(
        allow_reporter("script-src 'none'"),
        format!("script-src {hash}")
    );
}

#[test]
fn a_csp_that_allows_inline_scripts_is_left_alone() {
    for policy in [
        "script-src 'self' 'unsafe-inline'",
        "img-src 'self'",
        "style-src 'none'",
    ] {
        assert_eq!(allow_reporter(policy), policy);
    }
}

#[test]
fn every_policy_of_a_header_gets_the_hash() {
    let hash = script_hash();
    assert_eq!(
        allow_reporter("default-src 'self', script-src 'self'"),
        format!("default-src 'self' {hash}, script-src 'self' {hash}")
    );
}

#[tokio::test]
async fn the_csp_header_of_a_page_is_rewritten() {
    let mut parts = parts(&[
        ("content-type", "text/html"),
        ("content-security-policy", "script-src 'self'"),
    ]);
    run(&mut parts, b"<head></head>".to_vec()).await;
    assert_eq!(
        parts.headers["content-security-policy"],
        format!("script-src 'self' {}", script_hash()).as_str()
    );
}

#[test]
fn the_script_posts_only_to_the_ide_origin_it_was_given() {
    assert!(REPORTER_JS.contains("postMessage({ source: \"rivet-preview\", kind, message }, ide)"));
    assert!(!REPORTER_JS.contains("\"*\""));
}

#[test]
fn the_script_is_ascii_so_a_page_in_any_encoding_reads_it_alike() {
    assert!(REPORTER_JS.is_ascii());
    assert!(REPORTER_JS.contains("__rivetInspector"));
}
