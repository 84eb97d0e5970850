//! The IDE's configuration: `Leptos.toml`, overridden key by key by
//! `RIVET_<SECTION>_<KEY>` environment variables.
//!
//! The repository's own `Leptos.toml` is compiled in as the defaults, so a
//! key documented there always exists, and a user's file only needs the keys
//! it changes.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use toml::{Table, Value};

/// The defaults, documented key by key.
const DEFAULTS: &str = include_str!("../../Leptos.toml");

#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Config {
    pub server: ServerConfig,
    pub llm: LlmConfig,
    pub runtime: RuntimeConfig,
    pub sandbox: SandboxConfig,
    pub agent: AgentConfig,
    pub fix: FixConfig,
    pub import: ImportConfig,
    pub budget: BudgetConfig,
    pub git: GitConfig,
    pub publish: PublishConfig,
    pub database: DatabaseConfig,
    pub mcp: McpConfig,
}

pub use crate::runtime::mcp::{McpRun, McpServerSpec};

/// The owner's MCP servers (`[mcp]`; `server::mcp`).
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct McpConfig {
    pub servers: Vec<McpServerSpec>,
    pub start_timeout_secs: u64,
    pub call_timeout_secs: u64,
    pub tools_budget_percent: u32,
}

/// The projects' databases (`[database]`).
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct DatabaseConfig {
    /// An existing server's admin URL; empty: Rivet runs its own.
    pub url: String,
    /// Where PostgreSQL's programs are; empty: found.
    pub bin_dir: String,
}

/// Published sites (`[publish]`): where they are served and how large one
/// may be.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct PublishConfig {
    /// Sites are served at `<project>.<domain>` on the IDE's port.
    pub domain: String,
    /// The address a site is shown at, with `{project}` in it; empty:
    /// `http://{project}.<domain>:<the IDE's port>/`.
    pub url: String,
    /// The largest site, all its files together.
    pub max_mb: u64,
    /// The longest a build may run.
    pub build_timeout_secs: u64,
}

/// Who the project's commits are written by (`[git]`): the author of every
/// checkpoint, and so of what a push sends.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct GitConfig {
    pub author_name: String,
    pub author_email: String,
}

/// Spending limits (`[budget]`).
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct BudgetConfig {
    /// Dollars a project may spend when it sets no budget of its own.
    #[serde(deserialize_with = "optional_dollars")]
    pub project_usd: Option<f64>,
}

/// An amount of dollars given as a number or a string ("" for none): the
/// environment can only give strings.
fn optional_dollars<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<f64>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Given {
        Number(f64),
        Text(String),
    }
    let amount = match Given::deserialize(d)? {
        Given::Number(n) => Some(n),
        Given::Text(s) if s.trim().is_empty() => None,
        Given::Text(s) => Some(s.trim().parse::<f64>().map_err(serde::de::Error::custom)?),
    };
    match amount {
        Some(n) if !n.is_finite() || n < 0.0 => Err(serde::de::Error::custom(
            "an amount of dollars must be zero or more",
        )),
        other => Ok(other),
    }
}

/// Limits of every import (`[import]`), checked while it is written.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ImportConfig {
    pub max_entries: usize,
    pub max_file_mb: u64,
    pub max_total_mb: u64,
}

/// The automatic fix loop (`[fix]`).
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct FixConfig {
    pub enabled: bool,
    pub max_attempts: u32,
    /// 0: no budget.
    pub token_budget: u32,
    pub settle_ms: u64,
    /// How long after the dev server is ready an error of the previewed
    /// page still counts as a failure of the last answer.
    pub page_error_ms: u64,
}

#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ServerConfig {
    pub addr: String,
    pub data_dir: PathBuf,
    pub auth: AuthMode,
    pub token: String,
    pub allowed_hosts: Vec<String>,
}

/// Whether the IDE asks for its access token.
#[derive(Debug, Clone, Copy, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum AuthMode {
    Token,
    None,
}

#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct LlmConfig {
    pub provider: String,
    pub base_url: String,
    pub model: String,
    pub models: Vec<String>,
    pub max_tokens: u32,
    /// The model's context window when its preset does not know it.
    pub context_tokens: u32,
    /// Loopback addresses searched for a local model server
    /// (`llm::local_probe`); others are reported and not tried.
    pub local_servers: Vec<String>,
    /// How Build answers give their files and commands.
    pub format: ActionFormat,
    /// Dollars per million input tokens; `None`: not configured.
    #[serde(deserialize_with = "optional_dollars")]
    pub price_input: Option<f64>,
    #[serde(deserialize_with = "optional_dollars")]
    pub price_output: Option<f64>,
    /// The model takes images (agent tools' images are sent to it).
    pub vision: bool,
}

impl LlmConfig {
    /// The configured price, when both halves are set.
    pub fn price(&self) -> Option<crate::runtime::llm::Price> {
        Some(crate::runtime::llm::Price {
            input: self.price_input?,
            output: self.price_output?,
        })
    }
}

pub use crate::runtime::kind::RuntimeKind;
pub use crate::runtime::llm::ActionFormat;

#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct RuntimeConfig {
    pub default: RuntimeKind,
    /// Where `@webcontainer/api`'s ES modules are served from.
    pub webcontainer_dir: PathBuf,
}

/// Agent mode (`src/server/agent`).
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct AgentConfig {
    /// The mode a new conversation starts in.
    pub default_mode: ConversationMode,
    /// Run `write_file`, `replace` and `run_shell_command` without asking.
    pub auto_approve: bool,
    /// Most model requests one agent run makes.
    pub max_steps: u32,
}

/// How the model works on the project: one answer with bolt actions, or a
/// loop of tool calls (shared with the session, which remembers each
/// conversation's choice).
pub type ConversationMode = crate::runtime::session::Mode;

#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct SandboxConfig {
    pub memory_mb: u64,
    pub max_processes: u64,
    pub file_size_mb: u64,
    /// Disk space a project's folders may take, in MiB (`sandbox/quota.rs`).
    pub disk_mb: u64,
    pub open_files: u64,
    pub cpu_secs: u64,
    pub timeout_secs: u64,
    pub tmp_mb: u64,
    pub network: NetworkMode,
    /// Hosts a `registry` sandbox may reach: `host`, `host:port` or a URL.
    pub registry_hosts: Vec<String>,
    pub shared_npm_cache: bool,
    pub host_uid: u32,
    pub max_previews: u32,
}

/// What sandboxed code may reach over the network (`sandbox.network`).
#[derive(Debug, Clone, Copy, Serialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum NetworkMode {
    /// Only the hosts of `sandbox.registry_hosts`, through the IDE's proxy.
    Registry,
    /// Any address but the host's loopback (slirp4netns).
    Full,
    /// Nothing: only the sandbox's own loopback.
    None,
}

impl NetworkMode {
    const EXPECTED: &str = "sandbox.network must be \"registry\" (only the package registries of \
                            sandbox.registry_hosts, the default), \"full\" (any address but the \
                            host's loopback) or \"none\"";

    pub fn as_str(self) -> &'static str {
        match self {
            NetworkMode::Registry => "registry",
            NetworkMode::Full => "full",
            NetworkMode::None => "none",
        }
    }
}

impl<'de> Deserialize<'de> for NetworkMode {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl serde::de::Visitor<'_> for Visitor {
            type Value = NetworkMode;

            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str(NetworkMode::EXPECTED)
            }

            fn visit_str<E: serde::de::Error>(self, text: &str) -> Result<NetworkMode, E> {
                match text.trim().to_ascii_lowercase().as_str() {
                    "registry" => Ok(NetworkMode::Registry),
                    "full" => Ok(NetworkMode::Full),
                    "none" => Ok(NetworkMode::None),
                    _ => Err(E::custom(format!(
                        "{}, not {text:?}",
                        NetworkMode::EXPECTED
                    ))),
                }
            }

            // `network = true` gave the whole network, LAN included; it is
            // refused rather than guessed so that each installation chooses.
            fn visit_bool<E: serde::de::Error>(self, value: bool) -> Result<NetworkMode, E> {
                Err(E::custom(format!(
                    "{}; true and false are no longer accepted (`{value}` was what is now \"{}\")",
                    NetworkMode::EXPECTED,
                    if value { "full" } else { "none" }
                )))
            }
        }
        deserializer.deserialize_any(Visitor)
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("cannot read {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path} is not valid TOML: {source}")]
    Syntax {
        path: PathBuf,
        source: Box<toml::de::Error>,
    },
    #[error("{path}: unknown key `{key}` (see the documented defaults in Rivet's Leptos.toml)")]
    UnknownKey { path: PathBuf, key: String },
    #[error("{var}={value:?} is not a valid {expected}")]
    BadEnv {
        var: String,
        value: String,
        expected: &'static str,
    },
    #[error("invalid configuration: {0}")]
    Invalid(String),
}

impl Config {
    /// Loads `path` if it exists (it is optional), then applies the
    /// environment. Relative data directories are resolved against `cwd`.
    pub fn load(path: &Path, cwd: &Path) -> Result<Config, ConfigError> {
        let file = match std::fs::read_to_string(path) {
            Ok(text) => Some(text),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(source) => {
                return Err(ConfigError::Read {
                    path: path.to_owned(),
                    source,
                });
            }
        };
        let env: Vec<(String, String)> = std::env::vars().collect();
        let mut config = Self::from_parts(path, file.as_deref(), &env)?;
        if config.server.data_dir.is_relative() {
            config.server.data_dir = cwd.join(&config.server.data_dir);
        }
        Ok(config)
    }

    /// The pure part of [`Config::load`]: defaults, then the file's text, then
    /// the given environment.
    pub fn from_parts(
        path: &Path,
        file: Option<&str>,
        env: &[(String, String)],
    ) -> Result<Config, ConfigError> {
        let mut table = parse(Path::new("Leptos.toml (built-in defaults)"), DEFAULTS)?;
        if let Some(text) = file {
            merge(&mut table, parse(path, text)?, path)?;
        }
        apply_env(&mut table, env)?;
        Value::Table(table)
            .try_into()
            .map_err(|e: toml::de::Error| ConfigError::Invalid(e.message().to_owned()))
    }

    /// The defaults alone, as documented in `Leptos.toml`.
    pub fn defaults() -> Config {
        // The compiled-in file is checked by a test, so this cannot fail at run time.
        #[allow(clippy::expect_used)]
        Self::from_parts(Path::new("Leptos.toml"), None, &[])
            .expect("built-in Leptos.toml is valid")
    }
}

fn parse(path: &Path, text: &str) -> Result<Table, ConfigError> {
    text.parse::<Table>().map_err(|source| ConfigError::Syntax {
        path: path.to_owned(),
        source: Box::new(source),
    })
}

/// Overlays `user` on `base`, refusing keys the defaults do not document.
fn merge(base: &mut Table, user: Table, path: &Path) -> Result<(), ConfigError> {
    for (section, value) in user {
        let Some(Value::Table(base_section)) = base.get_mut(&section) else {
            return Err(ConfigError::UnknownKey {
                path: path.to_owned(),
                key: section,
            });
        };
        let Value::Table(user_section) = value else {
            return Err(ConfigError::Invalid(format!("[{section}] must be a table")));
        };
        for (key, value) in user_section {
            if !base_section.contains_key(&key) {
                return Err(ConfigError::UnknownKey {
                    path: path.to_owned(),
                    key: format!("{section}.{key}"),
                });
            }
            base_section.insert(key, value);
        }
    }
    Ok(())
}

/// The name of the variable that overrides `section.key`.
pub fn env_var_name(section: &str, key: &str) -> String {
    format!("RIVET_{}_{}", section, key).to_uppercase()
}

fn apply_env(table: &mut Table, env: &[(String, String)]) -> Result<(), ConfigError> {
    for (section, value) in table.iter_mut() {
        let Value::Table(keys) = value else { continue };
        for (key, current) in keys.iter_mut() {
            let var = env_var_name(section, key);
            let Some((_, raw)) = env.iter().find(|(name, _)| *name == var) else {
                continue;
            };
            *current = env_value(&var, raw, current)?;
        }
    }
    Ok(())
}

/// Parses an environment value as the type the default has.
fn env_value(var: &str, raw: &str, current: &Value) -> Result<Value, ConfigError> {
    let bad = |expected| ConfigError::BadEnv {
        var: var.to_owned(),
        value: raw.to_owned(),
        expected,
    };
    Ok(match current {
        Value::Integer(_) => Value::Integer(raw.trim().parse().map_err(|_| bad("integer"))?),
        Value::Boolean(_) => match raw.trim().to_ascii_lowercase().as_str() {
            "1" | "true" | "yes" | "on" => Value::Boolean(true),
            "0" | "false" | "no" | "off" => Value::Boolean(false),
            _ => return Err(bad("boolean (true or false)")),
        },
        Value::Array(_) => Value::Array(
            raw.split(',')
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(|s| Value::String(s.to_owned()))
                .collect(),
        ),
        _ => Value::String(raw.to_owned()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load(file: Option<&str>, env: &[(&str, &str)]) -> Result<Config, ConfigError> {
        let env: Vec<(String, String)> = env
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        Config::from_parts(Path::new("test.toml"), file, &env)
    }

    #[test]
    fn agent_mode_approval_and_step_limit_come_from_the_environment() {
        let config = load(
            None,
            &[
                ("RIVET_AGENT_DEFAULT_MODE", "agent"),
                ("RIVET_AGENT_AUTO_APPROVE", "true"),
                ("RIVET_AGENT_MAX_STEPS", "5"),
            ],
        )
        .unwrap();
        assert_eq!(config.agent.default_mode, ConversationMode::Agent);
        assert!(config.agent.auto_approve);
        assert_eq!(config.agent.max_steps, 5);
        assert!(load(None, &[("RIVET_AGENT_DEFAULT_MODE", "chat")]).is_err());
    }

    #[test]
    fn the_disk_quota_comes_from_the_environment() {
        assert_eq!(Config::defaults().sandbox.disk_mb, 4096);
        let config = load(None, &[("RIVET_SANDBOX_DISK_MB", "8")]).unwrap();
        assert_eq!(config.sandbox.disk_mb, 8);
    }

    #[test]
    fn a_disk_quota_that_is_not_a_number_is_refused_naming_the_variable() {
        let err = load(None, &[("RIVET_SANDBOX_DISK_MB", "8G")])
            .unwrap_err()
            .to_string();
        assert!(err.contains("RIVET_SANDBOX_DISK_MB"), "{err}");
    }

    #[test]
    fn the_fix_loop_is_on_by_default_and_can_be_turned_off() {
        let config = Config::defaults();
        assert!(config.fix.enabled);
        assert_eq!(config.fix.max_attempts, 3);
        let config = load(None, &[("RIVET_FIX_ENABLED", "false")]).unwrap();
        assert!(!config.fix.enabled);
        let config = load(Some("[fix]\nmax_attempts = 1\n"), &[]).unwrap();
        assert_eq!(config.fix.max_attempts, 1);
    }

    #[test]
    fn defaults_are_the_documented_file() {
        let config = Config::defaults();
        assert_eq!(config.server.addr, "127.0.0.1:3000");
        assert_eq!(config.runtime.default, RuntimeKind::Sandbox);
        assert_eq!(config.agent.default_mode, ConversationMode::Build);
        assert!(!config.agent.auto_approve);
        assert_eq!(config.agent.max_steps, 25);
        assert_eq!(config.server.auth, AuthMode::Token);
        assert!(config.server.token.is_empty());
        assert_eq!(config.sandbox.network, NetworkMode::Registry);
        assert_eq!(
            config.sandbox.registry_hosts,
            ["registry.npmjs.org", "registry.yarnpkg.com"]
        );
    }

    #[test]
    fn an_old_boolean_network_setting_is_refused_with_the_new_values() {
        for file in [
            "[sandbox]\nnetwork = true\n",
            "[sandbox]\nnetwork = false\n",
        ] {
            let err = load(Some(file), &[]).unwrap_err().to_string();
            for needle in ["sandbox.network", "\"registry\"", "\"full\"", "\"none\""] {
                assert!(err.contains(needle), "{needle} missing in {err}");
            }
        }
        let err = load(None, &[("RIVET_SANDBOX_NETWORK", "on")]).unwrap_err();
        assert!(err.to_string().contains("\"on\""), "{err}");
        let config = load(Some("[sandbox]\nnetwork = \"full\"\n"), &[]).unwrap();
        assert_eq!(config.sandbox.network, NetworkMode::Full);
    }

    #[test]
    fn file_overrides_only_the_keys_it_names() {
        let config = load(Some("[sandbox]\ntimeout_secs = 9\n"), &[]).unwrap();
        assert_eq!(config.sandbox.timeout_secs, 9);
        assert_eq!(
            config.sandbox.memory_mb,
            Config::defaults().sandbox.memory_mb
        );
    }

    #[test]
    fn env_overrides_the_file() {
        let config = load(
            Some("[server]\naddr = \"127.0.0.1:1\"\n"),
            &[
                ("RIVET_SERVER_ADDR", "0.0.0.0:8080"),
                ("RIVET_SERVER_DATA_DIR", "/srv/rivet"),
                ("RIVET_SANDBOX_NETWORK", "none"),
                ("RIVET_SANDBOX_REGISTRY_HOSTS", "mirror.lan:4873"),
                ("RIVET_SANDBOX_MAX_PROCESSES", "12"),
                ("RIVET_LLM_MODELS", "a, b"),
                ("RIVET_RUNTIME_DEFAULT", "webcontainer"),
            ],
        )
        .unwrap();
        assert_eq!(config.server.addr, "0.0.0.0:8080");
        assert_eq!(config.server.data_dir, PathBuf::from("/srv/rivet"));
        assert_eq!(config.sandbox.network, NetworkMode::None);
        assert_eq!(config.sandbox.registry_hosts, ["mirror.lan:4873"]);
        assert_eq!(config.sandbox.max_processes, 12);
        assert_eq!(config.llm.models, vec!["a", "b"]);
        assert_eq!(config.runtime.default, RuntimeKind::Webcontainer);
    }

    #[test]
    fn the_local_servers_come_from_the_file_or_the_environment() {
        let config = load(
            Some("[llm]\nlocal_servers = [\"http://127.0.0.1:5001\"]\n"),
            &[],
        )
        .unwrap();
        assert_eq!(config.llm.local_servers, ["http://127.0.0.1:5001"]);
        assert_eq!(config.llm.format, ActionFormat::Auto, "the default");
        let config = load(None, &[("RIVET_LLM_FORMAT", "tools")]).unwrap();
        assert_eq!(config.llm.format, ActionFormat::Tools);
        assert!(load(None, &[("RIVET_LLM_FORMAT", "xml")]).is_err());
        let env = [(
            "RIVET_LLM_LOCAL_SERVERS",
            "http://127.0.0.1:1, http://[::1]:2",
        )];
        let config = load(None, &env).unwrap();
        assert_eq!(
            config.llm.local_servers,
            ["http://127.0.0.1:1", "http://[::1]:2"]
        );
    }

    #[test]
    fn unknown_keys_are_named() {
        let err = load(Some("[sandbox]\nmemroy_mb = 1\n"), &[]).unwrap_err();
        assert!(err.to_string().contains("sandbox.memroy_mb"), "{err}");
        let err = load(Some("[nope]\n"), &[]).unwrap_err();
        assert!(err.to_string().contains("`nope`"), "{err}");
    }

    #[test]
    fn bad_values_are_named() {
        let err = load(None, &[("RIVET_SANDBOX_CPU_SECS", "lots")]).unwrap_err();
        assert!(err.to_string().contains("RIVET_SANDBOX_CPU_SECS"), "{err}");
        let err = load(None, &[("RIVET_RUNTIME_DEFAULT", "docker")]).unwrap_err();
        assert!(err.to_string().contains("docker"), "{err}");
        let err = load(Some("[server\n"), &[]).unwrap_err();
        assert!(err.to_string().contains("test.toml"), "{err}");
    }
}
