//! `rivet serve`: binds the address, serves the app, shuts down cleanly.

use std::time::Duration;

use anyhow::Context;
use leptos::config::get_configuration;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

use std::sync::Arc;

use super::cli::ServeArgs;
use super::config::{Config, RuntimeKind};
use super::http::app;
use super::sandbox::{SandboxManager, SandboxSettings};
use super::state::AppState;

/// How long open connections (streams, terminals) get to finish after a
/// shutdown signal before the server stops regardless.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(3);

pub async fn serve(config: Config, args: ServeArgs) -> anyhow::Result<()> {
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
    let sandbox = start_sandbox(&config, &args)?;
    // Registered before the address is announced: a SIGTERM sent as soon as
    // the server says it listens must shut it down, not kill it outright.
    let shutdown_requested = shutdown_signal()?;
    let listener = TcpListener::bind(&config.server.addr)
        .await
        .with_context(|| format!("cannot listen on {}", config.server.addr))?;
    let addr = listener.local_addr()?;
    tracing::info!(%addr, data_dir = %config.server.data_dir.display(), "Rivet is listening on http://{addr}");
    if !addr.ip().is_loopback() {
        tracing::warn!(
            %addr,
            "the IDE listens beyond loopback: sandboxed code with network access can reach it \
             through this machine's own addresses (see docs/sandbox.md); keep server.addr on \
             127.0.0.1 behind an authenticating proxy"
        );
    }

    // With port 0 the system chose the port; preview origins need the real one.
    let mut config = config;
    config.server.addr = addr.to_string();
    let state = AppState::with_sandbox(leptos_options, config, sandbox.clone());
    let shutdown = CancellationToken::new();
    tokio::spawn({
        let shutdown = shutdown.clone();
        let sandbox = sandbox.clone();
        let open_projects = state.open_projects.clone();
        async move {
            shutdown_requested.await;
            tracing::info!("shutting down");
            shutdown.cancel();
            open_projects.shutdown().await;
            // Terminals and previews end with their sandboxes, which lets
            // the graceful shutdown finish.
            sandbox.shutdown().await;
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
    sandbox.shutdown().await;
    tracing::info!("stopped");
    Ok(())
}

/// The sandbox manager, after checking that sandboxes can run here.
fn start_sandbox(config: &Config, args: &ServeArgs) -> anyhow::Result<Arc<SandboxManager>> {
    let sandbox = SandboxManager::new(SandboxSettings::from_config(config, args.unsafe_no_sandbox));
    if args.unsafe_no_sandbox {
        tracing::warn!(
            "--unsafe-no-sandbox: project commands run on this machine WITHOUT isolation"
        );
        return Ok(sandbox);
    }
    match sandbox.check() {
        Ok(()) => {}
        Err(e) if config.runtime.default == RuntimeKind::Sandbox => {
            return Err(anyhow::Error::new(e).context("the sandbox runtime cannot start"));
        }
        Err(e) => tracing::warn!("the sandbox runtime is unavailable: {e}"),
    }
    Ok(sandbox)
}

/// Listens for SIGINT (Ctrl-C) and SIGTERM at once; the future resolves on
/// the first of them.
fn shutdown_signal() -> anyhow::Result<impl std::future::Future<Output = ()>> {
    use tokio::signal::unix::{SignalKind, signal};
    let mut term = signal(SignalKind::terminate()).context("listening for SIGTERM")?;
    let mut interrupt = signal(SignalKind::interrupt()).context("listening for SIGINT")?;
    Ok(async move {
        tokio::select! {
            _ = interrupt.recv() => {}
            _ = term.recv() => {}
        }
    })
}
