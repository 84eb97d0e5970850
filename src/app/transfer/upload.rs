//! Posting an import to the HTTP API from the browser (the session cookie
//! logs it in); answers the new project's id or the server's message.

use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use web_sys::{File, FormData, Headers, Request, RequestInit, Response};

fn js(error: JsValue) -> String {
    error.as_string().unwrap_or_else(|| format!("{error:?}"))
}

fn with_name(route: &str, name: &str) -> String {
    let name = name.trim();
    if name.is_empty() {
        route.to_owned()
    } else {
        let name: String = js_sys::encode_uri_component(name).into();
        format!("{route}?name={name}")
    }
}

/// A zip, or a conversation JSON (by its `.json` name).
pub async fn archive(name: &str, file: &File) -> Result<String, String> {
    let (route, content_type) = if file.name().to_lowercase().ends_with(".json") {
        ("/api/v1/import/conversation", "application/json")
    } else {
        ("/api/v1/import/zip", "application/zip")
    };
    post(&with_name(route, name), file.as_ref(), Some(content_type)).await
}

/// A folder's files as `multipart/form-data`, each named by its path.
pub async fn folder(name: &str, files: &[(String, File)]) -> Result<String, String> {
    let form = FormData::new().map_err(js)?;
    for (path, file) in files {
        form.append_with_blob_and_filename("file", file, path)
            .map_err(js)?;
    }
    post(
        &with_name("/api/v1/import/files", name),
        form.as_ref(),
        None,
    )
    .await
}

pub async fn git(name: &str, url: &str) -> Result<String, String> {
    let name = Some(name.trim()).filter(|n| !n.is_empty());
    let body = serde_json::json!({"git_url": url, "name": name}).to_string();
    post(
        "/api/v1/import/git",
        &JsValue::from_str(&body),
        Some("application/json"),
    )
    .await
}

async fn post(url: &str, body: &JsValue, content_type: Option<&str>) -> Result<String, String> {
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
    let json: serde_json::Value = serde_json::from_str(&text).unwrap_or_default();
    if response.ok() {
        json["id"]
            .as_str()
            .map(str::to_owned)
            .ok_or_else(|| "the server answered without a project id".to_owned())
    } else {
        Err(json["message"]
            .as_str()
            .map(str::to_owned)
            .unwrap_or_else(|| format!("the import failed ({})", response.status())))
    }
}
