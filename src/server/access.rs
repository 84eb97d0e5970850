//! Who may use the IDE. Rivet runs commands on its machine, so every route
//! but `/healthz` (which says only "ok", for supervisors) needs the access
//! token, and [`guard`] runs before any of them:
//!
//! 1. the `Host` must be one the IDE answers to ([`host`], against DNS
//!    rebinding);
//! 2. a browser request must come from the IDE's own page ([`origin`],
//!    against forged requests from other sites and from previews);
//! 3. the request must carry the token, as `Authorization: Bearer <token>`
//!    or as the session cookie that opening any page with `?token=<token>`
//!    or posting the login form sets ([`Access::admit`]);
//! 4. a request that changes something and carries only the cookie must
//!    say where it comes from (`Origin` or `Sec-Fetch-Site`): browsers send
//!    neither on plain-HTTP LAN addresses, where an `<img>` in a preview
//!    would otherwise act as the owner ([`origin::check_cookie_use`]).
//!
//! Previews need the cookie too (they are the project's code and data), and
//! the preview proxy strips it before the request reaches the project.

pub mod allowed_hosts;
mod limiter;
mod login;
pub mod origin;
pub mod redirect;
pub mod token;

use std::net::{IpAddr, SocketAddr};
use std::time::{Duration, Instant};

use axum::extract::{ConnectInfo, Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, Uri, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Redirect, Response};

pub use self::allowed_hosts::HostPolicy;
use self::limiter::Limiter;
pub use self::login::{Denial, LOGIN_PATH};
use self::redirect::local_target;
use crate::server::config::{AuthMode, ServerConfig};
use crate::server::llm::secret::Secret;
use crate::server::state::AppState;

/// Wrong tokens allowed per client address and minute before its attempts
/// are answered "too many".
const MAX_FAILURES_PER_MINUTE: u32 = 20;

/// The largest login form body read.
const MAX_LOGIN_FORM: usize = 4096;

#[derive(Debug, thiserror::Error)]
pub enum AccessError {
    #[error(transparent)]
    Token(#[from] token::TokenError),
    #[error(
        "[server] auth = \"none\" lets anyone who reaches {0} run commands on this machine; it is \
         only allowed on a loopback address (127.0.0.1, [::1] or localhost)"
    )]
    OpenBeyondLoopback(String),
}

/// What a request carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Credential {
    /// The right token as `Authorization: Bearer`: a program.
    Bearer,
    /// The right token as the session cookie: a browser, which sends it by
    /// itself, whichever page asked.
    Cookie,
    Missing,
    Wrong,
}

pub struct Access {
    mode: AuthMode,
    /// `None` only when the token could not be loaded: nothing gets in.
    token: Option<Secret>,
    /// Cookies ignore ports, so the name carries the IDE's port: two IDEs
    /// on one host keep separate sessions.
    cookie: String,
    hosts: HostPolicy,
    failures: Limiter,
}

impl Access {
    /// Reads (or makes) the token and checks that the mode suits the address.
    pub fn new(server: &ServerConfig) -> Result<Access, AccessError> {
        let token = match server.auth {
            AuthMode::Token => Some(token::load(&server.token, &server.data_dir)?),
            AuthMode::None if is_loopback(&server.addr) => None,
            AuthMode::None => return Err(AccessError::OpenBeyondLoopback(server.addr.clone())),
        };
        Ok(Access::with_token(server, token))
    }

    /// Like [`Access::new`], but a failure leaves the IDE closed to
    /// everyone (after logging why) instead of failing.
    pub fn new_or_closed(server: &ServerConfig) -> Access {
        Access::new(server).unwrap_or_else(|e| {
            tracing::error!("the IDE refuses every request: {e}");
            let mut closed = Access::with_token(server, None);
            closed.mode = AuthMode::Token;
            closed
        })
    }

    fn with_token(server: &ServerConfig, token: Option<Secret>) -> Access {
        let port = server
            .addr
            .rsplit_once(':')
            .map_or("", |(_, port)| port)
            .to_owned();
        Access {
            mode: server.auth,
            token,
            cookie: format!("rivet-{port}"),
            hosts: HostPolicy::new(&server.addr, &server.allowed_hosts),
            failures: Limiter::new(MAX_FAILURES_PER_MINUTE, Duration::from_secs(60)),
        }
    }

    pub fn hosts(&self) -> &HostPolicy {
        &self.hosts
    }

    /// The URL that logs a browser in, for the address the IDE listens on.
    pub fn login_url(&self, addr: SocketAddr) -> String {
        let host = match addr.ip() {
            ip if ip.is_unspecified() => "127.0.0.1".to_owned(),
            std::net::IpAddr::V6(ip) => format!("[{ip}]"),
            ip => ip.to_string(),
        };
        match (&self.mode, &self.token) {
            (AuthMode::Token, Some(token)) => {
                format!("http://{host}:{}/?token={}", addr.port(), token.expose())
            }
            _ => format!("http://{host}:{}/", addr.port()),
        }
    }

    fn matches(&self, candidate: &str) -> bool {
        self.token
            .as_ref()
            .is_some_and(|t| token::constant_time_eq(t.expose().as_bytes(), candidate.as_bytes()))
    }

    /// A value derived from the token for one `purpose` (a private site's
    /// key): it proves the owner gave it without being the token, so a page
    /// that learns it cannot use the IDE. `None` when no token is asked for.
    pub fn derived_key(&self, purpose: &str) -> Option<String> {
        use sha2::Digest;
        let token = self.token.as_ref()?;
        let mut hash = sha2::Sha256::new();
        hash.update(b"rivet-derived-key\0");
        hash.update(purpose.as_bytes());
        hash.update(b"\0");
        hash.update(token.expose().as_bytes());
        Some(hash.finalize().iter().map(|b| format!("{b:02x}")).collect())
    }

    /// What the request carries: a bearer token or the session cookie.
    pub fn credential(&self, headers: &HeaderMap) -> Credential {
        let mut seen = false;
        let bearer = bearer(headers).map(|t| (t, Credential::Bearer));
        let cookies = self.cookies(headers).map(|t| (t, Credential::Cookie));
        for (candidate, kind) in bearer.into_iter().chain(cookies) {
            if self.matches(candidate) {
                return kind;
            }
            seen = true;
        }
        if seen {
            Credential::Wrong
        } else {
            Credential::Missing
        }
    }

    /// The values of every cookie of ours in the request (a preview may
    /// have set more with other paths; unknown cookies are ignored).
    fn cookies<'h>(&'h self, headers: &'h HeaderMap) -> impl Iterator<Item = &'h str> + 'h {
        cookie_values(headers, &self.cookie)
    }

    /// How the request may go on (`None` when the token is off); counts
    /// and logs wrong tokens per client.
    pub fn admit(
        &self,
        headers: &HeaderMap,
        client: Option<IpAddr>,
        path: &str,
    ) -> Result<Option<Credential>, Denial> {
        if self.mode == AuthMode::None {
            return Ok(None);
        }
        match self.credential(headers) {
            credential @ (Credential::Bearer | Credential::Cookie) => Ok(Some(credential)),
            Credential::Missing => Err(Denial::Missing),
            Credential::Wrong => Err(self.failed(client, path)),
        }
    }

    /// Counts a wrong token; logs the first of each client's window, with
    /// the count of its window before.
    fn failed(&self, client: Option<IpAddr>, path: &str) -> Denial {
        let failure = self.failures.fail(client, Instant::now());
        if failure.first_in_window {
            let client =
                client.map_or_else(|| "an unknown address".to_owned(), |ip| ip.to_string());
            tracing::warn!(
                path,
                %client,
                wrong_tokens_in_the_minute_before = failure.previous_window.unwrap_or(0),
                "refused a request with a wrong access token (further ones from this client are counted, not logged, for a minute)"
            );
        }
        if failure.throttled {
            Denial::Throttled
        } else {
            Denial::Wrong
        }
    }

    /// `?token=…` in a page's URL: the session cookie and a redirect to the
    /// same URL without the token, or the login page again.
    fn log_in_from_query(
        &self,
        uri: &Uri,
        given: &str,
        client: Option<IpAddr>,
        page: bool,
    ) -> Response {
        let rest: Vec<&str> = uri
            .query()
            .unwrap_or("")
            .split('&')
            .filter(|pair| !pair.is_empty() && !pair.starts_with("token="))
            .collect();
        let next = if rest.is_empty() {
            uri.path().to_owned()
        } else {
            format!("{}?{}", uri.path(), rest.join("&"))
        };
        self.log_in(given, &next, client, page)
    }

    /// The login form's post: the token and where to go next.
    async fn log_in_from_form(&self, request: Request, client: Option<IpAddr>) -> Response {
        let body = match axum::body::to_bytes(request.into_body(), MAX_LOGIN_FORM).await {
            Ok(body) => body,
            Err(_) => {
                return (StatusCode::PAYLOAD_TOO_LARGE, "the login form is too large")
                    .into_response();
            }
        };
        let mut given = String::new();
        let mut next = String::from("/");
        for (name, value) in url::form_urlencoded::parse(&body) {
            match &*name {
                "token" => given = value.into_owned(),
                "next" => next = value.into_owned(),
                _ => {}
            }
        }
        self.log_in(&given, &next, client, true)
    }

    /// The session cookie and a redirect to `next` (kept on this host) when
    /// `given` is the token; the login page again when it is not.
    fn log_in(&self, given: &str, next: &str, client: Option<IpAddr>, page: bool) -> Response {
        let location = local_target(next);
        if self.mode == AuthMode::None {
            return Redirect::to(&location).into_response();
        }
        if !self.matches(given) {
            return login::refusal(self.failed(client, LOGIN_PATH), page, &location);
        }
        let cookie = format!(
            "{}={given}; Path=/; HttpOnly; SameSite=Strict; Max-Age=31536000",
            self.cookie
        );
        let mut response = StatusCode::SEE_OTHER.into_response();
        let headers = response.headers_mut();
        if let (Ok(location), Ok(cookie)) = (
            HeaderValue::from_str(&location),
            HeaderValue::from_str(&cookie),
        ) {
            headers.insert(header::LOCATION, location);
            headers.insert(header::SET_COOKIE, cookie);
        }
        headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
        response
    }

    /// Removes the IDE's credentials from a request that goes on to a
    /// project's server: its cookie and any `Authorization`.
    pub fn strip_credentials(&self, headers: &mut HeaderMap) {
        headers.remove(header::AUTHORIZATION);
        let kept: Vec<String> = headers
            .get_all(header::COOKIE)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(';'))
            .map(str::trim)
            .filter(|pair| {
                let name = pair.split_once('=').map_or(*pair, |(name, _)| name);
                !pair.is_empty() && name != self.cookie
            })
            .map(str::to_owned)
            .collect();
        headers.remove(header::COOKIE);
        if let Ok(value) = HeaderValue::from_str(&kept.join("; "))
            && !kept.is_empty()
        {
            headers.insert(header::COOKIE, value);
        }
    }

    /// Removes any `Set-Cookie` of a project's server that would replace the
    /// IDE's session cookie (cookies ignore ports).
    pub fn strip_cookie_overwrites(&self, headers: &mut HeaderMap) {
        let kept: Vec<HeaderValue> = headers
            .get_all(header::SET_COOKIE)
            .iter()
            .filter(|v| {
                let text = String::from_utf8_lossy(v.as_bytes());
                let name = text.split(['=', ';']).next().unwrap_or("").trim();
                name != self.cookie
            })
            .cloned()
            .collect();
        headers.remove(header::SET_COOKIE);
        for value in kept {
            headers.append(header::SET_COOKIE, value);
        }
    }
}

fn bearer(headers: &HeaderMap) -> Option<&str> {
    let value = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = value.split_once(' ')?;
    scheme
        .eq_ignore_ascii_case("bearer")
        .then_some(token.trim())
}

fn is_loopback(addr: &str) -> bool {
    match addr.parse::<SocketAddr>() {
        Ok(addr) => addr.ip().is_loopback(),
        Err(_) => allowed_hosts::host_name(addr) == "localhost",
    }
}

/// The host a request is for: its `Host` header, or the URI's authority.
pub fn request_host(headers: &HeaderMap, uri: &Uri) -> String {
    headers
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .map(str::to_owned)
        .or_else(|| uri.authority().map(|a| a.to_string()))
        .unwrap_or_default()
}

/// The token in a URL's query, if any.
fn query_token(uri: &Uri) -> Option<&str> {
    uri.query()?
        .split('&')
        .find_map(|pair| pair.strip_prefix("token="))
}

/// The address of the client that sent the request, when the server
/// recorded it (`serve` does; requests made in tests may not).
pub fn client_address(request: &Request) -> Option<IpAddr> {
    request
        .extensions()
        .get::<ConnectInfo<SocketAddr>>()
        .map(|ConnectInfo(addr)| addr.ip())
}

/// The request's path and query: where a login leads back to.
fn path_and_query(uri: &Uri) -> &str {
    uri.path_and_query().map_or("/", |pq| pq.as_str())
}

/// Runs before every IDE route (previews are dispatched before it).
pub async fn guard(State(state): State<AppState>, request: Request, next: Next) -> Response {
    let access = &state.access;
    let host = request_host(request.headers(), request.uri());
    if !access.hosts().allows(&host) {
        tracing::warn!(host = %allowed_hosts::host_name(&host), "refused a request for an unknown host name");
        let message = format!(
            "Rivet does not answer to the host name {:?}; add it to [server] allowed_hosts if it is yours",
            allowed_hosts::host_name(&host)
        );
        return (StatusCode::MISDIRECTED_REQUEST, message).into_response();
    }
    let path = request.uri().path().to_owned();
    if path == "/healthz" {
        return next.run(request).await;
    }
    if let Err(refusal) = origin::check(request.method(), &path, request.headers()) {
        tracing::warn!(path, "{refusal}");
        return (StatusCode::FORBIDDEN, refusal.to_string()).into_response();
    }
    let page = login::wants_page(request.headers());
    let client = client_address(&request);
    if path == LOGIN_PATH && request.method() == Method::POST {
        return access.log_in_from_form(request, client).await;
    }
    if access.mode == AuthMode::Token
        && let Some(given) = query_token(request.uri())
    {
        return access.log_in_from_query(request.uri(), given, client, page);
    }
    match access.admit(request.headers(), client, &path) {
        Ok(credential) => {
            if credential == Some(Credential::Cookie)
                && let Err(refusal) = origin::check_cookie_use(request.method(), request.headers())
            {
                tracing::warn!(path, "{refusal}");
                return (StatusCode::FORBIDDEN, refusal.to_string()).into_response();
            }
            next.run(request).await
        }
        Err(denial) => login::refusal(denial, page, path_and_query(request.uri())),
    }
}

/// The values of every cookie named `name` in the request (unknown
/// cookies, and ours set with other paths, are all listed).
pub fn cookie_values<'h>(
    headers: &'h HeaderMap,
    name: &'h str,
) -> impl Iterator<Item = &'h str> + 'h {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .filter(move |(given, _)| *given == name)
        .map(|(_, value)| value.trim_matches('"'))
}

/// The response to send back when a preview request may not reach the
/// project; `None` when it may.
pub fn refuse_preview(
    access: &Access,
    headers: &HeaderMap,
    client: Option<IpAddr>,
    path: &str,
) -> Option<Response> {
    access
        .admit(headers, client, path)
        .err()
        .map(|denial| login::refusal(denial, false, path))
}

#[cfg(test)]
mod tests;
