//! A small HTML page that says one thing: what a preview or a published
//! site answers when it cannot show what was asked for.

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

/// A page with `title` and `detail` (both escaped).
pub fn message_page(status: StatusCode, title: &str, detail: &str) -> Response {
    let escape = |s: &str| {
        s.replace('&', "&amp;")
            .replace('<', "&lt;")
            .replace('>', "&gt;")
    };
    let html = format!(
        "<!doctype html><html><head><meta charset=\"utf-8\"><title>{title}</title></head>\
         <body style=\"font-family: system-ui, sans-serif; margin: 2rem\"><h1>{title}</h1><p>{detail}</p></body></html>",
        title = escape(title),
        detail = escape(detail),
    );
    let mut response = (status, html).into_response();
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/html; charset=utf-8"),
    );
    response
}
