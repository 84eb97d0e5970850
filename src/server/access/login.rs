//! What a request without the token gets: a page that asks for it, or a
//! JSON error for programs. The page's form posts to one fixed path,
//! [`LOGIN_PATH`], and carries where to go next as a value that is checked
//! again when it comes back ([`super::redirect::local_target`]): a form
//! action built from the request's path would send the token to whatever
//! host a path like `//evil.example/x` names.

use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

use super::redirect::local_target;

/// Where the login form posts the token (and where to go next).
pub const LOGIN_PATH: &str = "/login";

/// Why the request was not let in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Denial {
    /// No token at all.
    Missing,
    /// A token that is not the IDE's.
    Wrong,
    /// Too many wrong tokens lately.
    Throttled,
}

impl Denial {
    fn status(self) -> StatusCode {
        match self {
            Denial::Missing | Denial::Wrong => StatusCode::UNAUTHORIZED,
            Denial::Throttled => StatusCode::TOO_MANY_REQUESTS,
        }
    }

    fn code(self) -> &'static str {
        match self {
            Denial::Missing => "unauthorized",
            Denial::Wrong => "wrong_token",
            Denial::Throttled => "too_many_attempts",
        }
    }

    fn message(self) -> &'static str {
        match self {
            Denial::Missing => {
                "Rivet needs its access token: open the URL `rivet serve` printed, or send \
                 `Authorization: Bearer <token>` (the token is in the data directory's `token` file)"
            }
            Denial::Wrong => "that is not Rivet's access token",
            Denial::Throttled => "too many wrong tokens; wait a minute and try again",
        }
    }
}

/// Whether a request wants a page (a browser navigating) rather than data.
pub fn wants_page(headers: &HeaderMap) -> bool {
    let get = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    get("sec-fetch-dest") == Some("document")
        || get(header::ACCEPT.as_str()).is_some_and(|a| a.contains("text/html"))
}

/// The refusal, as a login page or as JSON. `next` is where the page's
/// form leads once the token is right (checked here and when it comes back).
pub fn refusal(denial: Denial, page: bool, next: &str) -> Response {
    let mut response = if page {
        let mut response = (denial.status(), login_page(denial, next)).into_response();
        response.headers_mut().insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("text/html; charset=utf-8"),
        );
        response
    } else {
        let body = serde_json::json!({ "error": denial.message(), "code": denial.code() });
        (denial.status(), axum::Json(body)).into_response()
    };
    let headers = response.headers_mut();
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    if denial == Denial::Throttled {
        headers.insert(header::RETRY_AFTER, HeaderValue::from_static("60"));
    }
    response
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

fn login_page(denial: Denial, next: &str) -> String {
    let note = match denial {
        Denial::Missing => "",
        Denial::Wrong => "<p class=\"error\" role=\"alert\">That is not the right token.</p>",
        Denial::Throttled => {
            "<p class=\"error\" role=\"alert\">Too many wrong tokens: wait a minute.</p>"
        }
    };
    format!(
        r#"<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">
<title>Rivet: log in</title>
<style>
body {{ font-family: system-ui, sans-serif; background: #15171c; color: #e6e6e6; display: grid; place-items: center; min-height: 100vh; margin: 0 }}
form {{ background: #1f2229; padding: 2rem; border-radius: 8px; width: min(26rem, 90vw) }}
h1 {{ margin-top: 0; font-size: 1.4rem }}
input {{ width: 100%; box-sizing: border-box; padding: .5rem; margin: .5rem 0 1rem; font: inherit }}
button {{ padding: .5rem 1rem; font: inherit }}
.error {{ color: #ff8a80 }}
code {{ background: #2b2f38; padding: 0 .2em }}
</style></head>
<body><form method="post" action="{LOGIN_PATH}" data-testid="login">
<input type="hidden" name="next" value="{next}">
<h1>Rivet</h1>
<p>This IDE can run commands on its machine, so it asks for its access token. <code>rivet serve</code> printed a URL that logs you in; the token is also in the <code>token</code> file of Rivet's data directory.</p>
{note}
<label for="token">Access token</label>
<input id="token" name="token" type="password" autocomplete="current-password" required autofocus data-testid="login-token">
<button type="submit" data-testid="login-submit">Log in</button>
</form></body></html>"#,
        next = escape(&local_target(next)),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn browsers_get_a_page_and_programs_get_json() {
        let mut browser = HeaderMap::new();
        browser.insert("sec-fetch-dest", HeaderValue::from_static("document"));
        assert!(wants_page(&browser));
        let mut html = HeaderMap::new();
        html.insert(header::ACCEPT, HeaderValue::from_static("text/html,*/*"));
        assert!(wants_page(&html));
        assert!(!wants_page(&HeaderMap::new()));
    }

    #[test]
    fn the_login_form_posts_to_one_fixed_path_whatever_the_request_path() {
        for path in [
            "/p/abc",
            "//evil.example/x",
            "/\\evil.example",
            "/%2F%2Fevil.example",
        ] {
            let page = login_page(Denial::Missing, path);
            assert!(
                page.contains(r#"<form method="post" action="/login""#),
                "{page}"
            );
            assert!(!page.contains("evil.example"), "{page}");
        }
        let page = login_page(Denial::Missing, "/p/abc?x=1");
        assert!(page.contains(r#"name="next" value="/p/abc?x=1""#), "{page}");
    }

    #[test]
    fn the_login_page_escapes_where_to_go_next() {
        let page = login_page(Denial::Wrong, "/p/\"><script>");
        assert!(!page.contains("<script>"), "{page}");
        assert!(page.contains("not the right token"));
    }
}
