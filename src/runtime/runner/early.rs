//! Installing dependencies while the answer streams.
//!
//! When an action writes the project's `package.json`, the runner starts the
//! install of the project's package manager at once, in the background,
//! instead of waiting for the answer to reach its own `npm install`. When
//! that command arrives and is a plain install of the same manager (see
//! [`plain_install`]), and nothing changed since the early install began, the
//! action joins it: it completes with that install's result, and the rest of
//! its `&&` chain runs as written.
//!
//! Commands keep the runner's order: no command (joining or not) runs while
//! an early install does, so there is never more than one install in a
//! project. An early install stops being joinable when `package.json`
//! changes again (another early install then follows it, and the command
//! joins that one), when any command runs after it, in a later turn, or once
//! an action joined it. A failure is reported by the action that joins it,
//! once; an early install nobody joins leaves only its terminal output.

mod command;
#[cfg(test)]
mod tests;

use std::sync::{Arc, MutexGuard};

use futures::channel::oneshot;
use futures::future::{FutureExt, Shared};

pub use self::command::{Manager, package_manager, plain_install};

use super::output::OutputTail;
use super::{BoxedTask, COMMAND_PTY, Job, Runner, exit_line, failure_reason};
use crate::runtime::build_result::{BuildResult, Stage};
use crate::runtime::host::{CommandSpec, Process};
use crate::runtime::session::ActionStatus;

/// What an early install ended with: `Err` holds why it failed.
type Outcome = Result<(), Failure>;

/// A failed early install: the reason, and the build result the action that
/// joins it reports (none when the install could not even start).
#[derive(Clone, Debug)]
struct Failure {
    reason: String,
    result: Option<Box<BuildResult>>,
}

impl From<String> for Failure {
    fn from(reason: String) -> Failure {
        Failure {
            reason,
            result: None,
        }
    }
}
type Done = Shared<oneshot::Receiver<Outcome>>;

/// The early install a project has had most recently.
struct Install {
    id: u64,
    turn: u64,
    manager: Manager,
    /// Its result no longer describes the project.
    stale: bool,
    joined: bool,
    ended: bool,
    process: Option<Arc<dyn Process>>,
    done: Done,
}

/// An early install to launch.
pub(super) struct Start {
    id: u64,
    turn: u64,
    manager: Manager,
    done: oneshot::Sender<Outcome>,
}

/// The early-install state of one runner.
#[derive(Default)]
pub(super) struct Early {
    next_id: u64,
    install: Option<Install>,
    /// `package.json` changed while an install ran: the next one, for the
    /// turn and manager of the change.
    again: Option<(u64, Manager)>,
}

/// What a command does about the early install.
enum Before {
    /// Run as written.
    Run,
    /// Wait for the install to end, then ask again.
    Wait(Done),
    /// Take the install's result as the first step; then run `rest`.
    Join { done: Done, rest: Option<String> },
}

impl Early {
    fn begin(&mut self, turn: u64, manager: Manager) -> Start {
        self.next_id += 1;
        let (sender, receiver) = oneshot::channel();
        self.install = Some(Install {
            id: self.next_id,
            turn,
            manager,
            stale: false,
            joined: false,
            ended: false,
            process: None,
            done: receiver.shared(),
        });
        Start {
            id: self.next_id,
            turn,
            manager,
            done: sender,
        }
    }

    /// `package.json` was written; `manager` is `None` when it is not JSON
    /// (the answer's own install then says what is wrong with it).
    fn package_json_written(&mut self, turn: u64, manager: Option<Manager>) -> Option<Start> {
        match &mut self.install {
            Some(install) if !install.ended => {
                install.stale = true;
                self.again = manager.map(|manager| (turn, manager));
                None
            }
            _ => manager.map(|manager| self.begin(turn, manager)),
        }
    }

    /// Install `id` ended; returns the one that follows it, if any (none
    /// for a turn that was stopped: `aborted_turn` and those before it).
    fn ended(&mut self, id: u64, aborted_turn: u64) -> Option<Start> {
        if let Some(install) = self.install.as_mut().filter(|i| i.id == id) {
            install.ended = true;
            install.process = None;
        }
        let (turn, manager) = self.again.take().filter(|(turn, _)| *turn > aborted_turn)?;
        Some(self.begin(turn, manager))
    }

    fn before(&mut self, turn: u64, command: &str) -> Before {
        let Some(install) = &mut self.install else {
            return Before::Run;
        };
        let joinable = !install.stale && !install.joined && install.turn == turn;
        match plain_install(command) {
            Some(plain) if joinable && plain.manager == install.manager => {
                install.joined = true;
                Before::Join {
                    done: install.done.clone(),
                    rest: plain.rest.map(str::to_owned),
                }
            }
            _ if !install.ended => Before::Wait(install.done.clone()),
            _ => {
                // What the command does may undo what was installed.
                install.stale = true;
                Before::Run
            }
        }
    }

    /// Stop: no install follows; returns the running one to kill.
    fn abort(&mut self) -> Option<Arc<dyn Process>> {
        self.again = None;
        self.install.as_ref().and_then(|i| i.process.clone())
    }
}

/// How a command of the queue goes on after the early install.
pub(super) enum Prelude {
    /// Run the command as written.
    Run,
    /// It joined the early install, which succeeded: run what follows it.
    Joined { rest: Option<String> },
}

impl Runner {
    fn early(&self) -> MutexGuard<'_, Early> {
        self.inner.early.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Called after an action wrote `path` with `content`: a written root
    /// `package.json` starts an early install.
    pub(super) async fn early_after_write(&self, turn: u64, path: &str, content: &str) {
        if path != "package.json" {
            return;
        }
        let manager = match serde_json::from_str::<serde_json::Value>(content) {
            Ok(json) => {
                let root = self.inner.cx.runtime.list("").await.unwrap_or_default();
                let names = root.iter().map(|e| e.path.rsplit('/').next().unwrap_or(""));
                Some(package_manager(names, &json))
            }
            Err(_) => None,
        };
        let start = self.early().package_json_written(turn, manager);
        if let Some(start) = start {
            let runner = self.clone();
            (self.inner.cx.spawn)(async move { runner.run_early(start).await }.boxed_task());
        }
    }

    async fn run_early(&self, mut start: Start) {
        loop {
            let outcome = self.early_install(&start).await;
            let aborted_turn = self.control().aborted_turn;
            let next = self.early().ended(start.id, aborted_turn);
            // Nobody may be waiting for it.
            let _ = start.done.send(outcome);
            match next {
                Some(next) => start = next,
                None => return,
            }
        }
    }

    async fn early_install(&self, start: &Start) -> Outcome {
        let command = start.manager.install();
        self.terminal(
            "\x1b[2m# Rivet: installing dependencies early, while the answer streams\x1b[0m\r\n",
        );
        let process = self
            .spawn(
                start.turn,
                CommandSpec::command(command).with_pty(COMMAND_PTY),
            )
            .await?;
        if let Some(install) = self.early().install.as_mut().filter(|i| i.id == start.id) {
            install.process = Some(Arc::clone(&process));
        }
        // Stop may have been pressed before the process was registered.
        if self.is_aborted(start.turn) {
            let _ = process.kill().await;
        }
        let mut tail = OutputTail::default();
        let status = self.pump_until_exit(&process, &mut tail).await;
        self.terminal(exit_line(&status));
        if status.success() {
            return Ok(());
        }
        let output = tail.raw_text();
        Err(Failure {
            reason: failure_reason(command, &status, &tail),
            result: Some(Box::new(BuildResult::new(
                Stage::Install,
                Some(command.to_owned()),
                status.code,
                &output,
            ))),
        })
    }

    /// Settles `command` with the early install before it runs: waits for a
    /// running install, or joins it. A failed joined install fails the
    /// action here, with one alert.
    pub(super) async fn early_before(&self, job: &Job, command: &str) -> Result<Prelude, String> {
        let mut told = false;
        loop {
            if self.is_aborted(job.turn) {
                return Err("stopped".to_owned());
            }
            let before = self.early().before(job.turn, command);
            match before {
                Before::Run => return Ok(Prelude::Run),
                Before::Wait(done) => {
                    if !told {
                        told = true;
                        self.terminal(
                            "\x1b[2m# Rivet: waiting for the early install to finish\x1b[0m\r\n",
                        );
                    }
                    let _ = done.await;
                }
                Before::Join { done, rest } => return self.join(job, command, done, rest).await,
            }
        }
    }

    async fn join(
        &self,
        job: &Job,
        command: &str,
        done: Done,
        rest: Option<String>,
    ) -> Result<Prelude, String> {
        let first = command.split("&&").next().unwrap_or(command).trim();
        self.terminal(format!(
            "\x1b[2m# Rivet: `{first}` is the install that started early\x1b[0m\r\n"
        ));
        let outcome = done
            .await
            .unwrap_or_else(|_| Err(Failure::from("the early install was cancelled".to_owned())));
        match outcome {
            Ok(()) => Ok(Prelude::Joined { rest }),
            Err(Failure { reason, result }) => {
                if !self.is_aborted(job.turn) {
                    // Reported as the joining action's own failure would be.
                    if let Some(result) = result {
                        self.build_result(*result, Some(&job.action));
                    }
                    self.alert(
                        format!("`{first}` failed"),
                        reason.clone(),
                        Some(&job.action),
                    );
                }
                Err(reason)
            }
        }
    }

    /// Stop kills the early install, and none follows it.
    pub(super) fn early_abort(&self) -> Option<Arc<dyn Process>> {
        self.early().abort()
    }

    /// A `start` that could not get past the install it depends on.
    pub(super) fn early_start_failed(&self, job: &Job, reason: String) {
        let status = if self.is_aborted(job.turn) {
            ActionStatus::Aborted
        } else {
            ActionStatus::Failed { reason }
        };
        self.status(&job.action, status);
    }
}
