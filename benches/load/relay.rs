//! The floor under the streams' figures (`RIVET_LOAD_FLOOR=1`): in place of
//! `rivet serve`, this bench's own binary, run again as a child process,
//! answering the few routes the bench uses with only what no server of
//! streamed answers can skip. Each message is asked of the provider through
//! the same async-openai client the server uses (one shared HTTP client),
//! and each chunk's text goes on at once to the project's subscriber as an
//! event line: no store, no parser, no conversation, nothing else running.
//! What the bench measures through it is what the two shared cores, the
//! loopback and these crates cost a token before Rivet does anything.

use std::collections::HashMap;
use std::convert::Infallible;
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use async_openai::config::OpenAIConfig;
use async_openai::types::chat::{
    ChatCompletionRequestMessage, ChatCompletionRequestUserMessage,
    ChatCompletionRequestUserMessageContent, CreateChatCompletionRequest,
};
use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::routing::{get, post};
use futures::StreamExt;
use rivet::runtime::llm::FinishReason;
use rivet::runtime::protocol::Event;
use rivet::runtime::session::{
    Envelope, Message, MessageStatus, SessionEvent, SessionState, encode_line,
};
use tokio::sync::mpsc;

/// The environment variable that makes the bench's binary the relay; its
/// value is the provider's base URL.
pub const UPSTREAM: &str = "RIVET_LOAD_RELAY";

type Lines = mpsc::UnboundedSender<Bytes>;

#[derive(Clone)]
struct Relay {
    client: Arc<async_openai::Client<OpenAIConfig>>,
    subscribers: Arc<Mutex<HashMap<String, Lines>>>,
    next: Arc<AtomicU64>,
}

/// Runs the relay until killed, on a loopback port it logs as `rivet
/// serve` does.
pub fn run(upstream: String) {
    let runtime = tokio::runtime::Runtime::new().expect("a runtime");
    runtime.block_on(async move {
        let config = OpenAIConfig::new()
            .with_api_base(upstream)
            .with_api_key("none");
        let relay = Relay {
            client: Arc::new(rivet::server::llm::upstream::openai_client(config)),
            subscribers: Arc::default(),
            next: Arc::default(),
        };
        let app = Router::new()
            .route("/api/v1/projects", post(new_project).get(nothing))
            .route("/api/v1/projects/{id}/events", get(events))
            .route("/api/v1/projects/{id}/messages", post(message))
            .fallback(nothing)
            .with_state(relay);
        let listener = tokio::net::TcpListener::bind(SocketAddr::from((Ipv4Addr::LOCALHOST, 0)))
            .await
            .expect("a loopback port");
        let addr = listener.local_addr().expect("its address");
        eprintln!("relay listening on http://{addr}");
        axum::serve(listener, app).await.expect("serving");
    });
}

async fn nothing() -> &'static str {
    ""
}

async fn new_project(State(relay): State<Relay>) -> (StatusCode, axum::Json<serde_json::Value>) {
    let id = format!("p{}", relay.next.fetch_add(1, Ordering::Relaxed));
    (
        StatusCode::CREATED,
        axum::Json(serde_json::json!({ "id": id })),
    )
}

fn line(seq: u64, event: SessionEvent) -> Bytes {
    Bytes::from(encode_line(&Envelope { seq, event }))
}

async fn events(State(relay): State<Relay>, Path(id): Path<String>) -> Body {
    let (tx, rx) = mpsc::unbounded_channel();
    let state = Box::new(SessionState::default());
    let _ = tx.send(line(0, SessionEvent::Snapshot { state }));
    relay
        .subscribers
        .lock()
        .expect("subscribers")
        .insert(id, tx);
    let lines = tokio_stream::wrappers::UnboundedReceiverStream::new(rx);
    Body::from_stream(lines.map(Ok::<_, Infallible>))
}

#[derive(serde::Deserialize)]
struct Sent {
    text: String,
}

async fn message(
    State(relay): State<Relay>,
    Path(id): Path<String>,
    axum::Json(sent): axum::Json<Sent>,
) -> StatusCode {
    let Some(tx) = relay
        .subscribers
        .lock()
        .expect("subscribers")
        .get(&id)
        .cloned()
    else {
        return StatusCode::NOT_FOUND;
    };
    tokio::spawn(answer(relay.client, tx, sent.text));
    StatusCode::ACCEPTED
}

/// Asks the provider and hands each chunk's text on as it arrives.
async fn answer(client: Arc<async_openai::Client<OpenAIConfig>>, tx: Lines, text: String) {
    let message_id = "answer".to_owned();
    let added = SessionEvent::MessageAdded {
        message: Message::assistant(message_id.clone()),
    };
    let _ = tx.send(line(1, added));
    let request = CreateChatCompletionRequest {
        model: "rivet-replay".to_owned(),
        messages: vec![ChatCompletionRequestMessage::User(
            ChatCompletionRequestUserMessage {
                content: ChatCompletionRequestUserMessageContent::Text(text),
                name: None,
            },
        )],
        stream: Some(true),
        ..Default::default()
    };
    let mut seq = 1;
    let status = match client.chat().create_stream(request).await {
        Err(e) => MessageStatus::Failed {
            error: e.to_string(),
        },
        Ok(mut stream) => loop {
            let chunk = match stream.next().await {
                None => break MessageStatus::Complete,
                Some(Err(e)) => {
                    break MessageStatus::Interrupted {
                        reason: e.to_string(),
                    };
                }
                Some(Ok(chunk)) => chunk,
            };
            for text in chunk.choices.into_iter().filter_map(|c| c.delta.content) {
                seq += 1;
                let event = Event::Text { text };
                let protocol = SessionEvent::Protocol {
                    message_id: message_id.clone(),
                    event,
                };
                let _ = tx.send(line(seq, protocol));
            }
        },
    };
    let finished = SessionEvent::MessageFinished {
        message_id,
        status,
        finish_reason: Some(FinishReason::Stop),
    };
    let _ = tx.send(line(seq + 1, finished));
}
