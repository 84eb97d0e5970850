//! The state every request handler and server function shares.

use std::sync::Arc;

use axum::extract::FromRef;
use leptos::config::LeptosOptions;

use super::config::Config;
use super::llm::LlmService;
use super::projects::Projects;

/// Cheap to clone: everything inside is shared.
#[derive(Clone)]
pub struct AppState {
    pub leptos_options: LeptosOptions,
    pub config: Arc<Config>,
    pub projects: Projects,
    pub llm: Arc<LlmService>,
}

impl AppState {
    pub fn new(leptos_options: LeptosOptions, config: Config) -> AppState {
        let config = Arc::new(config);
        AppState {
            leptos_options,
            projects: Projects::new(&config.server.data_dir),
            llm: Arc::new(LlmService::new(config.clone())),
            config,
        }
    }
}

impl FromRef<AppState> for LeptosOptions {
    fn from_ref(state: &AppState) -> Self {
        state.leptos_options.clone()
    }
}
