//! Which provider, URL, model and key the IDE uses, and where each came from.
//!
//! Layers, highest first: the command line (`rivet ask`, or the URL the
//! settings panel asks models from), the settings panel, the environment, a
//! `.env` file in the working directory, then `Leptos.toml`. The provider is
//! chosen first; a base URL, model or generic key (`RIVET_LLM_API_KEY`) from
//! a layer *below* the provider's is ignored, since it may belong to another
//! provider. A provider's own key variable (`GROQ_API_KEY`…) and the panel's
//! key for that provider apply from any layer.
//!
//! Where a key may be sent is decided by one rule, [`key_may_go_to`]: to
//! its provider's preset URL, or to the base URL set together with it, and
//! nowhere else. "Together" means:
//! - the settings panel: the base URL saved in the same save as the key
//!   (each key keeps its own, see `store::StoredLlm::key_urls`);
//! - the command line: `--api-key` with `--base-url`;
//! - the deployment (environment, `.env` and `Leptos.toml`, taken as one
//!   source): its keys with the base URL it chooses by itself, for the
//!   provider it chooses ([`deployment_layers`]).
//!
//! So a URL chosen by a request, typed in the panel without the key, or set
//! in another layer never receives a key it did not come with.

mod keys;

use std::fmt;
use std::path::Path;

pub use keys::{KeyHome, PairedKey, key_may_go_to};
use keys::{ResolvedKey, key_candidates, resolve_key};

use super::provider::{self, Preset, TokenLimitField};
use super::secret::Secret;
use super::settings_file::StoredLlm;
use crate::runtime::llm::{ActionFormat, PublicLlmSettings, SettingSources};
use crate::server::config::LlmConfig;

/// The configuration a request is made with.
#[derive(Clone, Debug)]
pub struct ResolvedLlm {
    /// Preset id; empty when no provider is chosen.
    pub provider: String,
    /// The provider's name for messages ("OpenAI", or the URL's host).
    pub label: String,
    /// Without a trailing slash; empty for `demo` until the scripted server
    /// runs (see `LlmService::resolve_for_chat`).
    pub base_url: String,
    /// Empty means "the first model the provider lists".
    pub model: String,
    /// Offered when the provider's model list cannot be fetched.
    pub models: Vec<String>,
    /// Sent only through [`ResolvedLlm::key`], which checks `key_home`.
    api_key: Option<Secret>,
    key_home: KeyHome,
    /// Why a key that is set is not sent to `base_url`, in words for the user.
    pub key_notice: Option<String>,
    pub max_tokens: Option<u32>,
    pub token_limit: TokenLimitField,
    pub needs_key: bool,
    pub sources: SettingSources,
    /// Why requests cannot be made yet, in words for the user.
    pub problem: Option<String>,
}

/// Where a value came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    CommandLine,
    Settings,
    Environment,
    DotEnv,
    ConfigFile,
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Source::CommandLine => "command line",
            Source::Settings => "settings",
            Source::Environment => "environment",
            Source::DotEnv => ".env",
            Source::ConfigFile => "Leptos.toml",
        })
    }
}

/// What one layer says. Empty strings mean "not set here".
#[derive(Clone, Debug, Default)]
pub struct Layer {
    pub provider: Sourced,
    pub base_url: Sourced,
    pub model: Sourced,
    /// A key for whatever provider is chosen (`--api-key`, `RIVET_LLM_API_KEY`).
    pub generic_key: PairedKey,
    /// Keys tied to one provider id.
    pub provider_keys: Vec<(String, PairedKey)>,
}

/// A value with a description of its origin ("environment RIVET_LLM_MODEL").
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Sourced {
    pub value: String,
    pub origin: String,
}

impl Sourced {
    fn new(value: &str, origin: String) -> Sourced {
        Sourced {
            value: value.trim().to_owned(),
            origin,
        }
    }

    fn is_set(&self) -> bool {
        !self.value.is_empty()
    }
}

pub const ENV_PROVIDER: &str = "RIVET_LLM_PROVIDER";
pub const ENV_BASE_URL: &str = "RIVET_LLM_BASE_URL";
pub const ENV_MODEL: &str = "RIVET_LLM_MODEL";
pub const ENV_API_KEY: &str = "RIVET_LLM_API_KEY";

impl Layer {
    /// Command-line flags. A base URL without a provider names its own
    /// provider (its preset, else `custom`), so a key saved for another
    /// provider is never sent to the URL typed on the command line. The key
    /// goes with the base URL given with it.
    pub fn command_line(
        provider: Option<&str>,
        base_url: Option<&str>,
        model: Option<&str>,
        key: Option<&str>,
    ) -> Layer {
        let origin = |flag: &str| format!("{} {flag}", Source::CommandLine);
        let provider = match (provider, base_url) {
            (Some(p), _) => Sourced::new(p, origin("--provider")),
            (None, Some(url)) => Sourced::new(
                provider::preset_for_url(url).map_or(provider::CUSTOM, |p| p.id),
                origin("--base-url"),
            ),
            (None, None) => Sourced::default(),
        };
        Layer {
            provider,
            base_url: Sourced::new(base_url.unwrap_or(""), origin("--base-url")),
            model: Sourced::new(model.unwrap_or(""), origin("--model")),
            generic_key: PairedKey::new(
                Sourced::new(key.unwrap_or(""), origin("--api-key")),
                base_url.unwrap_or(""),
            ),
            provider_keys: Vec::new(),
        }
    }

    /// The settings panel's saved values, each key with the URL saved with it.
    pub fn settings(stored: &StoredLlm) -> Layer {
        let origin = || Source::Settings.to_string();
        Layer {
            provider: Sourced::new(&stored.provider, origin()),
            base_url: Sourced::new(&stored.base_url, origin()),
            model: Sourced::new(&stored.model, origin()),
            generic_key: PairedKey::default(),
            provider_keys: stored
                .api_keys
                .iter()
                .map(|(id, key)| {
                    let key = PairedKey::new(Sourced::new(key, origin()), &stored.key_url(id));
                    (id.clone(), key)
                })
                .collect(),
        }
    }

    /// Variables, from the process environment or a `.env` file; their keys
    /// are paired with no URL yet (see [`deployment_layers`]).
    pub fn variables(vars: &[(String, String)], source: Source) -> Layer {
        let get = |name: &str| {
            let value = vars
                .iter()
                .rev()
                .find(|(k, _)| k == name)
                .map_or("", |(_, v)| v.as_str());
            Sourced::new(value, format!("{source} {name}"))
        };
        Layer {
            provider: get(ENV_PROVIDER),
            base_url: get(ENV_BASE_URL),
            model: get(ENV_MODEL),
            generic_key: PairedKey::new(get(ENV_API_KEY), ""),
            provider_keys: provider::PRESETS
                .iter()
                .filter_map(|p| Some((p.id.to_owned(), get(p.key_env?))))
                .filter(|(_, key)| key.is_set())
                .map(|(id, key)| (id, PairedKey::new(key, "")))
                .collect(),
        }
    }

    /// `Leptos.toml` (which never holds keys).
    pub fn config_file(llm: &LlmConfig) -> Layer {
        let origin = || Source::ConfigFile.to_string();
        Layer {
            provider: Sourced::new(&llm.provider, origin()),
            base_url: Sourced::new(&llm.base_url, origin()),
            model: Sourced::new(&llm.model, origin()),
            ..Layer::default()
        }
    }
}

/// The deployment's own configuration, highest first: the environment,
/// `.env`, then `Leptos.toml`. Its operator sets all three before the
/// server starts, so they count as one source: the base URL they choose by
/// themselves goes with their generic key and with their key for the
/// provider they choose (`RIVET_LLM_PROVIDER=openai` and
/// `RIVET_LLM_BASE_URL` in the environment, `OPENAI_API_KEY` in `.env`).
pub fn deployment_layers(
    env: &[(String, String)],
    dotenv: &[(String, String)],
    file: &LlmConfig,
) -> [Layer; 3] {
    let mut layers = [
        Layer::variables(env, Source::Environment),
        Layer::variables(dotenv, Source::DotEnv),
        Layer::config_file(file),
    ];
    let chosen = choose_provider(&layers).and_then(|(preset, i, _)| {
        let preset = preset.ok()?;
        let url = chosen_base_url(&layers[..=i])?;
        (preset.id != provider::DEMO).then_some((preset.id, url.value))
    });
    if let Some((id, url)) = chosen {
        for layer in &mut layers {
            layer.generic_key.url = provider::normalize_base_url(&url);
            for (_, key) in layer.provider_keys.iter_mut().filter(|(p, _)| p == id) {
                key.url = provider::normalize_base_url(&url);
            }
        }
    }
    layers
}

/// Reads `.env` into a list without touching the process environment.
/// A missing file is an empty list; a malformed line is skipped with a
/// warning naming the file (never the line, which may hold a key).
pub fn read_dotenv(path: &Path) -> Vec<(String, String)> {
    let Ok(iter) = dotenvy::from_path_iter(path) else {
        return Vec::new();
    };
    let mut vars = Vec::new();
    for item in iter {
        match item {
            Ok(pair) => vars.push(pair),
            Err(_) => tracing::warn!("{}: skipping a line that is not NAME=value", path.display()),
        }
    }
    vars
}

/// The providers a key is available for, given the layers below the
/// command line.
pub fn providers_with_keys(layers: &[Layer]) -> Vec<String> {
    provider::PRESETS
        .iter()
        .filter(|p| p.id != provider::DEMO)
        .filter(|p| !key_candidates(layers, 0, p).is_empty())
        .map(|p| p.id.to_owned())
        .collect()
}

/// Resolves the layers (highest first) into one configuration.
/// `file` also supplies the fallback model list and the token limit.
pub fn resolve(layers: &[Layer], file: &LlmConfig) -> ResolvedLlm {
    let chosen = choose_provider(layers);
    let max_tokens = (file.max_tokens > 0).then_some(file.max_tokens);
    let Some((preset, provider_layer, provider_origin)) = chosen else {
        return unconfigured(
            max_tokens,
            "No model provider is configured. Choose one in Settings, set RIVET_LLM_PROVIDER \
             or a key such as OPENAI_API_KEY, or try the Demo (scripted answers)."
                .to_owned(),
        );
    };
    let preset = match preset {
        Ok(preset) => preset,
        Err(unknown) => {
            let known: Vec<&str> = provider::PRESETS.iter().map(|p| p.id).collect();
            return unconfigured(
                max_tokens,
                format!(
                    "Unknown provider \u{201c}{unknown}\u{201d} (from {provider_origin}); known: {}.",
                    known.join(", ")
                ),
            );
        }
    };
    let eligible = &layers[..=provider_layer];
    let is_demo = preset.id == provider::DEMO;
    let base_url = match chosen_base_url(eligible) {
        Some(url) if !is_demo => {
            Sourced::new(&provider::normalize_base_url(&url.value), url.origin)
        }
        _ => Sourced::new(preset.base_url, "preset".to_owned()),
    };
    let model = match eligible.iter().map(|l| &l.model).find(|s| s.is_set()) {
        Some(model) => model.clone(),
        None => match preset.models.first() {
            Some(m) => Sourced::new(m, "preset".to_owned()),
            None => Sourced::new("", "provider's model list".to_owned()),
        },
    };
    let models =
        if !file.models.is_empty() && (file.provider.is_empty() || file.provider == preset.id) {
            file.models.clone()
        } else {
            preset.models.iter().map(|m| (*m).to_owned()).collect()
        };
    let key = if is_demo {
        ResolvedKey::default()
    } else {
        resolve_key(layers, provider_layer, preset, &base_url.value)
    };
    let label = if preset.id == provider::CUSTOM {
        host_of(&base_url.value).unwrap_or_else(|| preset.label.to_owned())
    } else {
        preset.label.to_owned()
    };
    let problem = key.problem.or_else(|| {
        if base_url.value.is_empty() && !is_demo {
            Some(
                "The custom provider needs a base URL (Settings, or RIVET_LLM_BASE_URL)."
                    .to_owned(),
            )
        } else if preset.needs_key && key.secret.is_none() {
            let var = preset.key_env.unwrap_or(ENV_API_KEY);
            key.notice.clone().or_else(|| {
                Some(format!(
                    "No API key for {label}: add one in Settings or set {var}."
                ))
            })
        } else {
            None
        }
    });
    ResolvedLlm {
        provider: preset.id.to_owned(),
        label,
        base_url: base_url.value,
        model: model.value,
        models,
        api_key: key.secret,
        key_home: key.home,
        key_notice: key.notice,
        max_tokens,
        token_limit: preset.token_limit,
        needs_key: preset.needs_key,
        sources: SettingSources {
            provider: provider_origin,
            base_url: base_url.origin,
            model: model.origin,
            api_key: key.origin,
        },
        problem,
    }
}

/// The base URL the first of `eligible` sets, if any.
fn chosen_base_url(eligible: &[Layer]) -> Option<Sourced> {
    eligible
        .iter()
        .map(|l| &l.base_url)
        .find(|s| s.is_set())
        .cloned()
}

type Chosen = (Result<&'static Preset, String>, usize, String);

/// The provider and the index of the layer that chose it: an explicit
/// provider, else a base URL (its preset, or `custom`), else the first
/// provider whose own key variable is set.
fn choose_provider(layers: &[Layer]) -> Option<Chosen> {
    for (i, layer) in layers.iter().enumerate() {
        if layer.provider.is_set() {
            let id = layer.provider.value.to_ascii_lowercase();
            let preset = provider::preset(&id).ok_or(layer.provider.value.clone());
            return Some((preset, i, layer.provider.origin.clone()));
        }
    }
    for (i, layer) in layers.iter().enumerate() {
        if layer.base_url.is_set() {
            let preset = provider::preset_for_url(&layer.base_url.value)
                .or_else(|| provider::preset(provider::CUSTOM))
                .ok_or_else(|| provider::CUSTOM.to_owned());
            return Some((preset, i, layer.base_url.origin.clone()));
        }
    }
    for (i, layer) in layers.iter().enumerate() {
        if let Some((id, key)) = layer.provider_keys.first() {
            let preset = provider::preset(id).ok_or(id.clone());
            return Some((preset, i, key.key.origin.clone()));
        }
    }
    None
}

fn unconfigured(max_tokens: Option<u32>, problem: String) -> ResolvedLlm {
    ResolvedLlm {
        provider: String::new(),
        label: "no provider".to_owned(),
        base_url: String::new(),
        model: String::new(),
        models: Vec::new(),
        api_key: None,
        key_home: KeyHome::default(),
        key_notice: None,
        max_tokens,
        token_limit: TokenLimitField::MaxTokens,
        needs_key: false,
        sources: SettingSources::default(),
        problem: Some(problem),
    }
}

fn host_of(url: &str) -> Option<String> {
    let rest = url.split_once("://")?.1;
    let host = rest.split(['/', '?']).next()?;
    (!host.is_empty()).then(|| host.to_owned())
}

impl ResolvedLlm {
    /// A configuration for one OpenAI-compatible URL, for tests, benchmarks
    /// and tools that bypass the layers. The key goes with that URL.
    pub fn custom(base_url: &str, model: &str, api_key: Option<Secret>) -> ResolvedLlm {
        let layer = Layer::command_line(
            None,
            Some(base_url),
            Some(model),
            api_key.as_ref().map(Secret::expose),
        );
        let mut llm = resolve(&[layer], &crate::server::config::Config::defaults().llm);
        // The URL decides the preset's name, but this is always "custom".
        llm.provider = provider::CUSTOM.to_owned();
        llm.label = host_of(&llm.base_url).unwrap_or_else(|| llm.base_url.clone());
        llm
    }

    /// The key to send with requests to `base_url`: only one that
    /// [`key_may_go_to`] that URL, checked on every call, so a `base_url`
    /// changed after resolving does not take the key along.
    pub fn key(&self) -> Option<&Secret> {
        self.api_key
            .as_ref()
            .filter(|_| key_may_go_to(&self.key_home, &self.base_url))
    }

    pub fn is_configured(&self) -> bool {
        self.problem.is_none()
    }

    pub fn is_demo(&self) -> bool {
        self.provider == provider::DEMO
    }

    /// What the browser may see: everything but the key.
    pub fn public(&self) -> PublicLlmSettings {
        PublicLlmSettings {
            provider: self.provider.clone(),
            provider_label: self.label.clone(),
            base_url: if self.is_demo() {
                String::new()
            } else {
                self.base_url.clone()
            },
            model: self.model.clone(),
            models: self.models.clone(),
            key_set: self.key().is_some(),
            key_notice: self.key_notice.clone(),
            key_required: self.needs_key,
            keys_set: Vec::new(),
            configured: self.is_configured(),
            demo: self.is_demo(),
            sources: self.sources.clone(),
            problem: self.problem.clone(),
            presets: provider::PRESETS.iter().map(Preset::info).collect(),
            // Kept in the settings file and the configuration, which the
            // service adds (`LlmService::public_settings`).
            format: None,
            default_format: ActionFormat::default(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server::config::Config;

    struct Inputs<'a> {
        cli: Layer,
        stored: StoredLlm,
        env: &'a [(&'a str, &'a str)],
        dotenv: &'a [(&'a str, &'a str)],
        file: LlmConfig,
    }

    impl Default for Inputs<'_> {
        fn default() -> Self {
            Inputs {
                cli: Layer::default(),
                stored: StoredLlm::default(),
                env: &[],
                dotenv: &[],
                file: Config::defaults().llm,
            }
        }
    }

    fn vars(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    fn run(inputs: Inputs) -> ResolvedLlm {
        let [env, dotenv, file] =
            deployment_layers(&vars(inputs.env), &vars(inputs.dotenv), &inputs.file);
        let layers = [
            inputs.cli,
            Layer::settings(&inputs.stored),
            env,
            dotenv,
            file,
        ];
        resolve(&layers, &inputs.file)
    }

    /// (provider, base_url, model, key or "-", configured)
    fn check(inputs: Inputs, expect: (&str, &str, &str, &str, bool)) {
        let r = run(inputs);
        let key = r.key().map_or("-", Secret::expose);
        assert_eq!(
            (
                r.provider.as_str(),
                r.base_url.as_str(),
                r.model.as_str(),
                key,
                r.is_configured()
            ),
            expect,
            "problem: {:?}, sources: {:?}",
            r.problem,
            r.sources
        );
    }

    fn stored(provider: &str, model: &str, keys: &[(&str, &str)]) -> StoredLlm {
        StoredLlm {
            provider: provider.into(),
            base_url: String::new(),
            model: model.into(),
            api_keys: keys
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            key_urls: keys
                .iter()
                .map(|(k, _)| (k.to_string(), "".into()))
                .collect(),
            formats: Default::default(),
        }
    }

    /// The panel saved `key` for `provider` together with `url`, and the
    /// base URL on file is now `base_url`.
    fn stored_with_url(provider: &str, base_url: &str, key: &str, url: &str) -> StoredLlm {
        StoredLlm {
            base_url: base_url.into(),
            key_urls: [(provider.to_owned(), url.to_owned())].into(),
            ..stored(provider, "m", &[(provider, key)])
        }
    }

    fn cli(provider: &str, base_url: &str) -> Layer {
        Layer::command_line(Some(provider), Some(base_url), None, None)
    }

    fn file(provider: &str, base_url: &str, model: &str) -> LlmConfig {
        LlmConfig {
            provider: provider.into(),
            base_url: base_url.into(),
            model: model.into(),
            ..Config::defaults().llm
        }
    }

    #[test]
    fn nothing_configured_says_so() {
        check(Inputs::default(), ("", "", "", "-", false));
        assert!(run(Inputs::default()).problem.unwrap().contains("Demo"));
    }

    #[test]
    fn each_layer_overrides_the_ones_below() {
        let everywhere = |i: Inputs| Inputs {
            env: &[("RIVET_LLM_PROVIDER", "groq"), ("RIVET_LLM_MODEL", "env-m")],
            dotenv: &[
                ("RIVET_LLM_PROVIDER", "mistral"),
                ("RIVET_LLM_MODEL", "dot-m"),
            ],
            file: file("deepseek", "", "file-m"),
            ..i
        };
        check(
            everywhere(Inputs {
                stored: stored("openai", "panel-m", &[("openai", "sk-1")]),
                ..Inputs::default()
            }),
            (
                "openai",
                "https://api.openai.com/v1",
                "panel-m",
                "sk-1",
                true,
            ),
        );
        check(
            everywhere(Inputs {
                env: &[("GROQ_API_KEY", "g")],
                ..Inputs::default()
            }),
            (
                "groq",
                "https://api.groq.com/openai/v1",
                "env-m",
                "-",
                false,
            ),
        );
        check(
            Inputs {
                dotenv: &[
                    ("RIVET_LLM_PROVIDER", "mistral"),
                    ("MISTRAL_API_KEY", "m-k"),
                ],
                file: file("deepseek", "", "file-m"),
                ..Inputs::default()
            },
            (
                "mistral",
                "https://api.mistral.ai/v1",
                "codestral-latest",
                "m-k",
                true,
            ),
        );
        check(
            Inputs {
                env: &[("DEEPSEEK_API_KEY", "d-k")],
                file: file("deepseek", "", "file-m"),
                ..Inputs::default()
            },
            (
                "deepseek",
                "https://api.deepseek.com/v1",
                "file-m",
                "d-k",
                true,
            ),
        );
    }

    #[test]
    fn command_line_beats_everything() {
        check(
            Inputs {
                cli: Layer::command_line(
                    None,
                    Some("http://127.0.0.1:9/v1/"),
                    Some("x"),
                    Some("k"),
                ),
                stored: stored("openai", "panel-m", &[("openai", "sk-1")]),
                ..Inputs::default()
            },
            ("custom", "http://127.0.0.1:9/v1", "x", "k", true),
        );
        // The panel's OpenAI key does not follow a URL typed on the command line.
        check(
            Inputs {
                cli: Layer::command_line(None, Some("http://127.0.0.1:9/v1"), None, None),
                stored: stored("openai", "panel-m", &[("openai", "sk-1")]),
                ..Inputs::default()
            },
            ("custom", "http://127.0.0.1:9/v1", "", "-", true),
        );
        check(
            Inputs {
                cli: Layer::command_line(Some("groq"), None, Some("m"), None),
                env: &[("GROQ_API_KEY", "gsk")],
                ..Inputs::default()
            },
            ("groq", "https://api.groq.com/openai/v1", "m", "gsk", true),
        );
    }

    #[test]
    fn lower_layers_cannot_redirect_a_higher_provider_or_its_key() {
        // The panel chose OpenAI; an environment URL and generic key are for
        // something else and must not be combined with it.
        check(
            Inputs {
                stored: stored("openai", "", &[("openai", "sk-1")]),
                env: &[
                    ("RIVET_LLM_BASE_URL", "http://evil.example/v1"),
                    ("RIVET_LLM_API_KEY", "other"),
                ],
                ..Inputs::default()
            },
            (
                "openai",
                "https://api.openai.com/v1",
                "gpt-4.1",
                "sk-1",
                true,
            ),
        );
        check(
            Inputs {
                stored: stored("groq", "", &[]),
                env: &[("RIVET_LLM_API_KEY", "other"), ("GROQ_API_KEY", "gsk")],
                ..Inputs::default()
            },
            (
                "groq",
                "https://api.groq.com/openai/v1",
                "llama-3.3-70b-versatile",
                "gsk",
                true,
            ),
        );
        // The panel's key for another provider is not used either.
        check(
            Inputs {
                stored: stored("groq", "", &[("openai", "sk-1")]),
                ..Inputs::default()
            },
            (
                "groq",
                "https://api.groq.com/openai/v1",
                "llama-3.3-70b-versatile",
                "-",
                false,
            ),
        );
    }

    #[test]
    fn a_preset_url_gets_its_key() {
        check(
            Inputs {
                env: &[("OPENAI_API_KEY", "sk-env")],
                ..Inputs::default()
            },
            (
                "openai",
                "https://api.openai.com/v1",
                "gpt-4.1",
                "sk-env",
                true,
            ),
        );
        // Asked for by a request, the preset's own URL still gets it.
        check(
            Inputs {
                cli: cli("openai", "https://API.openai.com:443/v1/"),
                stored: stored("groq", "", &[("openai", "sk-1")]),
                ..Inputs::default()
            },
            (
                "openai",
                "https://API.openai.com:443/v1",
                "gpt-4.1",
                "sk-1",
                true,
            ),
        );
        // A key saved with a proxy URL may still go to its provider.
        check(
            Inputs {
                stored: stored_with_url("openai", "", "sk-1", "https://proxy.example/v1"),
                ..Inputs::default()
            },
            ("openai", "https://api.openai.com/v1", "m", "sk-1", true),
        );
    }

    #[test]
    fn the_url_saved_with_a_key_gets_it() {
        let gpu = "http://gpu-box:8000/v1";
        check(
            Inputs {
                stored: stored_with_url("custom", gpu, "k-1", gpu),
                ..Inputs::default()
            },
            ("custom", gpu, "m", "k-1", true),
        );
        check(
            Inputs {
                cli: cli("custom", "http://gpu-box:8000/v1/chat"),
                stored: stored_with_url("custom", gpu, "k-1", gpu),
                ..Inputs::default()
            },
            ("custom", "http://gpu-box:8000/v1/chat", "", "k-1", true),
        );
        check(
            Inputs {
                stored: stored_with_url(
                    "openai",
                    "https://proxy.example/v1",
                    "sk-1",
                    "https://proxy.example/v1/",
                ),
                ..Inputs::default()
            },
            ("openai", "https://proxy.example/v1", "m", "sk-1", true),
        );
        check(
            Inputs {
                cli: Layer::command_line(None, Some(gpu), Some("x"), Some("k-cli")),
                ..Inputs::default()
            },
            ("custom", gpu, "x", "k-cli", true),
        );
        // The deployment's configuration is one source: its URL goes with
        // its keys, wherever among the environment, .env and Leptos.toml.
        let deployment = [
            (
                &[
                    ("RIVET_LLM_PROVIDER", "custom"),
                    ("RIVET_LLM_BASE_URL", gpu),
                    ("RIVET_LLM_API_KEY", "k-env"),
                ][..],
                &[][..],
                file("", "", ""),
            ),
            (
                &[("RIVET_LLM_API_KEY", "k-env")][..],
                &[][..],
                file("custom", gpu, ""),
            ),
            (
                &[
                    ("RIVET_LLM_PROVIDER", "openai"),
                    ("RIVET_LLM_BASE_URL", gpu),
                ][..],
                &[("OPENAI_API_KEY", "k-env")][..],
                file("", "", ""),
            ),
        ];
        for (env, dotenv, file) in deployment {
            let r = run(Inputs {
                env,
                dotenv,
                file,
                ..Inputs::default()
            });
            assert_eq!(
                (r.base_url.as_str(), r.key().map(Secret::expose)),
                (gpu, Some("k-env")),
                "{env:?} {dotenv:?}"
            );
        }
    }

    #[test]
    fn an_arbitrary_url_from_a_request_gets_no_key() {
        // The attack: list_models with {"provider":"openai","base_url":"http://any-host/v1"}.
        let r = run(Inputs {
            cli: cli("openai", "http://any-host/v1"),
            stored: stored("openai", "", &[("openai", "sk-1")]),
            ..Inputs::default()
        });
        assert!(r.key().is_none() && !r.is_configured());
        let notice = r.key_notice.clone().unwrap();
        assert!(
            notice.starts_with("No key is sent to http://any-host/v1: the key from settings"),
            "{notice}"
        );
        assert_eq!(r.problem.as_ref(), Some(&notice));
        assert_eq!(r.sources.api_key, "settings (not sent to this URL)");
        let public = r.public();
        assert!(!public.key_set && public.key_notice == Some(notice));
        // Nor does a custom URL get the key saved with another one, whether
        // a request names it or the panel saved it later without the key.
        let gpu = "http://gpu-box:8000/v1";
        for (cli_layer, base_url) in [
            (cli("custom", "http://any-host/v1"), gpu),
            (cli("custom", "http://gpu-box:8000/v10"), gpu),
            (cli("custom", "https://gpu-box:8000/v1"), gpu),
            (Layer::default(), "http://any-host/v1"),
        ] {
            let r = run(Inputs {
                cli: cli_layer,
                stored: stored_with_url("custom", base_url, "k-1", gpu),
                ..Inputs::default()
            });
            assert!(r.key().is_none(), "{}", r.base_url);
            // A keyless server can still be asked; the notice says why no key went.
            assert!(
                r.is_configured() && r.key_notice.is_some(),
                "{:?}",
                r.problem
            );
        }
        // A preset chosen by URL alone has no key saved for it here.
        check(
            Inputs {
                cli: Layer::command_line(None, Some("http://any-host/v1"), None, None),
                stored: stored("openai", "", &[("openai", "sk-1")]),
                ..Inputs::default()
            },
            ("custom", "http://any-host/v1", "", "-", true),
        );
    }

    #[test]
    fn an_environment_key_with_a_caller_chosen_url_gets_none() {
        let r = run(Inputs {
            cli: cli("openai", "http://any-host/v1"),
            env: &[("OPENAI_API_KEY", "sk-env")],
            dotenv: &[("OPENAI_API_KEY", "sk-dot")],
            ..Inputs::default()
        });
        assert!(r.key().is_none());
        assert!(r.key_notice.unwrap().contains("environment OPENAI_API_KEY"));
        // The deployment's URL is for its own provider, not for a request's.
        let r = run(Inputs {
            cli: cli("openai", "http://gpu-box:11434/v1"),
            env: &[
                ("RIVET_LLM_BASE_URL", "http://gpu-box:11434/v1"),
                ("OPENAI_API_KEY", "sk-env"),
            ],
            ..Inputs::default()
        });
        assert!(r.key().is_none());
        // A URL saved in the panel does not receive the environment's key.
        let r = run(Inputs {
            stored: StoredLlm {
                base_url: "http://any-host/v1".into(),
                ..StoredLlm::default()
            },
            env: &[
                ("RIVET_LLM_PROVIDER", "custom"),
                ("RIVET_LLM_BASE_URL", "http://gpu-box:8000/v1"),
                ("RIVET_LLM_API_KEY", "k-env"),
            ],
            ..Inputs::default()
        });
        assert_eq!(r.base_url, "http://any-host/v1");
        assert!(r.key().is_none() && r.key_notice.is_some());
        // Nor a generic key on the command line the panel's URL.
        let r = run(Inputs {
            cli: Layer::command_line(None, None, None, Some("k-cli")),
            stored: stored_with_url(
                "custom",
                "http://any-host/v1",
                "k-1",
                "http://gpu-box:8000/v1",
            ),
            ..Inputs::default()
        });
        assert!(r.key().is_none());
    }

    #[test]
    fn a_key_does_not_follow_a_base_url_changed_after_resolving() {
        let mut llm = ResolvedLlm::custom(
            "http://127.0.0.1:9/v1",
            "m",
            Some(Secret::new("k").unwrap()),
        );
        assert_eq!(llm.key().map(Secret::expose), Some("k"));
        llm.base_url = "http://any-host/v1".into();
        assert!(llm.key().is_none());
        assert!(!llm.public().key_set);
    }

    #[test]
    fn providers_are_inferred_from_urls_and_keys() {
        check(
            Inputs {
                env: &[("RIVET_LLM_BASE_URL", "http://localhost:11434/v1")],
                ..Inputs::default()
            },
            ("ollama", "http://localhost:11434/v1", "", "-", true),
        );
        check(
            Inputs {
                env: &[("OPENROUTER_API_KEY", "or-k")],
                ..Inputs::default()
            },
            (
                "openrouter",
                "https://openrouter.ai/api/v1",
                "anthropic/claude-sonnet-4",
                "or-k",
                true,
            ),
        );
        check(
            Inputs {
                env: &[("RIVET_LLM_PROVIDER", "custom")],
                ..Inputs::default()
            },
            ("custom", "", "", "-", false),
        );
    }

    #[test]
    fn demo_needs_nothing_and_takes_no_key() {
        check(
            Inputs {
                stored: stored("demo", "", &[]),
                env: &[
                    ("RIVET_LLM_API_KEY", "k"),
                    ("RIVET_LLM_BASE_URL", "http://x/v1"),
                ],
                ..Inputs::default()
            },
            ("demo", "", "rivet-replay", "-", true),
        );
        // Not even once the scripted server runs, nor when its keys are set
        // everywhere and a request names the demo.
        let mut r = run(Inputs {
            cli: cli("demo", "http://x/v1"),
            stored: stored("demo", "", &[("demo", "k-demo")]),
            env: &[
                ("RIVET_LLM_PROVIDER", "demo"),
                ("RIVET_LLM_API_KEY", "k"),
                ("RIVET_LLM_BASE_URL", "http://x/v1"),
            ],
            ..Inputs::default()
        });
        r.base_url = "http://x/v1".into();
        assert!(r.is_demo() && r.key().is_none() && r.key_notice.is_none());
    }

    #[test]
    fn bad_input_is_explained() {
        let r = run(Inputs {
            env: &[("RIVET_LLM_PROVIDER", "acme")],
            ..Inputs::default()
        });
        assert!(r.problem.unwrap().contains("acme"));
        let r = run(Inputs {
            env: &[("OPENAI_API_KEY", "sk bad")],
            ..Inputs::default()
        });
        let problem = r.problem.unwrap();
        assert!(
            problem.contains("OPENAI_API_KEY") && !problem.contains("sk bad"),
            "{problem}"
        );
    }

    #[test]
    fn sources_name_each_origin() {
        let r = run(Inputs {
            stored: stored("", "m", &[]),
            env: &[("RIVET_LLM_PROVIDER", "groq")],
            dotenv: &[("GROQ_API_KEY", "gsk")],
            ..Inputs::default()
        });
        assert_eq!(r.sources.provider, "environment RIVET_LLM_PROVIDER");
        assert_eq!(r.sources.model, "settings");
        assert_eq!(r.sources.base_url, "preset");
        assert_eq!(r.sources.api_key, ".env GROQ_API_KEY");
    }

    #[test]
    fn public_settings_never_contain_the_key() {
        let key = "sk-proj-abcdefghijklmnopqrstuvwxyz0123456789";
        let r = run(Inputs {
            stored: stored("openai", "", &[("openai", key)]),
            ..Inputs::default()
        });
        let public = r.public();
        assert!(public.key_set && public.configured);
        let json = serde_json::to_string(&public).unwrap();
        let debug = format!("{r:?}{public:?}");
        // No fragment of the key, however short, shows up.
        for window in key.as_bytes().windows(6) {
            let fragment = std::str::from_utf8(window).unwrap();
            assert!(!json.contains(fragment), "{fragment} in {json}");
            assert!(!debug.contains(fragment), "{fragment} in debug output");
        }
    }

    #[test]
    fn dotenv_is_read_without_touching_the_environment() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(".env");
        std::fs::write(
            &path,
            "RIVET_LLM_MODEL=from-dotenv\nexport GROQ_API_KEY=\"g k\"\n",
        )
        .unwrap();
        let vars = read_dotenv(&path);
        assert_eq!(
            vars,
            [
                ("RIVET_LLM_MODEL".to_owned(), "from-dotenv".to_owned()),
                ("GROQ_API_KEY".to_owned(), "g k".to_owned())
            ]
        );
        assert!(std::env::var("RIVET_LLM_MODEL").map_or(true, |v| v != "from-dotenv"));
        assert!(read_dotenv(&dir.path().join("missing")).is_empty());
    }
}
