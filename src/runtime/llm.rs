//! What the browser and the server say to each other about the model: the
//! events of a streamed answer, the errors a provider can cause, and the
//! settings the browser may see. The client lives in `crate::server::llm`;
//! these types are here because both sides (de)serialize them.

use std::fmt;

use serde::{Deserialize, Serialize};

mod local;
pub use local::{LocalOutcome, LocalServer, NoAnswer};

/// One step of a streamed answer, in the order it happens. A stream always
/// ends with exactly one [`LlmEvent::Finished`] or [`LlmEvent::Failed`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum LlmEvent {
    /// More answer text. Concatenating every delta gives the whole answer,
    /// continuations included (already spliced).
    Delta { text: String },
    /// Token counts for the answer so far, summed over its continuations;
    /// the last one sent is the total.
    Usage(TokenUsage),
    /// The answer hit the token limit and the model is asked to continue
    /// (`attempt` is 1 or 2).
    Continuing { attempt: u8 },
    /// A request failed before any text arrived and is tried again after
    /// `delay_ms`.
    Retrying {
        attempt: u32,
        delay_ms: u64,
        reason: String,
    },
    /// The model asked for tools (agent mode), complete with arguments.
    ToolCalls { calls: Vec<ToolCall> },
    /// The answer is complete.
    Finished { finish_reason: FinishReason },
    /// The answer ended on an error; the text that arrived is kept.
    Failed { error: LlmError },
}

/// Token counts as the provider reports them. The one record of them: the
/// stream, the session events, the stored messages and the exports all
/// carry this type, so nothing copies the counts field by field.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TokenUsage {
    pub prompt_tokens: u32,
    pub completion_tokens: u32,
    pub total_tokens: u32,
}

/// Sums the counts of an answer's requests (continuations included).
impl std::ops::Add for TokenUsage {
    type Output = TokenUsage;

    fn add(self, other: TokenUsage) -> TokenUsage {
        TokenUsage {
            prompt_tokens: self.prompt_tokens.saturating_add(other.prompt_tokens),
            completion_tokens: self
                .completion_tokens
                .saturating_add(other.completion_tokens),
            total_tokens: self.total_tokens.saturating_add(other.total_tokens),
        }
    }
}

/// What a model costs, in dollars per million tokens.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Price {
    pub input: f64,
    pub output: f64,
}

impl Price {
    /// The dollars `usage` cost at this price.
    pub fn cost(&self, usage: &TokenUsage) -> f64 {
        (f64::from(usage.prompt_tokens) * self.input
            + f64::from(usage.completion_tokens) * self.output)
            / 1_000_000.0
    }
}

/// "$0.0123": dollars with enough digits to tell small answers apart.
pub fn dollars(usd: f64) -> String {
    // -0.0 reads as 0.
    let usd = if usd == 0.0 { 0.0 } else { usd };
    if usd >= 1.0 {
        format!("${usd:.2}")
    } else {
        format!("${usd:.4}")
    }
}

/// Why the model stopped. `Length` after a finished answer means the token
/// limit was still reached after the allowed continuations.
///
/// Stored (messages, session events, exports) and sent as itself. Earlier
/// versions stored the lower-cased `Debug` text (`toolcalls`), and the plain
/// `Debug` text (`ToolCalls`) is accepted too, so what they wrote still loads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FinishReason {
    #[serde(alias = "Stop")]
    Stop,
    #[serde(alias = "Length")]
    Length,
    #[serde(alias = "ToolCalls", alias = "toolcalls")]
    ToolCalls,
    #[serde(alias = "ContentFilter", alias = "contentfilter")]
    ContentFilter,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolCall {
    pub id: String,
    pub name: String,
    /// The arguments as the model wrote them (normally a JSON object).
    pub arguments: String,
}

/// One line of a draft's rewrite (the prompt enhancer) as it streams to
/// the composer, newline-delimited JSON.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum RewriteLine {
    /// More of the rewritten request.
    Delta { text: String },
    /// The rewrite failed; the draft is given back.
    Failed { error: String },
}

/// Why an answer failed, with what the chat needs to say so clearly. The
/// `Display` text is the sentence shown to the user.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum LlmError {
    /// 401 or 403.
    Unauthorized {
        provider: String,
        status: u16,
    },
    ModelNotFound {
        provider: String,
        model: String,
    },
    RateLimited {
        provider: String,
        retry_after_secs: Option<u64>,
    },
    /// 5xx, after the retries.
    Server {
        provider: String,
        status: u16,
        attempts: u32,
    },
    /// Any other refusal (400, 413, 422…), with the provider's own words.
    Rejected {
        provider: String,
        status: u16,
        message: String,
    },
    /// The provider could not be reached (after the retries) or stopped
    /// answering before the first token.
    Connection {
        provider: String,
        message: String,
    },
    /// The stream broke after some text arrived.
    Interrupted {
        message: String,
    },
    /// The provider sent something that is not a chat completion chunk.
    BadChunk {
        message: String,
    },
    /// Stopped by the user.
    Cancelled,
    /// No usable provider, base URL, key or model.
    NotConfigured {
        message: String,
    },
    /// The project spent its budget: nothing more was asked (amounts as
    /// [`dollars`] writes them).
    BudgetSpent {
        spent: String,
        budget: String,
    },
}

impl fmt::Display for LlmError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LlmError::Unauthorized { provider, status } => write!(
                f,
                "The key for {provider} was rejected ({status}). Check it in Settings."
            ),
            LlmError::ModelNotFound { provider, model } => write!(
                f,
                "{provider} has no model named \u{201c}{model}\u{201d} (404). Choose another model in Settings."
            ),
            LlmError::RateLimited {
                provider,
                retry_after_secs: Some(secs),
            } => write!(
                f,
                "{provider} is rate-limiting requests (429). Try again in {secs} s."
            ),
            LlmError::RateLimited { provider, .. } => write!(
                f,
                "{provider} is rate-limiting requests (429). Try again in a little while."
            ),
            LlmError::Server {
                provider,
                status,
                attempts,
            } => write!(
                f,
                "{provider} had a server error ({status}) on each of {attempts} attempts. Try again later."
            ),
            LlmError::Rejected {
                provider,
                status,
                message,
            } => write!(f, "{provider} refused the request ({status}): {message}"),
            LlmError::Connection { provider, message } => {
                write!(f, "Could not reach {provider}: {message}")
            }
            LlmError::Interrupted { message } => write!(
                f,
                "The answer was interrupted ({message}). What arrived is kept: retry, or continue from here."
            ),
            LlmError::BadChunk { message } => write!(
                f,
                "The provider sent a chunk that could not be read ({message}). What arrived before it is kept."
            ),
            LlmError::Cancelled => write!(f, "Stopped. What arrived is kept."),
            LlmError::NotConfigured { message } => write!(f, "{message}"),
            LlmError::BudgetSpent { spent, budget } => write!(
                f,
                "The project has spent {spent} of its budget of {budget}, so nothing more was asked: raise the budget to go on."
            ),
        }
    }
}

impl std::error::Error for LlmError {}

impl LlmError {
    /// Whether the answer so far can be continued rather than started over.
    pub fn can_continue(&self) -> bool {
        matches!(
            self,
            LlmError::Interrupted { .. } | LlmError::BadChunk { .. } | LlmError::Cancelled
        )
    }
}

/// How a Build answer gives its files and commands: bolt tags in the text,
/// tool calls (the server's `agent::as_actions`), or tags until the model
/// slips out of them twice (`llm::format_slips`), then tools. Set in the
/// configuration (`[llm] format`) and, per provider and model, in the
/// settings panel.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ActionFormat {
    Tags,
    Tools,
    #[default]
    Auto,
}

impl ActionFormat {
    pub const ALL: [ActionFormat; 3] =
        [ActionFormat::Auto, ActionFormat::Tags, ActionFormat::Tools];

    /// The name the configuration and the settings form use.
    pub fn as_str(self) -> &'static str {
        match self {
            ActionFormat::Tags => "tags",
            ActionFormat::Tools => "tools",
            ActionFormat::Auto => "auto",
        }
    }

    pub fn parse(name: &str) -> Option<ActionFormat> {
        ActionFormat::ALL.into_iter().find(|f| f.as_str() == name)
    }

    /// What the settings form says of it.
    pub fn describe(self) -> &'static str {
        match self {
            ActionFormat::Tags => "bolt tags in the answer",
            ActionFormat::Tools => "tool calls",
            ActionFormat::Auto => "tags, tool calls after two slips",
        }
    }
}

/// A provider preset as the settings panel shows it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PresetInfo {
    pub id: String,
    pub label: String,
    pub base_url: String,
    pub needs_key: bool,
    /// The environment variable the key is also read from, if any.
    pub key_env: Option<String>,
}

/// The effective LLM configuration as the browser may know it: never the
/// key, only whether one is set.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PublicLlmSettings {
    /// Preset id (`openai`, `ollama`, `custom`, `demo`…); empty when none.
    pub provider: String,
    pub provider_label: String,
    pub base_url: String,
    pub model: String,
    /// Models from the configuration or the preset (the live list comes from
    /// `list_models`).
    pub models: Vec<String>,
    pub key_set: bool,
    pub key_required: bool,
    /// Providers a key is available for (settings or environment), so the
    /// panel can say so before the provider is switched.
    pub keys_set: Vec<String>,
    /// A provider is chosen and has what it needs to be asked.
    pub configured: bool,
    /// Answers are replayed by the built-in scripted provider, not a model.
    pub demo: bool,
    /// Where each value came from (`settings`, `environment RIVET_LLM_MODEL`…).
    pub sources: SettingSources,
    /// What is missing, in words, when not configured.
    pub problem: Option<String>,
    /// Why a key that is set is not sent to `base_url` (it goes only to its
    /// provider's preset URL or the URL saved with it).
    #[serde(default)]
    pub key_notice: Option<String>,
    pub presets: Vec<PresetInfo>,
    /// The answer format chosen in the settings for this provider and
    /// model; `None` follows `default_format`.
    #[serde(default)]
    pub format: Option<ActionFormat>,
    /// The configuration's answer format (`[llm] format`).
    #[serde(default)]
    pub default_format: ActionFormat,
}

/// A provider's models as the settings panel offers them.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ModelList {
    pub models: Vec<String>,
    /// Why no key goes with requests to this URL, when one is set but held
    /// back.
    pub key_notice: Option<String>,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SettingSources {
    pub provider: String,
    pub base_url: String,
    pub model: String,
    pub api_key: String,
}

/// A change made in the settings panel. Empty strings fall back to the
/// environment and the configuration file.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LlmSettingsUpdate {
    pub provider: String,
    pub base_url: String,
    pub model: String,
    pub key: KeyUpdate,
    /// The answer format for this provider and model; `None` follows the
    /// configuration.
    #[serde(default)]
    pub format: Option<ActionFormat>,
}

/// The key is write-only: the panel can replace or clear the stored key of
/// the chosen provider, never read it.
#[derive(Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "action", content = "value", rename_all = "snake_case")]
pub enum KeyUpdate {
    #[default]
    Keep,
    Set(String),
    Clear,
}

/// Debug output is logged: it must not show a new key.
impl fmt::Debug for KeyUpdate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            KeyUpdate::Keep => write!(f, "Keep"),
            KeyUpdate::Set(_) => write!(f, "Set(<redacted>)"),
            KeyUpdate::Clear => write!(f, "Clear"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_have_a_stable_json_shape() {
        let check = |event: LlmEvent, json: &str| {
            assert_eq!(serde_json::to_string(&event).unwrap(), json);
            assert_eq!(serde_json::from_str::<LlmEvent>(json).unwrap(), event);
        };
        check(
            LlmEvent::Delta { text: "hé".into() },
            r#"{"type":"delta","text":"hé"}"#,
        );
        check(
            LlmEvent::Usage(TokenUsage {
                prompt_tokens: 1,
                completion_tokens: 2,
                total_tokens: 3,
            }),
            r#"{"type":"usage","prompt_tokens":1,"completion_tokens":2,"total_tokens":3}"#,
        );
        check(
            LlmEvent::Finished {
                finish_reason: FinishReason::Length,
            },
            r#"{"type":"finished","finish_reason":"length"}"#,
        );
        check(
            LlmEvent::Failed {
                error: LlmError::RateLimited {
                    provider: "Groq".into(),
                    retry_after_secs: Some(7),
                },
            },
            r#"{"type":"failed","error":{"kind":"rate_limited","provider":"Groq","retry_after_secs":7}}"#,
        );
    }

    #[test]
    fn a_finish_reason_stored_as_debug_text_still_loads() {
        let read = |json: &str| serde_json::from_str::<FinishReason>(json).unwrap();
        for (old, reason) in [
            ("Stop", FinishReason::Stop),
            ("stop", FinishReason::Stop),
            ("Length", FinishReason::Length),
            ("length", FinishReason::Length),
            ("ToolCalls", FinishReason::ToolCalls),
            ("toolcalls", FinishReason::ToolCalls),
            ("ContentFilter", FinishReason::ContentFilter),
            ("contentfilter", FinishReason::ContentFilter),
        ] {
            assert_eq!(read(&format!("\"{old}\"")), reason, "{old}");
        }
        // What is written now is the snake_case name, and it reads back.
        assert_eq!(
            serde_json::to_string(&FinishReason::ToolCalls).unwrap(),
            r#""tool_calls""#
        );
        assert_eq!(read(r#""content_filter""#), FinishReason::ContentFilter);
    }

    #[test]
    fn errors_read_as_sentences() {
        let check = |error: LlmError, expect: &str| assert_eq!(error.to_string(), expect);
        check(
            LlmError::Unauthorized {
                provider: "OpenAI".into(),
                status: 401,
            },
            "The key for OpenAI was rejected (401). Check it in Settings.",
        );
        check(
            LlmError::RateLimited {
                provider: "Groq".into(),
                retry_after_secs: Some(20),
            },
            "Groq is rate-limiting requests (429). Try again in 20 s.",
        );
        check(
            LlmError::RateLimited {
                provider: "Groq".into(),
                retry_after_secs: None,
            },
            "Groq is rate-limiting requests (429). Try again in a little while.",
        );
        check(
            LlmError::Server {
                provider: "Mistral".into(),
                status: 503,
                attempts: 4,
            },
            "Mistral had a server error (503) on each of 4 attempts. Try again later.",
        );
    }

    #[test]
    fn key_updates_serialize_without_ambiguity() {
        let check = |update: KeyUpdate, json: &str| {
            assert_eq!(serde_json::to_string(&update).unwrap(), json);
            assert_eq!(serde_json::from_str::<KeyUpdate>(json).unwrap(), update);
        };
        check(KeyUpdate::Keep, r#"{"action":"keep"}"#);
        check(KeyUpdate::Clear, r#"{"action":"clear"}"#);
        check(
            KeyUpdate::Set("k".into()),
            r#"{"action":"set","value":"k"}"#,
        );
    }
}
