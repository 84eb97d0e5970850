//! A runtime wrapper that remembers what each file held before the model's
//! answer overwrote it, for the diff view and for the model's next prompt.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;

use crate::runtime::host::{
    CommandSpec, DirEntry, EventStream, FsEvent, PortEvent, Process, Runtime, RuntimeError,
    TreeListing,
};

/// Path → content before the current answer first wrote it (`None`: the
/// file did not exist).
pub type Baselines = Arc<Mutex<BTreeMap<String, Option<String>>>>;

pub struct RecordingRuntime {
    pub inner: Arc<dyn Runtime>,
    pub before: Baselines,
}

impl RecordingRuntime {
    async fn remember(&self, path: &str) {
        let known = self
            .before
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .contains_key(path);
        if known {
            return;
        }
        let previous = match self.inner.read_file(path).await {
            Ok(bytes) => Some(String::from_utf8_lossy(&bytes).into_owned()),
            Err(_) => None,
        };
        self.before
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .entry(path.to_owned())
            .or_insert(previous);
    }
}

#[async_trait]
impl Runtime for RecordingRuntime {
    async fn read_file(&self, path: &str) -> Result<Vec<u8>, RuntimeError> {
        self.inner.read_file(path).await
    }
    async fn write_file(&self, path: &str, contents: &[u8]) -> Result<(), RuntimeError> {
        self.remember(path).await;
        self.inner.write_file(path, contents).await
    }
    async fn mkdir(&self, path: &str) -> Result<(), RuntimeError> {
        self.inner.mkdir(path).await
    }
    async fn remove(&self, path: &str) -> Result<(), RuntimeError> {
        self.inner.remove(path).await
    }
    async fn rename(&self, from: &str, to: &str) -> Result<(), RuntimeError> {
        self.inner.rename(from, to).await
    }
    async fn list(&self, path: &str) -> Result<Vec<DirEntry>, RuntimeError> {
        self.inner.list(path).await
    }
    async fn list_tree(&self, path: &str) -> Result<Vec<DirEntry>, RuntimeError> {
        self.inner.list_tree(path).await
    }
    async fn list_tree_noting_cut(&self, path: &str) -> Result<TreeListing, RuntimeError> {
        self.inner.list_tree_noting_cut(path).await
    }
    fn fs_events(&self) -> EventStream<FsEvent> {
        self.inner.fs_events()
    }
    async fn spawn(&self, spec: CommandSpec) -> Result<Box<dyn Process>, RuntimeError> {
        self.inner.spawn(spec).await
    }
    fn port_events(&self) -> EventStream<PortEvent> {
        self.inner.port_events()
    }
    async fn open_ports(&self) -> Vec<u16> {
        self.inner.open_ports().await
    }
    async fn secret_names(&self) -> Vec<String> {
        self.inner.secret_names().await
    }
}
