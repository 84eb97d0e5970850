//! The HTTP layer under async-openai, and what its errors mean to the user.
//!
//! async-openai's default transport retries 429, 5xx and connection errors
//! by itself, silently and for as long as a `Retry-After` asks, and its
//! errors keep the status code but drop the headers. Rivet installs its own
//! transport (the `middleware` feature's `with_http_service`): it turns every
//! non-success response into an [`UpstreamStatus`] that keeps `Retry-After`,
//! and leaves retrying to the chat loop, which tells the user about it.

use std::future::Future;
use std::pin::Pin;
use std::sync::OnceLock;
use std::task::{Context, Poll};
use std::time::Duration;

use async_openai::error::{OpenAIError, WrappedError};
use async_openai::middleware::{HttpRequestFactory, ReqwestService};

use super::settings::ResolvedLlm;
use crate::runtime::llm::LlmError;

/// A non-success HTTP response from the provider.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("HTTP {status}: {message}")]
pub struct UpstreamStatus {
    pub status: u16,
    pub retry_after: Option<Duration>,
    /// The provider's `error.code` or `error.type`, when it sent JSON.
    pub code: Option<String>,
    pub message: String,
}

type Response = <ReqwestService as tower::Service<HttpRequestFactory>>::Response;

/// async-openai's plain reqwest transport, without its retry layer, with
/// error responses read into [`UpstreamStatus`].
#[derive(Clone, Debug)]
pub struct Transport {
    inner: ReqwestService,
}

/// Makes ring the process's TLS crypto provider, once, before any client is
/// built: async-openai is built without a provider of its own (see
/// Cargo.toml), and its reqwest panics when it finds none.
pub fn install_tls_provider() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        // An error means a provider is installed already, which serves as well.
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
}

/// The IDE's one HTTP client for providers, built on first use. Building
/// one loads and parses the system's root certificates, milliseconds of CPU
/// on the thread that asks: a hundred answers starting together each built
/// their own (async-openai's `Client::with_config` does), which held up the
/// answers already streaming.
fn http() -> &'static reqwest013::Client {
    static HTTP: OnceLock<reqwest013::Client> = OnceLock::new();
    HTTP.get_or_init(|| {
        install_tls_provider();
        reqwest013::Client::new()
    })
}

impl Transport {
    /// One connection pool for every request the IDE makes.
    pub fn shared() -> Transport {
        Transport {
            inner: ReqwestService::new(http().clone()),
        }
    }
}

/// An async-openai client for `config`: the shared HTTP client builds its
/// requests and [`Transport`] sends them.
pub fn openai_client<C: async_openai::config::Config>(config: C) -> async_openai::Client<C> {
    async_openai::Client::build(http().clone(), config).with_http_service(Transport::shared())
}

impl tower::Service<HttpRequestFactory> for Transport {
    type Response = Response;
    type Error = OpenAIError;
    type Future = Pin<Box<dyn Future<Output = Result<Response, OpenAIError>> + Send + 'static>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), OpenAIError>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: HttpRequestFactory) -> Self::Future {
        let mut inner = self.inner.clone();
        Box::pin(async move {
            let response = inner.call(request).await?;
            if response.status().is_success() {
                return Ok(response);
            }
            let status = response.status().as_u16();
            let retry_after = response
                .headers()
                .get("retry-after")
                .and_then(|v| v.to_str().ok())
                .and_then(parse_retry_after);
            // The body of an error is small; a failure to read it loses only
            // the provider's wording.
            let body = response
                .bytes()
                .await
                .map(|b| b.to_vec())
                .unwrap_or_default();
            let (code, message) = error_text(&body);
            Err(OpenAIError::Boxed(Box::new(UpstreamStatus {
                status,
                retry_after,
                code,
                message,
            })))
        })
    }
}

/// `Retry-After` in seconds. (The HTTP-date form is not used by the
/// providers Rivet knows, and is ignored.)
fn parse_retry_after(value: &str) -> Option<Duration> {
    let secs: f64 = value.trim().parse().ok()?;
    (secs.is_finite() && secs >= 0.0).then(|| Duration::from_secs_f64(secs.min(86_400.0)))
}

/// The provider's code and message from an OpenAI-style error body, else
/// the start of the body as text.
fn error_text(body: &[u8]) -> (Option<String>, String) {
    if let Ok(wrapped) = serde_json::from_slice::<WrappedError>(body) {
        let code = wrapped.error.code.or(wrapped.error.r#type);
        return (code, wrapped.error.message);
    }
    (None, String::from_utf8_lossy(body).trim().to_owned())
}

/// An error classified for the retry loop.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    pub error: LlmError,
    /// `Some` when trying again may help (before the first token only),
    /// with the delay the provider asked for, if any.
    pub retry: Option<Option<Duration>>,
}

impl Failure {
    pub fn fatal(error: LlmError) -> Failure {
        Failure { error, retry: None }
    }
}

/// Longest provider message shown to the user.
const MAX_MESSAGE: usize = 300;

/// Makes a provider's message safe and short enough to show: never the key,
/// at most [`MAX_MESSAGE`] characters.
pub fn clean_message(llm: &ResolvedLlm, message: &str) -> String {
    let message = match llm.key() {
        Some(key) => key.redact(message),
        None => message.to_owned(),
    };
    let message = message.trim();
    match message.char_indices().nth(MAX_MESSAGE) {
        Some((cut, _)) => format!("{}…", &message[..cut]),
        None => message.to_owned(),
    }
}

/// What an error from async-openai means, for a request to `llm`.
pub fn classify(llm: &ResolvedLlm, error: OpenAIError) -> Failure {
    let provider = llm.label.clone();
    match error {
        OpenAIError::Boxed(boxed) => match boxed.downcast::<UpstreamStatus>() {
            Ok(status) => classify_status(llm, *status),
            Err(other) => connection(llm, &*other),
        },
        OpenAIError::Reqwest(e) => connection(llm, &e),
        OpenAIError::ApiError(api) => classify_status(
            llm,
            UpstreamStatus {
                status: api.status_code.as_u16(),
                retry_after: None,
                code: api.api_error.code.clone(),
                message: api.api_error.message.clone(),
            },
        ),
        OpenAIError::StreamError(e) => Failure {
            error: LlmError::Connection {
                provider,
                message: clean_message(llm, &e.to_string()),
            },
            retry: Some(None),
        },
        OpenAIError::JSONDeserialize(e, _) => Failure::fatal(LlmError::BadChunk {
            message: e.to_string(),
        }),
        other => Failure::fatal(LlmError::NotConfigured {
            message: clean_message(llm, &other.to_string()),
        }),
    }
}

fn classify_status(llm: &ResolvedLlm, s: UpstreamStatus) -> Failure {
    let provider = llm.label.clone();
    let message = clean_message(llm, &s.message);
    let error = match s.status {
        401 | 403 => LlmError::Unauthorized {
            provider,
            status: s.status,
        },
        404 if s.code.as_deref() == Some("model_not_found")
            || message.to_ascii_lowercase().contains("model") =>
        {
            LlmError::ModelNotFound {
                provider,
                model: llm.model.clone(),
            }
        }
        404 => LlmError::Rejected {
            provider,
            status: 404,
            message: format!(
                "nothing answers at {}/chat/completions; check the base URL",
                llm.base_url
            ),
        },
        // Out of credit is a 429 too, but waiting does not help.
        429 if s.code.as_deref() != Some("insufficient_quota") => LlmError::RateLimited {
            provider,
            retry_after_secs: s.retry_after.map(|d| d.as_secs_f64().ceil() as u64),
        },
        408 | 500..=599 => {
            return Failure {
                error: LlmError::Server {
                    provider,
                    status: s.status,
                    attempts: 1,
                },
                retry: Some(s.retry_after),
            };
        }
        status => LlmError::Rejected {
            provider,
            status,
            message,
        },
    };
    Failure::fatal(error)
}

/// A transport error: retried, and described by its innermost cause
/// ("Connection refused (os error 111)") rather than reqwest's wrapper.
fn connection(llm: &ResolvedLlm, error: &(dyn std::error::Error + 'static)) -> Failure {
    let mut cause: &dyn std::error::Error = error;
    while let Some(source) = cause.source() {
        cause = source;
    }
    Failure {
        error: LlmError::Connection {
            provider: llm.label.clone(),
            message: clean_message(llm, &format!("{} ({cause})", llm.base_url)),
        },
        retry: Some(None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server::llm::secret::Secret;

    #[test]
    fn a_client_for_an_https_provider_is_built_on_ring_without_a_provider_of_its_own() {
        // The shared reqwest client is built with rustls on first use; with
        // no provider installed it would panic.
        let config =
            async_openai::config::OpenAIConfig::new().with_api_base("https://provider.invalid/v1");
        let _client = openai_client(config);
        assert!(rustls::crypto::CryptoProvider::get_default().is_some());
    }

    fn llm() -> ResolvedLlm {
        let mut llm =
            ResolvedLlm::custom("http://h/v1", "m1", Some(Secret::new("sk-xyz").unwrap()));
        llm.label = "Prov".into();
        llm
    }

    fn check(
        status: u16,
        code: Option<&str>,
        message: &str,
        retry_after: Option<u64>,
        expect: Failure,
    ) {
        let got = classify_status(
            &llm(),
            UpstreamStatus {
                status,
                retry_after: retry_after.map(Duration::from_secs),
                code: code.map(str::to_owned),
                message: message.into(),
            },
        );
        assert_eq!(got, expect, "{status} {code:?} {message}");
    }

    #[test]
    fn statuses_map_to_user_facing_errors() {
        let p = || "Prov".to_owned();
        check(
            401,
            None,
            "bad key sk-xyz",
            None,
            Failure::fatal(LlmError::Unauthorized {
                provider: p(),
                status: 401,
            }),
        );
        check(
            403,
            None,
            "",
            None,
            Failure::fatal(LlmError::Unauthorized {
                provider: p(),
                status: 403,
            }),
        );
        check(
            404,
            Some("model_not_found"),
            "nope",
            None,
            Failure::fatal(LlmError::ModelNotFound {
                provider: p(),
                model: "m1".into(),
            }),
        );
        check(
            404,
            None,
            "model \"m1\" not found, try pulling it first",
            None,
            Failure::fatal(LlmError::ModelNotFound {
                provider: p(),
                model: "m1".into(),
            }),
        );
        check(
            404,
            None,
            "404 page not found",
            None,
            Failure::fatal(LlmError::Rejected {
                provider: p(),
                status: 404,
                message: "nothing answers at http://h/v1/chat/completions; check the base URL"
                    .into(),
            }),
        );
        check(
            429,
            None,
            "slow down",
            Some(7),
            Failure::fatal(LlmError::RateLimited {
                provider: p(),
                retry_after_secs: Some(7),
            }),
        );
        check(
            429,
            Some("insufficient_quota"),
            "You exceeded your current quota",
            None,
            Failure::fatal(LlmError::Rejected {
                provider: p(),
                status: 429,
                message: "You exceeded your current quota".into(),
            }),
        );
        check(
            503,
            None,
            "busy",
            Some(2),
            Failure {
                error: LlmError::Server {
                    provider: p(),
                    status: 503,
                    attempts: 1,
                },
                retry: Some(Some(Duration::from_secs(2))),
            },
        );
        check(
            400,
            None,
            "context too long for key sk-xyz",
            None,
            Failure::fatal(LlmError::Rejected {
                provider: p(),
                status: 400,
                message: "context too long for key <redacted>".into(),
            }),
        );
    }

    #[test]
    fn retry_after_is_read_in_seconds() {
        let check = |value: &str, expect: Option<u64>| {
            assert_eq!(
                parse_retry_after(value).map(|d| d.as_millis() as u64),
                expect,
                "{value}"
            );
        };
        check("7", Some(7000));
        check(" 1.5 ", Some(1500));
        check("-1", None);
        check("Wed, 21 Oct 2015 07:28:00 GMT", None);
    }

    #[test]
    fn error_bodies_give_code_and_message() {
        let check = |body: &str, expect: (Option<&str>, &str)| {
            let (code, message) = error_text(body.as_bytes());
            assert_eq!((code.as_deref(), message.as_str()), expect, "{body}");
        };
        check(
            r#"{"error":{"message":"m","type":"t","code":"c"}}"#,
            (Some("c"), "m"),
        );
        check(r#"{"error":{"message":"m","type":"t"}}"#, (Some("t"), "m"));
        check("upstream connect error\n", (None, "upstream connect error"));
    }

    #[test]
    fn long_messages_are_shortened() {
        let long = "é".repeat(MAX_MESSAGE + 10);
        let cleaned = clean_message(&llm(), &long);
        assert_eq!(cleaned.chars().count(), MAX_MESSAGE + 1);
    }
}
