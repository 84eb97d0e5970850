//! `rivet serve`: binds the address, serves the app, shuts down cleanly.

use std::time::Duration;

use anyhow::Context;
use leptos::config::get_configuration;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

use std::sync::Arc;

use super::access::Access;
use super::config::{Config, RuntimeKind};
use super::http::app;
use super::sandbox::{SandboxManager, SandboxSettings};
use super::state::AppState;

/// How long open connections (streams, terminals) get to finish after a
/// shutdown signal before the server stops regardless.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(3);

/// What `rivet serve` takes on the command line (`cli.rs` declares the
/// command; the options live with the code that reads them).
#[derive(Debug, Default, clap::Args)]
pub struct ServeArgs {
    /// Run project commands directly on this machine, WITHOUT any isolation
    /// (when bubblewrap is unavailable). Every command logs a warning.
    #[arg(long)]
    pub unsafe_no_sandbox: bool,
}

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
    let leptos_options = super::assets::with_hashed_names(leptos_options);
    let sandbox = start_sandbox(&config, &args)?;
    // Registered before the address is announced: a SIGTERM sent as soon as
    // the server says it listens must shut it down, not kill it outright.
    let shutdown_requested = shutdown_signal()?;
    // Checked before listening: a bad token or `auth = "none"` on a public
    // address stops the server with the reason.
    Access::new(&config.server).context("the IDE's access control")?;
    let listener = TcpListener::bind(&config.server.addr)
        .await
        .with_context(|| format!("cannot listen on {}", config.server.addr))?;
    let addr = listener.local_addr()?;
    tracing::info!(%addr, data_dir = %config.server.data_dir.display(), "Rivet is listening on http://{addr}");
    if !addr.ip().is_loopback() {
        tracing::warn!(
            %addr,
            "the IDE listens beyond loopback: anyone who can reach it gets the login page, and the \
             token travels unencrypted; put TLS in front of it (see docs/security.md)"
        );
    }

    // With port 0 the system chose the port; preview origins and the
    // session cookie's name need the real one.
    let mut config = config;
    config.server.addr = addr.to_string();
    let state = AppState::with_sandbox(leptos_options, config, sandbox.clone());
    // The database is created and migrated before the first request.
    state
        .store
        .ready()
        .await
        .context("opening the project store")?;
    // Projects kept before the store existed (a `project.json` each) join it.
    let imported = state.store.import_projects(&state.projects).await?;
    if imported > 0 {
        tracing::info!(imported, "projects recorded in the store");
    }
    announce(&state.access, addr);
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
    let server = serve_http(listener, app(state), shutdown.clone());
    tokio::select! {
        () = server => {}
        () = async {
            shutdown.cancelled().await;
            tokio::time::sleep(SHUTDOWN_GRACE).await;
        } => tracing::warn!("connections still open after {SHUTDOWN_GRACE:?}; closing them"),
    }
    sandbox.shutdown().await;
    tracing::info!("stopped");
    Ok(())
}

/// Prints the URL that opens the IDE, logged in, on standard output (the
/// log, on standard error, never holds the token).
fn announce(access: &Access, addr: std::net::SocketAddr) {
    use std::io::Write;
    let url = access.login_url(addr);
    let mut out = std::io::stdout().lock();
    // Nobody may be reading standard output; the server runs all the same.
    let _ = writeln!(out, "\n    Rivet is ready: open {url}\n");
    let _ = out.flush();
}

/// hyper's default limit on a request's head (about 400 KB) is smaller than
/// the cookies a browser sends one host (180 cookies of 4 KB): a preview,
/// which shares the IDE's host, could set enough cookies to lock its owner
/// out of the IDE.
const MAX_REQUEST_HEAD: usize = 1 << 20;

/// Serves `app` on `listener` until `shutdown`, then lets open connections
/// finish (the caller bounds how long).
async fn serve_http(listener: TcpListener, app: axum::Router, shutdown: CancellationToken) {
    use hyper_util::rt::{TokioExecutor, TokioIo};
    use hyper_util::server::conn::auto::Builder;
    use hyper_util::service::TowerToHyperService;
    use tower::ServiceExt;

    let mut builder = Builder::new(TokioExecutor::new());
    builder.http1().max_buf_size(MAX_REQUEST_HEAD);
    let graceful = hyper_util::server::graceful::GracefulShutdown::new();
    loop {
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(e) => {
                    // Out of descriptors, say: wait instead of spinning.
                    tracing::warn!("accepting a connection failed: {e}");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            () = shutdown.cancelled() => break,
        };
        let _ = stream.set_nodelay(true);
        // The client's address, for limits kept per client (`access`).
        let service =
            app.clone()
                .map_request(move |request: axum::http::Request<hyper::body::Incoming>| {
                    let mut request = request.map(axum::body::Body::new);
                    request
                        .extensions_mut()
                        .insert(axum::extract::ConnectInfo(peer));
                    request
                });
        let connection = builder
            .serve_connection_with_upgrades(TokioIo::new(stream), TowerToHyperService::new(service))
            .into_owned();
        let connection = graceful.watch(connection);
        tokio::spawn(async move {
            if let Err(e) = connection.await {
                tracing::debug!("connection ended: {e}");
            }
        });
    }
    drop(listener);
    graceful.shutdown().await;
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
