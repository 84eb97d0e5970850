//! The HTTP proxy that is a `registry` sandbox's only way out.
//!
//! It accepts on a socket listening inside the sandbox's network namespace
//! and connects upstream from the IDE, so code in the sandbox reaches exactly
//! what the allow-list names. Two kinds of requests are served: `CONNECT
//! host:port` (a byte-for-byte tunnel, for HTTPS) and a request for an
//! absolute `http://host/…` URL (forwarded with `Connection: close`, so each
//! connection carries one request to one host). Everything else is refused
//! with a status and a text that says why.
//!
//! A listed host's address may serve other sites too (a CDN picks the site
//! by name), so the name that goes upstream is always the listed one: a
//! request goes with its URL's host as `Host` (a `Host` header that names
//! another is refused), and a tunnel must start with a TLS ClientHello whose
//! server name is the CONNECT host ([`hello`]).

use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Semaphore;
use tokio::task::JoinSet;

use super::allow::{AllowList, Authority};

mod hello;

/// Largest request head accepted.
const MAX_HEAD: usize = 16 * 1024;
/// Most headers a request may have.
const MAX_HEADERS: usize = 64;
/// How long a client has to send its request head.
const HEAD_TIMEOUT: Duration = Duration::from_secs(30);
/// How long connecting upstream may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(30);
/// Most connections one sandbox may have open through the proxy at once;
/// more wait in the listener's backlog.
const MAX_CONNECTIONS: usize = 64;

/// Headers meant for the proxy (or for one hop), not passed upstream.
const HOP_HEADERS: &[&str] = &[
    "connection",
    "keep-alive",
    "proxy-connection",
    "proxy-authorization",
    "proxy-authenticate",
    "te",
    "trailer",
    "upgrade",
];

/// What a sandbox's proxy serves and for whom.
pub struct Policy {
    pub allow: Arc<AllowList>,
    /// The project, for the log.
    pub project: String,
}

/// A request the proxy understood.
#[derive(Debug, PartialEq, Eq)]
pub struct Request {
    pub host: String,
    pub port: u16,
    pub kind: Kind,
    /// Length of the head in the bytes it was parsed from.
    pub head_len: usize,
}

#[derive(Debug, PartialEq, Eq)]
pub enum Kind {
    /// `CONNECT host:port`: a tunnel.
    Connect,
    /// A plain HTTP request; `head` is what goes upstream.
    Forward { head: Vec<u8> },
}

/// Why a request is refused before anything is connected.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum BadRequest {
    #[error("the request is not HTTP/1: {0}")]
    Syntax(String),
    #[error("the request head is larger than {MAX_HEAD} bytes")]
    TooLarge,
    #[error(
        "this is an HTTP proxy: ask for an absolute http:// URL or CONNECT host:port, not {0:?}"
    )]
    NotProxy(String),
    #[error("https:// URLs go through CONNECT host:443")]
    HttpsUrl,
    #[error("CONNECT needs host:port, not {0:?}")]
    ConnectTarget(String),
    #[error("bad host in {target:?}: {why}")]
    Host { target: String, why: String },
    #[error("the Host header {given:?} is not the URL's host {url}")]
    HostMismatch { given: String, url: String },
}

/// Accepts connections until the task is aborted (when the sandbox stops).
/// Every connection is served on a task of the set, which dies with it.
pub async fn serve(listener: TcpListener, policy: Arc<Policy>) {
    let slots = Arc::new(Semaphore::new(MAX_CONNECTIONS));
    let mut tasks = JoinSet::new();
    loop {
        let Ok(permit) = slots.clone().acquire_owned().await else {
            return;
        };
        while tasks.try_join_next().is_some() {}
        let stream = match listener.accept().await {
            Ok((stream, _)) => stream,
            Err(e) => {
                tracing::warn!(project = %policy.project, "sandbox proxy: accept failed: {e}");
                tokio::time::sleep(Duration::from_millis(100)).await;
                continue;
            }
        };
        let _ = stream.set_nodelay(true);
        let policy = policy.clone();
        tasks.spawn(async move {
            handle(stream, &policy).await;
            drop(permit);
        });
    }
}

/// Serves one client connection.
pub async fn handle<S: AsyncRead + AsyncWrite + Unpin>(mut client: S, policy: &Policy) {
    let bytes = match tokio::time::timeout(HEAD_TIMEOUT, read_head(&mut client)).await {
        Ok(Ok(Some(bytes))) => bytes,
        Ok(Ok(None)) | Err(_) => return,
        Ok(Err(e)) => return bad_request(&mut client, &e).await,
    };
    let request = match parse_request(&bytes) {
        Ok(request) => request,
        Err(e) => return bad_request(&mut client, &e.to_string()).await,
    };
    let (host, port) = (&request.host, request.port);
    let target = Authority {
        host: host.clone(),
        port: Some(port),
    };
    if !policy.allow.allows(host, port) {
        tracing::warn!(
            project = %policy.project,
            "sandbox egress refused {target}: not in sandbox.registry_hosts (sandbox.network = \"registry\")"
        );
        let text = format!(
            "Rivet's sandbox refused {target}: with sandbox.network = \"registry\", code in the \
             sandbox reaches only the hosts of sandbox.registry_hosts ({}). Add the host there, \
             or set sandbox.network = \"full\".",
            policy.allow
        );
        return refuse(&mut client, "403 Forbidden", &text).await;
    }
    let upstream = match tokio::time::timeout(CONNECT_TIMEOUT, connect(host, port)).await {
        Ok(Ok(stream)) => stream,
        Ok(Err(e)) => {
            let text = format!("Rivet's sandbox proxy could not reach {target}: {e}");
            return refuse(&mut client, "502 Bad Gateway", &text).await;
        }
        Err(_) => {
            let text = format!("Rivet's sandbox proxy could not reach {target}: timed out");
            return refuse(&mut client, "504 Gateway Timeout", &text).await;
        }
    };
    let rest = &bytes[request.head_len..];
    match request.kind {
        Kind::Connect => open_tunnel(client, upstream, rest, &target, policy).await,
        Kind::Forward { head } => forward(client, upstream, &head, rest).await,
    }
}

/// TLS alert `unrecognized_name` (fatal): the tunnel's server name is
/// refused.
const UNRECOGNIZED_NAME: [u8; 7] = [21, 3, 3, 0, 2, 2, 112];

/// Answers a CONNECT that may go to `target`, then lets the tunnel through
/// only when it starts with a ClientHello for that host. `early` is what the
/// client sent behind its request head.
async fn open_tunnel<S: AsyncRead + AsyncWrite + Unpin>(
    mut client: S,
    upstream: TcpStream,
    early: &[u8],
    target: &Authority,
    policy: &Policy,
) {
    let established = b"HTTP/1.1 200 Connection established\r\n\r\n";
    if client.write_all(established).await.is_err() {
        return;
    }
    let mut bytes = early.to_vec();
    let why = match hello::read(&mut client, &mut bytes).await {
        Ok(hello) if hello::matches(hello.server_name.as_deref(), &target.host) => {
            return tunnel(client, upstream, &bytes).await;
        }
        Ok(hello) => match hello.server_name {
            Some(name) => format!("its TLS server name is {name:?}"),
            None => "it names no TLS server".to_owned(),
        },
        Err(e) => e.to_string(),
    };
    tracing::warn!(
        project = %policy.project,
        "sandbox egress refused a tunnel to {target}: {why}"
    );
    let _ = client.write_all(&UNRECOGNIZED_NAME).await;
    let _ = client.shutdown().await;
}

async fn connect(host: &str, port: u16) -> std::io::Result<TcpStream> {
    let stream = TcpStream::connect((host, port)).await?;
    let _ = stream.set_nodelay(true);
    Ok(stream)
}

/// Reads until the end of the request head; returns every byte read (the
/// head and whatever followed it), or `None` when the client left first.
async fn read_head<S: AsyncRead + Unpin>(client: &mut S) -> Result<Option<Vec<u8>>, String> {
    let mut bytes = Vec::with_capacity(1024);
    let mut chunk = [0u8; 4096];
    loop {
        let n = client.read(&mut chunk).await.map_err(|e| e.to_string())?;
        if n == 0 {
            return Ok(None);
        }
        let from = bytes.len().saturating_sub(3);
        bytes.extend_from_slice(&chunk[..n]);
        if bytes[from..].windows(4).any(|w| w == b"\r\n\r\n") {
            return Ok(Some(bytes));
        }
        if bytes.len() > MAX_HEAD {
            return Err(BadRequest::TooLarge.to_string());
        }
    }
}

/// Parses a request head at the start of `bytes`.
pub fn parse_request(bytes: &[u8]) -> Result<Request, BadRequest> {
    let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
    let mut parsed = httparse::Request::new(&mut headers);
    let head_len = match parsed.parse(bytes) {
        Ok(httparse::Status::Complete(len)) => len,
        Ok(httparse::Status::Partial) => {
            return Err(BadRequest::Syntax("incomplete head".to_owned()));
        }
        Err(e) => return Err(BadRequest::Syntax(e.to_string())),
    };
    if head_len > MAX_HEAD {
        return Err(BadRequest::TooLarge);
    }
    let (Some(method), Some(target), Some(version)) = (parsed.method, parsed.path, parsed.version)
    else {
        return Err(BadRequest::Syntax("incomplete request line".to_owned()));
    };
    let bad_host = |why: super::allow::BadHost| BadRequest::Host {
        target: target.to_owned(),
        why: why.to_string(),
    };
    if method == "CONNECT" {
        let authority = Authority::parse(target).map_err(bad_host)?;
        let port = authority
            .port
            .ok_or_else(|| BadRequest::ConnectTarget(target.to_owned()))?;
        return Ok(Request {
            host: authority.host,
            port,
            kind: Kind::Connect,
            head_len,
        });
    }
    let (scheme, rest) = target
        .split_once("://")
        .ok_or_else(|| BadRequest::NotProxy(format!("{method} {target}")))?;
    if scheme.eq_ignore_ascii_case("https") {
        return Err(BadRequest::HttpsUrl);
    }
    if !scheme.eq_ignore_ascii_case("http") {
        return Err(BadRequest::NotProxy(format!("{method} {target}")));
    }
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority_text, path) = rest.split_at(end);
    let authority = Authority::parse(authority_text).map_err(bad_host)?;
    let path = path.split('#').next().unwrap_or_default();
    let path = match path {
        "" => "/".to_owned(),
        p if p.starts_with('?') => format!("/{p}"),
        p => p.to_owned(),
    };
    let port = authority.port.unwrap_or(80);
    check_host_headers(parsed.headers, &authority.host, port)?;
    let mut head =
        format!("{method} {path} HTTP/1.{version}\r\nHost: {authority}\r\n").into_bytes();
    for header in parsed.headers.iter() {
        let name = header.name.to_ascii_lowercase();
        if HOP_HEADERS.contains(&name.as_str()) || name == "host" {
            continue;
        }
        head.extend_from_slice(header.name.as_bytes());
        head.extend_from_slice(b": ");
        head.extend_from_slice(header.value);
        head.extend_from_slice(b"\r\n");
    }
    head.extend_from_slice(b"Connection: close\r\n\r\n");
    Ok(Request {
        host: authority.host,
        port,
        kind: Kind::Forward { head },
        head_len,
    })
}

/// Refuses `Host` headers that name another host or port than the URL's
/// (`host`, canonical, on `port`): at most one, and that one the same.
fn check_host_headers(
    headers: &[httparse::Header<'_>],
    host: &str,
    port: u16,
) -> Result<(), BadRequest> {
    let url = Authority {
        host: host.to_owned(),
        port: Some(port),
    };
    let mut given = headers
        .iter()
        .filter(|h| h.name.eq_ignore_ascii_case("host"))
        .map(|h| String::from_utf8_lossy(h.value).trim().to_owned());
    let (Some(first), second) = (given.next(), given.next()) else {
        return Ok(());
    };
    let same =
        Authority::parse(&first).is_ok_and(|a| a.host == url.host && a.port.unwrap_or(80) == port);
    match second {
        None if same => Ok(()),
        _ => Err(BadRequest::HostMismatch {
            given: first,
            url: url.to_string(),
        }),
    }
}

async fn bad_request<S: AsyncWrite + Unpin>(client: &mut S, why: &str) {
    let text = format!("Rivet's sandbox proxy refused this request: {why}");
    refuse(client, "400 Bad Request", &text).await;
}

/// Answers with `status` and a text body, then closes.
async fn refuse<S: AsyncWrite + Unpin>(client: &mut S, status: &str, text: &str) {
    let body = format!("{text}\n");
    let response = format!(
        "HTTP/1.1 {status}\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    let _ = client.write_all(response.as_bytes()).await;
    let _ = client.shutdown().await;
}

/// Carries bytes both ways until both sides are done.
async fn tunnel<S: AsyncRead + AsyncWrite + Unpin>(
    mut client: S,
    mut upstream: TcpStream,
    early: &[u8],
) {
    if !early.is_empty() && upstream.write_all(early).await.is_err() {
        return;
    }
    let _ = tokio::io::copy_bidirectional(&mut client, &mut upstream).await;
}

/// Sends one request upstream and the response back; the connection ends
/// with the response.
async fn forward<S: AsyncRead + AsyncWrite + Unpin>(
    client: S,
    upstream: TcpStream,
    head: &[u8],
    early: &[u8],
) {
    let (mut client_read, mut client_write) = tokio::io::split(client);
    let (mut upstream_read, mut upstream_write) = upstream.into_split();
    if upstream_write.write_all(head).await.is_err()
        || upstream_write.write_all(early).await.is_err()
    {
        return;
    }
    let request = async {
        let _ = tokio::io::copy(&mut client_read, &mut upstream_write).await;
        // The client may close its side after the request; the answer
        // still comes.
        std::future::pending::<()>().await;
    };
    let response = async {
        let _ = tokio::io::copy(&mut upstream_read, &mut client_write).await;
        let _ = client_write.shutdown().await;
    };
    tokio::select! {
        () = request => {}
        () = response => {}
    }
}

#[cfg(test)]
mod tests;
