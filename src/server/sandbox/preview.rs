//! Previews: a project's dev servers, reverse-proxied from their own
//! origins (`http://{project}-{port}.preview.localhost:{ide-port}/`), HTTP
//! and WebSocket alike, so Vite's hot reload works through the proxy. The
//! per-port listeners of [`super::preview_ports`] use the same [`proxy`].
//!
//! [`preview_guard`] runs before any of the IDE's routes: a request for a
//! preview host is proxied and never reaches the IDE (`access::guard`
//! refuses requests sent from a preview's origin to the IDE). A preview
//! needs the IDE's session cookie like any page, and the proxy strips it
//! before the request goes on. The proxy reaches a server through the
//! project's own helper (a socket connected inside the sandbox), so one
//! project's host can only ever reach that project's ports.
//!
//! HTML pages get the error reporter on their way ([`reporter`]).

pub mod reporter;

use std::os::fd::OwnedFd;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderName, HeaderValue, StatusCode, Uri, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use hyper_util::rt::TokioIo;
use tokio::net::TcpStream;

use super::SandboxManager;
use super::client::Failure;
use super::wire::Op;
use crate::runtime::preview::{HostKind, PreviewHost, classify_host, host_name, host_port};
use crate::runtime::project::ProjectId;
use crate::server::access::{Access, client_address, refuse_preview, request_host};
use crate::server::state::AppState;

/// Headers that describe one connection, not the message (RFC 9110 §7.6.1).
const HOP_BY_HOP: [&str; 8] = [
    "connection",
    "keep-alive",
    "proxy-authenticate",
    "proxy-authorization",
    "te",
    "trailer",
    "transfer-encoding",
    "upgrade",
];

/// Lets a preview be framed by the IDE, whose page is cross-origin isolated
/// (COOP same-origin, COEP credentialless).
fn frameable(mut response: Response) -> Response {
    let headers = response.headers_mut();
    headers.insert(
        HeaderName::from_static("cross-origin-resource-policy"),
        HeaderValue::from_static("cross-origin"),
    );
    headers.insert(
        HeaderName::from_static("cross-origin-embedder-policy"),
        HeaderValue::from_static("credentialless"),
    );
    response
}

fn page(status: StatusCode, title: &str, detail: &str) -> Response {
    frameable(crate::server::page::message_page(status, title, detail))
}

/// Runs before every route of the IDE.
pub async fn preview_guard(
    State(state): State<AppState>,
    request: Request,
    next: Next,
) -> Response {
    let host = request_host(request.headers(), request.uri());
    match classify_host(&host) {
        HostKind::Ide => next.run(request).await,
        HostKind::BadPreview => page(
            StatusCode::NOT_FOUND,
            "No such preview",
            &format!(
                "{} is not a preview address: use {{project}}-{{port}}.preview.localhost",
                host_name(&host)
            ),
        ),
        HostKind::Preview(target) => {
            let seen = Seen {
                ide_port: host_port(&host),
                listener: state.preview_ports.origin(&target.project, target.port),
            };
            proxy(&state.sandbox, &state.access, &target, &seen, request).await
        }
    }
}

/// A socket connected to `port` inside the project's running sandbox.
async fn connect(
    manager: &SandboxManager,
    project: &ProjectId,
    port: u16,
) -> Result<TcpStream, String> {
    let Some(sandbox) = manager.running(project).await else {
        return Err(format!("project {project} is not running"));
    };
    let incoming = sandbox
        .client
        .request(Op::Connect { port }, &[], &[])
        .await
        .map_err(|e| match e {
            Failure::Helper(e) => e.message,
            Failure::Closed(why) | Failure::TimedOut(why) => why,
        })?;
    let fd: OwnedFd = incoming
        .fds
        .into_iter()
        .next()
        .ok_or_else(|| "the sandbox sent no socket".to_owned())?;
    // The descriptor comes from the sandbox: it must at least be a stream socket.
    let kind = nix::sys::socket::getsockopt(&fd, nix::sys::socket::sockopt::SockType)
        .map_err(|e| format!("the sandbox sent something else than a socket: {e}"))?;
    if kind != nix::sys::socket::SockType::Stream {
        return Err("the sandbox sent something else than a stream socket".to_owned());
    }
    let stream = std::net::TcpStream::from(fd);
    stream.set_nonblocking(true).map_err(|e| e.to_string())?;
    TcpStream::from_std(stream).map_err(|e| e.to_string())
}

fn is_upgrade(headers: &HeaderMap) -> bool {
    let connection_upgrade = headers
        .get_all(header::CONNECTION)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .any(|v| {
            v.split(',')
                .any(|t| t.trim().eq_ignore_ascii_case("upgrade"))
        });
    connection_upgrade && headers.contains_key(header::UPGRADE)
}

/// Where a preview is seen from, besides its host name.
pub(crate) struct Seen {
    /// The IDE's own port, to which the error reporter of an HTML page
    /// posts (`None` for the scheme's default port).
    pub ide_port: Option<u16>,
    /// The origin of the preview's own port of the IDE's host
    /// ([`super::preview_ports`]), if it has one.
    pub listener: Option<String>,
}

/// The only pages that may speak to a project's server as its owner: the
/// preview's own (its host under
/// [`PREVIEW_DOMAIN`](crate::runtime::preview::PREVIEW_DOMAIN) and its port
/// of the IDE's host) and the IDE's.
fn own_origins(target: &PreviewHost, scheme: &str, host: &str, seen: &Seen) -> Vec<String> {
    let mut own = vec![target.origin(scheme, seen.ide_port)];
    own.extend(seen.listener.clone());
    own.extend(reporter::ide_origin(scheme, host, seen.ide_port));
    own
}

/// Whose page a request comes from, by its `Origin`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Requester {
    /// No `Origin`: not a page's request (a program with the token).
    Program,
    /// One of the preview's own origins, or the IDE's.
    Own,
    /// Anything else, including an `Origin` that cannot be read.
    Foreign,
}

fn requester(headers: &HeaderMap, own: &[String]) -> Requester {
    let mut values = headers.get_all(header::ORIGIN).iter();
    let Some(origin) = values.next() else {
        return Requester::Program;
    };
    let known = origin
        .to_str()
        .is_ok_and(|o| own.iter().any(|own| own.eq_ignore_ascii_case(o)));
    if known && values.next().is_none() {
        Requester::Own
    } else {
        Requester::Foreign
    }
}

/// Drops hop-by-hop headers; an upgrade (`upgrade`: it asks or answers
/// one) keeps `Upgrade` and `Connection: upgrade`, which make the switch.
fn strip_hop_by_hop_but_upgrade(headers: &mut HeaderMap, upgrade: bool) {
    let protocol = headers.get(header::UPGRADE).cloned().filter(|_| upgrade);
    strip_hop_by_hop(headers);
    if let Some(protocol) = protocol {
        headers.insert(header::CONNECTION, HeaderValue::from_static("upgrade"));
        headers.insert(header::UPGRADE, protocol);
    }
}

/// What of a project server's response head reaches the browser, whatever
/// its status (a `101` too): no hop-by-hop header but those that make a
/// switch, and no cookie that would replace the IDE's.
fn filter_response(access: &Access, parts: &mut axum::http::response::Parts) {
    let switching = parts.status == StatusCode::SWITCHING_PROTOCOLS;
    strip_hop_by_hop_but_upgrade(&mut parts.headers, switching);
    access.strip_cookie_overwrites(&mut parts.headers);
}

fn strip_hop_by_hop(headers: &mut HeaderMap) {
    let named: Vec<HeaderName> = headers
        .get_all(header::CONNECTION)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(',').map(|t| t.trim().to_ascii_lowercase()))
        .filter_map(|t| HeaderName::from_bytes(t.as_bytes()).ok())
        .collect();
    for name in named {
        headers.remove(name);
    }
    for name in HOP_BY_HOP {
        headers.remove(name);
    }
}

/// Forwards `request` to the project's server, seen as `seen` says.
pub(crate) async fn proxy(
    manager: &SandboxManager,
    access: &Access,
    target: &PreviewHost,
    seen: &Seen,
    mut request: Request,
) -> Response {
    let client = client_address(&request);
    if let Some(refusal) = refuse_preview(access, request.headers(), client, request.uri().path()) {
        return frameable(refusal);
    }
    let upgrade = is_upgrade(request.headers());
    let scheme = forwarded_scheme(request.headers());
    let host = request_host(request.headers(), request.uri());
    let from = requester(request.headers(), &own_origins(target, scheme, &host, seen));
    if upgrade && from == Requester::Foreign {
        return refuse_foreign_upgrade(target);
    }
    access.strip_credentials(request.headers_mut());
    let unreachable = |detail: String| {
        page(
            StatusCode::BAD_GATEWAY,
            &format!(
                "Nothing is listening on port {} in project {}",
                target.port, target.project
            ),
            &format!("Start the project's dev server, then reload. ({detail})"),
        )
    };
    let stream = match connect(manager, &target.project, target.port).await {
        Ok(stream) => stream,
        Err(e) => return unreachable(e),
    };
    // A HEAD answer has no page to put the reporter into.
    let ide_origin = reporter::ide_origin(scheme, &host, seen.ide_port)
        .filter(|_| request.method() != axum::http::Method::HEAD);
    let client_upgrade = upgrade.then(|| hyper::upgrade::on(&mut request));

    let (mut parts, body) = request.into_parts();
    for_upstream(&mut parts, target.port, upgrade, from);
    let upstream = Request::from_parts(parts, body);

    let (mut sender, connection) =
        match hyper::client::conn::http1::handshake(TokioIo::new(stream)).await {
            Ok(pair) => pair,
            Err(e) => return unreachable(e.to_string()),
        };
    tokio::spawn(connection.with_upgrades());
    let mut response = match sender.send_request(upstream).await {
        Ok(response) => response,
        Err(e) => return unreachable(e.to_string()),
    };

    if response.status() == StatusCode::SWITCHING_PROTOCOLS {
        let Some(client_upgrade) = client_upgrade else {
            return unreachable("the server switched protocols unasked".to_owned());
        };
        let server_upgrade = hyper::upgrade::on(&mut response);
        tokio::spawn(async move {
            let (Ok(client), Ok(server)) = (client_upgrade.await, server_upgrade.await) else {
                return;
            };
            let _ =
                tokio::io::copy_bidirectional(&mut TokioIo::new(client), &mut TokioIo::new(server))
                    .await;
        });
        let (mut parts, _) = response.into_parts();
        filter_response(access, &mut parts);
        return frameable(Response::from_parts(parts, Body::empty()));
    }

    let (mut parts, body) = response.into_parts();
    filter_response(access, &mut parts);
    let body = match ide_origin {
        Some(origin) => reporter::inject(&mut parts, body, &origin).await,
        None => Body::new(body),
    };
    frameable(Response::from_parts(parts, body))
}

/// A WebSocket asked for by a page that is neither the preview's nor the
/// IDE's: the browser sent it the owner's session all the same.
fn refuse_foreign_upgrade(target: &PreviewHost) -> Response {
    tracing::warn!(
        project = %target.project,
        port = target.port,
        "refused a preview WebSocket from another origin"
    );
    let detail = "Only the preview's own pages and the IDE may open its server's WebSockets.";
    page(StatusCode::FORBIDDEN, "Another origin", detail)
}

/// Readies a request's head for the project's server on `port`.
fn for_upstream(parts: &mut axum::http::request::Parts, port: u16, upgrade: bool, from: Requester) {
    strip_hop_by_hop_but_upgrade(&mut parts.headers, upgrade);
    // The dev server sees itself addressed as localhost: Vite's host check
    // and its WebSocket origin check accept that, not the preview's name.
    // Only the preview's own pages (and the IDE's) are made to look local;
    // another page's `Origin` goes on as it is.
    let local = format!("localhost:{port}");
    if let Ok(value) = HeaderValue::from_str(&local) {
        parts.headers.insert(header::HOST, value);
    }
    if from == Requester::Own
        && let Ok(value) = HeaderValue::from_str(&format!("http://{local}"))
    {
        parts.headers.insert(header::ORIGIN, value);
    }
    parts.uri = parts
        .uri
        .path_and_query()
        .map_or_else(|| Uri::from_static("/"), |pq| Uri::from(pq.clone()));
    parts.version = axum::http::Version::HTTP_11;
    reporter::ask_for_identity(&mut parts.headers);
}

/// `https` behind a TLS proxy that says so, else `http`.
fn forwarded_scheme(headers: &HeaderMap) -> &'static str {
    let https = headers
        .get("x-forwarded-proto")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|p| p == "https");
    if https { "https" } else { "http" }
}

/// `GET /preview/{project}/{port}/{rest}` on the IDE's host: redirects to the
/// preview's own origin (for tests and the "open in a new tab" button).
pub async fn redirect(headers: HeaderMap, uri: Uri) -> Response {
    let path = uri.path();
    let mut parts = path.trim_start_matches('/').splitn(4, '/').skip(1);
    let (Some(project), Some(port)) = (parts.next(), parts.next()) else {
        return (StatusCode::NOT_FOUND, "no such preview").into_response();
    };
    let rest = parts.next().unwrap_or("");
    let (Ok(project), Ok(port)) = (ProjectId::parse(project), port.parse::<u16>()) else {
        return (StatusCode::BAD_REQUEST, "use /preview/{project}/{port}/").into_response();
    };
    let host = request_host(&headers, &uri);
    let scheme = forwarded_scheme(&headers);
    let origin = PreviewHost { project, port }.origin(scheme, host_port(&host));
    let query = uri.query().map(|q| format!("?{q}")).unwrap_or_default();
    let location = format!("{origin}/{rest}{query}");
    match HeaderValue::from_str(&location) {
        Ok(location) => (
            StatusCode::TEMPORARY_REDIRECT,
            [(header::LOCATION, location)],
        )
            .into_response(),
        Err(_) => (StatusCode::BAD_REQUEST, "invalid preview path").into_response(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&str, &str)]) -> HeaderMap {
        let mut headers = HeaderMap::new();
        for (name, value) in pairs {
            headers.append(
                HeaderName::from_bytes(name.as_bytes()).unwrap(),
                HeaderValue::from_str(value).unwrap(),
            );
        }
        headers
    }

    fn access(dir: &std::path::Path) -> Access {
        let mut server = crate::server::config::Config::defaults().server;
        server.addr = "127.0.0.1:3000".to_owned();
        server.data_dir = dir.to_owned();
        server.auth = crate::server::config::AuthMode::None;
        Access::new(&server).unwrap()
    }

    #[test]
    fn a_switching_protocols_response_cannot_overwrite_the_ide_cookie() {
        let dir = tempfile::tempdir().unwrap();
        let mut response = Response::new(Body::empty());
        *response.status_mut() = StatusCode::SWITCHING_PROTOCOLS;
        *response.headers_mut() = headers(&[
            ("connection", "Upgrade, x-private"),
            ("upgrade", "websocket"),
            ("x-private", "1"),
            ("keep-alive", "timeout=5"),
            ("sec-websocket-accept", "s3pPLMBiTxaQ9kYGzzhZRbK+xOo="),
            ("set-cookie", "rivet-3000=stolen; Path=/"),
            ("set-cookie", "app=1; Path=/"),
        ]);
        let (mut parts, _) = response.into_parts();
        filter_response(&access(dir.path()), &mut parts);
        let h = &parts.headers;
        let cookies: Vec<_> = h.get_all(header::SET_COOKIE).iter().collect();
        assert_eq!(cookies, ["app=1; Path=/"]);
        // The switch itself still goes through.
        assert_eq!(h[header::CONNECTION], "upgrade");
        assert_eq!(h[header::UPGRADE], "websocket");
        assert!(h.contains_key("sec-websocket-accept"));
        assert!(!h.contains_key("x-private") && !h.contains_key("keep-alive"));
        // Any other status loses `Upgrade` as a hop-by-hop header.
        let mut ok = Response::new(Body::empty());
        *ok.headers_mut() = headers(&[("upgrade", "h2c"), ("set-cookie", "rivet-3000=x")]);
        let (mut parts, _) = ok.into_parts();
        filter_response(&access(dir.path()), &mut parts);
        assert!(parts.headers.is_empty(), "{:?}", parts.headers);
    }

    #[test]
    fn only_the_previews_own_origins_and_the_ides_are_its_own() {
        let target = PreviewHost {
            project: ProjectId::parse("demo").unwrap(),
            port: 5173,
        };
        let seen = Seen {
            ide_port: Some(3000),
            listener: Some("http://127.0.0.1:41234".to_owned()),
        };
        let own = own_origins(&target, "http", "demo-5173.preview.localhost:3000", &seen);
        let from = |origins: &[&str]| {
            let pairs: Vec<_> = origins.iter().map(|o| ("origin", *o)).collect();
            requester(&headers(&pairs), &own)
        };
        assert_eq!(from(&[]), Requester::Program);
        for origin in [
            "http://demo-5173.preview.localhost:3000",
            "http://DEMO-5173.preview.localhost:3000",
            "http://127.0.0.1:41234",
            "http://localhost:3000",
        ] {
            assert_eq!(from(&[origin]), Requester::Own, "{origin}");
        }
        for origin in [
            "http://other-5173.preview.localhost:3000",
            "http://demo-5174.preview.localhost:3000",
            "http://demo-5173.preview.localhost:3001",
            "https://demo-5173.preview.localhost:3000",
            "http://127.0.0.1:41235",
            "http://localhost:5173",
            "null",
        ] {
            assert_eq!(from(&[origin]), Requester::Foreign, "{origin}");
        }
        let twice = ["http://127.0.0.1:41234", "http://evil.example"];
        assert_eq!(from(&twice), Requester::Foreign);
    }

    #[test]
    fn hop_by_hop_headers_are_dropped() {
        let mut h = headers(&[
            ("connection", "keep-alive, x-private"),
            ("x-private", "1"),
            ("keep-alive", "timeout=5"),
            ("content-type", "text/html"),
        ]);
        strip_hop_by_hop(&mut h);
        assert_eq!(h.len(), 1);
        assert!(h.contains_key("content-type"));
        assert!(is_upgrade(&headers(&[
            ("connection", "keep-alive, Upgrade"),
            ("upgrade", "websocket")
        ])));
        assert!(!is_upgrade(&headers(&[("connection", "keep-alive")])));
    }
}
