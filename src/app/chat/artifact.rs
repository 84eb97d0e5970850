//! An artifact as a card: its title and its actions with live statuses.

use leptos::either::Either;
use leptos::prelude::*;

use crate::app::session::SessionStore;
use crate::app::workbench::Workbench;
use crate::runtime::protocol::{ActionKind, SupabaseOperation};
use crate::runtime::session::{ActionEntry, ActionStatus};

/// An artifact's card (its actions, a query's result table), out of the
/// first load (`super::part`).
pub fn artifact_card(message_id: String, artifact_id: String) -> AnyView {
    view! { <ArtifactCard message_id artifact_id /> }.into_any()
}

#[component]
pub fn ArtifactCard(message_id: String, artifact_id: String) -> impl IntoView {
    let store = expect_context::<SessionStore>();
    let version = store.artifact_version(&message_id, &artifact_id);
    let artifact = move || {
        version.track();
        store.with(|s| s.artifact(&message_id, &artifact_id).cloned())
    };
    view! {
        {move || {
            artifact()
                .map(|artifact| {
                    view! {
                        <div class="artifact-card" data-testid="artifact-card">
                            <div class="artifact-title">{artifact.title.clone()}</div>
                            <ul class="artifact-actions">
                                {artifact
                                    .actions
                                    .into_iter()
                                    .map(|entry| view! { <ActionRow entry /> })
                                    .collect_view()}
                            </ul>
                        </div>
                    }
                })
        }}
    }
}

#[component]
fn ActionRow(entry: ActionEntry) -> impl IntoView {
    let workbench = expect_context::<Workbench>();
    let (icon, state) = match &entry.status {
        ActionStatus::Pending => ("○", "pending"),
        ActionStatus::Running => ("◐", "running"),
        ActionStatus::Complete => ("✓", "complete"),
        ActionStatus::Failed { .. } => ("✗", "failed"),
        ActionStatus::Aborted => ("⊘", "aborted"),
        ActionStatus::Planned => ("◇", "planned"),
    };
    let (verb, subject) = describe(&entry);
    let file = entry
        .kind
        .file_path()
        .map(str::to_owned)
        .filter(|p| !p.is_empty());
    let reason = match &entry.status {
        ActionStatus::Failed { reason } => Some(reason.clone()),
        _ => None,
    };
    // The model did not answer in the format: say where the action came
    // from, so the person can check it.
    let recovered = entry.recovery.map(|how| how.sentence());
    view! {
        <li class=format!("action action-{state}") data-testid="action" data-status=state data-kind=entry.kind.type_name().to_owned()>
            <span class="action-icon" aria-hidden="true">{icon}</span>
            <span class="action-verb">{verb}</span>
            {match file {
                Some(path) => Either::Left(view! {
                    <button class="action-file" on:click={
                        let path = path.clone();
                        move |_| workbench.open(&path)
                    }>{path.clone()}</button>
                }),
                None => Either::Right(view! { <code class="action-command">{subject}</code> }),
            }}
            {recovered.map(|how| view! { <span class="action-recovery" data-testid="action-recovery">{how}</span> })}
            {entry.result.clone().map(|result| view! { <crate::app::data_panel::ResultTable result /> })}
            {reason.map(|r| view! { <pre class="action-reason" data-testid="action-reason">{r}</pre> })}
        </li>
    }
}

/// A verb and what it applies to, e.g. ("Run", "npm install").
fn describe(entry: &ActionEntry) -> (&'static str, String) {
    let command = || entry.content.trim().to_owned();
    match &entry.kind {
        ActionKind::File { .. } => ("Write", String::new()),
        ActionKind::Edit { .. } => ("Edit", String::new()),
        ActionKind::Shell => ("Run", command()),
        ActionKind::Build => ("Build", command()),
        ActionKind::Start => ("Start", command()),
        ActionKind::Supabase {
            operation: Some(SupabaseOperation::Migration),
            ..
        } => ("Migrate", String::new()),
        ActionKind::Supabase { .. } => (
            "Query",
            entry
                .content
                .trim()
                .lines()
                .next()
                .unwrap_or_default()
                .to_owned(),
        ),
        ActionKind::Unknown { kind } => ("Unknown action", kind.clone()),
    }
}
