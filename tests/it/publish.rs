//! Publishing a project through `/api/v1` against a real `rivet serve`: the
//! site is served at its own address to a client with no cookie or token,
//! as a static site (content types, gzip, caching, an SPA's fallback, no
//! hidden files), versions roll back and unpublish, a private site lets in
//! only the owner's link, and a project's build script runs in its sandbox.
#![cfg(feature = "ssr")]

use reqwest::StatusCode;
use serde_json::{Value, json};

use super::api_v1::{Server, server};

async fn publish(server: &Server, project: &str, body: Value) -> (StatusCode, Value) {
    let url = server.url(&format!("/projects/{project}/publish"));
    server.json(server.http.post(&url).json(&body)).await
}

async fn site(server: &Server, project: &str) -> Value {
    let url = server.url(&format!("/projects/{project}/publish"));
    let (status, body) = server.json(server.http.get(&url)).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    body
}

/// A stranger's browser: no token, no cookie, the site's name resolved to
/// the server.
struct Visitor {
    http: reqwest::Client,
    base: String,
}

impl Visitor {
    fn new(server: &Server, project: &str) -> Visitor {
        let host = format!("{project}.site.localhost");
        let http = reqwest::Client::builder()
            .resolve(&host, server.addr)
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .unwrap();
        Visitor {
            http,
            base: format!("http://{host}:{}", server.addr.port()),
        }
    }

    async fn get(&self, path: &str) -> reqwest::Response {
        self.http
            .get(format!("{}{path}", self.base))
            .send()
            .await
            .unwrap()
    }
}

fn header(response: &reqwest::Response, name: &str) -> String {
    response
        .headers()
        .get(name)
        .map(|v| v.to_str().unwrap().to_owned())
        .unwrap_or_default()
}

const PAGE: &str = "<!doctype html><title>Todos</title><script src=\"/app.js\"></script>";

#[tokio::test(flavor = "multi_thread")]
async fn a_published_site_is_served_to_a_stranger_at_its_own_address() {
    let (_mock, server) = server().await;
    let project = server.create("site").await;
    let page = format!("{PAGE}\n{}", "<!-- padding -->\n".repeat(64));
    server.put_file(&project, "index.html", &page).await;
    server
        .put_file(&project, "app.js", "document.title = 'v1';\n")
        .await;
    server
        .put_file(&project, "assets/index-C4x9Qa1b.js", "export {};\n")
        .await;
    server.put_file(&project, ".env", "SECRET=hunter2\n").await;

    let (status, published) = publish(&server, &project, json!({})).await;
    assert_eq!(status, StatusCode::CREATED, "{published}");
    assert_eq!(published["version"], 1);
    let url = format!("http://{project}.site.localhost:{}/", server.addr.port());
    assert_eq!(published["url"], url.as_str());

    let visitor = Visitor::new(&server, &project);
    let home = visitor.get("/").await;
    assert_eq!(home.status(), StatusCode::OK);
    assert!(header(&home, "content-type").starts_with("text/html"));
    assert_eq!(header(&home, "cache-control"), "no-cache");
    assert_eq!(header(&home, "x-content-type-options"), "nosniff");
    assert!(home.headers().get("set-cookie").is_none());
    assert!(home.headers().get("content-security-policy").is_none());
    assert_eq!(home.text().await.unwrap(), page);
    let script = visitor.get("/app.js").await;
    assert!(
        header(&script, "content-type").contains("javascript"),
        "{script:?}"
    );
    let hashed = visitor.get("/assets/index-C4x9Qa1b.js").await;
    assert_eq!(
        header(&hashed, "cache-control"),
        "public, max-age=31536000, immutable"
    );
    // Compressed when the browser takes it.
    let zipped = visitor
        .http
        .get(format!("{}/", visitor.base))
        .header("accept-encoding", "gzip")
        .send()
        .await
        .unwrap();
    assert_eq!(header(&zipped, "content-encoding"), "gzip");
    assert!(zipped.bytes().await.unwrap().len() < page.len());
    // An app's own route gets its index.html; missing files and hidden
    // ones do not exist; nothing but GET and HEAD; no IDE API here.
    let route = visitor.get("/todos/3").await;
    assert_eq!(route.status(), StatusCode::OK);
    assert_eq!(route.text().await.unwrap(), page);
    assert_eq!(
        visitor.get("/missing.png").await.status(),
        StatusCode::NOT_FOUND
    );
    assert_eq!(visitor.get("/.env").await.status(), StatusCode::NOT_FOUND);
    let api = visitor.get("/api/v1/projects").await.text().await.unwrap();
    assert_eq!(api, page);
    let posted = visitor
        .http
        .post(format!("{}/", visitor.base))
        .send()
        .await
        .unwrap();
    assert_eq!(posted.status(), StatusCode::METHOD_NOT_ALLOWED);
    // Another project's address serves nothing of this one's.
    let other = server.create("other").await;
    let stranger = Visitor::new(&server, &other);
    assert_eq!(stranger.get("/").await.status(), StatusCode::NOT_FOUND);

    // The command line publishes the same way: version 2.
    let said = server.cli(&["publish", "--project", &project]).await;
    assert_eq!(said, format!("published version 2 at {url}"));
}

#[tokio::test(flavor = "multi_thread")]
async fn versions_roll_back_and_unpublish_and_a_private_site_needs_the_owners_link() {
    let (_mock, server) = server().await;
    let project = server.create("versions").await;
    let visitor = Visitor::new(&server, &project);
    server
        .put_file(&project, "index.html", "<h1>one</h1>")
        .await;
    let (status, first) = publish(&server, &project, json!({})).await;
    assert_eq!(status, StatusCode::CREATED, "{first}");
    server
        .put_file(&project, "index.html", "<h1>two</h1>")
        .await;
    let (_, second) = publish(&server, &project, json!({})).await;
    assert_eq!(second["version"], 2);
    assert_eq!(visitor.get("/").await.text().await.unwrap(), "<h1>two</h1>");

    let rollback = server.url(&format!("/projects/{project}/publish/rollback"));
    let (status, view) = server
        .json(server.http.post(&rollback).json(&json!({"version": 1})))
        .await;
    assert_eq!(status, StatusCode::OK, "{view}");
    assert_eq!(view["live"], 1);
    assert_eq!(visitor.get("/").await.text().await.unwrap(), "<h1>one</h1>");
    // A browser that cached version 2 revalidates and gets version 1 (its
    // files are older, so their times could not tell); version 1's own tag
    // is answered "not modified".
    let revalidate = |tag: &'static str| {
        visitor
            .http
            .get(format!("{}/", visitor.base))
            .header("if-none-match", tag)
            .header("if-modified-since", "Fri, 01 Jan 2100 00:00:00 GMT")
            .send()
    };
    let changed = revalidate("W/\"v2\"").await.unwrap();
    assert_eq!(changed.status(), StatusCode::OK);
    assert_eq!(header(&changed, "etag"), "W/\"v1\"");
    assert!(changed.headers().get("last-modified").is_none());
    assert_eq!(changed.text().await.unwrap(), "<h1>one</h1>");
    let same = revalidate("W/\"v1\"").await.unwrap();
    assert_eq!(same.status(), StatusCode::NOT_MODIFIED);
    let listed = site(&server, &project).await;
    let versions: Vec<u64> = listed["versions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["version"].as_u64().unwrap())
        .collect();
    assert_eq!(versions, [1, 2]);
    let (status, error) = server
        .json(server.http.post(&rollback).json(&json!({"version": 9})))
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{error}");
    assert_eq!(error["code"], "version_not_found");

    let url = server.url(&format!("/projects/{project}/publish"));
    let (status, view) = server.json(server.http.delete(&url)).await;
    assert_eq!(status, StatusCode::OK, "{view}");
    assert_eq!(view["live"], Value::Null);
    assert_eq!(visitor.get("/").await.status(), StatusCode::NOT_FOUND);
    let (status, error) = server.json(server.http.delete(&url)).await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{error}");
    assert_eq!(error["code"], "not_published");

    // Private: a stranger is refused; the owner's link sets the site's own
    // key (not the IDE's token) and goes on to the site.
    let (status, third) = publish(&server, &project, json!({"visibility": "private"})).await;
    assert_eq!(status, StatusCode::CREATED, "{third}");
    let refused = visitor.get("/").await;
    assert_eq!(refused.status(), StatusCode::UNAUTHORIZED);
    assert!(!refused.text().await.unwrap().contains("two"));
    let link = site(&server, &project).await["owner_link"]
        .as_str()
        .unwrap()
        .to_owned();
    let wrong = visitor.get("/__rivet/enter?key=0123").await;
    assert_eq!(wrong.status(), StatusCode::UNAUTHORIZED);
    let entered = visitor.http.get(&link).send().await.unwrap();
    assert_eq!(entered.status(), StatusCode::SEE_OTHER);
    assert_eq!(header(&entered, "location"), "/");
    let cookie = header(&entered, "set-cookie");
    assert!(cookie.contains("HttpOnly"), "{cookie}");
    assert!(!cookie.contains(super::support::TOKEN), "{cookie}");
    let pair = cookie.split(';').next().unwrap().to_owned();
    let inside = visitor
        .http
        .get(format!("{}/", visitor.base))
        .header("cookie", pair)
        .send()
        .await
        .unwrap();
    assert_eq!(inside.status(), StatusCode::OK);
    assert_eq!(inside.text().await.unwrap(), "<h1>two</h1>");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_build_script_runs_in_the_sandbox_and_its_failure_is_clear() {
    let (_mock, server) = server().await;
    let project = server.create("built").await;
    let (status, error) = publish(&server, &project, json!({})).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{error}");
    assert_eq!(error["code"], "nothing_to_publish");

    let package = json!({"name": "built", "scripts": {"build": "node build.js"}});
    server
        .put_file(&project, "package.json", &package.to_string())
        .await;
    server.put_file(&project, "node_modules/.keep", "").await;
    let build = "const fs = require('fs');\n\
                 fs.mkdirSync('dist/assets', {recursive: true});\n\
                 fs.writeFileSync('dist/index.html', '<h1>built ' + process.version.length + '</h1>');\n\
                 fs.writeFileSync('dist/assets/app-1a2b3c4d.js', 'export {};');\n";
    server.put_file(&project, "build.js", build).await;
    server
        .put_file(&project, "index.html", "<h1>source</h1>")
        .await;
    let (status, published) = publish(&server, &project, json!({})).await;
    assert_eq!(status, StatusCode::CREATED, "{published}");
    let visitor = Visitor::new(&server, &project);
    let home = visitor.get("/").await.text().await.unwrap();
    assert!(home.starts_with("<h1>built "), "{home}");
    let asset = visitor.get("/assets/app-1a2b3c4d.js").await;
    assert_eq!(asset.status(), StatusCode::OK);
    assert_eq!(
        visitor.get("/build.js").await.status(),
        StatusCode::NOT_FOUND
    );
    let listed = site(&server, &project).await;
    assert_eq!(listed["versions"][0]["built_with"], "npm run build");

    let failing = "console.error('boom: cannot find module vite'); process.exit(3);\n";
    server.put_file(&project, "build.js", failing).await;
    let (status, error) = publish(&server, &project, json!({})).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{error}");
    assert_eq!(error["code"], "build_failed");
    let message = error["message"].as_str().unwrap();
    assert!(
        message.contains("boom: cannot find module vite"),
        "{message}"
    );
    // The live version is still the one that built.
    assert!(
        visitor
            .get("/")
            .await
            .text()
            .await
            .unwrap()
            .starts_with("<h1>built ")
    );
    assert_eq!(site(&server, &project).await["live"], 1);
}
