//! The axum application: Leptos pages and server functions, plus the plain
//! HTTP routes (health check; later the terminal WebSocket and the preview
//! proxy), all behind the cross-origin isolation headers.

use axum::{Router, http::HeaderValue, http::StatusCode, routing::get};
use leptos::prelude::provide_context;
use leptos_axum::{LeptosRoutes, generate_route_list};
use tower_http::set_header::SetResponseHeaderLayer;

use super::state::AppState;
use crate::app::{App, shell};

/// Builds the whole router. Tests drive it with `tower::ServiceExt::oneshot`.
pub fn app(state: AppState) -> Router {
    let routes = generate_route_list(App);
    let options = state.leptos_options.clone();
    Router::new()
        .route("/healthz", get(healthz))
        .leptos_routes_with_context(
            &state,
            routes,
            {
                let state = state.clone();
                move || provide_context(state.clone())
            },
            move || shell(options.clone()),
        )
        .fallback(leptos_axum::file_and_error_handler::<AppState, _>(shell))
        .layer(cross_origin_isolation())
        .layer(SetResponseHeaderLayer::overriding(
            axum::http::header::HeaderName::from_static("cross-origin-opener-policy"),
            HeaderValue::from_static("same-origin"),
        ))
        .with_state(state)
}

/// The WebContainer needs `crossOriginIsolated`, which needs COOP and COEP on
/// every response, static files included. `credentialless` (rather than
/// `require-corp`) still lets the page load cross-origin resources without
/// cookies.
fn cross_origin_isolation() -> SetResponseHeaderLayer<HeaderValue> {
    SetResponseHeaderLayer::overriding(
        axum::http::header::HeaderName::from_static("cross-origin-embedder-policy"),
        HeaderValue::from_static("credentialless"),
    )
}

async fn healthz() -> (StatusCode, &'static str) {
    (StatusCode::OK, "ok")
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use axum::body::Body;
    use axum::http::Request;
    use tower::ServiceExt;

    use super::*;
    use crate::server::config::Config;

    fn state() -> AppState {
        AppState {
            leptos_options: leptos::config::LeptosOptions::builder()
                .output_name("rivet")
                .site_root("target/site")
                .build(),
            config: Arc::new(Config::defaults()),
        }
    }

    async fn get(path: &str) -> axum::response::Response {
        app(state())
            .oneshot(Request::get(path).body(Body::empty()).unwrap())
            .await
            .unwrap()
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

    #[tokio::test]
    async fn the_page_renders_every_pane() {
        let response = get("/").await;
        assert_eq!(response.status(), StatusCode::OK);
        let body = axum::body::to_bytes(response.into_body(), usize::MAX)
            .await
            .unwrap();
        let html = String::from_utf8(body.to_vec()).unwrap();
        for id in [
            "chat-input",
            "chat-send",
            "message-list",
            "file-tree",
            "editor",
            "terminal",
            "preview",
            "preview-frame",
            "settings",
        ] {
            assert!(
                html.contains(&format!("data-testid=\"{id}\"")),
                "missing {id}"
            );
        }
    }
}
