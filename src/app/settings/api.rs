//! The settings panel's server functions. Their bodies run on the server
//! and call into `crate::server::llm`; keys go in, never out.

use leptos::prelude::*;
use leptos::server_fn::codec::Json;
use serde::{Deserialize, Serialize};

use crate::app::error::RivetError;
use crate::runtime::llm::{LlmSettingsUpdate, LocalServer, ModelList, PublicLlmSettings};

/// Facts about the IDE that the panel shows, read-only.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct IdeInfo {
    pub runtime: String,
    pub data_dir: String,
}

#[server]
pub async fn get_ide_info() -> Result<IdeInfo, RivetError> {
    let state = expect_context::<crate::server::state::AppState>();
    Ok(IdeInfo {
        runtime: state.config.runtime.default.as_str().to_owned(),
        data_dir: state.config.server.data_dir.display().to_string(),
    })
}

/// The effective LLM settings; whether a key is set, never the key.
#[server]
pub async fn get_llm_settings() -> Result<PublicLlmSettings, RivetError> {
    let state = expect_context::<crate::server::state::AppState>();
    Ok(state.llm.public_settings())
}

/// Saves the panel's values; the key only when a new one is typed or it is
/// cleared. Returns the new effective settings.
#[server(input = Json)]
pub async fn save_llm_settings(update: LlmSettingsUpdate) -> Result<PublicLlmSettings, RivetError> {
    let state = expect_context::<crate::server::state::AppState>();
    Ok(state.llm.save(&update)?)
}

/// The models of a provider (from its `/v1/models`, else the configured
/// list), asked with a key only where that key may go.
#[server(input = Json)]
pub async fn list_models(provider: String, base_url: String) -> Result<ModelList, RivetError> {
    let state = expect_context::<crate::server::state::AppState>();
    Ok(state.llm.models_for(&provider, &base_url).await)
}

/// Every address of `[llm] local_servers` (loopback only), asked for its
/// models at once: what answered with its models, and why the others did
/// not.
#[server(endpoint = "find_local_models")]
pub async fn find_local_models() -> Result<Vec<LocalServer>, RivetError> {
    let state = expect_context::<crate::server::state::AppState>();
    Ok(state.llm.find_local_models().await?)
}
