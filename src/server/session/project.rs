//! One open project on the server: its session, its action runner, the
//! conversation the model sees, and what changed since the last answer.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use std::time::Duration;

use futures::FutureExt;
use tokio_util::sync::CancellationToken;

use super::hub::Session;
use super::recording::{Baselines, RecordingRuntime};
use crate::runtime::host::Runtime;
use crate::runtime::project::ProjectId;
use crate::runtime::protocol::Parser;
use crate::runtime::runner::{PreviewHooks, Runner, RunnerContext};
use crate::runtime::session::{ChatId, SessionEvent};
use crate::server::llm::client::ChatMessage;

/// How long a dev server may take to open its port.
const START_TIMEOUT: Duration = Duration::from_secs(180);

/// An answer that stopped early and may be continued: its parser keeps the
/// place inside any open action.
pub struct Unfinished {
    pub message_id: String,
    pub parser: Parser,
    pub text: String,
    /// The history the answer was asked with (ending in the user's message).
    pub history: Vec<ChatMessage>,
}

#[derive(Default)]
pub struct Conversation {
    /// What the model has seen: user messages and its own whole answers.
    pub history: Vec<ChatMessage>,
    /// The user message each assistant message answers, for Retry.
    pub asked: BTreeMap<String, String>,
    pub unfinished: Option<Unfinished>,
    /// Held while an answer streams; cancelling it stops the answer. Only
    /// `conversation` sets or clears it.
    pub streaming: super::conversation::Streaming,
    /// Set while the fix loop follows an answer; cancelling it ends the loop.
    pub fixing: Option<CancellationToken>,
    pub next_message: u64,
    /// Files the person saved since the last answer: content before the
    /// first save, and now.
    pub user_edits: BTreeMap<String, (Option<String>, String)>,
    /// What stands in for the older turns that no longer fit the window.
    pub summary: Option<super::summary::Summary>,
    /// The model the person picked for their latest message (`None`: the
    /// configured one); its fix attempts, Retry and Continue use it too.
    pub model: Option<String>,
    /// The chat `history`, `summary` and `model` belong to: the one the
    /// latest answer was in.
    pub chat: ChatId,
    /// The other chats' turns, while another chat is answered.
    parked: BTreeMap<ChatId, Thread>,
}

/// What a chat keeps of its own while another one is answered.
#[derive(Default)]
pub struct Thread {
    pub history: Vec<ChatMessage>,
    pub summary: Option<super::summary::Summary>,
    pub model: Option<String>,
}

impl Conversation {
    /// Records a change to `path` made outside the model (by hand, or a
    /// pull): what it held before the first such change, what it holds now.
    pub fn note_edit(&mut self, path: &str, before: Option<String>, after: String) {
        self.user_edits
            .entry(path.to_owned())
            .and_modify(|(_, later)| *later = after.clone())
            .or_insert((before, after));
    }

    pub fn next_id(&mut self) -> String {
        self.next_message += 1;
        format!("m{}", self.next_message)
    }

    /// Makes `chat` the one the next answer belongs to; the chat it leaves
    /// keeps its turns for later. An interrupted answer is not carried
    /// along: close it first (see `conversation::switch_chat`).
    pub fn switch_to(&mut self, chat: &ChatId) {
        if self.chat == *chat {
            return;
        }
        let leaving = Thread {
            history: std::mem::take(&mut self.history),
            summary: self.summary.take(),
            model: self.model.take(),
        };
        self.parked.insert(self.chat.clone(), leaving);
        let arriving = self.parked.remove(chat).unwrap_or_default();
        self.history = arriving.history;
        self.summary = arriving.summary;
        self.model = arriving.model;
        self.chat = chat.clone();
    }

    /// Sets a chat's turns as they were rebuilt from the store.
    pub fn set_thread(&mut self, chat: ChatId, thread: Thread) {
        if chat == self.chat {
            self.history = thread.history;
            self.summary = thread.summary;
            self.model = thread.model;
        } else {
            self.parked.insert(chat, thread);
        }
    }
}

pub struct ProjectHandle {
    pub id: ProjectId,
    pub session: Arc<Session>,
    pub runtime: Arc<dyn Runtime>,
    pub runner: Runner,
    /// Files the latest answer wrote: what they held before it.
    pub answer_before: Baselines,
    /// The project's checkpoints (unset in tests of the session alone).
    pub checkpoints: OnceLock<Arc<crate::server::checkpoint::Checkpoints>>,
    /// Agent steps waiting for the person, and the agent's servers.
    pub agent: super::agent::AgentSlot,
    /// The answers' text for the browser, when the project runs there.
    pub browser: super::browser::Relay,
    conversation: Mutex<Conversation>,
}

impl ProjectHandle {
    pub fn new(
        id: ProjectId,
        session: Arc<Session>,
        runtime: Arc<dyn Runtime>,
        previews: PreviewHooks,
    ) -> Arc<ProjectHandle> {
        let answer_before = Baselines::default();
        let recording: Arc<dyn Runtime> = Arc::new(RecordingRuntime {
            inner: Arc::clone(&runtime),
            before: Arc::clone(&answer_before),
        });
        let sink_session = Arc::clone(&session);
        let runner = Runner::new(RunnerContext {
            runtime: recording,
            sink: Arc::new(move |event: SessionEvent| sink_session.publish(event)),
            spawn: Arc::new(|task| {
                tokio::spawn(task);
            }),
            sleep: Arc::new(|duration| tokio::time::sleep(duration).boxed()),
            previews,
            start_timeout: START_TIMEOUT,
        });
        Arc::new(ProjectHandle {
            id,
            session,
            runtime,
            runner,
            answer_before,
            checkpoints: OnceLock::new(),
            agent: super::agent::AgentSlot::default(),
            browser: super::browser::Relay::default(),
            conversation: Mutex::new(Conversation::default()),
        })
    }

    pub fn conversation(&self) -> MutexGuard<'_, Conversation> {
        self.conversation.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub fn publish(&self, event: SessionEvent) {
        self.session.publish(event);
    }
}
