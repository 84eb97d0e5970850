//! The fix loop: when the actions of an answer end with a failure (or the
//! dev server prints a compile error soon after), Rivet tells the model what
//! failed by itself and runs its answer, within limits: a number of attempts
//! per message of the person, a token budget, and an early stop when the
//! same error comes back twice or an attempt changes no file. Then an alert
//! says what failed and that Rivet stopped trying.
//!
//! An answer that had code in Markdown but no file or command gets one
//! message restating the format ([`nudge`]), counted like an attempt.
//!
//! [`fix_request`] writes what the model is told: the failures as
//! `runtime::build_result::report` describes them, the same text the
//! agent's `read_build_result` tool gives.

use std::sync::Arc;
use std::time::Duration;

use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::project::ProjectHandle;
use crate::runtime::build_result::report::{capitalised, failure_report};
use crate::runtime::build_result::{BuildResult, Stage};
use crate::runtime::host::Runtime;
use crate::runtime::project::ProjectId;
use crate::runtime::protocol::ActionKind;
use crate::runtime::session::{
    AnswerFormat, FixAttempt, FixReason, MessageStatus, SessionEvent, SessionState,
};
use crate::server::config::FixConfig;
use crate::server::llm::LlmService;
use crate::server::llm::prompt::{RuntimeDescription, format_nudge};
use crate::server::state::AppState;

/// How often the loop looks whether the actions are done.
const POLL: Duration = Duration::from_millis(250);

/// The whole follow-up message for `results`, reading the files they name
/// from the project.
pub async fn fix_request(runtime: &dyn Runtime, results: &[BuildResult]) -> String {
    format!(
        "Running your last answer failed.\n\n{}Fix the cause with the smallest change, then run \
         again what failed (reinstall, rebuild or restart the dev server) so the fix can be \
         checked.",
        failure_report(runtime, results).await
    )
}

/// Why the loop stopped trying.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StopReason {
    Attempts(u32),
    Repeated,
    NoChange,
    Budget { spent: u32, budget: u32 },
}

impl StopReason {
    fn explain(&self) -> String {
        match self {
            StopReason::Attempts(n) => format!("{n} automatic attempts did not fix it"),
            StopReason::Repeated => "the same error came back twice".to_owned(),
            StopReason::NoChange => "the last attempt changed no file".to_owned(),
            StopReason::Budget { spent, budget } => {
                format!("the attempts used {spent} tokens, past the budget of {budget}")
            }
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// Make attempt number n (from 1).
    Attempt(u32),
    Stop(StopReason),
}

/// The count kept for one message of the person.
#[derive(Debug, Default)]
pub struct Tally {
    pub attempts: u32,
    /// Tokens of the answer and the attempts so far.
    pub tokens: u32,
    signatures: Vec<String>,
    /// The format reminder was sent.
    nudged: bool,
    /// The failures the last fix attempt was asked about: resolved when its
    /// run ends without failure.
    pub fixing: Option<Fixing>,
}

/// What a fix attempt is about: the alerts and build results up to these
/// ids (the failures and what followed from them).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fixing {
    pub attempt: u32,
    pub alerts_up_to: u64,
    pub results_up_to: u64,
}

impl Fixing {
    /// Everything the project reported so far, for attempt `attempt`.
    fn now(project: &ProjectHandle, attempt: u32) -> Fixing {
        let (alerts_up_to, results_up_to) = project
            .session
            .read(|s| (s.last_alert_id(), s.last_build_result_id()));
        Fixing {
            attempt,
            alerts_up_to,
            results_up_to,
        }
    }

    /// The event that marks them resolved.
    pub fn resolved(self) -> SessionEvent {
        SessionEvent::FailuresResolved {
            alerts_up_to: self.alerts_up_to,
            results_up_to: self.results_up_to,
            by: format!("fixed by automatic attempt {}", self.attempt),
        }
    }
}

impl Tally {
    /// What to do about `failures`, which followed the answer or the last
    /// attempt (`changed_files`: whether it wrote any file).
    pub fn decide(
        &mut self,
        config: &FixConfig,
        failures: &[BuildResult],
        changed_files: bool,
    ) -> Decision {
        let signature = failures
            .iter()
            .map(BuildResult::signature)
            .collect::<Vec<_>>()
            .join("\n");
        self.signatures.push(signature);
        let last = self.signatures.last();
        let seen = self.signatures.iter().filter(|s| Some(*s) == last).count();
        if seen >= 3 {
            Decision::Stop(StopReason::Repeated)
        } else if self.attempts > 0 && !changed_files {
            Decision::Stop(StopReason::NoChange)
        } else if self.attempts >= config.max_attempts {
            Decision::Stop(StopReason::Attempts(self.attempts))
        } else if config.token_budget > 0 && self.tokens >= config.token_budget {
            Decision::Stop(StopReason::Budget {
                spent: self.tokens,
                budget: config.token_budget,
            })
        } else {
            self.attempts += 1;
            Decision::Attempt(self.attempts)
        }
    }
}

impl Tally {
    /// Whether to remind the model of the format after an answer that had
    /// code but no action: once per message of the person, within the same
    /// attempts and budget as fixes. The attempt's number, or `None`.
    pub fn decide_nudge(&mut self, config: &FixConfig) -> Option<u32> {
        let over_budget = config.token_budget > 0 && self.tokens >= config.token_budget;
        if self.nudged || self.attempts >= config.max_attempts || over_budget {
            return None;
        }
        self.nudged = true;
        self.attempts += 1;
        Some(self.attempts)
    }
}

/// What the loop needs to run attempts.
pub struct FixContext {
    pub project: Arc<ProjectHandle>,
    pub llm: Arc<LlmService>,
    pub description: RuntimeDescription,
    pub config: FixConfig,
}

/// The last build result's id: failures after it belong to what runs next.
pub fn mark(project: &ProjectHandle) -> u64 {
    project.session.read(SessionState::last_build_result_id)
}

/// Follows the answer `message_id` (whose actions began after build result
/// `since`) and makes attempts while its failures call for them. Stop, or a
/// new message of the person, ends it.
pub async fn follow(cx: FixContext, message_id: String, since: u64) {
    if !toggle::is_on(&cx) {
        return;
    }
    let cancel = take_over(&cx.project);
    run_loop(cx, cancel, Tally::default(), message_id, since).await;
}

/// A token for a new loop, which ends the one running.
fn take_over(project: &ProjectHandle) -> CancellationToken {
    let cancel = CancellationToken::new();
    if let Some(previous) = project.conversation().follow_fix(cancel.clone()) {
        previous.cancel();
    }
    cancel
}

/// "Try again" on the stop alert `alert_id`: a fresh count of attempts and
/// tokens, starting with an attempt on the failures the loop stopped on.
async fn restart(cx: FixContext, alert_id: u64) -> Result<(), TryAgainError> {
    let failures = cx.project.session.read(|s| {
        let alert = s.alerts.iter().find(|a| a.id == alert_id);
        let ids = alert.map(|a| a.fix_results.clone()).unwrap_or_default();
        s.build_results
            .iter()
            .filter(|r| ids.contains(&r.id))
            .cloned()
            .collect::<Vec<_>>()
    });
    if failures.is_empty() {
        return Err(TryAgainError::NotAStop(alert_id));
    }
    if super::conversation::is_busy(&cx.project) {
        return Err(TryAgainError::Busy);
    }
    let cancel = take_over(&cx.project);
    tokio::spawn(async move {
        let since = mark(&cx.project);
        let tally = Tally {
            attempts: 1,
            fixing: Some(Fixing::now(&cx.project, 1)),
            ..Tally::default()
        };
        if let Some(answer) = attempt_fix(&cx, &cancel, &failures, 1, 0).await {
            run_loop(cx, cancel, tally, answer, since).await;
        }
    });
    Ok(())
}

#[derive(Debug, thiserror::Error)]
pub enum TryAgainError {
    #[error("alert {0} is not the fix loop's stop alert, or its failures are gone")]
    NotAStop(u64),
    #[error("an answer is still streaming; stop it or wait for it to finish")]
    Busy,
    #[error(transparent)]
    Project(#[from] super::api::ApiError),
}

/// Starts the fix loop over from its stop alert `alert_id` in `project`
/// (the `try_fix_again` server function).
pub async fn try_again(
    state: &AppState,
    project: &ProjectId,
    alert_id: u64,
) -> Result<(), TryAgainError> {
    let handle = super::api::open_project(state, project).await?;
    let cx = FixContext {
        project: handle,
        llm: Arc::clone(&state.llm),
        description: RuntimeDescription::from_config(&state.config),
        config: state.config.fix.clone(),
    };
    restart(cx, alert_id).await
}

/// Follows answers and makes attempts until the failures stop, a limit is
/// reached or `cancel` fires.
async fn run_loop(
    cx: FixContext,
    cancel: CancellationToken,
    mut tally: Tally,
    mut message_id: String,
    mut since: u64,
) {
    loop {
        if !settle(&cx, &cancel, since).await {
            break;
        }
        let RunEnd {
            failures,
            changed,
            tokens,
            complete,
        } = cx
            .project
            .session
            .read(|s| RunEnd::read(s, &message_id, since));
        tally.tokens += tokens;
        tracing::info!(
            project = %cx.project.id,
            failures = failures.len(),
            attempts = tally.attempts,
            tokens = tally.tokens,
            "the run after an answer ended"
        );
        // An answer that was stopped, cut or failed is the person's to
        // continue or retry.
        if !complete {
            break;
        }
        if failures.is_empty() {
            if let Some(fixing) = tally.fixing.take() {
                cx.project.publish(fixing.resolved());
            }
            let Some(next) = nudge(&cx, &cancel, &mut tally, &message_id).await else {
                break;
            };
            message_id = next;
            continue;
        }
        since = failures.last().map_or(since, |r| r.id);
        let attempt = match tally.decide(&cx.config, &failures, changed) {
            Decision::Attempt(n) => n,
            Decision::Stop(reason) => {
                tracing::info!(project = %cx.project.id, ?reason, "the fix loop stopped trying");
                give_up(&cx.project, &failures, &reason, &tally);
                break;
            }
        };
        super::checkpoints::before_fix(&cx.project, &message_id).await;
        tally.fixing = Some(Fixing::now(&cx.project, attempt));
        let Some(next) = attempt_fix(&cx, &cancel, &failures, attempt, tally.tokens).await else {
            break;
        };
        message_id = next;
    }
    // Whoever ends a loop early (Stop, a new message, a newer loop) takes
    // its token; a loop that ended by itself clears its own.
    if !cancel.is_cancelled() {
        cx.project.conversation().take_fixing();
    }
}

/// How the run after an answer ended.
struct RunEnd {
    /// Build results after the mark.
    failures: Vec<BuildResult>,
    /// The answer wrote a file.
    changed: bool,
    /// The answer's tokens.
    tokens: u32,
    /// The answer ended by itself (not stopped, cut or failed).
    complete: bool,
}

impl RunEnd {
    fn read(state: &SessionState, message_id: &str, since: u64) -> RunEnd {
        let message = state.message(message_id);
        RunEnd {
            failures: failures_after(state, since),
            changed: !state.changed_by_last_answer.is_empty(),
            tokens: message.and_then(|m| m.usage).map_or(0, |u| u.total_tokens),
            complete: message.is_some_and(|m| m.status == MessageStatus::Complete),
        }
    }
}

/// The build results after `since` that call for an attempt: none when
/// every one is a `console.error` of the page (which an app may log on
/// purpose); with them when another failure does.
fn failures_after(state: &SessionState, since: u64) -> Vec<BuildResult> {
    let failures: Vec<BuildResult> = state
        .build_results
        .iter()
        .filter(|r| r.id > since)
        .cloned()
        .collect();
    if failures.iter().all(|r| r.stage == Stage::ConsoleError) {
        Vec::new()
    } else {
        failures
    }
}

/// When to stop watching for failures, the actions done at `done`:
/// `settle_ms` after that for a compile error, and `page_error_ms` after a
/// dev server was first seen ready (`ready`; its page reports errors once
/// the preview loads it), whichever is later. A dev server that becomes
/// ready while the loop watches (a WebContainer reports its preview after
/// the actions) extends the watch. While a dev server was started
/// (`starting`) but none is ready yet, it gets `page_error_ms` from `done`
/// to become ready: a WebContainer's tab reports its actions and its
/// preview a while after the answer ends.
fn watch_until(
    config: &FixConfig,
    done: Instant,
    ready: Option<Instant>,
    starting: bool,
) -> Instant {
    let mut settle = done + Duration::from_millis(config.settle_ms);
    if starting && ready.is_none() {
        settle = settle.max(done + Duration::from_millis(config.page_error_ms));
    }
    let page = ready.map(|at| at + Duration::from_millis(config.page_error_ms));
    page.map_or(settle, |page| settle.max(page))
}

/// Waits until the actions are done, then until [`watch_until`] for a
/// failure unless there is one already. False when cancelled.
async fn settle(cx: &FixContext, cancel: &CancellationToken, since: u64) -> bool {
    loop {
        if cancel.is_cancelled() {
            return false;
        }
        if !cx.project.session.read(SessionState::is_busy) {
            break;
        }
        tokio::time::sleep(POLL).await;
    }
    let done = Instant::now();
    let mut ready = None;
    loop {
        let (failed, serving, starting) = cx.project.session.read(|s| {
            let serving = s.previews.iter().any(|p| p.url.is_some());
            let starting = s
                .artifacts
                .iter()
                .flat_map(|a| &a.actions)
                .any(|e| matches!(e.kind, ActionKind::Start));
            (!failures_after(s, since).is_empty(), serving, starting)
        });
        if serving && ready.is_none() {
            ready = Some(Instant::now());
        }
        if failed || Instant::now() >= watch_until(&cx.config, done, ready, starting) {
            break;
        }
        tokio::select! {
            () = cancel.cancelled() => return false,
            () = tokio::time::sleep(POLL) => {}
        }
    }
    !cancel.is_cancelled()
}

/// Sends the automatic message and runs its answer; returns the answer's id,
/// or `None` when the person took over (Stop, or a message of their own).
async fn attempt_fix(
    cx: &FixContext,
    cancel: &CancellationToken,
    failures: &[BuildResult],
    attempt: u32,
    tokens_so_far: u32,
) -> Option<String> {
    let text = fix_request(cx.project.runtime.as_ref(), failures).await;
    let automatic = FixAttempt {
        attempt,
        max_attempts: cx.config.max_attempts,
        tokens_so_far,
        reason: FixReason::Failure,
    };
    super::conversation::attempt(cx, cancel, &text, automatic).await
}

/// After an answer that ran without failure: when it had code but no
/// action, one message restating the format, and its answer's id. `None`
/// when there is nothing to remind, the tally says no, or the person took
/// over.
async fn nudge(
    cx: &FixContext,
    cancel: &CancellationToken,
    tally: &mut Tally,
    message_id: &str,
) -> Option<String> {
    let format = cx.project.session.read(|s| s.answer_format(message_id));
    if format != AnswerFormat::CodeWithoutActions {
        return None;
    }
    let attempt = tally.decide_nudge(&cx.config)?;
    tracing::info!(project = %cx.project.id, attempt, "reminding the model of the format");
    super::checkpoints::before_fix(&cx.project, message_id).await;
    let automatic = FixAttempt {
        attempt,
        max_attempts: cx.config.max_attempts,
        tokens_so_far: tally.tokens,
        reason: FixReason::Format,
    };
    super::conversation::attempt(cx, cancel, &format_nudge(), automatic).await
}

/// The alert that ends the loop.
fn give_up(project: &ProjectHandle, failures: &[BuildResult], reason: &StopReason, tally: &Tally) {
    let what = failures
        .first()
        .map_or_else(|| "The run".to_owned(), |r| capitalised(&r.title()));
    let output = failures
        .iter()
        .map(|r| r.output.as_str())
        .collect::<Vec<_>>()
        .join("\n");
    project.runner.fix_stopped(
        format!("{what}. Rivet stopped trying to fix it"),
        format!(
            "Rivet stopped because {} ({} automatic attempts, {} tokens).\n{output}",
            reason.explain(),
            tally.attempts,
            tally.tokens
        ),
        failures.iter().map(|r| r.id).collect(),
    );
}

pub mod toggle;

#[cfg(test)]
mod tests;
