//! The one owner of a project's answers. Starting one (the person's
//! message, Continue, Retry, an automatic fix attempt) claims the project's
//! streaming slot, records the user's message, runs the answer (Build or
//! Agent; `turn` relays it to the browser when the project runs there) and
//! its after-work (the checkpoint, the fix loop's follow-up), and frees the
//! slot. The slot is claimed before anything is recorded, so of two
//! messages sent at once exactly one is answered and the other is refused
//! as busy, leaving no trace. Only this module sets or clears the slot
//! ([`Streaming`] cannot be built or changed anywhere else).

use std::collections::BTreeMap;
use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use super::agent::{self, AgentContext};
use super::api::ApiError;
use super::fix::{self, FixContext};
use super::project::ProjectHandle;
use super::turn::{self, Answer};
use crate::runtime::attachment::{Attachments, Carried};
use crate::runtime::protocol::Parser;
use crate::runtime::session::{
    ChatId, FixAttempt, Message, MessageStatus, Mode, Role, SessionEvent,
};
use crate::server::llm::client::{ChatMessage, ImagePart};
use crate::server::state::AppState;
use crate::server::store::MessageRow;

/// The cancel token of the answer that streams, if one does.
#[derive(Default)]
pub struct Streaming(Option<CancellationToken>);

impl Streaming {
    pub fn is_active(&self) -> bool {
        self.0.is_some()
    }

    /// Stops the streaming answer; its task frees the slot as it ends.
    pub fn cancel(&self) {
        if let Some(cancel) = &self.0 {
            cancel.cancel();
        }
    }
}

/// An answer that stopped early and may be continued: its parser keeps the
/// place inside any open action.
pub struct Unfinished {
    pub message_id: String,
    pub parser: Parser,
    pub text: String,
    /// The history the answer was asked with (ending in the user's message).
    pub history: Vec<ChatMessage>,
}

/// What the model has been told, and the state of the project's answers.
/// Its fields are its own: the session's modules change it through these
/// methods only.
#[derive(Default)]
pub struct Conversation {
    /// What the model has seen: user messages and its own whole answers.
    history: Vec<ChatMessage>,
    /// The user message each assistant message answers, for Retry.
    asked: BTreeMap<String, String>,
    unfinished: Option<Unfinished>,
    /// Held while an answer streams; cancelling it stops the answer. Only
    /// this module sets or clears it.
    streaming: Streaming,
    /// Set while the fix loop follows an answer; cancelling it ends the loop.
    fixing: Option<CancellationToken>,
    next_message: u64,
    /// Files the person saved since the last answer: content before the
    /// first save, and now.
    user_edits: BTreeMap<String, (Option<String>, String)>,
    /// What stands in for the older turns that no longer fit the window.
    summary: Option<super::summary::Summary>,
    /// The model the person picked for their latest message (`None`: the
    /// configured one); its fix attempts, Retry and Continue use it too.
    model: Option<String>,
    /// The chat `history`, `summary` and `model` belong to: the one the
    /// latest answer was in.
    chat: ChatId,
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

/// A file's content before the person's first change since the last
/// answer, and now.
pub type UserEdits = BTreeMap<String, (Option<String>, String)>;

impl Conversation {
    /// What the model has seen of the current chat.
    pub fn history(&self) -> &[ChatMessage] {
        &self.history
    }

    /// The current chat's turns after an answer.
    pub fn set_history(&mut self, history: Vec<ChatMessage>) {
        self.history = history;
    }

    /// The user message the answer `answer_id` answers (for Retry).
    pub fn asked(&self, answer_id: &str) -> Option<&str> {
        self.asked.get(answer_id).map(String::as_str)
    }

    /// How many answers can be asked again.
    pub fn asked_count(&self) -> usize {
        self.asked.len()
    }

    pub fn record_asked(&mut self, answer_id: String, asked: String) {
        self.asked.insert(answer_id, asked);
    }

    pub fn unfinished(&self) -> Option<&Unfinished> {
        self.unfinished.as_ref()
    }

    /// Keeps an answer that stopped early, for Continue.
    pub fn set_unfinished(&mut self, unfinished: Option<Unfinished>) {
        self.unfinished = unfinished;
    }

    pub fn take_unfinished(&mut self) -> Option<Unfinished> {
        self.unfinished.take()
    }

    /// The unfinished answer, when it is `message_id`.
    pub fn take_unfinished_of(&mut self, message_id: &str) -> Option<Unfinished> {
        self.unfinished
            .take_if(|unfinished| unfinished.message_id == message_id)
    }

    /// Whether an answer streams, and a way to stop it; the slot is set and
    /// cleared only in this module.
    pub fn streaming(&self) -> &Streaming {
        &self.streaming
    }

    /// Marks the fix loop as following the last answer; returns the token of
    /// the loop it replaces.
    pub fn follow_fix(&mut self, cancel: CancellationToken) -> Option<CancellationToken> {
        self.fixing.replace(cancel)
    }

    /// The fix loop's token, taken: no loop follows any more.
    pub fn take_fixing(&mut self) -> Option<CancellationToken> {
        self.fixing.take()
    }

    pub fn next_id(&mut self) -> String {
        self.next_message += 1;
        format!("m{}", self.next_message)
    }

    /// The number of the latest message.
    pub fn last_number(&self) -> u64 {
        self.next_message
    }

    /// Numbers the next message after `last` (a restored conversation).
    pub fn number_after(&mut self, last: u64) {
        self.next_message = last;
    }

    /// Records a change to `path` made outside the model (by hand, or a
    /// pull): what it held before the first such change, what it holds now.
    pub fn note_edit(&mut self, path: &str, before: Option<String>, after: String) {
        self.user_edits
            .entry(path.to_owned())
            .and_modify(|(_, later)| *later = after.clone())
            .or_insert((before, after));
    }

    pub fn has_user_edits(&self) -> bool {
        !self.user_edits.is_empty()
    }

    /// The person's changes since the last answer, for the next prompt.
    pub fn take_user_edits(&mut self) -> UserEdits {
        std::mem::take(&mut self.user_edits)
    }

    pub fn summary(&self) -> Option<&super::summary::Summary> {
        self.summary.as_ref()
    }

    pub fn set_summary(&mut self, summary: super::summary::Summary) {
        self.summary = Some(summary);
    }

    pub fn model(&self) -> Option<&str> {
        self.model.as_deref()
    }

    /// The model the person picked for their message (`None` or blank: the
    /// configured one).
    pub fn pick_model(&mut self, model: Option<String>) {
        self.model = model.filter(|m| !m.trim().is_empty());
    }

    /// The chat the latest answer was in.
    pub fn chat(&self) -> &ChatId {
        &self.chat
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

    /// A rebuilt conversation's current chat, before its threads are set.
    pub fn start_in(&mut self, chat: ChatId) {
        self.chat = chat;
    }
}

/// Whether an answer streams in the project.
pub fn is_busy(handle: &ProjectHandle) -> bool {
    handle.conversation().streaming().is_active()
}

/// Stops the streaming answer and frees the slot at once (the server is
/// shutting down and will not wait for the answer's task).
pub fn end_for_shutdown(handle: &ProjectHandle) {
    if let Some(cancel) = handle.conversation().streaming.0.take() {
        cancel.cancel();
    }
}

/// The ids of the user's message and of the answer that started.
pub struct Sent {
    pub user_message_id: String,
    pub assistant_message_id: String,
}

/// What the person's message carries besides its text, ready for the
/// model: the attachments as stored and shown, the images' bytes, and the
/// text the model is asked with (the selected elements' blocks after the
/// person's words).
#[derive(Default)]
pub struct Attached {
    pub attachments: Attachments,
    pub images: Vec<ImagePart>,
    pub asked: String,
}

impl Attached {
    /// A message that carries nothing but `text`.
    pub fn text_only(text: &str) -> Attached {
        Attached {
            asked: text.to_owned(),
            ..Attached::default()
        }
    }
}

/// The person's message `text` (already trimmed; empty only when it
/// carries something) and its answer, on a task of its own. Takes over
/// from the fix loop.
pub async fn send(
    state: &AppState,
    handle: &Arc<ProjectHandle>,
    text: &str,
    options: super::api::SendOptions,
    attached: Attached,
) -> Result<Sent, ApiError> {
    let chat = options.chat.unwrap_or_default();
    super::chats::require(handle, &chat)?;
    super::budget::check(handle, state.llm.default_budget())?;
    let cancel = claim(handle).await?;
    // Only once the message is taken: a refused one changes nothing.
    switch_chat(handle, &chat);
    if let Some(mode) = options.mode {
        super::agent::set_mode(handle, mode);
    }
    handle.conversation().pick_model(options.model);
    stop_fixing(handle);
    super::checkpoints::before_message(handle).await;
    drop_unfinished(handle);
    let asked = attached.asked.clone();
    let (user_message_id, history) = record_user(handle, text, None, attached);
    let answer = turn::new_answer(handle, history, &asked, in_plan_mode(state, handle));
    let sent = Sent {
        user_message_id,
        assistant_message_id: answer.message_id.clone(),
    };
    spawn(state, handle, answer, cancel);
    // A message is acknowledged once it is stored: a listing read next, or a
    // restart, sees it.
    handle.session.flush().await;
    Ok(sent)
}

/// Continues the interrupted answer `message_id` where it stopped.
pub async fn continue_answer(
    state: &AppState,
    handle: &Arc<ProjectHandle>,
    message_id: &str,
) -> Result<(), ApiError> {
    super::budget::check(handle, state.llm.default_budget())?;
    let cancel = claim(handle).await?;
    let unfinished = handle.conversation().take_unfinished_of(message_id);
    let Some(unfinished) = unfinished else {
        release(handle);
        return Err(ApiError::NotContinuable(message_id.to_owned()));
    };
    handle.runner.begin_turn();
    handle.publish(SessionEvent::MessageResumed {
        message_id: message_id.to_owned(),
    });
    let answer = Answer {
        message_id: unfinished.message_id,
        parser: unfinished.parser,
        text: unfinished.text,
        history: unfinished.history,
    };
    spawn(state, handle, answer, cancel);
    Ok(())
}

/// Asks again what the answer `message_id` answered, as a new answer.
pub async fn retry(
    state: &AppState,
    handle: &Arc<ProjectHandle>,
    message_id: &str,
) -> Result<(), ApiError> {
    let asked = handle.conversation().asked(message_id).map(str::to_owned);
    let Some(asked) = asked else {
        return Err(ApiError::NotRetryable(message_id.to_owned()));
    };
    super::budget::check(handle, state.llm.default_budget())?;
    let cancel = claim(handle).await?;
    switch_chat(handle, &super::chats::chat_of(handle, message_id));
    super::checkpoints::before_message(handle).await;
    drop_unfinished(handle);
    let images = super::images::of_question(state, handle, message_id).await;
    let mut history = handle.conversation().history().to_vec();
    history.push(ChatMessage::user_with_images(asked.clone(), images));
    let answer = turn::new_answer(handle, history, &asked, in_plan_mode(state, handle));
    spawn(state, handle, answer, cancel);
    Ok(())
}

/// One automatic attempt of the fix loop: its message `text` and the
/// answer, run to its end here. The answer's id, or `None` when the person
/// took over (Stop, or an answer of their own was streaming).
pub async fn attempt(
    cx: &FixContext,
    cancel: &CancellationToken,
    text: &str,
    automatic: FixAttempt,
) -> Option<String> {
    if cancel.is_cancelled() || claim_with(&cx.project, cancel).is_err() {
        return None;
    }
    // Past the budget the loop stops, saying why.
    if let Err(spent) = super::budget::check(&cx.project, cx.llm.default_budget()) {
        release(&cx.project);
        cx.project.runner.alert(
            "Automatic fixes stopped".to_owned(),
            spent.to_string(),
            None,
        );
        return None;
    }
    let (_, history) = record_user(
        &cx.project,
        text,
        Some(automatic),
        Attached::text_only(text),
    );
    let answer = turn::new_answer(&cx.project, history, text, false);
    let answer_id = answer.message_id.clone();
    let (llm, project) = (Arc::clone(&cx.llm), Arc::clone(&cx.project));
    turn::run(project, llm, cx.description, answer, cancel.clone()).await;
    finish(&cx.project, &answer_id);
    (!cancel.is_cancelled()).then_some(answer_id)
}

/// Whether the conversation is in Plan mode: its answers run nothing.
fn in_plan_mode(state: &AppState, handle: &ProjectHandle) -> bool {
    agent::mode(handle, &state.config.agent) == Mode::Plan
}

/// How long a new message waits for an answer that has ended to free the
/// slot: its task frees it just after publishing the end, so a tab (or
/// `rivet chat`) that acts on the end at once would otherwise be told an
/// answer is still streaming.
const ENDING: std::time::Duration = std::time::Duration::from_millis(500);

/// Claims the slot for a new answer, with a token of its own. Busy while an
/// answer streams; an answer that has ended is waited for, up to [`ENDING`],
/// woken by its [`release`].
async fn claim(handle: &ProjectHandle) -> Result<CancellationToken, ApiError> {
    let cancel = CancellationToken::new();
    let deadline = tokio::time::Instant::now() + ENDING;
    loop {
        let freed = handle.slot_freed.notified();
        tokio::pin!(freed);
        // Registered before the check, so a release in between is not missed.
        freed.as_mut().enable();
        let busy = match claim_with(handle, &cancel) {
            Ok(()) => return Ok(cancel),
            Err(busy) if streams(handle) => return Err(busy),
            Err(busy) => busy,
        };
        if tokio::time::timeout_at(deadline, freed).await.is_err() {
            return Err(busy);
        }
    }
}

/// Whether an answer of the project is still arriving.
fn streams(handle: &ProjectHandle) -> bool {
    let streaming = |m: &Message| m.status == MessageStatus::Streaming;
    handle.session.read(|s| s.messages.iter().any(streaming))
}

fn claim_with(handle: &ProjectHandle, cancel: &CancellationToken) -> Result<(), ApiError> {
    let mut conversation = handle.conversation();
    if conversation.streaming().is_active() {
        return Err(ApiError::Busy);
    }
    conversation.streaming = Streaming(Some(cancel.clone()));
    Ok(())
}

/// Frees the slot: the one place an answer's end is marked.
fn release(handle: &ProjectHandle) {
    handle.conversation().streaming = Streaming(None);
    handle.slot_freed.notify_waiters();
}

/// An answer's end: the slot is free and its checkpoint follows its actions.
fn finish(handle: &Arc<ProjectHandle>, message_id: &str) {
    release(handle);
    super::checkpoints::after_answer(handle, message_id);
}

/// Records the user's message `text` (with what it carries) and returns its
/// id and the history to ask with. The person's messages are stored;
/// automatic ones are published only, as they always were.
fn record_user(
    handle: &ProjectHandle,
    text: &str,
    automatic: Option<FixAttempt>,
    attached: Attached,
) -> (String, Vec<ChatMessage>) {
    let Attached {
        attachments,
        images,
        asked,
    } = attached;
    let (id, history, chat) = {
        let mut conversation = handle.conversation();
        let id = conversation.next_id();
        let mut history = conversation.history().to_vec();
        history.push(ChatMessage::user_with_images(asked, images));
        (id, history, conversation.chat().clone())
    };
    let carried = Carried::from(&attachments);
    if automatic.is_none() {
        handle.session.save_message(MessageRow {
            id: id.clone(),
            role: Role::User,
            text: text.to_owned(),
            asked: None,
            model: None,
            usage: None,
            cost_usd: None,
            finish_reason: None,
            status: MessageStatus::Complete,
            attachments,
        });
    }
    let mut message = Message::user(id.clone(), text.to_owned());
    message.automatic = automatic;
    message.chat = chat;
    message.attachments = carried;
    handle.publish(SessionEvent::MessageAdded { message });
    (id, history)
}

/// Runs `answer` (which holds the slot with `cancel`) on a task of its own:
/// in Agent mode the agent's loop, else a Build answer followed by the fix
/// loop.
fn spawn(state: &AppState, handle: &Arc<ProjectHandle>, answer: Answer, cancel: CancellationToken) {
    let handle = Arc::clone(handle);
    let state = state.clone();
    let since = fix::mark(&handle);
    // A continued answer (text so far) is always a Build answer.
    let agent_mode =
        agent::mode(&handle, &state.config.agent) == Mode::Agent && answer.text.is_empty();
    // A plan changes nothing, so there is nothing for the fix loop to follow.
    let plan = turn::is_plan(&handle, &answer.message_id);
    tokio::spawn(async move {
        // The prompt describes the runtime this project runs on.
        let description = super::runtime_choice::description(&state, &handle.id).await;
        let llm = Arc::clone(&state.llm);
        let message_id = answer.message_id.clone();
        if agent_mode {
            let cx = AgentContext {
                project: Arc::clone(&handle),
                llm,
                description,
                config: state.config.agent.clone(),
                mcp: Arc::clone(&state.mcp),
                vision: state.config.llm.vision,
            };
            agent::run(cx, answer, cancel).await;
            finish(&handle, &message_id);
            return;
        }
        turn::run(
            Arc::clone(&handle),
            Arc::clone(&llm),
            description,
            answer,
            cancel,
        )
        .await;
        finish(&handle, &message_id);
        if plan {
            return;
        }
        let fix = FixContext {
            project: Arc::clone(&handle),
            llm,
            description,
            config: state.config.fix.clone(),
        };
        fix::follow(fix, message_id, since).await;
    });
}

/// Ends the fix loop, if one follows the last answer: the person's message
/// takes over from automatic attempts.
fn stop_fixing(handle: &ProjectHandle) {
    if let Some(fixing) = handle.conversation().take_fixing() {
        fixing.cancel();
    }
}

/// Makes `chat` the one the next answer belongs to (the slot is held). An
/// interrupted answer in the chat left behind is ended: its Continue would
/// follow another chat's changes.
fn switch_chat(handle: &ProjectHandle, chat: &ChatId) {
    if handle.conversation().chat() == chat {
        return;
    }
    drop_unfinished(handle);
    handle.conversation().switch_to(chat);
}

/// Ends an interrupted answer that will not be continued, so its open
/// action is reported as cut off.
fn drop_unfinished(handle: &ProjectHandle) {
    let unfinished = handle.conversation().take_unfinished();
    if let Some(unfinished) = unfinished {
        turn::close_parser(handle, &unfinished.message_id, unfinished.parser);
    }
}

/// Holds or frees the slot as if an answer streamed, for tests of what an
/// answer in progress refuses.
#[cfg(test)]
pub fn pretend_streaming(handle: &ProjectHandle, streaming: bool) {
    handle.conversation().streaming = Streaming(streaming.then(CancellationToken::new));
    if !streaming {
        handle.slot_freed.notify_waiters();
    }
}

#[cfg(test)]
mod tests;
