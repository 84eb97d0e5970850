//! One step of an agent run as a card: the tool, its arguments in a line,
//! its status, the result (expandable), and, while it waits for the
//! person, the diff or command with Approve, Deny and "Always allow".

use leptos::prelude::*;

use crate::app::api::{Decision, decide_step};
use crate::app::ide::CurrentProject;
use crate::runtime::session::{AgentStep, StepStatus};

#[component]
pub fn StepCard(step: AgentStep) -> impl IntoView {
    let status = step.status;
    let waiting = status == StepStatus::Waiting;
    let state = status.name();
    let result = step.result.clone().filter(|r| !r.is_empty());
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
            {step.preview.clone().map(|preview| view! { <DiffText text=preview open=waiting /> })}
            {waiting.then(|| view! { <Decide step_id=step.id.clone() tool=step.tool.clone() /> })}
            {result.map(|result| view! {
                <details class="agent-step-result" data-testid="agent-step-result">
                    <summary>"Result"</summary>
                    <pre>{result}</pre>
                </details>
            })}
        </div>
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

/// A unified diff (or a command), its lines coloured by their first sign.
#[component]
fn DiffText(text: String, open: bool) -> impl IntoView {
    let lines = text
        .lines()
        .map(|line| {
            let class = match line.chars().next() {
                _ if line.starts_with("+++") || line.starts_with("---") => "diff-head",
                Some('+') => "diff-add",
                Some('-') => "diff-del",
                Some('@') => "diff-hunk",
                _ => "diff-ctx",
            };
            view! { <span class=class>{format!("{line}\n")}</span> }
        })
        .collect_view();
    view! {
        <details class="agent-step-preview" open=open>
            <summary>"Change"</summary>
            <pre class="agent-diff" data-testid="agent-diff">{lines}</pre>
        </details>
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
