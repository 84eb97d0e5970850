//! The LLM layer as the rest of the server holds it: settings in, resolved
//! configurations and model lists out, and the demo provider started the
//! first time it is needed.

use std::net::{Ipv4Addr, SocketAddr};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::OnceCell;

use super::format_slips::FormatSlips;
use super::mock::{MockConfig, MockServer};
use super::model_window::ModelWindows;
use super::models_list;
use super::provider;
use super::settings::{
    Layer, ResolvedLlm, deployment_layers, providers_with_keys, read_dotenv, resolve,
};
use super::settings_file::{SettingsFile, SettingsFileError, StoredSettings};
use crate::runtime::llm::{
    ActionFormat, LlmError, LlmSettingsUpdate, ModelList, PublicLlmSettings,
};
use crate::server::config::Config;

pub struct LlmService {
    config: Arc<Config>,
    settings_file: SettingsFile,
    dotenv: PathBuf,
    demo: OnceCell<MockServer>,
    http: reqwest::Client,
    windows: ModelWindows,
    slips: FormatSlips,
}

/// How long `/v1/models` may take before the configured list is used.
const MODELS_TIMEOUT: Duration = Duration::from_secs(5);

impl LlmService {
    /// How Build answers of `model` from `provider` give their actions: the
    /// settings' choice for them, else the configuration's (`[llm] format`).
    pub fn action_format(&self, provider: &str, model: &str) -> ActionFormat {
        let stored = self.settings_file.load().ok();
        let chosen = stored.and_then(|stored| stored.llm.format_for(provider, model));
        chosen.unwrap_or(self.config.llm.format)
    }

    /// Which models slip out of the format.
    pub fn format_slips(&self) -> &FormatSlips {
        &self.slips
    }

    /// The settings panel's file, which other sections share.
    pub fn settings_file(&self) -> &SettingsFile {
        &self.settings_file
    }

    /// Settings live in the configuration's data directory; `.env` is read
    /// from the working directory.
    pub fn new(config: Arc<Config>) -> LlmService {
        let cwd = std::env::current_dir().unwrap_or_default();
        LlmService {
            settings_file: SettingsFile::in_dir(&config.server.data_dir),
            config,
            dotenv: cwd.join(".env"),
            demo: OnceCell::new(),
            http: reqwest::Client::new(),
            windows: ModelWindows::default(),
            slips: FormatSlips::default(),
        }
    }

    /// The effective configuration, with `command_line` (from `rivet ask`)
    /// above everything else. Settings that cannot be read are reported as
    /// the problem, not hidden.
    pub fn resolve_with(&self, command_line: Layer) -> ResolvedLlm {
        match self.layers(command_line) {
            Ok(layers) => resolve(&layers, &self.config.llm),
            Err(e) => {
                tracing::warn!("{e}");
                let mut llm = resolve(&[], &self.config.llm);
                llm.problem = Some(e.to_string());
                llm
            }
        }
    }

    /// The context window of `llm`'s model and the room kept for its answer
    /// (`budget::fit::Window`): the figure the provider's `/v1/models`
    /// reports for the model (`model_window`), else the preset's size, else
    /// `[llm] context_tokens`.
    pub async fn context_window(&self, llm: &ResolvedLlm) -> super::budget::fit::Window {
        let reported = self.windows.get(&self.http, llm).await;
        let context = reported
            .or_else(|| provider::preset(&llm.provider).and_then(|p| p.context_tokens))
            .unwrap_or(self.config.llm.context_tokens);
        super::budget::fit::Window::new(context, llm.max_tokens)
    }

    /// Whether `llm`'s model takes images: as the provider's model list
    /// says, else as `[llm] vision` says.
    pub async fn takes_images(&self, llm: &ResolvedLlm) -> bool {
        let reported = self.windows.facts(&self.http, llm).await.images;
        reported.unwrap_or(self.config.llm.vision)
    }

    /// A project's budget in dollars when it sets none (`[budget]
    /// project_usd`): the answers' spending limit.
    pub fn default_budget(&self) -> Option<f64> {
        self.config.budget.project_usd
    }

    /// What `llm`'s model costs (`pricing`): `None` when unknown.
    pub async fn price(&self, llm: &ResolvedLlm) -> Option<crate::runtime::llm::Price> {
        let reported = self.windows.facts(&self.http, llm).await.price;
        super::pricing::choose(
            self.config.llm.price(),
            reported,
            (&llm.provider, &llm.base_url, &llm.model),
        )
    }

    /// Every layer, highest first.
    fn layers(&self, command_line: Layer) -> Result<[Layer; 5], SettingsFileError> {
        Ok(self.layers_with(&self.settings_file.load()?, command_line))
    }

    /// Every layer, highest first, with the settings file as `stored` holds it.
    fn layers_with(&self, stored: &StoredSettings, command_line: Layer) -> [Layer; 5] {
        let env: Vec<(String, String)> = std::env::vars().collect();
        let [env, dotenv, file] =
            deployment_layers(&env, &read_dotenv(&self.dotenv), &self.config.llm);
        [
            command_line,
            Layer::settings(&stored.llm),
            env,
            dotenv,
            file,
        ]
    }

    pub fn resolve(&self) -> ResolvedLlm {
        self.resolve_with(Layer::default())
    }

    /// The settings as the browser may see them; the settings file is
    /// read once for the layers and the answer format chosen in it.
    pub fn public_settings(&self) -> PublicLlmSettings {
        let Ok(stored) = self.settings_file.load() else {
            let mut public = self.resolve().public();
            public.default_format = self.config.llm.format;
            return public;
        };
        let layers = self.layers_with(&stored, Layer::default());
        let mut public = resolve(&layers, &self.config.llm).public();
        public.keys_set = providers_with_keys(&layers[1..]);
        // A generic key (RIVET_LLM_API_KEY) counts for the provider it is used with.
        if public.key_set && !public.keys_set.contains(&public.provider) {
            public.keys_set.push(public.provider.clone());
        }
        public.format = stored.llm.format_for(&public.provider, &public.model);
        public.default_format = self.config.llm.format;
        public
    }

    /// Saves a change from the settings panel; returns the new effective
    /// settings.
    pub fn save(&self, update: &LlmSettingsUpdate) -> Result<PublicLlmSettings, SettingsFileError> {
        self.settings_file.update(update)?;
        Ok(self.public_settings())
    }

    /// The configuration to ask with: the demo provider running, and a model
    /// chosen (the first the provider lists when none is configured).
    pub async fn ready(&self, mut llm: ResolvedLlm) -> Result<ResolvedLlm, LlmError> {
        if let Some(problem) = &llm.problem {
            return Err(LlmError::NotConfigured {
                message: problem.clone(),
            });
        }
        if llm.is_demo() {
            llm.base_url = self.demo_base_url().await?;
        }
        if llm.model.is_empty() {
            llm.model = self
                .list_models(&llm)
                .await
                .into_iter()
                .next()
                .ok_or_else(|| LlmError::NotConfigured {
                    message: format!(
                        "No model is chosen and {} lists none: choose one in Settings.",
                        llm.label
                    ),
                })?;
        }
        Ok(llm)
    }

    /// [`LlmService::resolve`], made [`LlmService::ready`].
    pub async fn resolve_for_chat(&self) -> Result<ResolvedLlm, LlmError> {
        self.ready(self.resolve()).await
    }

    /// Like [`LlmService::resolve_for_chat`], with `model` (the person's
    /// pick for a message, from the provider's list) instead of the
    /// configured one when given.
    pub async fn resolve_for_answer(&self, model: Option<&str>) -> Result<ResolvedLlm, LlmError> {
        let mut llm = self.resolve();
        if let Some(model) = model.map(str::trim).filter(|m| !m.is_empty()) {
            model.clone_into(&mut llm.model);
        }
        self.ready(llm).await
    }

    /// The models the settings panel offers for `provider` at `base_url`,
    /// both as typed and not yet saved (empty: unset), and why no key goes
    /// with them when one is held back: a URL chosen here receives only a
    /// key saved with it, or its preset's key.
    pub async fn models_for(&self, provider: &str, base_url: &str) -> ModelList {
        fn given(s: &str) -> Option<&str> {
            Some(s.trim()).filter(|s| !s.is_empty())
        }
        let layer = Layer::command_line(given(provider), given(base_url), None, None);
        let llm = self.resolve_with(layer);
        ModelList {
            models: self.list_models(&llm).await,
            key_notice: llm.key_notice.clone(),
        }
    }

    /// The provider's models from its `/v1/models`, else the configured ones.
    pub async fn list_models(&self, llm: &ResolvedLlm) -> Vec<String> {
        if llm.is_demo() {
            return vec![provider::DEMO_MODEL.to_owned()];
        }
        if llm.base_url.is_empty() {
            return llm.models.clone();
        }
        match models_list::fetch(&self.http, &llm.base_url, llm.key(), MODELS_TIMEOUT).await {
            Ok(models) if !models.is_empty() => models,
            Ok(_) => llm.models.clone(),
            Err(e) => {
                tracing::info!(
                    "{}: no model list ({e}); using the configured one",
                    llm.label
                );
                llm.models.clone()
            }
        }
    }

    /// Every address of `[llm] local_servers`, asked for its models at once
    /// (`local_probe`).
    pub async fn find_local_models(
        &self,
    ) -> Result<Vec<crate::runtime::llm::LocalServer>, super::local_probe::ProbeError> {
        super::local_probe::probe(&self.config.llm.local_servers).await
    }

    /// The address of the built-in scripted provider, started on first use.
    pub async fn demo_base_url(&self) -> Result<String, LlmError> {
        let server = self
            .demo
            .get_or_try_init(|| {
                MockServer::start(
                    MockConfig::demo(),
                    SocketAddr::from((Ipv4Addr::LOCALHOST, 0)),
                )
            })
            .await
            .map_err(|e| LlmError::NotConfigured {
                message: format!("The demo provider could not start: {e}"),
            })?;
        Ok(server.base_url())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_format_chosen_for_a_model_wins_over_the_configuration() {
        let data = tempfile::tempdir().unwrap();
        let mut config = Config::defaults();
        config.server.data_dir = data.path().to_owned();
        config.llm.format = ActionFormat::Tags;
        let service = LlmService::new(Arc::new(config));
        assert_eq!(service.action_format("ollama", "qwen"), ActionFormat::Tags);
        let public = service
            .save(&LlmSettingsUpdate {
                provider: "ollama".into(),
                model: "qwen".into(),
                format: Some(ActionFormat::Tools),
                ..LlmSettingsUpdate::default()
            })
            .unwrap();
        // The panel shows the choice for the model it shows, and the default.
        assert_eq!(public.format, Some(ActionFormat::Tools));
        assert_eq!(public.default_format, ActionFormat::Tags);
        assert_eq!(service.action_format("ollama", "qwen"), ActionFormat::Tools);
        // Another model keeps the configuration's.
        assert_eq!(
            service.action_format("ollama", "llama3.2"),
            ActionFormat::Tags
        );
    }
}
