//! One preview listener: a socket of the IDE's host that proxies to one port
//! of one project, served on a task that closing stops.

use std::io;
use std::net::{IpAddr, SocketAddr};
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Weak};
use std::task::{Context, Poll};

use axum::Router;
use axum::extract::Request;
use axum::serve::ListenerExt;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use super::super::SandboxManager;
use super::super::preview::{Seen, proxy};
use crate::runtime::preview::PreviewHost;
use crate::server::access::Access;

/// Fresh ports asked of the system before giving up on one never used.
const FRESH_TRIES: usize = 32;

/// A set of port numbers, one bit each: 8 KiB, whatever it holds.
pub struct PortSet(Box<[u64]>);

impl Default for PortSet {
    fn default() -> Self {
        PortSet(vec![0; 1 << 10].into_boxed_slice())
    }
}

impl PortSet {
    pub fn insert(&mut self, port: u16) {
        let (word, bit) = (usize::from(port) >> 6, port & 63);
        if let Some(w) = self.0.get_mut(word) {
            *w |= 1 << bit;
        }
    }

    pub fn contains(&self, port: u16) -> bool {
        let (word, bit) = (usize::from(port) >> 6, port & 63);
        self.0.get(word).is_some_and(|w| w & (1 << bit) != 0)
    }
}

/// Binds a listener on `ip`: on `prefer` when it is free (a preview keeps
/// its address, so its app keeps its storage), else on a port the system
/// picks that no preview has used (an address that served one project's app
/// is never handed to another: the browser keeps that origin's storage).
pub fn bind(ip: IpAddr, prefer: Option<u16>, used: &PortSet) -> io::Result<std::net::TcpListener> {
    if let Some(port) = prefer
        && let Ok(listener) = std::net::TcpListener::bind(SocketAddr::new(ip, port))
    {
        return Ok(listener);
    }
    // Ports passed over stay bound until the end, so the system offers others.
    let mut passed = Vec::new();
    for _ in 0..FRESH_TRIES {
        let listener = std::net::TcpListener::bind(SocketAddr::new(ip, 0))?;
        if !used.contains(listener.local_addr()?.port()) {
            return Ok(listener);
        }
        passed.push(listener);
    }
    Err(io::Error::other(
        "every port the system offered has served a preview before",
    ))
}

/// A listener being served. Dropping it stops the accept loop and closes the
/// socket at once; open connections finish what they were doing.
pub struct Serving {
    stop: CancellationToken,
    task: JoinHandle<()>,
    /// Shared by every open connection.
    connections: Arc<()>,
}

impl Serving {
    /// Serves `listener` as the preview of `target`, seen as `seen` says;
    /// every request stamps `last_used` with the next tick of `clock`.
    pub fn start(
        listener: std::net::TcpListener,
        sandbox: Arc<SandboxManager>,
        access: Arc<Access>,
        target: PreviewHost,
        seen: Seen,
        clock: Arc<AtomicU64>,
        last_used: Arc<AtomicU64>,
    ) -> io::Result<Serving> {
        let seen = Arc::new(seen);
        let app = Router::new().fallback(move |request: Request| {
            last_used.store(clock.fetch_add(1, Ordering::Relaxed), Ordering::Relaxed);
            let (sandbox, access, target, seen) = (
                Arc::clone(&sandbox),
                Arc::clone(&access),
                target.clone(),
                Arc::clone(&seen),
            );
            async move { proxy(&sandbox, &access, &target, &seen, request).await }
        });
        Serving::serve(listener, app)
    }

    /// Serves `app` on `listener`; each request carries the client's
    /// address (`ConnectInfo`), as the IDE's own listener's do, so limits
    /// kept per client (wrong credentials) hold on previews too.
    fn serve(listener: std::net::TcpListener, app: Router) -> io::Result<Serving> {
        listener.set_nonblocking(true)?;
        let listener = TcpListener::from_std(listener)?;
        let connections = Arc::new(());
        let counting = Counting {
            inner: listener,
            connections: Arc::downgrade(&connections),
        }
        .tap_io(|connection: &mut Counted| {
            let _ = connection.io.set_nodelay(true);
        });
        let stop = CancellationToken::new();
        let app = app.into_make_service_with_connect_info::<SocketAddr>();
        let server =
            axum::serve(counting, app).with_graceful_shutdown(stop.clone().cancelled_owned());
        let task = tokio::spawn(async move {
            if let Err(e) = server.await {
                tracing::warn!("preview listener stopped: {e}");
            }
        });
        Ok(Serving {
            stop,
            task,
            connections,
        })
    }

    /// Whether a connection is open (a page showing the preview, most likely).
    pub fn in_use(&self) -> bool {
        Arc::strong_count(&self.connections) > 1
    }
}

impl Drop for Serving {
    fn drop(&mut self) {
        // Cancelling lets open connections finish; aborting drops the
        // listener now rather than when the task next runs.
        self.stop.cancel();
        self.task.abort();
    }
}

/// A listener that counts its open connections.
struct Counting {
    inner: TcpListener,
    connections: Weak<()>,
}

impl axum::serve::Listener for Counting {
    type Io = Counted;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (Counted, SocketAddr) {
        let (io, addr) = axum::serve::Listener::accept(&mut self.inner).await;
        let counted = Counted {
            io,
            _open: self.connections.upgrade(),
        };
        (counted, addr)
    }

    fn local_addr(&self) -> io::Result<SocketAddr> {
        self.inner.local_addr()
    }
}

/// A connection, counted while it is open (upgraded to a WebSocket too).
struct Counted {
    io: TcpStream,
    _open: Option<Arc<()>>,
}

impl AsyncRead for Counted {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.io).poll_read(cx, buf)
    }
}

impl AsyncWrite for Counted {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.io).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.io).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.io).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.io).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    use super::*;
    use crate::server::access::client_address;

    /// The preview's own listener records who connected, as `serve` does
    /// for the IDE: without it every preview client would share one
    /// wrong-credential budget.
    #[tokio::test]
    async fn a_preview_listener_request_carries_the_client_address() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let app = Router::new().fallback(|request: Request| async move {
            client_address(&request).map_or("unknown".to_owned(), |ip| ip.to_string())
        });
        let _serving = Serving::serve(listener, app).unwrap();
        let mut client = TcpStream::connect(addr).await.unwrap();
        client
            .write_all(b"GET / HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
            .await
            .unwrap();
        let mut answer = String::new();
        client.read_to_string(&mut answer).await.unwrap();
        assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
        assert!(answer.ends_with("127.0.0.1"), "{answer}");
    }
}
