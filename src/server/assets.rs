//! The site's static files (the WASM bundle, its glue, the stylesheet,
//! Monaco and xterm.js): served pre-compressed when the build wrote `.br` and
//! `.gz` copies beside them (`cargo leptos build --release --precompress`),
//! with `Vary: Accept-Encoding`, and cached for a year when their name carries
//! the build's content hash (`hash-files` in Cargo.toml), otherwise
//! revalidated on every use. A path that is no file gets the "not found" page.

use std::path::Path;

use axum::body::Body;
use axum::extract::State;
use axum::http::{HeaderValue, Request, Uri, header};
use axum::response::Response;
use leptos::config::LeptosOptions;
use leptos::prelude::IntoView;

use super::state::AppState;

/// Cache-Control of a file whose name changes with its content.
pub const IMMUTABLE: &str = "public, max-age=31536000, immutable";
/// Cache-Control of any other file: kept, but checked (If-Modified-Since)
/// before each use, so a rebuild is never shadowed by a stale copy.
pub const REVALIDATE: &str = "no-cache";

/// The fallback of the IDE's router: a static file of the site if one
/// matches, else the "not found" page, rendered in `shell`, the app's HTML
/// document (`http.rs` passes it: server code imports the app only there).
pub async fn static_or_not_found<IV: IntoView + 'static>(
    shell: fn(LeptosOptions) -> IV,
    uri: Uri,
    state: State<AppState>,
    request: Request<Body>,
) -> Response {
    let path = uri.path().to_owned();
    let handler = leptos_axum::file_and_error_handler::<AppState, _>(shell);
    let mut response = handler(uri, state, request).await;
    let status = response.status();
    if status.is_success() || status == axum::http::StatusCode::NOT_MODIFIED {
        let headers = response.headers_mut();
        headers.insert(
            header::CACHE_CONTROL,
            HeaderValue::from_static(cache_control(&path)),
        );
        headers.append(header::VARY, HeaderValue::from_static("accept-encoding"));
    }
    response
}

/// How long a browser may keep the file at `path`.
pub fn cache_control(path: &str) -> &'static str {
    if is_hashed(path) {
        IMMUTABLE
    } else {
        REVALIDATE
    }
}

/// Whether the file name carries cargo-leptos's content hash:
/// `name.<hash>.ext`, the hash being 22 characters of URL-safe base64 (an
/// MD5 digest), e.g. `rivet.Xy3…Q.wasm`.
pub fn is_hashed(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or_default();
    let mut parts = name.split('.');
    let (Some(_stem), Some(hash), Some(_ext)) = (parts.next(), parts.next(), parts.next()) else {
        return false;
    };
    hash.len() == 22
        && hash
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

/// Turns on Leptos's hashed file names when this build made them: the hash
/// file cargo-leptos writes beside the server binary exists, and the WASM it
/// names is in the site. A stale hash file from an older build that no longer
/// hashes is ignored, so the page never links files that are not there.
pub fn with_hashed_names(mut options: LeptosOptions) -> LeptosOptions {
    let Some(exe_dir) = std::env::current_exe()
        .ok()
        .and_then(|exe| exe.parent().map(Path::to_path_buf))
    else {
        return options;
    };
    let hashes = std::fs::read_to_string(exe_dir.join(options.hash_file.as_ref()));
    if let Ok(hashes) = hashes {
        options.hash_files = site_has_hashed_wasm(&options, &hashes);
    }
    options
}

/// Whether the WASM that the hash file `hashes` names is in the site.
fn site_has_hashed_wasm(options: &LeptosOptions, hashes: &str) -> bool {
    let pkg = Path::new(options.site_root.as_ref()).join(options.site_pkg_dir.as_ref());
    wasm_hash(hashes).is_some_and(|hash| {
        pkg.join(format!("{}.{hash}.wasm", options.output_name))
            .is_file()
    })
}

/// The WASM file's hash from cargo-leptos's hash file (`wasm: <hash>` lines).
fn wasm_hash(hashes: &str) -> Option<&str> {
    hashes.lines().find_map(|line| {
        let (kind, hash) = line.split_once(':')?;
        (kind.trim() == "wasm").then(|| hash.trim())
    })
}

#[cfg(test)]
mod tests;
