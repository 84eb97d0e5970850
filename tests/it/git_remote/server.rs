//! A real git server for the tests: `git http-backend` (git's own smart
//! HTTP CGI program) behind a small axum server that asks for one user and
//! token with HTTP Basic authentication, as a hosted git service does.

use std::path::{Path, PathBuf};
use std::process::Stdio;

use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{HeaderMap, Method, Response, StatusCode, Uri};
use base64::Engine;
use tokio::io::AsyncWriteExt;

pub struct GitServer {
    pub root: tempfile::TempDir,
    pub addr: std::net::SocketAddr,
}

#[derive(Clone)]
struct Served {
    root: PathBuf,
    authorization: String,
}

/// Runs `git` with `args` in `dir`, with no configuration of the host's,
/// and returns its trimmed output.
pub fn git(dir: &Path, args: &[&str]) -> String {
    let output = std::process::Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_AUTHOR_NAME", "Remote Person")
        .env("GIT_AUTHOR_EMAIL", "remote@example.com")
        .env("GIT_COMMITTER_NAME", "Remote Person")
        .env("GIT_COMMITTER_EMAIL", "remote@example.com")
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).trim().to_owned()
}

impl GitServer {
    /// Serves an empty bare repository `app.git` to `user` with `token`.
    pub async fn start(user: &str, token: &str) -> GitServer {
        let root = tempfile::tempdir().unwrap();
        git(
            root.path(),
            &["init", "-q", "--bare", "-b", "main", "app.git"],
        );
        git(
            &root.path().join("app.git"),
            &["config", "http.receivepack", "true"],
        );
        let credentials =
            base64::engine::general_purpose::STANDARD.encode(format!("{user}:{token}"));
        let served = Served {
            root: root.path().to_owned(),
            authorization: format!("Basic {credentials}"),
        };
        let app = axum::Router::new().fallback(cgi).with_state(served);
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move { axum::serve(listener, app).await });
        GitServer { root, addr }
    }

    pub fn url(&self) -> String {
        format!("http://{}/app.git", self.addr)
    }

    pub fn repo(&self) -> PathBuf {
        self.root.path().join("app.git")
    }
}

async fn cgi(
    State(served): State<Served>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response<Body> {
    let given = headers.get("authorization").and_then(|v| v.to_str().ok());
    if given != Some(served.authorization.as_str()) {
        return Response::builder()
            .status(StatusCode::UNAUTHORIZED)
            .header("www-authenticate", "Basic realm=\"git\"")
            .body(Body::empty())
            .unwrap();
    }
    let header = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_owned()
    };
    let mut child = tokio::process::Command::new("git")
        .arg("http-backend")
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("GIT_PROJECT_ROOT", &served.root)
        .env("GIT_HTTP_EXPORT_ALL", "1")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("REQUEST_METHOD", method.as_str())
        .env("PATH_INFO", uri.path())
        .env("QUERY_STRING", uri.query().unwrap_or(""))
        .env("CONTENT_TYPE", header("content-type"))
        .env("CONTENT_LENGTH", body.len().to_string())
        .env("HTTP_CONTENT_ENCODING", header("content-encoding"))
        .env("GIT_PROTOCOL", header("git-protocol"))
        .env("REMOTE_USER", "me")
        .env("REMOTE_ADDR", "127.0.0.1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let write = async move {
        let _ = stdin.write_all(&body).await;
    };
    let (_, output) = tokio::join!(write, child.wait_with_output());
    cgi_response(&output.unwrap().stdout)
}

/// A CGI program's output as an HTTP response: its headers (`Status:` for
/// the status), a blank line, the body.
fn cgi_response(out: &[u8]) -> Response<Body> {
    let split = out
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .map(|at| (at, 4))
        .or_else(|| out.windows(2).position(|w| w == b"\n\n").map(|at| (at, 2)));
    let Some((at, gap)) = split else {
        return Response::builder()
            .status(StatusCode::BAD_GATEWAY)
            .body(Body::from(out.to_vec()))
            .unwrap();
    };
    let mut response = Response::builder();
    for line in String::from_utf8_lossy(&out[..at]).lines() {
        let Some((name, value)) = line.split_once(':') else {
            continue;
        };
        let value = value.trim();
        if name.eq_ignore_ascii_case("status") {
            let code = value.split_whitespace().next().unwrap_or("500");
            response = response.status(code.parse::<u16>().unwrap_or(500));
        } else {
            response = response.header(name, value);
        }
    }
    response.body(Body::from(out[at + gap..].to_vec())).unwrap()
}
