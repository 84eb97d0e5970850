//! `/vendor/webcontainer/`: `@webcontainer/api`'s ES modules, served from
//! the IDE's own origin (cross-origin isolation forbids a CDN) out of
//! `[runtime] webcontainer_dir` (npm's copy in `node_modules` by default;
//! tests point it at the double in `end2end/webcontainer-double/`). Only a
//! page whose project runs on the WebContainer imports it.

use axum::Router;
use tower_http::services::ServeDir;

use super::state::AppState;

pub fn routes(state: &AppState) -> Router<AppState> {
    Router::new().nest_service(
        "/vendor/webcontainer",
        ServeDir::new(&state.config.runtime.webcontainer_dir),
    )
}

#[cfg(test)]
mod tests {
    use axum::body::Body;
    use axum::http::{Request, StatusCode};
    use tower::ServiceExt;

    use crate::server::state::AppState;

    const TOKEN: &str = "webcontainer-test-token-0123456789";

    fn state(package: &std::path::Path) -> (AppState, tempfile::TempDir) {
        crate::server::state::for_tests(|config| {
            config.server.token = TOKEN.to_owned();
            config.runtime.webcontainer_dir = package.to_owned();
        })
    }

    async fn get(state: &AppState, path: &str, token: bool) -> axum::response::Response {
        let mut request = Request::get(path).header("host", "127.0.0.1:3000");
        if token {
            request = request.header("authorization", format!("Bearer {TOKEN}"));
        }
        crate::server::http::app(state.clone())
            .oneshot(request.body(Body::empty()).unwrap())
            .await
            .unwrap()
    }

    #[tokio::test]
    async fn the_package_is_served_from_the_configured_directory() {
        let package = tempfile::tempdir().unwrap();
        std::fs::write(
            package.path().join("index.js"),
            "export const WebContainer = {};",
        )
        .unwrap();
        let (state, _data) = state(package.path());
        let response = get(&state, "/vendor/webcontainer/index.js", true).await;
        assert_eq!(response.status(), StatusCode::OK);
        assert!(
            response.headers()["content-type"]
                .to_str()
                .unwrap()
                .contains("javascript")
        );
        assert_eq!(
            response.headers()["cross-origin-embedder-policy"],
            "credentialless"
        );
        let body = axum::body::to_bytes(response.into_body(), usize::MAX)
            .await
            .unwrap();
        assert_eq!(&body[..], b"export const WebContainer = {};");
    }

    #[tokio::test]
    async fn the_package_without_the_token_is_refused() {
        let package = tempfile::tempdir().unwrap();
        std::fs::write(package.path().join("index.js"), "x").unwrap();
        let (state, _data) = state(package.path());
        let response = get(&state, "/vendor/webcontainer/index.js", false).await;
        assert_ne!(response.status(), StatusCode::OK);
    }

    #[tokio::test]
    async fn the_package_path_outside_its_directory_is_refused() {
        let root = tempfile::tempdir().unwrap();
        std::fs::create_dir(root.path().join("dist")).unwrap();
        std::fs::write(root.path().join("secret.txt"), "secret").unwrap();
        let (state, _data) = state(&root.path().join("dist"));
        let response = get(&state, "/vendor/webcontainer/../secret.txt", true).await;
        assert_ne!(response.status(), StatusCode::OK);
        let response = get(&state, "/vendor/webcontainer/%2e%2e/secret.txt", true).await;
        assert_ne!(response.status(), StatusCode::OK);
    }
}
