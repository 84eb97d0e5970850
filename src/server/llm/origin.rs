//! Settings requests only from the IDE's own page. Server functions accept
//! plain POSTs, which any other site open in the same browser could send
//! (cross-site request forgery); a forged "save settings" could point a
//! stored key at another server. Browsers say where a request comes from.

use axum::http::{HeaderMap, header};

/// Refuses a request that a browser made from another site. Requests
/// without the browser headers (scripts, tests) are allowed: they cannot
/// ride on the user's browser.
pub fn same_origin(headers: &HeaderMap) -> Result<(), String> {
    let get = |name| headers.get(name).and_then(|v| v.to_str().ok());
    if let Some(site) = get(header::HeaderName::from_static("sec-fetch-site")) {
        return match site {
            "same-origin" | "none" => Ok(()),
            other => Err(format!("refused a {other} request")),
        };
    }
    match (get(header::ORIGIN), get(header::HOST)) {
        (Some(origin), Some(host)) => {
            let origin_host = origin.split_once("://").map_or(origin, |(_, h)| h);
            if origin_host.eq_ignore_ascii_case(host) {
                Ok(())
            } else {
                Err(format!("refused a request from {origin}"))
            }
        }
        (Some(origin), None) => Err(format!("refused a request from {origin}")),
        (None, _) => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(pairs: &[(&str, &str)], allowed: bool) {
        let mut headers = HeaderMap::new();
        for (k, v) in pairs {
            headers.insert(
                header::HeaderName::from_bytes(k.as_bytes()).unwrap(),
                v.parse().unwrap(),
            );
        }
        assert_eq!(same_origin(&headers).is_ok(), allowed, "{pairs:?}");
    }

    #[test]
    fn only_the_ide_page_may_change_settings() {
        check(&[], true);
        check(&[("sec-fetch-site", "same-origin")], true);
        check(&[("sec-fetch-site", "cross-site")], false);
        check(&[("sec-fetch-site", "same-site")], false);
        check(
            &[
                ("origin", "http://127.0.0.1:3000"),
                ("host", "127.0.0.1:3000"),
            ],
            true,
        );
        check(
            &[
                ("origin", "https://evil.example"),
                ("host", "127.0.0.1:3000"),
            ],
            false,
        );
        check(&[("origin", "null")], false);
    }
}
