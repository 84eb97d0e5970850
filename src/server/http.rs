//! The axum application: Leptos pages and server functions, plus the plain
//! HTTP routes (health check, `/new`, the terminal WebSocket, the preview redirect),
//! all behind the cross-origin isolation headers and the page's content
//! security policy; previews are proxied from their own origins before any of it.

use axum::Form;
use axum::body::Body;
use axum::extract::State;
use axum::extract::rejection::FormRejection;
use axum::http::{Request, Uri};
use axum::response::{IntoResponse, Redirect, Response};
use axum::{Router, http::HeaderValue, http::StatusCode, routing::get, routing::post};
use leptos::prelude::provide_context;
use leptos_axum::LeptosRoutes;
use tower_http::set_header::SetResponseHeaderLayer;

use super::access;
use super::projects::ProjectError;
use super::sandbox;
use super::state::AppState;
use super::transfer::TransferError;
use crate::app::shell;

/// Builds the whole router. Tests drive it with `tower::ServiceExt::oneshot`.
pub fn app(state: AppState) -> Router {
    let options = state.leptos_options.clone();
    let context = {
        let state = state.clone();
        move || provide_context(state.clone())
    };
    // The pages; `App` picks one from the path (see `app::page`).
    let page = leptos_axum::render_app_to_stream_with_context(context.clone(), {
        let options = options.clone();
        move || shell(options.clone())
    });
    Router::new()
        .route("/healthz", get(healthz))
        .route("/api/preview/inspector.js", get(inspector_script))
        .route("/", get(page.clone()))
        .route("/new", post(open_new_project).get(projects_page))
        .merge(sandbox::routes())
        .merge(super::api_v1::routes())
        .merge(super::webcontainer_package::routes(&state))
        .route("/p/{project}", get(page.clone()))
        .route("/import", get(page))
        // No page routes: this registers the server functions.
        .leptos_routes_with_context(&state, Vec::new(), context, move || shell(options.clone()))
        .fallback(|uri: Uri, state: State<AppState>, request: Request<Body>| {
            super::assets::static_or_not_found(shell, uri, state, request)
        })
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            access::guard,
        ))
        // Previews, which the IDE frames, are answered before this layer.
        .layer(response_header(
            "content-security-policy",
            CONTENT_SECURITY_POLICY,
        ))
        .layer(response_header("cross-origin-opener-policy", "same-origin"))
        .layer(response_header(
            "cross-origin-embedder-policy",
            "credentialless",
        ))
        // A preview host is proxied before any IDE route can answer.
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            sandbox::preview_guard,
        ))
        // Outermost: a published site's host is served before anything else.
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            super::publish::site_guard,
        ))
        .with_state(state)
}

/// The preview's inspector (the Select tool in the page), for a
/// WebContainer, whose previews get it through `setPreviewScript`: the
/// sandbox's preview proxy puts it into pages itself. Behind the owner
/// check like every route here, though it holds nothing secret.
async fn inspector_script() -> impl axum::response::IntoResponse {
    (
        [(
            axum::http::header::CONTENT_TYPE,
            "text/javascript; charset=utf-8",
        )],
        super::sandbox::preview::reporter::INSPECTOR_JS,
    )
}

/// What the IDE's pages may do, whatever an answer puts in them:
/// - no other site may frame the IDE (clickjacking);
/// - images come only from the IDE itself, `data:` and `blob:`, so a
///   markdown image in an answer cannot beacon the chat to another host
///   (the chat shows such images as links, see `app::markdown`);
/// - the page connects (fetch, WebSockets) only to the IDE and to the
///   WebContainer's own hosts (`@webcontainer/api` boots from them);
/// - forms post only to the IDE, `<base>` cannot move relative links,
///   and plugins are off.
///
/// Scripts, styles and frames (previews live on other origins) are not
/// listed: Leptos's hydration and Monaco need inline scripts and styles.
pub const CONTENT_SECURITY_POLICY: &str = "frame-ancestors 'self'; \
     img-src 'self' data: blob:; \
     connect-src 'self' https://*.stackblitz.com https://*.webcontainer.io \
     https://*.webcontainer-api.io wss://*.webcontainer-api.io; \
     form-action 'self'; base-uri 'none'; object-src 'none'";

/// The WebContainer needs `crossOriginIsolated`, which needs COOP and COEP on
/// every response, static files included. `credentialless` (rather than
/// `require-corp`) still lets the page load cross-origin resources without
/// cookies.
fn response_header(name: &'static str, value: &'static str) -> SetResponseHeaderLayer<HeaderValue> {
    SetResponseHeaderLayer::overriding(
        axum::http::header::HeaderName::from_static(name),
        HeaderValue::from_static(value),
    )
}

/// The path of the request whose page is being rendered (Leptos's
/// integration provides the request's head to the rendering), for the app to
/// pick its page (`app::page`).
pub fn request_path() -> String {
    leptos::prelude::use_context::<axum::http::request::Parts>()
        .map(|parts| parts.uri.path().to_owned())
        .unwrap_or_default()
}

async fn healthz() -> (StatusCode, &'static str) {
    (StatusCode::OK, "ok")
}

/// `GET /new` changes nothing (a link or an `<img>` may point at it): it
/// shows the projects page, whose button posts to `/new`.
async fn projects_page() -> Redirect {
    Redirect::to("/")
}

/// The projects page's "New project" form: an empty `template` (or no
/// form at all, as a program may post) is an empty project.
#[derive(Debug, Default, serde::Deserialize)]
struct NewProjectForm {
    #[serde(default)]
    template: String,
}

/// `POST /new` creates a project (from the template the form names, if
/// any) and opens it. Like every route, only when asked from the IDE itself
/// or by a program with the token (see `access::origin`).
async fn open_new_project(
    State(state): State<AppState>,
    form: Result<Form<NewProjectForm>, FormRejection>,
) -> Result<Redirect, HttpError> {
    let form = match form {
        Ok(Form(form)) => form,
        Err(FormRejection::InvalidFormContentType(_)) => NewProjectForm::default(),
        Err(rejection) => return Err(HttpError::Form(rejection)),
    };
    let project = match form.template.trim() {
        "" => super::session::manage::create(&state, super::store::UNTITLED).await?,
        template => super::templates::from_template(&state, None, template).await?,
    };
    Ok(Redirect::to(&format!("/p/{}", project.id)))
}

/// The errors plain HTTP routes can answer with.
#[derive(Debug, thiserror::Error)]
pub enum HttpError {
    #[error(transparent)]
    Project(#[from] ProjectError),
    #[error(transparent)]
    Api(#[from] super::session::api::ApiError),
    #[error(transparent)]
    Transfer(#[from] super::transfer::TransferError),
    #[error("the form is not readable: {0}")]
    Form(FormRejection),
}

impl IntoResponse for HttpError {
    fn into_response(self) -> Response {
        let status = match &self {
            HttpError::Project(ProjectError::NotFound(_)) => StatusCode::NOT_FOUND,
            HttpError::Transfer(TransferError::UnknownTemplate(_)) | HttpError::Form(_) => {
                StatusCode::BAD_REQUEST
            }
            HttpError::Project(_) | HttpError::Api(_) | HttpError::Transfer(_) => {
                StatusCode::INTERNAL_SERVER_ERROR
            }
        };
        tracing::error!("{self}");
        (status, self.to_string()).into_response()
    }
}

#[cfg(test)]
mod tests {
    use axum::body::Body;
    use axum::http::Request;
    use tower::ServiceExt;

    use super::*;

    /// A state whose data directory lives as long as the returned guard.
    fn state() -> (AppState, tempfile::TempDir) {
        crate::server::state::for_tests(|config| config.server.token = TOKEN.to_owned())
    }

    const TOKEN: &str = "http-test-token-0123456789";

    /// The request as the owner's browser sends it: to the IDE's address,
    /// with the token.
    fn owned(mut request: Request<Body>) -> Request<Body> {
        let headers = request.headers_mut();
        if !headers.contains_key("host") {
            headers.insert("host", "127.0.0.1:3000".parse().unwrap());
        }
        let bearer = format!("Bearer {TOKEN}");
        headers.insert("authorization", bearer.parse().unwrap());
        request
    }

    async fn get_with(state: &AppState, path: &str) -> axum::response::Response {
        app(state.clone())
            .oneshot(owned(Request::get(path).body(Body::empty()).unwrap()))
            .await
            .unwrap()
    }

    async fn get(path: &str) -> axum::response::Response {
        let (state, _data) = state();
        get_with(&state, path).await
    }

    fn location(response: &axum::response::Response) -> String {
        response.headers()["location"].to_str().unwrap().to_owned()
    }

    async fn send(request: Request<Body>) -> axum::response::Response {
        let (state, _data) = state();
        app(state).oneshot(owned(request)).await.unwrap()
    }

    #[tokio::test]
    async fn preview_hosts_never_reach_the_ide() {
        for path in ["/healthz", "/", "/api/projects/demo/terminals/1/ws"] {
            let request = Request::get(path)
                .header("host", "demo-5173.preview.localhost:3000")
                .body(Body::empty())
                .unwrap();
            let response = send(request).await;
            assert_eq!(response.status(), StatusCode::BAD_GATEWAY, "{path}");
            assert_eq!(
                response.headers()["cross-origin-resource-policy"],
                "cross-origin"
            );
            let body = axum::body::to_bytes(response.into_body(), usize::MAX)
                .await
                .unwrap();
            let html = String::from_utf8(body.to_vec()).unwrap();
            assert!(
                html.contains("Nothing is listening on port 5173 in project demo"),
                "{html}"
            );
        }
        let request = Request::get("/healthz")
            .header("host", "nonsense.preview.localhost:3000")
            .body(Body::empty())
            .unwrap();
        assert_eq!(send(request).await.status(), StatusCode::NOT_FOUND);
    }

    #[tokio::test]
    async fn preview_paths_redirect_to_the_preview_origin() {
        for (path, location) in [
            (
                "/preview/demo/5173",
                "http://demo-5173.preview.localhost:3000/",
            ),
            (
                "/preview/demo/5173/",
                "http://demo-5173.preview.localhost:3000/",
            ),
            (
                "/preview/demo/5173/src/App.jsx?t=1",
                "http://demo-5173.preview.localhost:3000/src/App.jsx?t=1",
            ),
        ] {
            let request = Request::get(path)
                .header("host", "127.0.0.1:3000")
                .body(Body::empty())
                .unwrap();
            let response = send(request).await;
            assert_eq!(response.status(), StatusCode::TEMPORARY_REDIRECT, "{path}");
            assert_eq!(response.headers()["location"], location, "{path}");
        }
    }

    #[tokio::test]
    async fn healthz_answers_ok() {
        let response = get("/healthz").await;
        assert_eq!(response.status(), StatusCode::OK);
    }

    #[tokio::test]
    async fn every_response_is_cross_origin_isolated() {
        for path in ["/healthz", "/", "/no-such-file.js"] {
            let response = get(path).await;
            let headers = response.headers();
            assert_eq!(
                headers["cross-origin-opener-policy"], "same-origin",
                "{path}"
            );
            assert_eq!(
                headers["cross-origin-embedder-policy"], "credentialless",
                "{path}"
            );
        }
    }

    // The page loads the list from the store while it renders; like `rivet
    // serve`, that needs a multi-threaded runtime.
    #[tokio::test(flavor = "multi_thread")]
    async fn root_shows_the_projects_and_new_makes_one() {
        let (state, _data) = state();
        crate::server::state::project_for_tests(&state, "listed on the page").await;
        let page = get_with(&state, "/").await;
        assert_eq!(page.status(), StatusCode::OK);
        let body = axum::body::to_bytes(page.into_body(), usize::MAX);
        let body = tokio::time::timeout(std::time::Duration::from_secs(60), body)
            .await
            .expect("the page never ended")
            .unwrap();
        let html = String::from_utf8(body.to_vec()).unwrap();
        for id in [
            "project-search",
            "new-project",
            "new-project-template",
            "project-list",
            "project-item",
        ] {
            assert!(
                html.contains(&format!("data-testid=\"{id}\"")),
                "missing {id}"
            );
        }
        assert!(html.contains("listed on the page"), "{html}");
        assert!(html.contains("value=\"react-ts\""), "{html}");
        let fresh = app(state.clone())
            .oneshot(owned(Request::post("/new").body(Body::empty()).unwrap()))
            .await
            .unwrap();
        assert_eq!(fresh.status(), StatusCode::SEE_OTHER);
        assert!(location(&fresh).starts_with("/p/"));
        assert_eq!(state.store.list_projects().await.unwrap().len(), 2);
    }

    async fn post_new(state: &AppState, form: &'static str) -> axum::response::Response {
        let request = Request::post("/new")
            .header("content-type", "application/x-www-form-urlencoded")
            .body(Body::from(form))
            .unwrap();
        app(state.clone()).oneshot(owned(request)).await.unwrap()
    }

    #[tokio::test]
    async fn the_new_form_makes_an_empty_project_or_one_from_its_template() {
        let (state, _data) = state();
        let empty = post_new(&state, "template=").await;
        assert_eq!(empty.status(), StatusCode::SEE_OTHER);
        let templated = post_new(&state, "template=node-api").await;
        assert_eq!(templated.status(), StatusCode::SEE_OTHER);
        let id = location(&templated).trim_start_matches("/p/").to_owned();
        let row = state.store.project(&id).await.unwrap().unwrap();
        assert_eq!(row.name, "Node API server");
        let id = crate::runtime::project::ProjectId::parse(&id).unwrap();
        assert!(state.projects.workspace(&id).join("server.js").is_file());
        let unknown = post_new(&state, "template=cobol").await;
        assert_eq!(unknown.status(), StatusCode::BAD_REQUEST);
        assert_eq!(state.store.list_projects().await.unwrap().len(), 2);
    }

    #[tokio::test]
    async fn following_a_link_to_new_creates_no_project() {
        let (state, _data) = state();
        let followed = get_with(&state, "/new").await;
        assert_eq!(followed.status(), StatusCode::SEE_OTHER);
        assert_eq!(location(&followed), "/");
        assert_eq!(state.store.list_projects().await.unwrap().len(), 0);
    }

    // Rendered on a multi-threaded runtime like `rivet serve`'s: on a
    // single-threaded one, the page's resources could stall while other
    // tests render pages at the same time.
    #[tokio::test(flavor = "multi_thread")]
    async fn the_page_renders_the_chat_and_leaves_the_lazy_parts_to_the_browser() {
        let response = get("/p/someproject").await;
        assert_eq!(response.status(), StatusCode::OK);
        let body = axum::body::to_bytes(response.into_body(), usize::MAX)
            .await
            .unwrap();
        let html = String::from_utf8(body.to_vec()).unwrap();
        for id in ["chat-input", "chat-send", "message-list", "settings-toggle"] {
            assert!(
                html.contains(&format!("data-testid=\"{id}\"")),
                "missing {id}"
            );
        }
        assert!(html.contains(r#"class="workbench""#), "no workbench slot");
        // The workbench's panes and the settings panel are `#[lazy]`: the
        // browser builds them once their chunk has loaded (app/lazy.rs), so
        // hydration finds the empty slots the server rendered.
        for id in [
            "file-tree",
            "editor",
            "terminal",
            "preview-frame",
            "settings",
        ] {
            assert!(
                !html.contains(&format!("data-testid=\"{id}\"")),
                "{id} rendered on the server"
            );
        }
    }
}
