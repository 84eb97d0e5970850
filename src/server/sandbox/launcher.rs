//! Spawning the sandbox's host processes (`bwrap`, slirp4netns) from one
//! long-lived thread, and waiting for them.

use std::sync::OnceLock;
use std::sync::mpsc as std_mpsc;
use std::time::Duration;

use tokio::sync::{oneshot, watch};

/// A child of the IDE, spawned from one long-lived thread: `bwrap
/// --die-with-parent` and slirp4netns die with the *thread* that started them,
/// and tokio's blocking threads come and go.
pub struct Launched {
    pub pid: u32,
    exited: watch::Receiver<bool>,
}

impl Launched {
    pub fn has_exited(&self) -> bool {
        *self.exited.borrow()
    }

    /// SIGKILLs the process if it is still ours (not yet reaped, so its pid
    /// cannot have been reused), then waits for it.
    pub async fn kill(&self, grace: Duration) {
        if !self.has_exited()
            && let Ok(pid) = i32::try_from(self.pid)
        {
            let _ = nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(pid),
                nix::sys::signal::Signal::SIGKILL,
            );
        }
        let mut exited = self.exited.clone();
        let _ = tokio::time::timeout(grace, exited.wait_for(|e| *e)).await;
    }

    pub async fn wait(&self, limit: Duration) -> bool {
        let mut exited = self.exited.clone();
        tokio::time::timeout(limit, exited.wait_for(|e| *e))
            .await
            .is_ok()
    }
}

type Job = Box<dyn FnOnce() + Send>;

fn launcher() -> &'static std::sync::Mutex<std_mpsc::Sender<Job>> {
    static LAUNCHER: OnceLock<std::sync::Mutex<std_mpsc::Sender<Job>>> = OnceLock::new();
    LAUNCHER.get_or_init(|| {
        let (tx, rx) = std_mpsc::channel::<Job>();
        let spawned = std::thread::Builder::new()
            .name("rivet-sandbox-launcher".to_owned())
            .spawn(move || {
                while let Ok(job) = rx.recv() {
                    job();
                }
            });
        if let Err(e) = spawned {
            tracing::error!("cannot start the sandbox launcher thread: {e}");
        }
        std::sync::Mutex::new(tx)
    })
}

/// Spawns `command` from the launcher thread.
pub async fn launch(mut command: std::process::Command) -> std::io::Result<Launched> {
    let (reply, response) = oneshot::channel();
    let job: Job = Box::new(move || {
        let result = command.spawn().map(|mut child| {
            let pid = child.id();
            let (tx, rx) = watch::channel(false);
            // The waiter is not the parent thread, so it may end freely.
            let _ = std::thread::Builder::new()
                .name("rivet-sandbox-wait".to_owned())
                .spawn(move || {
                    let _ = child.wait();
                    tx.send_replace(true);
                });
            Launched { pid, exited: rx }
        });
        let _ = reply.send(result);
    });
    let sent = launcher()
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .send(job);
    if sent.is_err() {
        return Err(std::io::Error::other("the sandbox launcher thread is gone"));
    }
    response
        .await
        .unwrap_or_else(|_| Err(std::io::Error::other("the sandbox launcher thread is gone")))
}
