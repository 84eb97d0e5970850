//! The state every request handler and server function shares.

use std::sync::Arc;

use axum::extract::FromRef;
use leptos::config::LeptosOptions;

use super::config::Config;

/// Cheap to clone: everything inside is shared.
#[derive(Clone)]
pub struct AppState {
    pub leptos_options: LeptosOptions,
    pub config: Arc<Config>,
}

impl FromRef<AppState> for LeptosOptions {
    fn from_ref(state: &AppState) -> Self {
        state.leptos_options.clone()
    }
}
