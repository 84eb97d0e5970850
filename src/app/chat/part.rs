//! The chat's parts out of the first load, behind one split point.
//!
//! `cargo leptos build --split` gives each `#[leptos::lazy]` function a
//! WASM module, and the code two or more of them share a module for each
//! set of functions sharing it: with a split point per part, the IDE page
//! fetched about two hundred modules. The chat's parts load together anyway
//! (once the chat is usable, `lazy.rs`), so they share one split point,
//! [`load_chat_part`], which builds whichever part it is asked for.

use leptos::prelude::*;

use crate::app::lazy::lazy_view;
use crate::runtime::attachment::Carried;
use crate::runtime::session::{AgentRun, AgentStep};

/// A part of the chat that is not in the first load.
pub enum ChatPart {
    /// The chat tabs and a new chat's opening note.
    Tabs,
    /// The current run's alerts.
    Alerts,
    /// The composer's tools (mode, model, Enhance, auto-fix, spend).
    ComposerTools {
        model: RwSignal<String>,
        draft: RwSignal<String>,
    },
    /// The budget raise shown after a refusal.
    BudgetRaise(Callback<()>),
    /// A person's message's images and selections.
    Attachments(Carried),
    /// An artifact's card.
    ArtifactCard {
        message_id: String,
        artifact_id: String,
    },
    /// An agent step's card.
    StepCard(AgentStep),
    /// An agent run's footer.
    RunFooter {
        run: AgentRun,
        cost_usd: Option<f64>,
    },
    /// The checkpoint buttons of a message.
    CheckpointButtons(String),
}

/// Shows `part` where it is placed, once the chat's module has loaded.
pub fn chat_part(part: ChatPart) -> impl IntoView {
    lazy_view(move || load_chat_part(part))
}

#[leptos::lazy]
fn load_chat_part(part: ChatPart) -> AnyView {
    match part {
        ChatPart::Tabs => super::tabs::chat_tabs(),
        ChatPart::Alerts => super::alerts::alert_list(),
        ChatPart::ComposerTools { model, draft } => super::composer::composer_tools(model, draft),
        ChatPart::BudgetRaise(on_raised) => super::spend::budget_raise(on_raised),
        ChatPart::Attachments(attachments) => super::attach::message_attachments(attachments),
        ChatPart::ArtifactCard {
            message_id,
            artifact_id,
        } => super::artifact::artifact_card(message_id, artifact_id),
        ChatPart::StepCard(step) => super::agent_step::step_card(step),
        ChatPart::RunFooter { run, cost_usd } => super::agent_run::agent_run_footer(run, cost_usd),
        ChatPart::CheckpointButtons(message_id) => {
            super::checkpoint::checkpoint_buttons(message_id)
        }
    }
}
