//! Serving published sites at `<project>.<domain>` (by default
//! `<project>.site.localhost` on the IDE's port): an origin of its own for
//! each project, never the IDE's, so a site can neither send the IDE's
//! cookie (it is host-only, and `SameSite=Strict` where sites are
//! same-site) nor read the IDE's API. [`site_guard`] answers such hosts
//! before any route of the IDE: static files only (GET and HEAD), no Rivet
//! script, gzip copies when the browser takes them, an SPA's `index.html`
//! for paths that are not files, and long caching only for hashed assets.
//!
//! A private site asks for a key derived from the IDE's token for that one
//! project (`super::site_key`): the IDE's link opens `/__rivet/enter?key=…`,
//! which sets it as an `HttpOnly` cookie of the site's own origin and sends
//! the browser on to `/`.

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use tower::ServiceExt;
use tower_http::services::{ServeDir, ServeFile};

use super::{Visibility, site_key};
use crate::runtime::preview::{HostKind, classify_host, host_name};
use crate::runtime::project::ProjectId;
use crate::server::access::token::constant_time_eq;
use crate::server::access::{cookie_values, request_host};
use crate::server::page::message_page;
use crate::server::state::AppState;

/// Where a private site's link lands.
pub const ENTER_PATH: &str = "/__rivet/enter";
/// The cookie a private site's visitors carry.
const KEY_COOKIE: &str = "rivet_site";
/// Folders whose hashed file names never change content.
const IMMUTABLE_DIRS: &[&str] = &["assets/", "static/", "_next/static/", "_app/immutable/"];

/// What a host names: `None` for a host that is not a site's (the IDE, a
/// preview), `Some(None)` for a name under the sites' domain that is not a
/// project's, else the project.
pub fn site_of(host: &str, domain: &str) -> Option<Option<ProjectId>> {
    if classify_host(host) != HostKind::Ide {
        return None;
    }
    let name = host_name(host).to_ascii_lowercase();
    let name = name.trim_end_matches('.');
    let domain = domain.trim_matches('.').to_ascii_lowercase();
    if domain.is_empty() {
        return None;
    }
    if name == domain {
        return Some(None);
    }
    let label = name.strip_suffix(&domain)?.strip_suffix('.')?;
    Some(ProjectId::parse(label).ok())
}

/// Runs before every route of the IDE: a site's host is served here.
pub async fn site_guard(State(state): State<AppState>, request: Request, next: Next) -> Response {
    let host = request_host(request.headers(), request.uri());
    match site_of(&host, &state.config.publish.domain) {
        None => next.run(request).await,
        Some(None) => message_page(
            StatusCode::NOT_FOUND,
            "No such site",
            "This address names no project.",
        ),
        Some(Some(project)) => site_headers(serve(&state, &project, request).await),
    }
}

async fn serve(state: &AppState, project: &ProjectId, request: Request) -> Response {
    if !matches!(*request.method(), Method::GET | Method::HEAD) {
        return StatusCode::METHOD_NOT_ALLOWED.into_response();
    }
    let site = match state.sites.site(project) {
        Ok(site) => site,
        Err(error) => {
            tracing::error!(%project, %error, "a published site cannot be read");
            let detail = "The site's record cannot be read.";
            return message_page(
                StatusCode::INTERNAL_SERVER_ERROR,
                "Site unavailable",
                detail,
            );
        }
    };
    let Some(live) = site.live else {
        let detail = "Nothing is published at this address.";
        return message_page(StatusCode::NOT_FOUND, "Not published", detail);
    };
    if site.visibility == Visibility::Private
        && let Some(refused) = private_gate(state, project, &request)
    {
        return refused;
    }
    let dir = state.sites.version_dir(project, live);
    let path = request.uri().path().to_owned();
    // Versions never change, so one tag per version is exact; the files'
    // times are not (a rollback serves older files), so they are not used.
    let etag = format!("W/\"v{live}\"");
    if matches_etag(request.headers(), &etag) {
        let unchanged = StatusCode::NOT_MODIFIED.into_response();
        return with_cache(tagged(unchanged, &etag), &path);
    }
    let mut request = request;
    for name in [
        header::IF_MODIFIED_SINCE,
        header::IF_NONE_MATCH,
        header::IF_RANGE,
    ] {
        request.headers_mut().remove(name);
    }
    let (method, headers) = (request.method().clone(), request.headers().clone());
    let Ok(response) = ServeDir::new(&dir)
        .precompressed_gzip()
        .oneshot(request)
        .await;
    let response = response.map(Body::new);
    if response.status() != StatusCode::NOT_FOUND || has_extension(&path) {
        return with_cache(tagged(response, &etag), &path);
    }
    // An app's own routes (`/todos/3`): its index.html.
    let mut fallback = Request::new(Body::empty());
    *fallback.method_mut() = method;
    *fallback.headers_mut() = headers;
    let Ok(response) = ServeFile::new(dir.join("index.html"))
        .precompressed_gzip()
        .oneshot(fallback)
        .await;
    with_cache(tagged(response.map(Body::new), &etag), "/index.html")
}

fn matches_etag(headers: &HeaderMap, etag: &str) -> bool {
    headers
        .get(header::IF_NONE_MATCH)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.split(',').any(|tag| tag.trim() == etag))
}

/// The version's tag instead of the file's time.
fn tagged(mut response: Response, etag: &str) -> Response {
    let headers = response.headers_mut();
    headers.remove(header::LAST_MODIFIED);
    let status = response.status();
    if (status.is_success() || status == StatusCode::NOT_MODIFIED)
        && let Ok(value) = HeaderValue::from_str(etag)
    {
        response.headers_mut().insert(header::ETAG, value);
    }
    response
}

/// `None` when the request may see the private site; else the page that
/// says it may not (or, on [`ENTER_PATH`] with the key, the way in).
fn private_gate(state: &AppState, project: &ProjectId, request: &Request) -> Option<Response> {
    let key = site_key(&state.access, project)?;
    if request.uri().path() == ENTER_PATH {
        let given = request
            .uri()
            .query()
            .into_iter()
            .flat_map(|q| q.split('&'))
            .find_map(|pair| pair.strip_prefix("key="))
            .unwrap_or_default();
        if constant_time_eq(given.as_bytes(), key.as_bytes()) {
            return Some(enter(&key));
        }
    } else if cookie_values(request.headers(), KEY_COOKIE)
        .any(|given| constant_time_eq(given.as_bytes(), key.as_bytes()))
    {
        return None;
    }
    Some(message_page(
        StatusCode::UNAUTHORIZED,
        "This site is private",
        "Open it from Rivet: its publish panel links to it.",
    ))
}

/// Sets the key as the site's cookie and goes on to the site's root.
fn enter(key: &str) -> Response {
    let cookie = format!("{KEY_COOKIE}={key}; Path=/; HttpOnly; SameSite=Lax; Max-Age=2592000");
    let mut response = StatusCode::SEE_OTHER.into_response();
    let headers = response.headers_mut();
    headers.insert(header::LOCATION, HeaderValue::from_static("/"));
    if let Ok(value) = HeaderValue::from_str(&cookie) {
        headers.insert(header::SET_COOKIE, value);
    }
    response
}

fn has_extension(path: &str) -> bool {
    path.rsplit('/')
        .next()
        .is_some_and(|last| last.contains('.'))
}

/// Whether a path names a build's content-hashed asset (`assets/index-C4x9Qa1b.js`).
fn hashed(path: &str) -> bool {
    let path = path.trim_start_matches('/');
    if !IMMUTABLE_DIRS.iter().any(|dir| path.contains(dir)) {
        return false;
    }
    let name = path.rsplit('/').next().unwrap_or_default();
    let Some((stem, _ext)) = name.rsplit_once('.') else {
        return false;
    };
    stem.char_indices()
        .filter(|(_, c)| matches!(c, '-' | '.'))
        .map(|(i, _)| &stem[i + 1..])
        .any(|tail| {
            (8..=32).contains(&tail.len())
                && tail.bytes().any(|b| b.is_ascii_digit())
                && tail
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
        })
}

fn with_cache(mut response: Response, path: &str) -> Response {
    let value = if response.status().is_success() && hashed(path) {
        "public, max-age=31536000, immutable"
    } else {
        "no-cache"
    };
    response
        .headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static(value));
    response
}

/// What every site response carries, whatever it is.
fn site_headers(mut response: Response) -> Response {
    let headers = response.headers_mut();
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("strict-origin-when-cross-origin"),
    );
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sites_host_names_its_project_and_nothing_else() {
        let id = |s: &str| Some(Some(ProjectId::parse(s).unwrap()));
        let domain = "site.localhost";
        assert_eq!(site_of("abc123.site.localhost:3000", domain), id("abc123"));
        assert_eq!(site_of("ABC123.Site.Localhost.", domain), id("abc123"));
        assert_eq!(site_of("site.localhost:3000", domain), Some(None));
        assert_eq!(site_of("a.b.site.localhost", domain), Some(None));
        assert_eq!(site_of("my-app.site.localhost", domain), Some(None));
        assert_eq!(site_of("127.0.0.1:3000", domain), None);
        assert_eq!(site_of("localhost:3000", domain), None);
        assert_eq!(site_of("evilsite.localhost", domain), None);
        assert_eq!(
            site_of("demo-5173.preview.localhost:3000", "localhost"),
            None
        );
        assert_eq!(site_of("p1.apps.example.com", "apps.example.com"), id("p1"));
    }

    #[test]
    fn only_hashed_build_assets_are_cached_for_good() {
        for path in [
            "/assets/index-C4x9Qa1b.js",
            "/assets/index-C-4ZQ8Fh.css",
            "/static/js/main.3f2a1b9c.js",
            "/_next/static/chunks/app-9a8b7c6d5e4f3a2b.js",
        ] {
            assert!(hashed(path), "{path}");
        }
        for path in [
            "/index.html",
            "/app.js",
            "/assets/logo.svg",
            "/assets/my-component.js",
            "/main.3f2a1b9c.js",
        ] {
            assert!(!hashed(path), "{path}");
        }
    }
}
