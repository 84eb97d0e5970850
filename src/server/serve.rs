//! `rivet serve`: binds the address, serves the app, shuts down cleanly.

use std::time::Duration;

use anyhow::Context;
use leptos::config::get_configuration;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

use super::config::Config;
use super::http::app;
use super::state::AppState;

/// How long open connections (streams, terminals) get to finish after a
/// shutdown signal before the server stops regardless.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(3);

pub async fn serve(config: Config) -> anyhow::Result<()> {
    std::fs::create_dir_all(&config.server.data_dir).with_context(|| {
        format!(
            "cannot create the data directory {}",
            config.server.data_dir.display()
        )
    })?;
    // cargo-leptos passes the site's layout through LEPTOS_* variables; the
    // release binary run on its own reads the same variables.
    let leptos_options = get_configuration(None)
        .context("reading the LEPTOS_* site settings")?
        .leptos_options;
    let listener = TcpListener::bind(&config.server.addr)
        .await
        .with_context(|| format!("cannot listen on {}", config.server.addr))?;
    let addr = listener.local_addr()?;
    tracing::info!(%addr, data_dir = %config.server.data_dir.display(), "Rivet is listening on http://{addr}");

    let state = AppState::new(leptos_options, config);
    let shutdown = CancellationToken::new();
    tokio::spawn({
        let shutdown = shutdown.clone();
        async move {
            shutdown_signal().await;
            tracing::info!("shutting down");
            shutdown.cancel();
        }
    });
    let server = axum::serve(listener, app(state)).with_graceful_shutdown({
        let shutdown = shutdown.clone();
        async move { shutdown.cancelled().await }
    });
    tokio::select! {
        result = server => result.context("serving HTTP")?,
        () = async {
            shutdown.cancelled().await;
            tokio::time::sleep(SHUTDOWN_GRACE).await;
        } => tracing::warn!("connections still open after {SHUTDOWN_GRACE:?}; closing them"),
    }
    tracing::info!("stopped");
    Ok(())
}

/// Resolves on SIGINT (Ctrl-C) or SIGTERM.
async fn shutdown_signal() {
    use tokio::signal::unix::{SignalKind, signal};
    let mut term = match signal(SignalKind::terminate()) {
        Ok(term) => term,
        Err(e) => {
            tracing::error!("cannot listen for SIGTERM: {e}");
            let _ = tokio::signal::ctrl_c().await;
            return;
        }
    };
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        _ = term.recv() => {}
    }
}
