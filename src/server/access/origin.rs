//! One origin check for every request, against cross-site request forgery
//! and against previews: a preview is served from another port of the IDE's
//! host, so it is same-site with the IDE and the browser sends it the IDE's
//! `SameSite=Strict` cookie. Browsers say where a request comes from
//! (`Origin`, `Sec-Fetch-Site`); only the IDE's own page may change
//! anything. Requests without those headers come from programs, not pages,
//! and must carry the token themselves.

use axum::http::{HeaderMap, Method, header};

/// Why a request was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OriginRefusal {
    #[error("refused a request from {0}: only the IDE's own page may use its API")]
    OtherOrigin(String),
    #[error("refused a {0} request: only the IDE's own page may use its API")]
    OtherSite(String),
    #[error("refused a request whose {0} header cannot be read")]
    Unreadable(&'static str),
    #[error(
        "refused a {0} request that carries only the session cookie and says nothing of where it \
         comes from (no Origin, no Sec-Fetch-Site); programs send `Authorization: Bearer <token>`"
    )]
    Unattributed(String),
}

/// A request with only the session cookie (no bearer token), once the
/// token is known right: one that would change something must say where it
/// comes from. Browsers send `Origin` with every request that is not a
/// `GET` or `HEAD` and with every WebSocket handshake, and `Sec-Fetch-Site`
/// with every request to a secure or loopback origin; a request with
/// neither and the cookie is a page on a plain-HTTP address (say a LAN
/// address) whose `<img>` or form the browser sends on its own.
pub fn check_cookie_use(method: &Method, headers: &HeaderMap) -> Result<(), OriginRefusal> {
    let safe = matches!(*method, Method::GET | Method::HEAD | Method::OPTIONS);
    let changes = !safe || headers.contains_key(header::UPGRADE);
    let attributed = headers.contains_key(header::ORIGIN) || headers.contains_key("sec-fetch-site");
    if changes && !attributed {
        return Err(OriginRefusal::Unattributed(method.to_string()));
    }
    Ok(())
}

/// Checks a request addressed to the IDE (`Host` already allowed).
pub fn check(method: &Method, path: &str, headers: &HeaderMap) -> Result<(), OriginRefusal> {
    let host = readable(headers, header::HOST.as_str())?.unwrap_or_default();
    if let Some(origin) = readable(headers, header::ORIGIN.as_str())? {
        let authority = origin
            .split_once("://")
            .map(|(_, rest)| rest.trim_end_matches('/'));
        if !authority.is_some_and(|a| a.eq_ignore_ascii_case(host)) {
            return Err(OriginRefusal::OtherOrigin(origin.to_owned()));
        }
    }
    let Some(site) = readable(headers, "sec-fetch-site")? else {
        return Ok(());
    };
    match site {
        "same-origin" | "none" => Ok(()),
        other if is_plain_navigation(method, path, headers)? => {
            tracing::debug!(site = other, path, "a link from another page opens the IDE");
            Ok(())
        }
        other => Err(OriginRefusal::OtherSite(other.to_owned())),
    }
}

/// A link followed from another page: a top-level `GET` of a page that
/// changes nothing.
fn is_plain_navigation(
    method: &Method,
    path: &str,
    headers: &HeaderMap,
) -> Result<bool, OriginRefusal> {
    let mode = readable(headers, "sec-fetch-mode")?;
    let dest = readable(headers, "sec-fetch-dest")?;
    Ok(method == Method::GET
        && mode == Some("navigate")
        && dest == Some("document")
        && !path.starts_with("/api/"))
}

/// A header's value; absent is `None`, present but not text fails closed.
fn readable<'h>(
    headers: &'h HeaderMap,
    name: &'static str,
) -> Result<Option<&'h str>, OriginRefusal> {
    let mut values = headers.get_all(name).iter();
    let Some(value) = values.next() else {
        return Ok(None);
    };
    if values.next().is_some() {
        return Err(OriginRefusal::Unreadable(name));
    }
    value
        .to_str()
        .map(Some)
        .map_err(|_| OriginRefusal::Unreadable(name))
}

#[cfg(test)]
mod tests {
    use axum::http::{HeaderName, HeaderValue};

    use super::*;

    fn headers(pairs: &[(&str, &[u8])]) -> HeaderMap {
        let mut headers = HeaderMap::new();
        for (name, value) in pairs {
            headers.append(
                HeaderName::from_bytes(name.as_bytes()).unwrap(),
                HeaderValue::from_bytes(value).unwrap(),
            );
        }
        headers
    }

    fn post(pairs: &[(&str, &[u8])]) -> Result<(), OriginRefusal> {
        check(&Method::POST, "/api/write_file", &headers(pairs))
    }

    #[test]
    fn the_ides_own_page_and_programs_pass() {
        assert_eq!(post(&[("host", b"127.0.0.1:3000")]), Ok(()));
        assert_eq!(
            post(&[
                ("host", b"127.0.0.1:3000"),
                ("origin", b"http://127.0.0.1:3000"),
                ("sec-fetch-site", b"same-origin"),
            ]),
            Ok(())
        );
        assert_eq!(
            post(&[
                ("host", b"localhost:3000"),
                ("origin", b"http://LOCALHOST:3000")
            ]),
            Ok(())
        );
    }

    #[test]
    fn a_preview_port_cannot_drive_the_ide() {
        let refused = post(&[
            ("host", b"127.0.0.1:3000"),
            ("origin", b"http://127.0.0.1:41234"),
            ("sec-fetch-site", b"same-site"),
        ]);
        assert!(
            matches!(refused, Err(OriginRefusal::OtherOrigin(_))),
            "{refused:?}"
        );
        let no_origin = post(&[
            ("host", b"127.0.0.1:3000"),
            ("sec-fetch-site", b"same-site"),
        ]);
        assert!(
            matches!(no_origin, Err(OriginRefusal::OtherSite(_))),
            "{no_origin:?}"
        );
    }

    #[test]
    fn another_site_cannot_forge_requests() {
        for pairs in [
            vec![
                ("host", &b"127.0.0.1:3000"[..]),
                ("origin", b"https://evil.example"),
            ],
            vec![("host", b"127.0.0.1:3000"), ("origin", b"null")],
            vec![
                ("host", b"127.0.0.1:3000"),
                ("sec-fetch-site", b"cross-site"),
            ],
            vec![("origin", b"http://127.0.0.1:3000")],
        ] {
            assert!(post(&pairs).is_err(), "{pairs:?}");
        }
    }

    #[test]
    fn unreadable_headers_fail_closed() {
        for pairs in [
            vec![("host", &b"127.0.0.1:3000"[..]), ("origin", b"http://\xff")],
            vec![("host", b"127.0.0.1:3000"), ("sec-fetch-site", b"\xfe")],
            vec![
                ("host", b"127.0.0.1:3000"),
                ("origin", b"http://127.0.0.1:3000"),
                ("origin", b"http://evil.example"),
            ],
        ] {
            assert!(
                matches!(post(&pairs), Err(OriginRefusal::Unreadable(_))),
                "{pairs:?}"
            );
        }
    }

    #[test]
    fn a_cookie_only_request_without_origin_or_fetch_metadata_changes_nothing() {
        let bare = headers(&[("host", b"192.168.1.20:3000")]);
        for method in [Method::POST, Method::PUT, Method::DELETE, Method::PATCH] {
            assert!(
                matches!(
                    check_cookie_use(&method, &bare),
                    Err(OriginRefusal::Unattributed(_))
                ),
                "{method}"
            );
        }
        let upgrade = headers(&[("host", b"192.168.1.20:3000"), ("upgrade", b"websocket")]);
        assert!(check_cookie_use(&Method::GET, &upgrade).is_err());
        assert_eq!(check_cookie_use(&Method::GET, &bare), Ok(()));
        assert_eq!(check_cookie_use(&Method::HEAD, &bare), Ok(()));
        for attributed in [
            headers(&[("origin", b"http://192.168.1.20:3000")]),
            headers(&[("sec-fetch-site", b"same-origin")]),
        ] {
            assert_eq!(check_cookie_use(&Method::POST, &attributed), Ok(()));
        }
    }

    #[test]
    fn a_link_from_another_site_opens_a_page_but_changes_nothing() {
        let link = |path: &str| {
            check(
                &Method::GET,
                path,
                &headers(&[
                    ("host", b"127.0.0.1:3000"),
                    ("sec-fetch-site", b"cross-site"),
                    ("sec-fetch-mode", b"navigate"),
                    ("sec-fetch-dest", b"document"),
                ]),
            )
        };
        assert_eq!(link("/p/abc"), Ok(()));
        assert!(link("/api/session_feed").is_err());
        let image = check(
            &Method::GET,
            "/p/abc",
            &headers(&[
                ("host", b"127.0.0.1:3000"),
                ("sec-fetch-site", b"cross-site"),
                ("sec-fetch-mode", b"no-cors"),
                ("sec-fetch-dest", b"image"),
            ]),
        );
        assert!(image.is_err());
    }
}
