//! Posting a body to the HTTP API from the browser (the session cookie logs
//! it in), for the uploads a server function's encodings do not fit: an
//! import's archive, a message's image.

use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use web_sys::{Headers, Request, RequestInit, Response};

/// What the server answered: whether it succeeded, its status and its body
/// as JSON (null when it is not JSON).
pub struct Answer {
    pub ok: bool,
    pub status: u16,
    pub json: serde_json::Value,
}

impl Answer {
    /// The server's message of a failure, else `fallback`.
    pub fn message_or(&self, fallback: impl FnOnce() -> String) -> String {
        self.json["message"]
            .as_str()
            .map(str::to_owned)
            .unwrap_or_else(fallback)
    }
}

pub fn js(error: JsValue) -> String {
    error.as_string().unwrap_or_else(|| format!("{error:?}"))
}

/// Posts `body` to `url`, typed `content_type` when given.
pub async fn post(url: &str, body: &JsValue, content_type: Option<&str>) -> Result<Answer, String> {
    let init = RequestInit::new();
    init.set_method("POST");
    init.set_body(body);
    if let Some(content_type) = content_type {
        let headers = Headers::new().map_err(js)?;
        headers.set("content-type", content_type).map_err(js)?;
        init.set_headers(headers.as_ref());
    }
    let request = Request::new_with_str_and_init(url, &init).map_err(js)?;
    let window = web_sys::window().ok_or("no window")?;
    let response: Response = JsFuture::from(window.fetch_with_request(&request))
        .await
        .map_err(js)?
        .dyn_into()
        .map_err(js)?;
    let text = JsFuture::from(response.text().map_err(js)?)
        .await
        .map_err(js)?
        .as_string()
        .unwrap_or_default();
    Ok(Answer {
        ok: response.ok(),
        status: response.status(),
        json: serde_json::from_str(&text).unwrap_or_default(),
    })
}
