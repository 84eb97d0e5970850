//! The providers Rivet knows by name. Every one of them speaks the OpenAI
//! chat completions API; a preset only saves typing the base URL and says
//! where the key usually lives.

use crate::runtime::llm::PresetInfo;

/// Which request field carries the answer's token limit: OpenAI's newer
/// models refuse `max_tokens`, most other providers only know it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TokenLimitField {
    MaxTokens,
    MaxCompletionTokens,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Preset {
    pub id: &'static str,
    pub label: &'static str,
    /// Empty for `custom` (the user gives it) and `demo` (started on demand).
    pub base_url: &'static str,
    /// The provider's usual environment variable for its key.
    pub key_env: Option<&'static str>,
    pub needs_key: bool,
    /// Offered when the provider's `/v1/models` does not answer.
    pub models: &'static [&'static str],
    pub token_limit: TokenLimitField,
    /// The context window of the preset's usual models, when one size fits
    /// them (else `[llm] context_tokens`).
    pub context_tokens: Option<u32>,
}

pub const CUSTOM: &str = "custom";
pub const DEMO: &str = "demo";

/// The model the scripted provider answers as.
pub const DEMO_MODEL: &str = "rivet-replay";

const fn hosted(
    id: &'static str,
    label: &'static str,
    base_url: &'static str,
    key_env: &'static str,
    models: &'static [&'static str],
) -> Preset {
    Preset {
        id,
        label,
        base_url,
        key_env: Some(key_env),
        needs_key: true,
        models,
        token_limit: TokenLimitField::MaxTokens,
        context_tokens: None,
    }
}

const fn local(id: &'static str, label: &'static str, base_url: &'static str) -> Preset {
    Preset {
        id,
        label,
        base_url,
        key_env: None,
        needs_key: false,
        models: &[],
        token_limit: TokenLimitField::MaxTokens,
        context_tokens: None,
    }
}

pub const PRESETS: &[Preset] = &[
    Preset {
        token_limit: TokenLimitField::MaxCompletionTokens,
        context_tokens: Some(128_000),
        ..hosted(
            "openai",
            "OpenAI",
            "https://api.openai.com/v1",
            "OPENAI_API_KEY",
            &["gpt-4.1", "gpt-4.1-mini", "gpt-4o", "gpt-4o-mini"],
        )
    },
    Preset {
        context_tokens: Some(200_000),
        ..hosted(
            "anthropic",
            "Anthropic",
            "https://api.anthropic.com/v1",
            "ANTHROPIC_API_KEY",
            &["claude-sonnet-4-20250514", "claude-3-5-haiku-20241022"],
        )
    },
    Preset {
        context_tokens: Some(131_072),
        ..hosted(
            "groq",
            "Groq",
            "https://api.groq.com/openai/v1",
            "GROQ_API_KEY",
            &["llama-3.3-70b-versatile", "llama-3.1-8b-instant"],
        )
    },
    hosted(
        "openrouter",
        "OpenRouter",
        "https://openrouter.ai/api/v1",
        "OPENROUTER_API_KEY",
        &[
            "anthropic/claude-sonnet-4",
            "openai/gpt-4.1",
            "deepseek/deepseek-chat",
        ],
    ),
    Preset {
        context_tokens: Some(65_536),
        ..hosted(
            "deepseek",
            "DeepSeek",
            "https://api.deepseek.com/v1",
            "DEEPSEEK_API_KEY",
            &["deepseek-chat", "deepseek-reasoner"],
        )
    },
    Preset {
        context_tokens: Some(128_000),
        ..hosted(
            "mistral",
            "Mistral",
            "https://api.mistral.ai/v1",
            "MISTRAL_API_KEY",
            &["codestral-latest", "mistral-large-latest"],
        )
    },
    hosted(
        "together",
        "Together",
        "https://api.together.xyz/v1",
        "TOGETHER_API_KEY",
        &[
            "Qwen/Qwen2.5-Coder-32B-Instruct",
            "meta-llama/Llama-3.3-70B-Instruct-Turbo",
        ],
    ),
    Preset {
        context_tokens: Some(131_072),
        ..hosted(
            "xai",
            "xAI",
            "https://api.x.ai/v1",
            "XAI_API_KEY",
            &["grok-4", "grok-3-mini"],
        )
    },
    local("ollama", "Ollama (local)", "http://localhost:11434/v1"),
    local("lmstudio", "LM Studio (local)", "http://localhost:1234/v1"),
    local(CUSTOM, "Custom (any OpenAI-compatible URL)", ""),
    Preset {
        models: &[DEMO_MODEL],
        ..local(DEMO, "Demo (scripted answers)", "")
    },
];

/// The preset with this id.
pub fn preset(id: &str) -> Option<&'static Preset> {
    PRESETS.iter().find(|p| p.id == id)
}

/// The hosted or local preset whose URL this is, so a bare base URL still
/// gets the provider's name in messages.
pub fn preset_for_url(url: &str) -> Option<&'static Preset> {
    let url = normalize_base_url(url);
    PRESETS
        .iter()
        .find(|p| !p.base_url.is_empty() && p.base_url == url)
}

/// Base URLs are compared and joined without trailing slashes: the client
/// appends `/chat/completions` itself.
pub fn normalize_base_url(url: &str) -> String {
    url.trim().trim_end_matches('/').to_owned()
}

impl Preset {
    pub fn info(&self) -> PresetInfo {
        PresetInfo {
            id: self.id.to_owned(),
            label: self.label.to_owned(),
            base_url: self.base_url.to_owned(),
            needs_key: self.needs_key,
            key_env: self.key_env.map(str::to_owned),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_unique_and_hosted_presets_are_complete() {
        for (i, p) in PRESETS.iter().enumerate() {
            assert!(PRESETS[i + 1..].iter().all(|q| q.id != p.id), "{}", p.id);
            if p.needs_key {
                assert!(p.key_env.is_some(), "{}", p.id);
                assert!(p.base_url.starts_with("https://"), "{}", p.id);
                assert!(!p.models.is_empty(), "{}", p.id);
            }
            assert_eq!(p.base_url, normalize_base_url(p.base_url), "{}", p.id);
        }
    }

    #[test]
    fn urls_find_their_preset() {
        let check = |url: &str, expect: Option<&str>| {
            assert_eq!(preset_for_url(url).map(|p| p.id), expect, "{url}");
        };
        check("http://localhost:11434/v1/", Some("ollama"));
        check("https://api.anthropic.com/v1/", Some("anthropic"));
        check("http://localhost:1234/v1", Some("lmstudio"));
        check("http://10.0.0.2:8000/v1", None);
        check("", None);
    }
}
