//! A project's session as the browser sees it: the conversation, the
//! artifacts and their actions with live statuses, the files, the "Rivet"
//! terminal log, alerts and previews.
//!
//! The server publishes [`SessionEvent`]s. [`SessionState::apply`] folds them
//! into the state, on the server (so a tab that opens later starts from a
//! snapshot) and in the browser (which renders it): one reducer, two places.

mod agent;
mod answer_format;
mod chat;
mod context;
mod event;
mod lines;
mod state;

pub use agent::{AgentRun, AgentStep, Decision, Mode, StepChange, StepStatus};
pub use answer_format::AnswerFormat;
pub use chat::{Chat, ChatId, MAX_CHATS};
pub use context::{ContextSummary, ContextUse, RulesSettings};
// Defined with the actions, so that a build result can name its action
// without the session; the events carry it, so the session names it too.
pub use crate::runtime::action::ActionRef;
pub use event::{
    ActionStatus, Alert, Envelope, FileChange, FixAttempt, FixReason, MessageStatus, Preview,
    SessionEvent,
};
pub use lines::{LineDecoder, encode_line};
pub use state::{ActionEntry, Artifact, Message, Part, Role, SessionState, Touched};

#[cfg(test)]
mod tests;
