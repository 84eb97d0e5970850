//! Posting an import to the HTTP API from the browser (the session cookie
//! logs it in); answers the new project's id or the server's message.

use wasm_bindgen::JsValue;
use web_sys::{File, FormData};

use crate::app::post::js;

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
    let answer = crate::app::post::post(url, body, content_type).await?;
    if answer.ok {
        answer.json["id"]
            .as_str()
            .map(str::to_owned)
            .ok_or_else(|| "the server answered without a project id".to_owned())
    } else {
        Err(answer.message_or(|| format!("the import failed ({})", answer.status)))
    }
}
