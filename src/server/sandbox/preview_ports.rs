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
//!
//! Listeners cost the IDE a descriptor each, and the project decides how
//! many ports it opens, so a listener is opened only when asked for (the
//! person picks the port, or a `start` action's server opens it), a project
//! holds at most `sandbox.max_previews` of them, and one is closed as soon
//! as its port closes in the sandbox or the project stops. When a project
//! that is at its limit asks for another, the least recently used listener
//! without an open connection makes room; if every one has a connection
//! (a page is showing it), the request is refused.
//!
//! A preview whose port closed keeps its slot and its address, without a
//! socket: when the port opens again (a restarted dev server) it gets the
//! same address back if it is still free, so the app keeps its storage.

mod listener;

use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use self::listener::{PortSet, Serving, bind};
use super::SandboxManager;
use super::preview::Seen;
use crate::runtime::preview::PreviewHost;
use crate::runtime::project::ProjectId;
use crate::runtime::runner::{OpenedPreview, PreviewError, PreviewHooks};
use crate::server::access::Access;

pub struct PreviewPorts {
    ip: IpAddr,
    /// The IDE's own port, which a framed preview's error reporter posts to.
    ide_port: Option<u16>,
    sandbox: Arc<SandboxManager>,
    /// Previews need the IDE's session like any page.
    access: Arc<Access>,
    /// Most previews per project.
    max: usize,
    /// Ticks on every use of a preview, to find the least recently used.
    clock: Arc<AtomicU64>,
    inner: Mutex<Inner>,
}

#[derive(Default)]
struct Inner {
    projects: HashMap<ProjectId, Vec<Entry>>,
    /// Every IDE-side port that has served a preview since the IDE started.
    used: PortSet,
}

/// One previewed port of a project.
struct Entry {
    /// The port inside the sandbox.
    port: u16,
    /// Its address on the IDE's host.
    local: u16,
    last_used: Arc<AtomicU64>,
    /// The listener, while the port is open in the sandbox.
    serving: Option<Serving>,
}

impl Entry {
    fn in_use(&self) -> bool {
        self.serving.as_ref().is_some_and(Serving::in_use)
    }
}

impl PreviewPorts {
    /// Listeners bind on `ip`, the address the IDE itself listens on. They
    /// close with their project ([`SandboxManager::close_project`]).
    pub fn new(
        ide: SocketAddr,
        sandbox: Arc<SandboxManager>,
        access: Arc<Access>,
    ) -> Arc<PreviewPorts> {
        let ip = ide.ip();
        let ide_port = (ide.port() != 0).then_some(ide.port());
        let max = usize::try_from(sandbox.settings().config.max_previews)
            .unwrap_or(usize::MAX)
            .max(1);
        let ports = Arc::new(PreviewPorts {
            ip,
            ide_port,
            sandbox: Arc::clone(&sandbox),
            access,
            max,
            clock: Arc::new(AtomicU64::new(1)),
            inner: Mutex::new(Inner::default()),
        });
        let weak = Arc::downgrade(&ports);
        sandbox.on_project_closed(Box::new(move |project| {
            if let Some(ports) = weak.upgrade() {
                ports.close_project(project);
            }
        }));
        ports
    }

    fn inner(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// What the project's runner calls (see `runtime::runner::previews`).
    pub fn hooks(self: &Arc<Self>, project: &ProjectId) -> PreviewHooks {
        let (ports, id) = (Arc::clone(self), project.clone());
        let url = Arc::new(move |port| ports.url(&id, port));
        let (ports, id) = (Arc::clone(self), project.clone());
        let open = Arc::new(move |port| ports.open(&id, port));
        let (ports, id) = (Arc::clone(self), project.clone());
        let closed = Arc::new(move |port| ports.closed(&id, port));
        PreviewHooks { url, open, closed }
    }

    fn listening(&self, project: &ProjectId, port: u16) -> bool {
        self.sandbox.open_ports(project).contains(&port)
    }

    fn tick(&self) -> u64 {
        self.clock.fetch_add(1, Ordering::Relaxed)
    }

    /// The URL of the project's `port` if it has a preview. A preview whose
    /// port closed and opened again is served again (on its old address when
    /// free); no other port gets a listener here. Needs a tokio runtime.
    pub fn url(&self, project: &ProjectId, port: u16) -> Option<String> {
        let mut inner = self.inner();
        let Inner { projects, used } = &mut *inner;
        let entry = projects
            .get_mut(project)?
            .iter_mut()
            .find(|e| e.port == port)?;
        if entry.serving.is_none() {
            if !self.listening(project, port) {
                return None;
            }
            if let Err(e) = self.serve(project, entry, used) {
                tracing::warn!(%project, port, "preview not served again: {e}");
                return None;
            }
        }
        entry.last_used.store(self.tick(), Ordering::Relaxed);
        Some(self.format_url(entry.local))
    }

    /// Gives the project's `port` a listener (or returns the one it has),
    /// making room when the project is at its limit. Needs a tokio runtime.
    pub fn open(&self, project: &ProjectId, port: u16) -> Result<OpenedPreview, PreviewError> {
        if !self.listening(project, port) {
            return Err(PreviewError::NotListening { port });
        }
        let no_address = |e: std::io::Error| PreviewError::NoAddress {
            port,
            reason: e.to_string(),
        };
        let mut inner = self.inner();
        let Inner { projects, used } = &mut *inner;
        let entries = projects.entry(project.clone()).or_default();
        if let Some(entry) = entries.iter_mut().find(|e| e.port == port) {
            if entry.serving.is_none() {
                self.serve(project, entry, used).map_err(no_address)?;
            }
            entry.last_used.store(self.tick(), Ordering::Relaxed);
            return Ok(OpenedPreview {
                url: self.format_url(entry.local),
                closed: Vec::new(),
            });
        }
        let victim = if entries.len() >= self.max {
            let all_in_use = PreviewError::AllInUse {
                port,
                max: self.max,
            };
            Some(least_recently_used(entries).ok_or(all_in_use)?)
        } else {
            None
        };
        let mut entry = Entry {
            port,
            local: 0,
            last_used: Arc::new(AtomicU64::new(self.tick())),
            serving: None,
        };
        self.serve(project, &mut entry, used).map_err(no_address)?;
        let closed: Vec<u16> = victim.map(|i| entries.remove(i).port).into_iter().collect();
        for victim in &closed {
            tracing::info!(%project, port = victim, "preview closed to make room");
        }
        let url = self.format_url(entry.local);
        entries.push(entry);
        Ok(OpenedPreview { url, closed })
    }

    /// Binds and serves `entry`'s listener, on its old address if it has one.
    fn serve(
        &self,
        project: &ProjectId,
        entry: &mut Entry,
        used: &mut PortSet,
    ) -> std::io::Result<()> {
        let prefer = (entry.local != 0).then_some(entry.local);
        let listener = bind(self.ip, prefer, used)?;
        let local = listener.local_addr()?.port();
        let target = PreviewHost {
            project: project.clone(),
            port: entry.port,
        };
        let seen = Seen {
            ide_port: self.ide_port,
            listener: Some(listener_origin(self.ip, local)),
        };
        entry.serving = Some(Serving::start(
            listener,
            Arc::clone(&self.sandbox),
            Arc::clone(&self.access),
            target,
            seen,
            Arc::clone(&self.clock),
            Arc::clone(&entry.last_used),
        )?);
        entry.local = local;
        used.insert(local);
        tracing::info!(%project, port = entry.port, local, "preview listening");
        Ok(())
    }

    /// The project's `port` closed: its listener closes (the preview keeps
    /// its slot and address for when the port opens again).
    pub fn closed(&self, project: &ProjectId, port: u16) {
        let mut inner = self.inner();
        let entry = inner
            .projects
            .get_mut(project)
            .and_then(|entries| entries.iter_mut().find(|e| e.port == port));
        if let Some(entry) = entry
            && entry.serving.take().is_some()
        {
            tracing::info!(%project, port, local = entry.local, "preview closed with its port");
        }
    }

    /// Closes every preview of the project (it stopped).
    pub fn close_project(&self, project: &ProjectId) {
        let removed = self.inner().projects.remove(project);
        if removed.is_some_and(|entries| !entries.is_empty()) {
            tracing::info!(%project, "previews closed with the project");
        }
    }

    /// Whether `port` of the IDE's host is, or was, a preview listener:
    /// requests from there are a preview's, never the IDE's own.
    ///
    /// A port keeps counting after its listener closed, for as long as the
    /// IDE runs: the page it served lives on in the browser (in the pane or
    /// a tab), still on that origin, and must stay refused. Nothing of the
    /// IDE itself is served from such a port later (fresh listeners avoid
    /// them), so the only cost is refusing a page another program might
    /// serve there, which has no business calling the IDE either.
    pub fn is_preview_port(&self, port: u16) -> bool {
        self.inner().used.contains(port)
    }

    fn format_url(&self, local: u16) -> String {
        format!("{}/", listener_origin(self.ip, local))
    }

    /// The origin the project's `port` is (or was last) framed from, if it
    /// has a preview: its pages, and only they, are this preview's.
    pub fn origin(&self, project: &ProjectId, port: u16) -> Option<String> {
        let inner = self.inner();
        let entry = inner
            .projects
            .get(project)?
            .iter()
            .find(|e| e.port == port)?;
        Some(listener_origin(self.ip, entry.local))
    }

    /// The project's ports whose preview has a listener open now.
    pub fn serving(&self, project: &ProjectId) -> Vec<u16> {
        let inner = self.inner();
        let mut ports: Vec<u16> = inner
            .projects
            .get(project)
            .into_iter()
            .flatten()
            .filter(|e| e.serving.is_some())
            .map(|e| e.port)
            .collect();
        ports.sort_unstable();
        ports
    }
}

/// The origin of the preview listener on port `local` of the IDE's `ip`.
fn listener_origin(ip: IpAddr, local: u16) -> String {
    let host = match ip {
        IpAddr::V6(ip) if !ip.is_unspecified() => format!("[{ip}]"),
        ip if ip.is_unspecified() => "127.0.0.1".to_owned(),
        ip => ip.to_string(),
    };
    format!("http://{host}:{local}")
}

/// The entry to close to make room: the least recently used of those
/// without an open connection.
fn least_recently_used(entries: &[Entry]) -> Option<usize> {
    entries
        .iter()
        .enumerate()
        .filter(|(_, e)| !e.in_use())
        .min_by_key(|(_, e)| e.last_used.load(Ordering::Relaxed))
        .map(|(i, _)| i)
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;
    use std::path::PathBuf;
    use std::time::Duration;

    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::TcpStream;

    use super::*;
    use crate::server::config::Config;
    use crate::server::sandbox::{Isolation, SandboxSettings};

    struct Fixture {
        _dir: tempfile::TempDir,
        manager: Arc<SandboxManager>,
        ports: Arc<PreviewPorts>,
        project: ProjectId,
    }

    /// Previews of project `p`, at most `max`, with no sandbox behind them.
    fn fixture(max: u32) -> Fixture {
        let dir = tempfile::tempdir().unwrap();
        let mut config = Config::defaults().sandbox;
        config.max_previews = max;
        let manager = SandboxManager::new(SandboxSettings {
            data_dir: dir.path().to_owned(),
            config,
            helper_exe: PathBuf::new(),
            isolation: Isolation::Bubblewrap,
            database_socket: None,
        });
        // The listeners' own behaviour, without the IDE's session.
        let mut server = Config::defaults().server;
        server.data_dir = dir.path().to_owned();
        server.auth = crate::server::config::AuthMode::None;
        let access = Arc::new(Access::new(&server).unwrap());
        let ports = PreviewPorts::new(
            SocketAddr::from(([127, 0, 0, 1], 3000)),
            Arc::clone(&manager),
            access,
        );
        Fixture {
            _dir: dir,
            manager,
            ports,
            project: ProjectId::parse("p").unwrap(),
        }
    }

    impl Fixture {
        /// What the sandbox reports as listening.
        fn listening(&self, ports: &[u16]) {
            let ports: BTreeSet<u16> = ports.iter().copied().collect();
            self.manager.entry(&self.project).events.set_ports(ports);
        }

        fn open(&self, port: u16) -> Result<OpenedPreview, PreviewError> {
            self.ports.open(&self.project, port)
        }

        fn url(&self, port: u16) -> String {
            self.open(port).unwrap().url
        }
    }

    fn local_port(url: &str) -> u16 {
        url.trim_end_matches('/')
            .rsplit(':')
            .next()
            .unwrap()
            .parse()
            .unwrap()
    }

    /// A request on a connection that stays open; returns it with the reply.
    async fn request(url: &str) -> (TcpStream, String) {
        let mut stream = TcpStream::connect(("127.0.0.1", local_port(url)))
            .await
            .unwrap();
        stream
            .write_all(b"GET / HTTP/1.1\r\nHost: preview\r\n\r\n")
            .await
            .unwrap();
        let mut reply = Vec::new();
        let mut buf = [0; 4096];
        while !String::from_utf8_lossy(&reply).contains("</html>") {
            let n = stream.read(&mut buf).await.unwrap();
            assert!(n > 0, "closed: {}", String::from_utf8_lossy(&reply));
            reply.extend_from_slice(&buf[..n]);
        }
        (stream, String::from_utf8_lossy(&reply).into_owned())
    }

    /// Waits until nothing listens on the URL's port any more.
    async fn assert_released(url: &str) {
        let port = local_port(url);
        let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
        while TcpStream::connect(("127.0.0.1", port)).await.is_ok() {
            assert!(
                tokio::time::Instant::now() < deadline,
                "{url} still accepts"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    #[tokio::test]
    async fn a_port_opened_in_the_sandbox_gets_no_listener_until_asked() {
        let f = fixture(4);
        f.listening(&[3000, 3001]);
        assert_eq!(f.ports.url(&f.project, 3000), None);
        assert!(f.ports.serving(&f.project).is_empty());
        let url = f.url(3000);
        assert_eq!(f.ports.url(&f.project, 3000), Some(url.clone()));
        assert_eq!(f.url(3000), url, "asking again keeps the address");
        assert_eq!(f.ports.serving(&f.project), [3000]);
        // The listener proxies to that port of that project only.
        let (_, reply) = request(&url).await;
        assert!(reply.starts_with("HTTP/1.1 502"), "{reply}");
        assert!(reply.contains("port 3000 in project p"), "{reply}");
        assert_eq!(f.open(4000), Err(PreviewError::NotListening { port: 4000 }));
    }

    #[tokio::test]
    async fn a_flood_of_preview_requests_stays_within_the_cap() {
        let f = fixture(2);
        let ports: Vec<u16> = (20000..20050).collect();
        f.listening(&ports);
        let first = f.url(20000);
        let second = f.url(20001);
        // The first is used again, so the second is the least recently used.
        assert_eq!(f.url(20000), first);
        let third = f.open(20002).unwrap();
        assert_eq!(third.closed, [20001]);
        assert_eq!(f.ports.serving(&f.project), [20000, 20002]);
        assert_released(&second).await;
        let mut urls = vec![first, third.url];
        for &port in &ports[3..] {
            let opened = f.open(port).unwrap();
            assert_eq!(opened.closed.len(), 1);
            urls.push(opened.url);
            assert_eq!(f.ports.serving(&f.project).len(), 2);
        }
        for url in &urls[..urls.len() - 2] {
            assert_released(url).await;
        }
        // Addresses are not handed out twice.
        let distinct: BTreeSet<&String> = urls.iter().collect();
        assert_eq!(distinct.len(), urls.len());
    }

    #[tokio::test]
    async fn a_preview_with_an_open_connection_is_not_closed_to_make_room() {
        let f = fixture(2);
        f.listening(&[3000, 3001, 3002, 3003]);
        let shown = f.url(3000);
        let idle = f.url(3001);
        let (_page, _) = request(&shown).await;
        // 3000 is the older, but a page holds a connection to it.
        assert_eq!(f.ports.url(&f.project, 3001), Some(idle.clone()));
        let opened = f.open(3002).unwrap();
        assert_eq!(opened.closed, [3001]);
        assert_released(&idle).await;
        let (_other_page, _) = request(&opened.url).await;
        assert_eq!(
            f.open(3003),
            Err(PreviewError::AllInUse { port: 3003, max: 2 })
        );
        assert_eq!(f.ports.serving(&f.project), [3000, 3002]);
    }

    #[tokio::test]
    async fn a_port_that_closes_closes_its_listener_and_gets_its_address_back_when_it_reopens() {
        let f = fixture(4);
        f.listening(&[5173]);
        let url = f.url(5173);
        f.listening(&[]);
        f.ports.closed(&f.project, 5173);
        assert!(f.ports.serving(&f.project).is_empty());
        assert_released(&url).await;
        assert_eq!(f.ports.url(&f.project, 5173), None, "nothing listens");
        // A restarted dev server: same address, so the app keeps its storage.
        f.listening(&[5173]);
        assert_eq!(f.ports.url(&f.project, 5173), Some(url.clone()));
        let (_, reply) = request(&url).await;
        assert!(reply.starts_with("HTTP/1.1 502"), "{reply}");
    }

    #[tokio::test]
    async fn closing_the_project_closes_its_previews() {
        let f = fixture(4);
        f.listening(&[3000, 3001]);
        let urls = [f.url(3000), f.url(3001)];
        f.manager.close_project(&f.project).await;
        assert!(f.ports.serving(&f.project).is_empty());
        for url in &urls {
            assert_released(url).await;
        }
        // Reopened, the port is only listed again, not served.
        assert_eq!(f.ports.url(&f.project, 3000), None);
    }

    /// Asks `url`'s listener for a WebSocket from `origin`; returns the
    /// status line of the answer.
    async fn upgrade_from(url: &str, origin: Option<&str>) -> String {
        let mut stream = TcpStream::connect(("127.0.0.1", local_port(url)))
            .await
            .unwrap();
        let origin = origin
            .map(|o| format!("Origin: {o}\r\n"))
            .unwrap_or_default();
        let request = format!(
            "GET /hmr HTTP/1.1\r\nHost: 127.0.0.1:{}\r\n{origin}Connection: Upgrade\r\n\
             Upgrade: websocket\r\nSec-WebSocket-Version: 13\r\n\
             Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n",
            local_port(url)
        );
        stream.write_all(request.as_bytes()).await.unwrap();
        let mut reply = Vec::new();
        let mut buf = [0; 4096];
        while !reply.windows(2).any(|w| w == b"\r\n") {
            let n = stream.read(&mut buf).await.unwrap();
            assert!(n > 0, "closed: {}", String::from_utf8_lossy(&reply));
            reply.extend_from_slice(&buf[..n]);
        }
        let reply = String::from_utf8_lossy(&reply).into_owned();
        reply.lines().next().unwrap_or_default().to_owned()
    }

    // Without a sandbox behind the listener, a WebSocket that passes the
    // origin check fails at the connection to the project (502): refused
    // ones never get that far (403).

    #[tokio::test]
    async fn a_foreign_origin_cannot_open_a_preview_websocket() {
        let f = fixture(4);
        f.listening(&[5173]);
        let url = f.url(5173);
        let port = local_port(&url);
        for origin in [
            "https://evil.example",
            "null",
            "http://127.0.0.1:1",
            &format!("http://localhost:{port}"),
            &format!("https://127.0.0.1:{port}"),
            "http://127.0.0.1:3000.evil.example",
        ] {
            let status = upgrade_from(&url, Some(origin)).await;
            assert!(status.starts_with("HTTP/1.1 403"), "{origin}: {status}");
        }
    }

    #[tokio::test]
    async fn another_projects_preview_cannot_open_this_projects_websocket() {
        let f = fixture(4);
        f.listening(&[5173]);
        let url = f.url(5173);
        let other = ProjectId::parse("other").unwrap();
        f.manager
            .entry(&other)
            .events
            .set_ports(BTreeSet::from([5173]));
        let other_url = f.ports.open(&other, 5173).unwrap().url;
        let other_port = local_port(&other_url);
        for origin in [
            format!("http://127.0.0.1:{other_port}"),
            "http://other-5173.preview.localhost:3000".to_owned(),
            "http://p-5174.preview.localhost:3000".to_owned(),
        ] {
            let status = upgrade_from(&url, Some(&origin)).await;
            assert!(status.starts_with("HTTP/1.1 403"), "{origin}: {status}");
        }
    }

    #[tokio::test]
    async fn the_previews_own_origins_and_the_ides_may_open_its_websocket() {
        let f = fixture(4);
        f.listening(&[5173]);
        let url = f.url(5173);
        let own = url.trim_end_matches('/').to_owned();
        assert_eq!(f.ports.origin(&f.project, 5173), Some(own.clone()));
        for origin in [
            Some(own.as_str()),
            Some("http://P-5173.preview.localhost:3000"),
            Some("http://127.0.0.1:3000"),
            None,
        ] {
            let status = upgrade_from(&url, origin).await;
            assert!(status.starts_with("HTTP/1.1 502"), "{origin:?}: {status}");
        }
    }

    #[tokio::test]
    async fn a_page_left_open_on_a_closed_preview_still_counts_as_a_preview() {
        let f = fixture(1);
        f.listening(&[3000, 3001]);
        let first = local_port(&f.url(3000));
        assert!(f.ports.is_preview_port(first));
        let second = f.open(3001).unwrap();
        assert_eq!(second.closed, [3000]);
        assert!(f.ports.is_preview_port(first), "closed, yet refused");
        assert!(f.ports.is_preview_port(local_port(&second.url)));
        let ide = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        assert!(!f.ports.is_preview_port(ide.local_addr().unwrap().port()));
    }
}
