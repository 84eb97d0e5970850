//! What a model costs: `[llm] price_input`/`price_output` when both are
//! set, else the provider's model list (`model_window::reported_price`),
//! else the table below of well-known models, else nothing for a model
//! server on this machine, else unknown.

use crate::runtime::llm::Price;

/// Dollars per million input and output tokens of well-known models, as
/// their providers list them. A model id matches an entry when it starts
/// with the entry's prefix (dated versions share their family's price);
/// the longest prefix wins.
const TABLE: &[(&str, f64, f64)] = &[
    ("gpt-4o-mini", 0.15, 0.60),
    ("gpt-4o", 2.50, 10.00),
    ("gpt-4.1-nano", 0.10, 0.40),
    ("gpt-4.1-mini", 0.40, 1.60),
    ("gpt-4.1", 2.00, 8.00),
    ("o4-mini", 1.10, 4.40),
    ("o3-mini", 1.10, 4.40),
    ("claude-3-5-haiku", 0.80, 4.00),
    ("claude-3-5-sonnet", 3.00, 15.00),
    ("claude-3-7-sonnet", 3.00, 15.00),
    ("claude-sonnet-4", 3.00, 15.00),
    ("claude-opus-4", 15.00, 75.00),
    ("deepseek-chat", 0.27, 1.10),
    ("deepseek-reasoner", 0.55, 2.19),
    ("llama-3.3-70b-versatile", 0.59, 0.79),
    ("llama-3.1-8b-instant", 0.05, 0.08),
    ("mistral-large", 2.00, 6.00),
    ("mistral-small", 0.20, 0.60),
    ("codestral", 0.30, 0.90),
    ("grok-3-mini", 0.30, 0.50),
    ("grok-3", 3.00, 15.00),
];

/// Providers that run on the owner's machine: their answers cost nothing.
const LOCAL_PROVIDERS: &[&str] = &["ollama", "lmstudio", "demo"];

/// The table's price for `model` (a provider's prefix such as `openai/`,
/// as OpenRouter writes it, is ignored).
pub fn listed(model: &str) -> Option<Price> {
    let name = model.rsplit('/').next().unwrap_or(model);
    TABLE
        .iter()
        .filter(|(prefix, _, _)| name.starts_with(prefix))
        .max_by_key(|(prefix, _, _)| prefix.len())
        .map(|&(_, input, output)| Price { input, output })
}

/// Whether answers from `provider` at `base_url` cost nothing: a local
/// preset, or a server on this machine's loopback.
pub fn is_local(provider: &str, base_url: &str) -> bool {
    if LOCAL_PROVIDERS.contains(&provider) {
        return true;
    }
    let Ok(url) = url::Url::parse(base_url) else {
        return false;
    };
    match url.host() {
        Some(url::Host::Domain(host)) => host == "localhost",
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        None => false,
    }
}

/// The price of a model from the sources in order (see the module's doc).
pub fn choose(
    configured: Option<Price>,
    reported: Option<Price>,
    (provider, base_url, model): (&str, &str, &str),
) -> Option<Price> {
    configured
        .or(reported)
        .or_else(|| listed(model))
        .or_else(|| is_local(provider, base_url).then_some(Price::default()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_longest_prefix_of_the_table_wins_and_a_providers_prefix_is_ignored() {
        assert_eq!(
            listed("gpt-4o-mini-2024-07-18").map(|p| p.input),
            Some(0.15)
        );
        assert_eq!(listed("gpt-4o-2024-08-06").map(|p| p.input), Some(2.50));
        assert_eq!(listed("openai/gpt-4.1-mini").map(|p| p.output), Some(1.60));
        assert_eq!(listed("qwen2.5-coder:7b"), None);
    }

    #[test]
    fn the_configured_price_wins_then_the_providers_then_the_table_then_local_is_free() {
        let configured = Price {
            input: 1.0,
            output: 2.0,
        };
        let reported = Price {
            input: 3.0,
            output: 4.0,
        };
        let at = ("openai", "https://api.openai.com/v1", "gpt-4o");
        assert_eq!(
            choose(Some(configured), Some(reported), at),
            Some(configured)
        );
        assert_eq!(choose(None, Some(reported), at), Some(reported));
        assert_eq!(choose(None, None, at).map(|p| p.input), Some(2.50));
        let local = ("custom", "http://127.0.0.1:11434/v1", "qwen2.5-coder:7b");
        assert_eq!(choose(None, None, local), Some(Price::default()));
        let unknown = ("custom", "https://llm.example/v1", "house-model");
        assert_eq!(choose(None, None, unknown), None);
    }

    #[test]
    fn a_cost_is_counted_per_million_tokens() {
        let usage = crate::runtime::llm::TokenUsage {
            prompt_tokens: 2_000,
            completion_tokens: 500,
            total_tokens: 2_500,
        };
        let price = Price {
            input: 3.0,
            output: 15.0,
        };
        assert!((price.cost(&usage) - 0.0135).abs() < 1e-12);
        assert_eq!(crate::runtime::llm::dollars(0.0135), "$0.0135");
        assert_eq!(crate::runtime::llm::dollars(12.5), "$12.50");
        assert_eq!(crate::runtime::llm::dollars(-0.0), "$0.0000");
        let none = crate::runtime::session::SessionState::default().spent_usd();
        assert!(none == 0.0 && none.is_sign_positive(), "{none}");
    }
}
