//! The guard in front of the router, driven with `oneshot`.

use axum::body::Body;
use axum::http::{Request, StatusCode, header};
use axum::response::Response;
use tower::ServiceExt;

use super::*;
use crate::server::config::Config;

const TOKEN: &str = "unit-test-token-0123456789";

fn state_with(tweak: impl FnOnce(&mut Config)) -> (AppState, tempfile::TempDir) {
    crate::server::state::for_tests(|config| {
        config.server.token = TOKEN.to_owned();
        tweak(config);
    })
}

async fn send(state: &AppState, request: Request<Body>) -> Response {
    crate::server::http::app(state.clone())
        .oneshot(request)
        .await
        .unwrap()
}

async fn body(response: Response) -> String {
    let bytes = axum::body::to_bytes(response.into_body(), usize::MAX)
        .await
        .unwrap();
    String::from_utf8_lossy(&bytes).into_owned()
}

fn get(path: &str) -> axum::http::request::Builder {
    Request::get(path).header("host", "127.0.0.1:3000")
}

fn post(path: &str) -> axum::http::request::Builder {
    Request::post(path)
        .header("host", "127.0.0.1:3000")
        .header("content-type", "application/x-www-form-urlencoded")
}

#[tokio::test]
async fn every_route_but_healthz_needs_the_token() {
    let (state, _data) = state_with(|_| {});
    for request in [
        get("/"),
        get("/new"),
        get("/p/someproject"),
        get("/pkg/rivet.js"),
        get("/api/projects/someproject/terminals/main/ws"),
        get("/preview/someproject/5173/"),
        post("/api/send_message"),
        post("/api/list_models"),
        post("/api/find_local_models"),
        // A WebContainer project's secret values, and a new chat.
        post("/api/browser_secrets"),
        post("/api/open_chat"),
        // A project's git remote and published site.
        post("/api/git_remote"),
        post("/api/set_git_remote"),
        post("/api/git_push"),
        post("/api/git_pull"),
        post("/api/git_status"),
        post("/api/publish_site"),
        post("/api/site_info"),
        post("/api/rollback_site"),
        post("/api/unpublish_site"),
        post("/api/publish_to_git"),
        // A project's database, from the Database tab, a WebContainer tab
        // and the HTTP API.
        post("/api/database_tables"),
        post("/api/database_query"),
        post("/api/database_migrate"),
        post("/api/database_rebuild"),
        get("/api/v1/projects/someproject/database/tables"),
        post("/api/v1/projects/someproject/database/query"),
        post("/api/v1/projects/someproject/database/rebuild"),
        get("/api/v1/projects/someproject/export.zip?data=1"),
        // The owner's MCP servers (their secret values, and commands run
        // on the host), and a project's choice of them.
        post("/api/mcp_servers"),
        post("/api/set_mcp_server"),
        post("/api/remove_mcp_server"),
        post("/api/choose_mcp_servers"),
        get("/api/v1/mcp/servers"),
        Request::put("/api/v1/mcp/servers/docs").header("host", "127.0.0.1:3000"),
        Request::delete("/api/v1/mcp/servers/docs").header("host", "127.0.0.1:3000"),
        get("/api/v1/projects/someproject/mcp"),
        Request::put("/api/v1/projects/someproject/mcp").header("host", "127.0.0.1:3000"),
        // A message with images and selected elements, an image kept or
        // read, an in-place edit, and the preview's inspector.
        post("/api/send_attached"),
        post("/api/edit_text_in_place"),
        post("/api/v1/projects/someproject/images"),
        get(&format!(
            "/api/v1/projects/someproject/images/{}",
            "a".repeat(64)
        )),
        get("/api/preview/inspector.js"),
        // A folder's listing, and the site a WebContainer tab builds.
        get("/api/v1/projects/someproject/files?dir=dist"),
        post("/api/site_file"),
        post("/api/site_built"),
    ] {
        let request = request.body(Body::empty()).unwrap();
        let path = request.uri().to_string();
        let response = send(&state, request).await;
        assert_eq!(response.status(), StatusCode::UNAUTHORIZED, "{path}");
        let text = body(response).await;
        let json: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(json["code"], "unauthorized", "{path}");
    }
    let health = send(&state, get("/healthz").body(Body::empty()).unwrap()).await;
    assert_eq!(health.status(), StatusCode::OK);
    assert_eq!(
        state.store.list_projects().await.unwrap().len(),
        0,
        "nothing was created"
    );
}

#[tokio::test]
async fn a_browser_without_the_token_gets_the_login_page() {
    let (state, _data) = state_with(|_| {});
    let request = get("/p/someproject")
        .header("accept", "text/html,application/xhtml+xml")
        .header("sec-fetch-dest", "document")
        .body(Body::empty())
        .unwrap();
    let response = send(&state, request).await;
    assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
    assert_eq!(
        response.headers()["cross-origin-opener-policy"],
        "same-origin"
    );
    let html = body(response).await;
    assert!(html.contains("data-testid=\"login\""), "{html}");
    assert!(html.contains("action=\"/login\""), "{html}");
    assert!(html.contains("value=\"/p/someproject\""), "{html}");
}

fn page(path: &str) -> axum::http::request::Builder {
    get(path)
        .header("accept", "text/html")
        .header("sec-fetch-dest", "document")
}

/// A request from a client at `ip`, as `rivet serve` records it.
fn from(ip: [u8; 4], mut request: Request<Body>) -> Request<Body> {
    let addr = std::net::SocketAddr::from((ip, 40000));
    request.extensions_mut().insert(ConnectInfo(addr));
    request
}

/// Every way a path can name another host, as the review tried them.
const ESCAPING_PATHS: [&str; 6] = [
    "//evil.example/x",
    "/\\evil.example/x",
    "/%2F%2Fevil.example/x",
    "/%5Cevil.example/x",
    "/%2f/evil.example",
    "///evil.example",
];

#[tokio::test]
async fn a_login_page_reached_through_a_scheme_relative_path_posts_the_token_to_the_ide() {
    let (state, _data) = state_with(|_| {});
    for path in ESCAPING_PATHS {
        let response = send(&state, page(path).body(Body::empty()).unwrap()).await;
        assert_eq!(response.status(), StatusCode::UNAUTHORIZED, "{path}");
        let html = body(response).await;
        assert!(
            html.contains(r#"<form method="post" action="/login""#),
            "{path}: {html}"
        );
        assert!(html.contains(r#"name="next" value="/""#), "{path}: {html}");
        assert!(!html.contains("evil.example"), "{path}: {html}");
    }
}

#[tokio::test]
async fn the_token_in_a_link_to_an_escaping_path_redirects_on_the_host() {
    let (state, _data) = state_with(|_| {});
    for path in ESCAPING_PATHS {
        let link = get(&format!("{path}?token={TOKEN}"))
            .body(Body::empty())
            .unwrap();
        let response = send(&state, link).await;
        assert_eq!(response.status(), StatusCode::SEE_OTHER, "{path}");
        assert_eq!(response.headers()["location"], "/", "{path}");
    }
}

fn login_form(fields: &str) -> Request<Body> {
    post("/login")
        .header("origin", "http://127.0.0.1:3000")
        .header("sec-fetch-site", "same-origin")
        .body(Body::from(fields.to_owned()))
        .unwrap()
}

#[tokio::test]
async fn the_login_form_leads_back_only_to_a_path_on_this_host() {
    let (state, _data) = state_with(|c| c.server.addr = "127.0.0.1:3000".to_owned());
    let encoded = |s: &str| url::form_urlencoded::byte_serialize(s.as_bytes()).collect::<String>();
    let response = send(
        &state,
        login_form(&format!("token={TOKEN}&next={}", encoded("/p/abc?tab=x"))),
    )
    .await;
    assert_eq!(response.status(), StatusCode::SEE_OTHER);
    assert_eq!(response.headers()["location"], "/p/abc?tab=x");
    let cookie = response.headers()[header::SET_COOKIE].to_str().unwrap();
    assert!(
        cookie.starts_with(&format!("rivet-3000={TOKEN};")),
        "{cookie}"
    );
    for next in ESCAPING_PATHS.into_iter().chain([
        "http://evil.example/x",
        "https://evil.example",
        "/\t/evil.example",
    ]) {
        let fields = format!("token={TOKEN}&next={}", encoded(next));
        let response = send(&state, login_form(&fields)).await;
        assert_eq!(response.status(), StatusCode::SEE_OTHER, "{next}");
        assert_eq!(response.headers()["location"], "/", "{next}");
    }
}

#[tokio::test]
async fn a_wrong_token_in_the_login_form_shows_the_form_again() {
    let (state, _data) = state_with(|_| {});
    let response = send(&state, login_form("token=not-it&next=%2Fimport")).await;
    assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
    assert!(!response.headers().contains_key(header::SET_COOKIE));
    let html = body(response).await;
    assert!(html.contains("not the right token"), "{html}");
    assert!(html.contains(r#"name="next" value="/import""#), "{html}");
}

#[tokio::test]
async fn a_login_form_larger_than_its_limit_is_refused() {
    let (state, _data) = state_with(|_| {});
    let fields = format!("token={}", "a".repeat(MAX_LOGIN_FORM + 1));
    let response = send(&state, login_form(&fields)).await;
    assert_eq!(response.status(), StatusCode::PAYLOAD_TOO_LARGE);
}

#[tokio::test]
async fn a_cookie_only_request_without_origin_or_fetch_metadata_is_refused() {
    let (state, _data) = state_with(|c| c.server.addr = "127.0.0.1:3000".to_owned());
    let cookie = format!("rivet-3000={TOKEN}");
    // `<form action=http://LAN:3000/new method=post>` on a plain-HTTP page.
    let bare = post("/new")
        .header("cookie", &cookie)
        .body(Body::empty())
        .unwrap();
    let refused = send(&state, bare).await;
    assert_eq!(refused.status(), StatusCode::FORBIDDEN);
    assert!(body(refused).await.contains("Authorization: Bearer"));
    // `<img src=http://LAN:3000/new>`: a GET, which creates nothing.
    let image = get("/new")
        .header("cookie", &cookie)
        .body(Body::empty())
        .unwrap();
    let followed = send(&state, image).await;
    assert_eq!(followed.status(), StatusCode::SEE_OTHER);
    assert_eq!(followed.headers()["location"], "/");
    assert_eq!(
        state.store.list_projects().await.unwrap().len(),
        0,
        "nothing was created"
    );
    // The IDE's own page says where it comes from; a program sends the token.
    let page = post("/new")
        .header("cookie", &cookie)
        .header("origin", "http://127.0.0.1:3000")
        .body(Body::empty())
        .unwrap();
    assert_eq!(send(&state, page).await.status(), StatusCode::SEE_OTHER);
    let program = post("/new")
        .header("authorization", format!("Bearer {TOKEN}"))
        .body(Body::empty())
        .unwrap();
    assert_eq!(send(&state, program).await.status(), StatusCode::SEE_OTHER);
    assert_eq!(state.store.list_projects().await.unwrap().len(), 2);
}

#[tokio::test]
async fn opening_a_page_with_the_token_sets_the_session_cookie() {
    let (state, _data) = state_with(|c| c.server.addr = "127.0.0.1:3456".to_owned());
    let login = get(&format!("/p/someproject?tab=x&token={TOKEN}"))
        .body(Body::empty())
        .unwrap();
    let response = send(&state, login).await;
    assert_eq!(response.status(), StatusCode::SEE_OTHER);
    assert_eq!(response.headers()["location"], "/p/someproject?tab=x");
    let cookie = response.headers()[header::SET_COOKIE].to_str().unwrap();
    for part in [
        format!("rivet-3456={TOKEN}"),
        "HttpOnly".to_owned(),
        "SameSite=Strict".to_owned(),
        "Path=/".to_owned(),
    ] {
        assert!(cookie.contains(&part), "{cookie} lacks {part}");
    }
    let pair = cookie.split(';').next().unwrap().to_owned();
    let page = get("/p/someproject")
        .header("cookie", format!("theme=dark; {pair}; other=1"))
        .body(Body::empty())
        .unwrap();
    assert_eq!(send(&state, page).await.status(), StatusCode::OK);
    let bearer = get("/p/someproject")
        .header("authorization", format!("Bearer {TOKEN}"))
        .body(Body::empty())
        .unwrap();
    assert_eq!(send(&state, bearer).await.status(), StatusCode::OK);
}

#[tokio::test]
async fn guessing_the_token_is_refused_then_throttled() {
    let (state, _data) = state_with(|_| {});
    let wrong = || {
        get("/p/someproject")
            .header("authorization", "Bearer not-the-token-at-all")
            .body(Body::empty())
            .unwrap()
    };
    for _ in 0..MAX_FAILURES_PER_MINUTE {
        assert_eq!(
            send(&state, wrong()).await.status(),
            StatusCode::UNAUTHORIZED
        );
    }
    let throttled = send(&state, wrong()).await;
    assert_eq!(throttled.status(), StatusCode::TOO_MANY_REQUESTS);
    assert_eq!(throttled.headers()["retry-after"], "60");
    let wrong_login = get("/?token=wrong-token-0123456789")
        .body(Body::empty())
        .unwrap();
    assert_eq!(
        send(&state, wrong_login).await.status(),
        StatusCode::TOO_MANY_REQUESTS
    );
    let wrong_form = login_form("token=wrong-token-0123456789&next=%2F");
    assert_eq!(
        send(&state, wrong_form).await.status(),
        StatusCode::TOO_MANY_REQUESTS
    );
    // The owner is never locked out by somebody else's guesses.
    let owner = get("/p/someproject")
        .header("authorization", format!("Bearer {TOKEN}"))
        .body(Body::empty())
        .unwrap();
    assert_eq!(send(&state, owner).await.status(), StatusCode::OK);
}

#[tokio::test]
async fn one_clients_wrong_tokens_do_not_throttle_another() {
    let (state, _data) = state_with(|_| {});
    let wrong = |ip| {
        from(
            ip,
            get("/p/someproject")
                .header("authorization", "Bearer not-the-token-at-all")
                .body(Body::empty())
                .unwrap(),
        )
    };
    for _ in 0..MAX_FAILURES_PER_MINUTE {
        send(&state, wrong([192, 0, 2, 1])).await;
    }
    assert_eq!(
        send(&state, wrong([192, 0, 2, 1])).await.status(),
        StatusCode::TOO_MANY_REQUESTS
    );
    assert_eq!(
        send(&state, wrong([192, 0, 2, 2])).await.status(),
        StatusCode::UNAUTHORIZED,
        "another client is not throttled"
    );
}

#[tokio::test]
async fn a_dns_rebinding_page_cannot_reach_write_file() {
    let (state, _data) = state_with(|_| {});
    let project = crate::server::state::project_for_tests(&state, "Untitled").await;
    let request = Request::post("/api/write_file")
        .header("host", "evil.test:3000")
        .header("origin", "http://evil.test:3000")
        .header("sec-fetch-site", "same-origin")
        .header("content-type", "application/x-www-form-urlencoded")
        // Even with the owner's credentials, which such a page never has.
        .header("authorization", format!("Bearer {TOKEN}"))
        .body(Body::from(format!(
            "project={}&path=pwned.txt&content=x",
            project.id
        )))
        .unwrap();
    let response = send(&state, request).await;
    assert_eq!(response.status(), StatusCode::MISDIRECTED_REQUEST);
    assert!(body(response).await.contains("allowed_hosts"));
    let dir = state.sandbox.workspace_dir(&project.id);
    assert!(!dir.join("pwned.txt").exists());
}

#[tokio::test]
async fn allowed_hosts_extend_the_names_the_ide_answers_to() {
    let (state, _data) = state_with(|c| c.server.allowed_hosts = vec!["ide.example".into()]);
    let request = Request::get("/healthz")
        .header("host", "ide.example")
        .body(Body::empty())
        .unwrap();
    assert_eq!(send(&state, request).await.status(), StatusCode::OK);
    let other = Request::get("/healthz")
        .header("host", "other.example")
        .body(Body::empty())
        .unwrap();
    assert_eq!(
        send(&state, other).await.status(),
        StatusCode::MISDIRECTED_REQUEST
    );
    let nameless = Request::get("/healthz").body(Body::empty()).unwrap();
    assert_eq!(
        send(&state, nameless).await.status(),
        StatusCode::MISDIRECTED_REQUEST
    );
}

#[tokio::test]
async fn previews_and_other_sites_cannot_drive_the_ide() {
    let (state, _data) = state_with(|_| {});
    for origin in [
        "http://127.0.0.1:41234",
        "http://demo-5173.preview.localhost:3000",
        "https://evil.example",
        "null",
    ] {
        let request = post("/new")
            .header("origin", origin)
            .header("authorization", format!("Bearer {TOKEN}"))
            .body(Body::empty())
            .unwrap();
        assert_eq!(
            send(&state, request).await.status(),
            StatusCode::FORBIDDEN,
            "{origin}"
        );
    }
    // A preview's `<img src=".../new">` carries the cookie (same site).
    let image = get("/new")
        .header("sec-fetch-site", "same-site")
        .header("sec-fetch-mode", "no-cors")
        .header("sec-fetch-dest", "image")
        .header("authorization", format!("Bearer {TOKEN}"))
        .body(Body::empty())
        .unwrap();
    assert_eq!(send(&state, image).await.status(), StatusCode::FORBIDDEN);
    assert_eq!(state.store.list_projects().await.unwrap().len(), 0);
}

#[tokio::test]
async fn ide_pages_cannot_be_framed_and_load_images_only_from_the_ide() {
    let (state, _data) = state_with(|_| {});
    for request in [
        get("/p/someproject").header("authorization", format!("Bearer {TOKEN}")),
        get("/p/someproject"),
    ] {
        let response = send(&state, request.body(Body::empty()).unwrap()).await;
        assert_eq!(
            response.headers()["content-security-policy"],
            crate::server::http::CONTENT_SECURITY_POLICY
        );
    }
    let policy = crate::server::http::CONTENT_SECURITY_POLICY;
    let directives: Vec<&str> = policy.split(';').map(str::trim).collect();
    for directive in [
        "frame-ancestors 'self'",
        "img-src 'self' data: blob:",
        "form-action 'self'",
        "base-uri 'none'",
        "object-src 'none'",
    ] {
        assert!(
            directives.contains(&directive),
            "{policy} lacks {directive}"
        );
    }
}

#[tokio::test]
async fn a_preview_needs_the_session_and_never_sees_it() {
    let (state, _data) = state_with(|c| c.server.addr = "127.0.0.1:3000".to_owned());
    let preview = |credentials: Option<String>| {
        let mut request = Request::get("/").header("host", "demo-5173.preview.localhost:3000");
        if let Some(cookie) = credentials {
            request = request.header("cookie", cookie);
        }
        request.body(Body::empty()).unwrap()
    };
    assert_eq!(
        send(&state, preview(None)).await.status(),
        StatusCode::UNAUTHORIZED
    );
    // With the session it goes on to the (absent) dev server.
    let cookie = format!("rivet-3000={TOKEN}");
    assert_eq!(
        send(&state, preview(Some(cookie))).await.status(),
        StatusCode::BAD_GATEWAY
    );

    let mut headers = HeaderMap::new();
    headers.insert(
        header::COOKIE,
        HeaderValue::from_str(&format!("a=1; rivet-3000={TOKEN}; b=2")).unwrap(),
    );
    headers.insert(header::AUTHORIZATION, HeaderValue::from_static("Bearer x"));
    state.access.strip_credentials(&mut headers);
    assert_eq!(headers[header::COOKIE], "a=1; b=2");
    assert!(!headers.contains_key(header::AUTHORIZATION));

    let mut response = HeaderMap::new();
    for cookie in ["rivet-3000=stolen; Path=/", "app=1; Path=/", "rivet-3001=x"] {
        response.append(header::SET_COOKIE, HeaderValue::from_static(cookie));
    }
    state.access.strip_cookie_overwrites(&mut response);
    let kept: Vec<_> = response.get_all(header::SET_COOKIE).iter().collect();
    assert_eq!(kept, ["app=1; Path=/", "rivet-3001=x"]);
}

#[test]
fn no_authentication_is_refused_beyond_loopback() {
    let data = tempfile::tempdir().unwrap();
    let mut server = Config::defaults().server;
    server.data_dir = data.path().to_owned();
    server.auth = AuthMode::None;
    for addr in [
        "0.0.0.0:3000",
        "192.168.1.5:3000",
        "[::]:3000",
        "ide.lan:3000",
    ] {
        server.addr = addr.to_owned();
        let err = Access::new(&server).err().unwrap();
        assert!(err.to_string().contains("loopback"), "{addr}: {err}");
    }
    for addr in ["127.0.0.1:3000", "[::1]:3000", "localhost:3000"] {
        server.addr = addr.to_owned();
        assert!(Access::new(&server).is_ok(), "{addr}");
    }
    assert!(!data.path().join("token").exists());
}

#[tokio::test]
async fn no_authentication_on_loopback_lets_requests_in() {
    let (state, _data) = state_with(|c| c.server.auth = AuthMode::None);
    let response = send(&state, get("/p/someproject").body(Body::empty()).unwrap()).await;
    assert_eq!(response.status(), StatusCode::OK);
}

#[test]
fn a_token_that_cannot_be_loaded_closes_the_ide() {
    let data = tempfile::tempdir().unwrap();
    let mut server = Config::defaults().server;
    // A directory where the token file should be: unreadable as a token.
    server.data_dir = data.path().to_owned();
    std::fs::create_dir(data.path().join("token")).unwrap();
    assert!(Access::new(&server).is_err());
    let closed = Access::new_or_closed(&server);
    let mut headers = HeaderMap::new();
    headers.insert(header::AUTHORIZATION, HeaderValue::from_static("Bearer "));
    assert!(closed.admit(&headers, None, "/").is_err());
    assert!(closed.admit(&HeaderMap::new(), None, "/").is_err());
}

#[test]
fn the_login_url_names_a_reachable_address() {
    let data = tempfile::tempdir().unwrap();
    let mut server = Config::defaults().server;
    server.data_dir = data.path().to_owned();
    server.token = TOKEN.to_owned();
    let access = Access::new(&server).unwrap();
    let url = access.login_url("0.0.0.0:3000".parse().unwrap());
    assert_eq!(url, format!("http://127.0.0.1:3000/?token={TOKEN}"));
    let url = access.login_url("[::1]:3000".parse().unwrap());
    assert_eq!(url, format!("http://[::1]:3000/?token={TOKEN}"));
}
