//! A port of its own for every preview that the IDE frames.
//!
//! A preview must not share the IDE's origin, but it should share its site:
//! browsers deny storage (`localStorage`, cookies, IndexedDB) to frames from
//! another site, and a generated app that keeps its state in `localStorage`
//! then breaks inside the preview pane. An origin includes the port and a
//! site does not, so each project's dev-server port is proxied from a port
//! of the IDE's own host: `http://127.0.0.1:41234/` beside the IDE at
//! `http://127.0.0.1:3000/` is same-site and cross-origin. Every listener
//! serves exactly one project's port, so no project can reach another's.

use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::extract::Request;

use super::SandboxManager;
use super::preview::proxy;
use crate::runtime::preview::PreviewHost;
use crate::runtime::project::ProjectId;
use crate::server::access::Access;

pub struct PreviewPorts {
    ip: IpAddr,
    sandbox: Arc<SandboxManager>,
    /// Previews need the IDE's session like any page.
    access: Arc<Access>,
    /// (project, port inside the sandbox) → the IDE-side port.
    listeners: Mutex<HashMap<(ProjectId, u16), u16>>,
}

impl PreviewPorts {
    /// Listeners bind on `ip`, the address the IDE itself listens on.
    pub fn new(ip: IpAddr, sandbox: Arc<SandboxManager>, access: Arc<Access>) -> Arc<PreviewPorts> {
        Arc::new(PreviewPorts {
            ip,
            sandbox,
            access,
            listeners: Mutex::new(HashMap::new()),
        })
    }

    /// The IDE-side port that serves the project's `port`, opened on first
    /// use and kept while the IDE runs (so a restarted dev server keeps its
    /// address). Needs a tokio runtime.
    pub fn open(&self, project: &ProjectId, port: u16) -> std::io::Result<u16> {
        let mut listeners = self.listeners.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(local) = listeners.get(&(project.clone(), port)) {
            return Ok(*local);
        }
        let listener = std::net::TcpListener::bind(SocketAddr::new(self.ip, 0))?;
        listener.set_nonblocking(true)?;
        let local = listener.local_addr()?.port();
        let listener = tokio::net::TcpListener::from_std(listener)?;
        let target = PreviewHost {
            project: project.clone(),
            port,
        };
        let (sandbox, access) = (Arc::clone(&self.sandbox), Arc::clone(&self.access));
        let app = Router::new().fallback(move |request: Request| {
            let (sandbox, access, target) =
                (Arc::clone(&sandbox), Arc::clone(&access), target.clone());
            async move { proxy(&sandbox, &access, &target, request).await }
        });
        tokio::spawn(async move {
            if let Err(e) = axum::serve(listener, app).await {
                tracing::warn!("preview listener stopped: {e}");
            }
        });
        listeners.insert((project.clone(), port), local);
        tracing::info!(%project, port, local, "preview listening");
        Ok(local)
    }

    /// Whether `port` is one of the preview listeners (requests from there
    /// are the preview's, never the IDE's own).
    pub fn is_preview_port(&self, port: u16) -> bool {
        self.listeners
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .values()
            .any(|p| *p == port)
    }

    /// The URL the IDE frames for the project's `port`.
    pub fn url(&self, project: &ProjectId, port: u16) -> std::io::Result<String> {
        let local = self.open(project, port)?;
        let host = match self.ip {
            IpAddr::V6(ip) if !ip.is_unspecified() => format!("[{ip}]"),
            ip if ip.is_unspecified() => "127.0.0.1".to_owned(),
            ip => ip.to_string(),
        };
        Ok(format!("http://{host}:{local}/"))
    }
}
