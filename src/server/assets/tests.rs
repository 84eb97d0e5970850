use std::path::Path;

use axum::body::Body;
use axum::http::{Request, StatusCode};
use tower::ServiceExt;

use super::*;
use crate::server::config::Config;

const TOKEN: &str = "assets-test-token-0123456789";
const HASH: &str = "AbCdEfGhIjKlMnOpQrStUv";

/// A site with a hashed bundle (each file also gzipped and brotli'd, as
/// `--precompress` writes them) and an unhashed vendor file.
fn site(root: &Path) {
    let pkg = root.join("pkg");
    std::fs::create_dir_all(&pkg).unwrap();
    std::fs::create_dir_all(root.join("vendor")).unwrap();
    for (name, body) in [
        (format!("rivet.{HASH}.wasm"), "plain wasm"),
        (format!("rivet.{HASH}.wasm.gz"), "gzip wasm"),
        (format!("rivet.{HASH}.wasm.br"), "brotli wasm"),
    ] {
        std::fs::write(pkg.join(name), body).unwrap();
    }
    std::fs::write(root.join("vendor/loader.js"), "plain js").unwrap();
    std::fs::write(root.join("vendor/loader.js.gz"), "gzip js").unwrap();
}

/// The IDE's router over a site in a temporary directory.
fn app() -> (axum::Router, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("site");
    site(&root);
    let mut config = Config::defaults();
    config.server.data_dir = dir.path().join("data");
    config.server.token = TOKEN.to_owned();
    let options = LeptosOptions::builder()
        .output_name("rivet")
        .site_root(root.to_string_lossy().into_owned())
        .build();
    (
        crate::server::http::app(AppState::new(options, config)),
        dir,
    )
}

async fn fetch(path: &str, accept_encoding: Option<&str>) -> axum::response::Response {
    let (app, _dir) = app();
    let mut request = Request::get(path)
        .header("host", "127.0.0.1:3000")
        .header("authorization", format!("Bearer {TOKEN}"));
    if let Some(encoding) = accept_encoding {
        request = request.header("accept-encoding", encoding);
    }
    app.oneshot(request.body(Body::empty()).unwrap())
        .await
        .unwrap()
}

async fn text(response: axum::response::Response) -> String {
    let bytes = axum::body::to_bytes(response.into_body(), usize::MAX)
        .await
        .unwrap();
    String::from_utf8(bytes.to_vec()).unwrap()
}

fn header<'a>(response: &'a axum::response::Response, name: &str) -> Option<&'a str> {
    response.headers().get(name).map(|v| v.to_str().unwrap())
}

#[tokio::test]
async fn brotli_is_served_to_a_browser_that_accepts_it() {
    let wasm = format!("/pkg/rivet.{HASH}.wasm");
    let response = fetch(&wasm, Some("gzip, deflate, br")).await;
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(header(&response, "content-encoding"), Some("br"));
    assert_eq!(header(&response, "vary"), Some("accept-encoding"));
    assert_eq!(text(response).await, "brotli wasm");
}

#[tokio::test]
async fn gzip_is_served_when_brotli_is_not_accepted() {
    let wasm = format!("/pkg/rivet.{HASH}.wasm");
    let response = fetch(&wasm, Some("gzip")).await;
    assert_eq!(header(&response, "content-encoding"), Some("gzip"));
    assert_eq!(text(response).await, "gzip wasm");
}

#[tokio::test]
async fn the_plain_file_is_served_without_accept_encoding() {
    let wasm = format!("/pkg/rivet.{HASH}.wasm");
    let response = fetch(&wasm, None).await;
    assert_eq!(header(&response, "content-encoding"), None);
    assert_eq!(text(response).await, "plain wasm");
}

#[tokio::test]
async fn a_file_without_a_brotli_copy_falls_back_to_gzip() {
    let response = fetch("/vendor/loader.js", Some("br, gzip")).await;
    assert_eq!(header(&response, "content-encoding"), Some("gzip"));
    assert_eq!(text(response).await, "gzip js");
}

#[tokio::test]
async fn hashed_files_are_cached_for_a_year() {
    let response = fetch(&format!("/pkg/rivet.{HASH}.wasm"), Some("br")).await;
    assert_eq!(header(&response, "cache-control"), Some(IMMUTABLE));
}

#[tokio::test]
async fn unhashed_files_are_revalidated() {
    let response = fetch("/vendor/loader.js", None).await;
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(header(&response, "cache-control"), Some(REVALIDATE));
}

#[tokio::test]
async fn a_missing_file_is_not_found_and_not_cached() {
    let response = fetch("/pkg/rivet.nosuchhashnosuchhash00.wasm", Some("br")).await;
    assert_eq!(response.status(), StatusCode::NOT_FOUND);
    assert_eq!(header(&response, "cache-control"), None);
}

#[test]
fn only_names_with_a_content_hash_count_as_hashed() {
    assert!(is_hashed(&format!("/pkg/rivet.{HASH}.wasm")));
    assert!(is_hashed(&format!("/pkg/rivet.{HASH}.css")));
    for path in [
        "/pkg/rivet.wasm",
        "/pkg/rivet.js",
        "/vendor/monaco/vs/loader.js",
        "/pkg/rivet.short.wasm",
        "/pkg/rivet.AbCdEfGhIjKlMnOpQrSt!v.wasm",
        "/",
    ] {
        assert!(!is_hashed(path), "{path}");
    }
}

#[test]
fn the_wasm_hash_is_read_from_the_hash_file() {
    let hashes = format!("js: aaa\nwasm: {HASH}\ncss: bbb\n");
    assert_eq!(wasm_hash(&hashes), Some(HASH));
    assert_eq!(wasm_hash("js: aaa\n"), None);
}

#[tokio::test]
async fn a_path_that_is_no_file_nor_page_gets_the_not_found_page() {
    let response = fetch("/no/such/page", None).await;
    assert_eq!(response.status(), StatusCode::NOT_FOUND);
    assert!(text(response).await.contains("Page not found."));
}

#[tokio::test]
async fn a_project_path_with_a_bad_id_says_so() {
    let response = fetch("/p/NotAnId", None).await;
    assert!(
        text(response)
            .await
            .contains("This is not a project address.")
    );
}

#[test]
fn hashed_names_are_used_only_when_the_hash_file_names_a_wasm_of_the_site() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("site");
    site(&root);
    let options = LeptosOptions::builder()
        .output_name("rivet")
        .site_root(root.to_string_lossy().into_owned())
        .build();
    let this_build = format!("js: aaa\nwasm: {HASH}\ncss: bbb\n");
    assert!(site_has_hashed_wasm(&options, &this_build));
    let stale = "js: aaa\nwasm: OldOldOldOldOldOldOld00\ncss: bbb\n";
    assert!(!site_has_hashed_wasm(&options, stale));
    assert!(!site_has_hashed_wasm(&options, ""));
}

/// Every rule of the stylesheet is closed: a rule left open nests the rules
/// after it (browsers read nested CSS), and they silently stop applying.
#[test]
fn the_stylesheet_has_no_rule_left_open() {
    let css = include_str!("../../../style/main.css");
    let mut depth = 0usize;
    // The at-rule each open block belongs to, if any.
    let mut blocks: Vec<bool> = Vec::new();
    let mut prelude = String::new();
    let mut rest = css;
    while let Some(at) = rest.find(['{', '}', '/']) {
        let (before, after) = rest.split_at(at);
        prelude.push_str(before);
        if after.starts_with("/*") {
            let end = after.find("*/").expect("an unclosed comment") + 2;
            rest = &after[end..];
            continue;
        }
        match after.as_bytes()[0] {
            b'{' => {
                let selector = prelude.trim();
                let inside_rule = blocks.last().is_some_and(|at_rule| !at_rule);
                assert!(
                    !inside_rule,
                    "`{selector}` is inside an unclosed rule (depth {depth})"
                );
                blocks.push(selector.starts_with('@'));
                depth += 1;
            }
            b'}' => {
                assert!(blocks.pop().is_some(), "a `}}` closes nothing");
                depth -= 1;
            }
            _ => prelude.push('/'),
        }
        if !after.starts_with('/') {
            prelude.clear();
        }
        rest = &after[1..];
    }
    assert_eq!(depth, 0, "rules left open at the end");
}
