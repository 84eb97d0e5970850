//! One step of an agent run as a card: the tool, its arguments in a line,
//! its status, a running command's output so far, the result (expandable),
//! and, while it waits for the person, the diff (`step_diff.rs`) or command
//! with Approve, Deny and "Always allow".

use leptos::prelude::*;

use super::card_memory::CardMemory;
use super::step_diff::StepDiff;
use crate::app::api::{Decision, decide_step};
use crate::app::context::CurrentProject;
use crate::runtime::session::{AgentStep, StepStatus};

/// An agent step's card (and its diff view), out of the first load
/// (`super::part`).
pub fn step_card(step: AgentStep) -> AnyView {
    view! { <StepCard step /> }.into_any()
}

#[component]
pub fn StepCard(step: AgentStep) -> impl IntoView {
    let status = step.status;
    let waiting = status == StepStatus::Waiting;
    let state = status.name();
    let result = step.result.clone().filter(|r| !r.is_empty());
    let output = step.output.clone().filter(|o| !o.is_empty());
    let AgentStep {
        id,
        preview,
        change,
        ..
    } = step.clone();
    view! {
        <div
            class=format!("agent-step agent-step-{state}")
            data-testid="agent-step"
            data-status=state
            data-tool=step.tool.clone()
            data-step-id=step.id.clone()
        >
            <div class="agent-step-head">
                <span class="agent-step-icon">{icon(status)}</span>
                <span class="agent-step-tool">{step.tool.clone()}</span>
                <span class="agent-step-summary">{step.summary.clone()}</span>
                <span class="agent-step-status">{status.label()}</span>
            </div>
            {preview.map(|text| view! { <StepDiff step_id=id.clone() text change waiting /> })}
            {waiting.then(|| view! { <Decide step_id=step.id.clone() tool=step.tool.clone() /> })}
            {output.map(|output| view! {
                <div class="agent-step-output" data-testid="agent-step-output"><pre>{output}</pre></div>
            })}
            {result.map(|result| view! { <StepResult step_id=id.clone() result /> })}
        </div>
    }
}

/// The tool's answer, collapsed unless the person opened it (which the
/// step's later updates keep).
#[component]
fn StepResult(step_id: String, result: String) -> impl IntoView {
    let memory = use_context::<CardMemory>().unwrap_or_default();
    let key = CardMemory::key(&step_id, "result");
    let open = memory.is_open(&key, false);
    view! {
        <details
            class="agent-step-result"
            data-testid="agent-step-result"
            open=open
            on:toggle=move |ev| memory.remember_toggle(&key, &ev)
        >
            <summary>"Result"</summary>
            <pre>{result}</pre>
        </details>
    }
}

fn icon(status: StepStatus) -> &'static str {
    match status {
        StepStatus::Pending | StepStatus::NotRun => "○",
        StepStatus::Waiting => "?",
        StepStatus::Running => "◐",
        StepStatus::Done => "✓",
        StepStatus::Failed => "✗",
        StepStatus::Denied => "⊘",
    }
}

#[component]
fn Decide(step_id: String, tool: String) -> impl IntoView {
    let project = expect_context::<CurrentProject>().0;
    let error = RwSignal::new(None::<String>);
    let decide = Action::new(move |decision: &Decision| {
        decide_step(project.clone(), step_id.clone(), *decision)
    });
    Effect::new(move |_| {
        if let Some(Err(e)) = decide.value().get() {
            error.set(Some(e.to_string()));
        }
    });
    let busy = decide.pending();
    view! {
        <div class="agent-step-decide">
            <button type="button" data-testid="approve-step" disabled=busy on:click=move |_| {
                decide.dispatch(Decision::Approve);
            }>"Approve"</button>
            <button type="button" class="secondary" data-testid="deny-step" disabled=busy on:click=move |_| {
                decide.dispatch(Decision::Deny);
            }>"Deny"</button>
            <button
                type="button"
                class="secondary"
                data-testid="always-allow"
                title=format!("Run {tool} without asking in this project from now on")
                disabled=busy
                on:click=move |_| {
                    decide.dispatch(Decision::Always);
                }
            >"Always allow in this project"</button>
            <Show when=move || error.get().is_some()>
                <span class="agent-step-error" role="alert">{move || error.get().unwrap_or_default()}</span>
            </Show>
        </div>
    }
}
