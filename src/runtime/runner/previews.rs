//! Which ports get a preview address, and the session events that say so.
//!
//! Every port a server opens is listed in the session, so the preview pane
//! can offer it, but an address (on the server, a listener of the IDE's own)
//! is given only to the first port of each `start` (the dev server the
//! answer started) and to the ports the person asks for. A project can open
//! and close ports as fast as it likes without making the owner open
//! anything. The owner decides how many addresses a project may hold.
//!
//! The owner's state and the session's must agree, so every step that
//! changes one and tells the other happens under one lock, in order.

use super::Runner;
use super::callbacks::{ClosePreview, OpenPreview, PreviewUrl};
use crate::runtime::session::{Preview, SessionEvent};

/// How the runner's owner gives ports a preview address.
#[derive(Clone)]
pub struct PreviewHooks {
    /// The address `port` has, if it has one. It opens none that was not
    /// asked for before.
    pub url: PreviewUrl,
    /// Gives `port` an address (or returns the one it has).
    pub open: OpenPreview,
    /// `port` closed in the runtime: its address stops serving.
    pub closed: ClosePreview,
}

/// A port that was given an address.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpenedPreview {
    pub url: String,
    /// Ports whose address was taken back to make room for this one.
    pub closed: Vec<u16>,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PreviewError {
    #[error("nothing listens on port {port} in this project")]
    NotListening { port: u16 },
    #[error(
        "port {port} cannot be previewed now: the {max} previews this project may have \
         (sandbox.max_previews) are all in use; close a preview tab, then try again"
    )]
    AllInUse { port: u16, max: usize },
    #[error("no address could be opened for the preview of port {port}: {reason}")]
    NoAddress { port: u16, reason: String },
}

impl Runner {
    fn preview_lock(&self) -> std::sync::MutexGuard<'_, ()> {
        self.inner
            .previews
            .lock()
            .unwrap_or_else(|p| p.into_inner())
    }

    /// A server listens on `port`: it is listed, with the address it has.
    pub(super) fn preview_opened(&self, port: u16) {
        let _order = self.preview_lock();
        let url = (self.inner.cx.previews.url)(port);
        self.emit(SessionEvent::PreviewOpened {
            preview: Preview { port, url },
        });
    }

    pub(super) fn preview_closed(&self, port: u16) {
        let _order = self.preview_lock();
        (self.inner.cx.previews.closed)(port);
        self.emit(SessionEvent::PreviewClosed { port });
    }

    /// The first port of a `start` is shown without being asked for.
    pub(super) fn preview_started(&self, port: u16) {
        if let Err(e) = self.open_preview(port) {
            self.terminal(format!("\x1b[2m# Rivet: no preview: {e}\x1b[0m\r\n"));
        }
    }

    /// Gives `port` a preview address (the person asked for it) and returns it.
    pub fn open_preview(&self, port: u16) -> Result<String, PreviewError> {
        let _order = self.preview_lock();
        let opened = (self.inner.cx.previews.open)(port)?;
        for closed in opened.closed {
            self.emit(SessionEvent::PreviewUrl {
                port: closed,
                url: None,
            });
        }
        self.emit(SessionEvent::PreviewUrl {
            port,
            url: Some(opened.url.clone()),
        });
        Ok(opened.url)
    }
}
