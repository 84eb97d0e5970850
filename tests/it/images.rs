//! Images in messages against a real `rivet serve`: kept under the
//! project's data, sent to a model that takes them byte for byte, left out
//! (and said) for one that does not, refused when they are not images,
//! and kept across a restart and through a conversation's export.
#![cfg(feature = "ssr")]

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use reqwest::StatusCode;
use serde_json::{Value, json};

use super::api_v1::{Server, answered};
use super::llm::Mock;

/// A 1×1 PNG.
const PNG: &[u8] = &[
    0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0x00, 0x00, 0x00, 0x0D, 0x49, 0x48, 0x44, 0x52,
    0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x06, 0x00, 0x00, 0x00, 0x1F, 0x15, 0xC4,
    0x89, 0x00, 0x00, 0x00, 0x0D, 0x49, 0x44, 0x41, 0x54, 0x78, 0x9C, 0x63, 0xF8, 0xCF, 0xC0, 0xF0,
    0x1F, 0x00, 0x05, 0x00, 0x01, 0xFF, 0x89, 0x99, 0x3D, 0x1D, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45,
    0x4E, 0x44, 0xAE, 0x42, 0x60, 0x82,
];

const ASK: &str = "show me a snippet sample";

fn data_url() -> String {
    format!("data:image/png;base64,{}", STANDARD.encode(PNG))
}

async fn with_vision(vision: bool) -> (Mock, Server) {
    let mock = Mock::start(&[]);
    let vision = if vision { "true" } else { "false" };
    let server = Server::start_with(
        &mock,
        tempfile::tempdir().unwrap(),
        &[("RIVET_LLM_VISION", vision)],
    )
    .await;
    (mock, server)
}

/// The bytes at `url` (a path on the server).
async fn fetched(server: &Server, url: &str) -> reqwest::Response {
    let response = server
        .http
        .get(format!("http://{}{url}", server.addr))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK, "{url}");
    response
}

/// The project's conversation JSON.
async fn exported(server: &Server, project: &str) -> Value {
    let url = server.url(&format!("/projects/{project}/conversation.json"));
    server
        .http
        .get(url)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap()
}

fn with_png(text: &str) -> Value {
    json!({"text": text, "images": [{"media_type": "image/png", "data": STANDARD.encode(PNG)}]})
}

#[tokio::test(flavor = "multi_thread")]
async fn an_image_reaches_a_model_that_takes_images_byte_for_byte_and_is_listed_by_url() {
    let (mock, server) = with_vision(true).await;
    let project = server.create("images").await;
    let list = answered(&server, &project, with_png(ASK)).await;
    let log = mock.log().await;
    assert_eq!(log.last().unwrap()["images"], json!([data_url()]));
    assert_eq!(log.last().unwrap()["last_user"], ASK);
    let image = &list[0]["images"][0];
    assert_eq!(image["media_type"], "image/png", "{list}");
    let url = image["url"].as_str().unwrap();
    let response = fetched(&server, url).await;
    assert_eq!(response.headers()["content-type"], "image/png");
    assert_eq!(response.headers()["x-content-type-options"], "nosniff");
    assert_eq!(response.bytes().await.unwrap().as_ref(), PNG);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_model_that_takes_no_images_is_sent_the_text_and_the_chat_says_so() {
    let (mock, server) = with_vision(false).await;
    let project = server.create("no images").await;
    answered(&server, &project, with_png(ASK)).await;
    let log = mock.log().await;
    let sent = log.last().unwrap();
    assert!(
        sent["images"].as_array().is_none_or(Vec::is_empty),
        "{sent}"
    );
    assert_eq!(sent["last_user"], ASK);
    let notice = exported(&server, &project).await["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|e| e["notice"].as_str().map(str::to_owned))
        .find(|n| n.contains("does not take images"));
    assert!(
        notice
            .as_ref()
            .is_some_and(|n| n.contains("without its image")),
        "{notice:?}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn an_image_of_another_type_or_too_many_images_are_refused_with_a_code() {
    let (_mock, server) = with_vision(true).await;
    let project = server.create("refused").await;
    let messages = server.url(&format!("/projects/{project}/messages"));
    let svg = json!({"text": "hi", "images": [{"media_type": "image/svg+xml", "data": STANDARD.encode("<svg/>")}]});
    let disguised = json!({"text": "hi", "images": [{"media_type": "image/jpeg", "data": STANDARD.encode(PNG)}]});
    let image = json!({"media_type": "image/png", "data": STANDARD.encode(PNG)});
    let five = json!({"text": "hi", "images": [image, image, image, image, image]});
    for body in [svg, disguised, five] {
        let (status, error) = server.json(server.http.post(&messages).json(&body)).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{error}");
        assert_eq!(error["code"], "invalid_image", "{error}");
    }
    let (_, list) = server.json(server.http.get(&messages)).await;
    assert_eq!(list, json!([]), "a refused message leaves nothing");
    let upload = server
        .http
        .post(server.url(&format!("/projects/{project}/images")))
        .header("content-type", "text/html")
        .body("<script>alert(1)</script>");
    let (status, error) = server.json(upload).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{error}");
    let missing = server.url(&format!("/projects/{project}/images/{}", "0".repeat(64)));
    let (status, error) = server.json(server.http.get(missing)).await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{error}");
    assert_eq!(error["code"], "image_not_found");
}

#[tokio::test(flavor = "multi_thread")]
async fn an_image_is_kept_across_a_restart_and_through_export_and_import() {
    let (mock, server) = with_vision(true).await;
    let project = server.create("kept").await;
    answered(&server, &project, with_png(ASK)).await;
    let data = server.kill().await;
    let server = Server::start_with(&mock, data, &[("RIVET_LLM_VISION", "true")]).await;
    // The restored conversation sends the earlier image again.
    answered(&server, &project, json!({"text": ASK})).await;
    assert_eq!(
        mock.log().await.last().unwrap()["images"],
        json!([data_url()])
    );

    let exported = exported(&server, &project).await;
    assert_eq!(exported["images"][0]["data"], STANDARD.encode(PNG));
    let request = server
        .http
        .post(server.url("/import/conversation"))
        .json(&exported);
    let (status, created) = server.json(request).await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    let copy = created["id"].as_str().unwrap();
    let (_, list) = server
        .json(
            server
                .http
                .get(server.url(&format!("/projects/{copy}/messages"))),
        )
        .await;
    let url = list[0]["images"][0]["url"].as_str().unwrap();
    assert!(url.contains(copy), "{url}");
    let bytes = fetched(&server, url).await.bytes().await.unwrap();
    assert_eq!(bytes.as_ref(), PNG);
}
