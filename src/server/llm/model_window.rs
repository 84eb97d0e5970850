//! The context window a provider reports for a model in its `/v1/models`
//! answer. There is no standard field; those seen in the wild are read in
//! this order: `context_length` (OpenRouter, LM Studio), `context_window`
//! (Groq and others), `max_model_len` (vLLM), `max_context_length`, and
//! `top_provider.context_length` (OpenRouter's per-provider figure).
//!
//! The same answer may give the model's price (OpenRouter's `pricing`, in
//! dollars per token), read by [`reported_price`].
//!
//! The figure is asked for once per (base URL, model) and kept; the request
//! has a short timeout, so an answer never waits long for it. A failed
//! request is logged and asked again after a while; a model the answer does
//! not describe is kept as unknown.

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use serde_json::Value;

use super::settings::ResolvedLlm;

/// How long the `/v1/models` request may take before the window is taken
/// from the configuration instead.
pub const TIMEOUT: Duration = Duration::from_secs(2);
/// How long a failed request is remembered before it is tried again.
const RETRY_AFTER: Duration = Duration::from_secs(300);

/// The fields that may carry a model's context length, in the order read.
const FIELDS: &[&str] = &[
    "/context_length",
    "/context_window",
    "/max_model_len",
    "/max_context_length",
    "/top_provider/context_length",
];

/// What `/v1/models`' answer `list` says of `model`, when it lists it.
fn entry<'a>(list: &'a Value, model: &str) -> Option<&'a Value> {
    list.get("data")
        .and_then(Value::as_array)?
        .iter()
        .find(|m| m.get("id").and_then(Value::as_str) == Some(model))
}

/// The context length `/v1/models`' answer `list` gives for `model`.
pub fn reported(list: &Value, model: &str) -> Option<u32> {
    let entry = entry(list, model)?;
    FIELDS
        .iter()
        .filter_map(|field| entry.pointer(field).and_then(number))
        .find(|&n| n > 0)
}

/// The price `/v1/models`' answer `list` gives for `model`: OpenRouter's
/// `pricing.prompt` and `pricing.completion`, dollars per token (as strings
/// or numbers), made dollars per million tokens.
pub fn reported_price(list: &Value, model: &str) -> Option<crate::runtime::llm::Price> {
    let entry = entry(list, model)?;
    let per_token = |field: &str| -> Option<f64> {
        let value = entry.pointer(field)?;
        let n = match value {
            Value::Number(n) => n.as_f64()?,
            Value::String(s) => s.trim().parse().ok()?,
            _ => return None,
        };
        (n.is_finite() && n >= 0.0).then_some(n * 1_000_000.0)
    };
    Some(crate::runtime::llm::Price {
        input: per_token("/pricing/prompt")?,
        output: per_token("/pricing/completion")?,
    })
}

/// Whether `/v1/models`' answer `list` says `model` takes images:
/// OpenRouter's `architecture.input_modalities` (a list) or
/// `architecture.modality` (`text+image->text`), a `capabilities` list
/// naming `vision` (Ollama, LM Studio) or a `supports_vision` flag
/// (LiteLLM); `None` when it says nothing of it.
pub fn reported_images(list: &Value, model: &str) -> Option<bool> {
    let entry = entry(list, model)?;
    let names = |field: &str| -> Option<Vec<String>> {
        let list = entry.pointer(field)?.as_array()?;
        Some(
            list.iter()
                .filter_map(Value::as_str)
                .map(str::to_ascii_lowercase)
                .collect(),
        )
    };
    if let Some(inputs) = names("/architecture/input_modalities") {
        return Some(inputs.iter().any(|m| m == "image"));
    }
    if let Some(modality) = entry
        .pointer("/architecture/modality")
        .and_then(Value::as_str)
    {
        let inputs = modality.split("->").next().unwrap_or_default();
        return Some(inputs.split('+').any(|m| m.trim() == "image"));
    }
    if let Some(capabilities) = names("/capabilities") {
        return Some(capabilities.iter().any(|c| c == "vision"));
    }
    entry.get("supports_vision").and_then(Value::as_bool)
}

/// What the model list says of one model.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Facts {
    pub window: Option<u32>,
    pub price: Option<crate::runtime::llm::Price>,
    /// Whether it takes images, when the list says.
    pub images: Option<bool>,
}

/// A positive whole number, written as a number or as a string.
fn number(value: &Value) -> Option<u32> {
    let n = match value {
        Value::Number(n) => n.as_u64().or_else(|| n.as_f64().map(|f| f as u64))?,
        Value::String(s) => s.trim().parse().ok()?,
        _ => return None,
    };
    u32::try_from(n).ok()
}

#[derive(Clone, Copy, Debug)]
enum Known {
    /// The answer came: what it says of the model.
    Answered(Facts),
    /// The request failed at this time.
    Failed(Instant),
}

/// The figures asked for so far, by (base URL, model).
#[derive(Default)]
pub struct ModelWindows {
    known: Mutex<HashMap<(String, String), Known>>,
}

impl ModelWindows {
    /// The window `/v1/models` reports for `llm`'s model, asked for when
    /// not known yet.
    pub async fn get(&self, http: &reqwest::Client, llm: &ResolvedLlm) -> Option<u32> {
        self.facts(http, llm).await.window
    }

    /// What `/v1/models` says of `llm`'s model, asked for when not known yet.
    pub async fn facts(&self, http: &reqwest::Client, llm: &ResolvedLlm) -> Facts {
        if llm.base_url.is_empty() || llm.model.is_empty() {
            return Facts::default();
        }
        let key = (llm.base_url.clone(), llm.model.clone());
        match self.cached(&key) {
            Some(Known::Answered(facts)) => return facts,
            Some(Known::Failed(at)) if at.elapsed() < RETRY_AFTER => return Facts::default(),
            _ => {}
        }
        let known = match fetch(http, llm).await {
            Ok(list) => Known::Answered(Facts {
                window: reported(&list, &llm.model),
                price: reported_price(&list, &llm.model),
                images: reported_images(&list, &llm.model),
            }),
            Err(e) => {
                tracing::info!(
                    "{}: no context window from /models ({e}); using the configured one",
                    llm.label
                );
                Known::Failed(Instant::now())
            }
        };
        self.lock().insert(key, known);
        match known {
            Known::Answered(facts) => facts,
            Known::Failed(_) => Facts::default(),
        }
    }

    fn cached(&self, key: &(String, String)) -> Option<Known> {
        self.lock().get(key).copied()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<(String, String), Known>> {
        self.known.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

async fn fetch(http: &reqwest::Client, llm: &ResolvedLlm) -> Result<Value, String> {
    let mut request = http
        .get(format!("{}/models", llm.base_url))
        .timeout(TIMEOUT);
    if let Some(key) = llm.key() {
        request = request.bearer_auth(key.expose());
    }
    let response = request.send().await.map_err(|e| e.to_string())?;
    if !response.status().is_success() {
        return Err(format!("HTTP {}", response.status()));
    }
    response.json().await.map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use serde_json::json;

    use super::*;

    fn list(model: Value) -> Value {
        json!({"object": "list", "data": [{"id": "other", "context_length": 1}, model]})
    }

    #[test]
    fn each_field_seen_in_the_wild_is_read() {
        for (field, value) in [
            ("context_length", json!(8192)),
            ("context_window", json!(8192)),
            ("max_model_len", json!(8192)),
            ("max_context_length", json!("8192")),
        ] {
            let answer = list(json!({"id": "m", field: value}));
            assert_eq!(reported(&answer, "m"), Some(8192), "{field}");
        }
        let nested = list(json!({"id": "m", "top_provider": {"context_length": 8192.0}}));
        assert_eq!(reported(&nested, "m"), Some(8192));
    }

    #[test]
    fn openrouters_price_per_token_is_read_as_dollars_per_million() {
        let answer =
            list(json!({"id": "m", "pricing": {"prompt": "0.000003", "completion": 0.000015}}));
        let price = reported_price(&answer, "m").unwrap();
        assert!((price.input - 3.0).abs() < 1e-9, "{price:?}");
        assert!((price.output - 15.0).abs() < 1e-9, "{price:?}");
        for pricing in [
            json!({"prompt": "x", "completion": "1"}),
            json!({"prompt": "-1", "completion": "1"}),
            json!({}),
        ] {
            let answer = list(json!({"id": "m", "pricing": pricing}));
            assert_eq!(reported_price(&answer, "m"), None, "{pricing}");
        }
    }

    #[test]
    fn the_first_field_in_order_wins() {
        let answer = list(json!({"id": "m", "max_model_len": 4096, "context_length": 8192}));
        assert_eq!(reported(&answer, "m"), Some(8192));
    }

    #[test]
    fn a_model_without_a_figure_reports_none() {
        assert_eq!(reported(&list(json!({"id": "m"})), "m"), None);
        assert_eq!(reported(&list(json!({"id": "m"})), "absent"), None);
        assert_eq!(reported(&json!({"error": "x"}), "m"), None);
    }

    #[test]
    fn a_zero_negative_or_malformed_figure_is_ignored() {
        for value in [json!(0), json!(-5), json!("many"), json!(null), json!(1e12)] {
            let answer = list(json!({"id": "m", "context_length": value}));
            assert_eq!(reported(&answer, "m"), None, "{value}");
        }
    }

    /// A `/v1/models` that counts its requests and answers with `status`
    /// (the list when 200) after `delay`.
    async fn provider(status: u16, delay: Duration) -> (String, Arc<AtomicUsize>) {
        let hits = Arc::new(AtomicUsize::new(0));
        let counted = Arc::clone(&hits);
        let app = axum::Router::new().route(
            "/v1/models",
            axum::routing::get(move || {
                let counted = Arc::clone(&counted);
                async move {
                    counted.fetch_add(1, Ordering::SeqCst);
                    tokio::time::sleep(delay).await;
                    let body = json!({"data": [{"id": "m", "context_length": 8192}]});
                    (
                        axum::http::StatusCode::from_u16(status).unwrap(),
                        axum::Json(body),
                    )
                }
            }),
        );
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move { axum::serve(listener, app).await });
        (format!("http://{addr}/v1"), hits)
    }

    #[tokio::test]
    async fn the_figure_is_asked_for_once_per_base_url_and_model() {
        let (url, hits) = provider(200, Duration::ZERO).await;
        let windows = ModelWindows::default();
        let http = reqwest::Client::new();
        let llm = ResolvedLlm::custom(&url, "m", None);
        assert_eq!(windows.get(&http, &llm).await, Some(8192));
        assert_eq!(windows.get(&http, &llm).await, Some(8192));
        assert_eq!(hits.load(Ordering::SeqCst), 1);
        // Another model of the same provider is asked for on its own.
        let other = ResolvedLlm::custom(&url, "absent", None);
        assert_eq!(windows.get(&http, &other).await, None);
        assert_eq!(windows.get(&http, &other).await, None);
        assert_eq!(hits.load(Ordering::SeqCst), 2);
    }

    #[tokio::test]
    async fn a_failed_request_falls_back_and_is_not_repeated_at_once() {
        let (url, hits) = provider(500, Duration::ZERO).await;
        let windows = ModelWindows::default();
        let http = reqwest::Client::new();
        let llm = ResolvedLlm::custom(&url, "m", None);
        assert_eq!(windows.get(&http, &llm).await, None);
        assert_eq!(windows.get(&http, &llm).await, None);
        assert_eq!(hits.load(Ordering::SeqCst), 1);
    }

    #[tokio::test]
    async fn a_slow_provider_is_not_waited_for_past_the_timeout() {
        let (url, _) = provider(200, TIMEOUT * 5).await;
        let windows = ModelWindows::default();
        let llm = ResolvedLlm::custom(&url, "m", None);
        assert_eq!(windows.get(&reqwest::Client::new(), &llm).await, None);
    }

    #[tokio::test]
    async fn no_base_url_or_no_model_asks_nothing() {
        let windows = ModelWindows::default();
        let http = reqwest::Client::new();
        let mut llm = ResolvedLlm::custom("http://127.0.0.1:9/v1", "", None);
        assert_eq!(windows.get(&http, &llm).await, None);
        llm.model = "m".into();
        llm.base_url.clear();
        assert_eq!(windows.get(&http, &llm).await, None);
        assert!(windows.lock().is_empty());
    }

    #[test]
    fn a_model_list_says_whether_a_model_takes_images() {
        let list = serde_json::json!({"data": [
            {"id": "or-vision", "architecture": {"input_modalities": ["text", "image"]}},
            {"id": "or-text", "architecture": {"input_modalities": ["text"]}},
            {"id": "or-old", "architecture": {"modality": "text+image->text"}},
            {"id": "ollama", "capabilities": ["completion", "vision"]},
            {"id": "litellm", "supports_vision": false},
            {"id": "plain"}
        ]});
        assert_eq!(reported_images(&list, "or-vision"), Some(true));
        assert_eq!(reported_images(&list, "or-text"), Some(false));
        assert_eq!(reported_images(&list, "or-old"), Some(true));
        assert_eq!(reported_images(&list, "ollama"), Some(true));
        assert_eq!(reported_images(&list, "litellm"), Some(false));
        assert_eq!(reported_images(&list, "plain"), None);
        assert_eq!(reported_images(&list, "absent"), None);
    }
}
