//! Which provider, URL, model and key the IDE uses, and where each came from.
//!
//! Layers, highest first: the command line (`rivet ask`), the settings panel,
//! the environment, a `.env` file in the working directory, then
//! `Leptos.toml`. The provider is chosen first; a base URL, model or generic
//! key (`RIVET_LLM_API_KEY`) from a layer *below* the provider's is ignored,
//! since it may belong to another provider: a key must never be sent to a
//! provider it was not meant for. A provider's own key variable
//! (`GROQ_API_KEY`…) and the panel's key for that provider apply from any
//! layer.

use std::fmt;
use std::path::Path;

use super::provider::{self, Preset, TokenLimitField};
use super::secret::Secret;
use super::store::StoredLlm;
use crate::runtime::llm::{PublicLlmSettings, SettingSources};
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
    pub api_key: Option<Secret>,
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
    pub generic_key: Sourced,
    /// Keys tied to one provider id.
    pub provider_keys: Vec<(String, Sourced)>,
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
    /// provider is never sent to the URL typed on the command line.
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
            generic_key: Sourced::new(key.unwrap_or(""), origin("--api-key")),
            provider_keys: Vec::new(),
        }
    }

    /// The settings panel's saved values.
    pub fn settings(stored: &StoredLlm) -> Layer {
        let origin = || Source::Settings.to_string();
        Layer {
            provider: Sourced::new(&stored.provider, origin()),
            base_url: Sourced::new(&stored.base_url, origin()),
            model: Sourced::new(&stored.model, origin()),
            generic_key: Sourced::default(),
            provider_keys: stored
                .api_keys
                .iter()
                .map(|(id, key)| (id.clone(), Sourced::new(key, origin())))
                .collect(),
        }
    }

    /// Variables, from the process environment or a `.env` file.
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
            generic_key: get(ENV_API_KEY),
            provider_keys: provider::PRESETS
                .iter()
                .filter_map(|p| Some((p.id.to_owned(), get(p.key_env?))))
                .filter(|(_, key)| key.is_set())
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
        .filter(|p| find_key(layers, 0, p.id).is_some())
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
    let first_set =
        |field: fn(&Layer) -> &Sourced| eligible.iter().map(field).find(|s| s.is_set()).cloned();
    let is_demo = preset.id == provider::DEMO;
    let base_url = match first_set(|l| &l.base_url) {
        Some(url) if !is_demo => {
            Sourced::new(&provider::normalize_base_url(&url.value), url.origin)
        }
        _ => Sourced::new(preset.base_url, "preset".to_owned()),
    };
    let model = match first_set(|l| &l.model) {
        Some(model) => model,
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
        None
    } else {
        find_key(layers, provider_layer, preset.id)
    };
    let (api_key, key_problem) = match &key {
        Some(sourced) => match Secret::new(&sourced.value) {
            Ok(secret) => (Some(secret), None),
            Err(e) => (None, Some(format!("The key from {}: {e}.", sourced.origin))),
        },
        None => (None, None),
    };
    let label = if preset.id == provider::CUSTOM {
        host_of(&base_url.value).unwrap_or_else(|| preset.label.to_owned())
    } else {
        preset.label.to_owned()
    };
    let problem = key_problem.or_else(|| {
        if base_url.value.is_empty() && !is_demo {
            Some(
                "The custom provider needs a base URL (Settings, or RIVET_LLM_BASE_URL)."
                    .to_owned(),
            )
        } else if preset.needs_key && api_key.is_none() {
            let var = preset.key_env.unwrap_or(ENV_API_KEY);
            Some(format!(
                "No API key for {label}: add one in Settings or set {var}."
            ))
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
        api_key,
        max_tokens,
        token_limit: preset.token_limit,
        needs_key: preset.needs_key,
        sources: SettingSources {
            provider: provider_origin,
            base_url: base_url.origin,
            model: model.origin,
            api_key: key.map_or_else(|| "not set".to_owned(), |k| k.origin),
        },
        problem,
    }
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
            return Some((preset, i, key.origin.clone()));
        }
    }
    None
}

/// The first key, highest layer first: the provider's own key from any
/// layer, a generic key only from layers at or above the provider's.
fn find_key(layers: &[Layer], provider_layer: usize, id: &str) -> Option<Sourced> {
    layers.iter().enumerate().find_map(|(i, layer)| {
        let own = layer
            .provider_keys
            .iter()
            .find(|(p, key)| p == id && key.is_set())
            .map(|(_, key)| key.clone());
        own.or_else(|| {
            (i <= provider_layer && layer.generic_key.is_set()).then(|| layer.generic_key.clone())
        })
    })
}

fn unconfigured(max_tokens: Option<u32>, problem: String) -> ResolvedLlm {
    ResolvedLlm {
        provider: String::new(),
        label: "no provider".to_owned(),
        base_url: String::new(),
        model: String::new(),
        models: Vec::new(),
        api_key: None,
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
    /// and tools that bypass the layers.
    pub fn custom(base_url: &str, model: &str, api_key: Option<Secret>) -> ResolvedLlm {
        let layer = Layer {
            base_url: Sourced::new(base_url, "given".to_owned()),
            model: Sourced::new(model, "given".to_owned()),
            generic_key: Sourced::new(
                api_key.as_ref().map_or("", Secret::expose),
                "given".to_owned(),
            ),
            ..Layer::default()
        };
        let mut llm = resolve(&[layer], &crate::server::config::Config::defaults().llm);
        // The URL decides the preset's name, but this is always "custom".
        llm.provider = provider::CUSTOM.to_owned();
        llm.label = host_of(&llm.base_url).unwrap_or_else(|| llm.base_url.clone());
        llm
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
            key_set: self.api_key.is_some(),
            key_required: self.needs_key,
            keys_set: Vec::new(),
            configured: self.is_configured(),
            demo: self.is_demo(),
            sources: self.sources.clone(),
            problem: self.problem.clone(),
            presets: provider::PRESETS.iter().map(Preset::info).collect(),
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
        let layers = [
            inputs.cli,
            Layer::settings(&inputs.stored),
            Layer::variables(&vars(inputs.env), Source::Environment),
            Layer::variables(&vars(inputs.dotenv), Source::DotEnv),
            Layer::config_file(&inputs.file),
        ];
        resolve(&layers, &inputs.file)
    }

    /// (provider, base_url, model, key or "-", configured)
    fn check(inputs: Inputs, expect: (&str, &str, &str, &str, bool)) {
        let r = run(inputs);
        let key = r.api_key.as_ref().map_or("-", Secret::expose);
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
        }
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
