//! Reopening a project from the store: its events folded again give the
//! state the UI showed, its messages give the conversation the model sees.
//! What was running when the server stopped is settled: an answer still
//! streaming becomes interrupted (Continue goes on from its stored text,
//! Retry asks it again), actions still pending or running are aborted,
//! previews are closed.

use super::hub::Session;
use std::collections::BTreeMap;

use super::conversation::{Conversation, Thread, Unfinished};
use crate::runtime::attachment::ImageRef;
use crate::runtime::protocol::Parser;
use crate::runtime::session::{
    ActionRef, ActionStatus, ChatId, MessageStatus, Role, SessionEvent, SessionState,
};
use crate::server::llm::client::{ChatMessage, ImagePart};
use crate::server::store::{MessageRow, ProjectRow, Store, StoreError};

/// Why an answer that was streaming when the server stopped is interrupted.
pub const STOPPED_MID_ANSWER: &str = "the server stopped during this answer";

pub struct Restored {
    pub state: SessionState,
    /// The last stored event's number; new events follow it.
    pub seq: u64,
    pub messages: Vec<MessageRow>,
}

/// Reads the project's events and messages (recording the project first).
/// Output past the store's limit is dropped first (a project flooded
/// before the limit existed), and the events are folded a page at a time.
pub async fn load(store: &Store, project: &ProjectRow) -> Result<Restored, StoreError> {
    store.ensure_project(project).await?;
    store.compact_output(&project.id).await?;
    let mut state = SessionState::default();
    let read = store
        .fold_events(&project.id, |envelope| {
            state.apply(&envelope.event);
        })
        .await?;
    if !read.skipped.is_empty() {
        tracing::warn!(
            project = project.id,
            skipped = ?read.skipped,
            "some stored session events could not be read and were skipped"
        );
    }
    Ok(Restored {
        state,
        seq: read.last_seq,
        messages: store.messages(&project.id).await?,
    })
}

/// The conversation the stored messages describe: each finished answer
/// adds the question it answered and itself to its chat's turns, as it did
/// when it finished. The chat of the latest message is the current one.
/// The images of a person's message come back with its answer's question
/// (`load_images` reads them).
pub fn conversation(
    state: &SessionState,
    messages: &[MessageRow],
    load_images: &dyn Fn(&[ImageRef]) -> Vec<ImagePart>,
) -> Conversation {
    let chats = super::chats::by_message(state);
    let chat_of = |id: &str| chats.get(id).map_or_else(ChatId::main, |c| (*c).clone());
    let mut conversation = Conversation::default();
    let mut threads: BTreeMap<ChatId, Thread> = BTreeMap::new();
    let mut previous: Option<&MessageRow> = None;
    for message in messages {
        let before = previous.replace(message);
        let Some(asked) = &message.asked else {
            continue;
        };
        conversation.record_asked(message.id.clone(), asked.clone());
        if matches!(
            message.status,
            MessageStatus::Complete | MessageStatus::Stopped
        ) {
            // The person's message right before the answer carried its images.
            let images = before
                .filter(|m| m.role == Role::User && !m.attachments.images.is_empty())
                .map(|m| load_images(&m.attachments.images))
                .unwrap_or_default();
            let history = &mut threads.entry(chat_of(&message.id)).or_default().history;
            history.push(ChatMessage::user_with_images(asked.clone(), images));
            history.push(ChatMessage::assistant(message.text.clone()));
        }
    }
    conversation.start_in(
        messages
            .last()
            .map_or_else(ChatId::main, |m| chat_of(&m.id)),
    );
    for (chat, mut thread) in threads {
        thread.summary = super::summary::restored(state, &chat, thread.history.len());
        conversation.set_thread(chat, thread);
    }
    let unfinished = unfinished(&conversation, messages.last());
    conversation.set_unfinished(unfinished);
    let last = messages
        .iter()
        .map(MessageRow::position)
        .chain(state.messages.iter().map(|m| number(&m.id)))
        .max()
        .map_or(0, |n| u64::try_from(n).unwrap_or(0));
    conversation.number_after(last);
    conversation
}

/// The latest message, when it is an answer cut off with some text: it can
/// be continued, with a parser that has read its text again.
fn unfinished(conversation: &Conversation, last: Option<&MessageRow>) -> Option<Unfinished> {
    let last = last?;
    let cut = matches!(
        last.status,
        MessageStatus::Streaming | MessageStatus::Interrupted { .. }
    );
    let asked = last.asked.as_ref()?;
    if !cut || last.text.is_empty() {
        return None;
    }
    let mut parser = Parser::new(last.id.clone());
    // Its events are in the session already.
    parser.push(&last.text);
    let mut history = conversation.history().to_vec();
    history.push(ChatMessage::user(asked.clone()));
    Some(Unfinished {
        message_id: last.id.clone(),
        parser,
        text: last.text.clone(),
        history,
    })
}

fn number(id: &str) -> i64 {
    id.trim_start_matches('m').parse().unwrap_or(0)
}

/// Publishes (and so stores) the end of whatever was running when the
/// server stopped.
pub fn settle(session: &Session, messages: &[MessageRow]) {
    let (streaming, active, previews) = session.read(|state| {
        let streaming: Vec<String> = state
            .messages
            .iter()
            .filter(|m| m.status == MessageStatus::Streaming)
            .map(|m| m.id.clone())
            .collect();
        let active: Vec<ActionRef> = state
            .artifacts
            .iter()
            .flat_map(|a| {
                a.actions
                    .iter()
                    .filter(|e| e.status.is_active())
                    .map(|e| ActionRef {
                        message_id: a.message_id.clone(),
                        action_id: e.id.clone(),
                    })
            })
            .collect();
        let previews: Vec<u16> = state.previews.iter().map(|p| p.port).collect();
        (streaming, active, previews)
    });
    let status = MessageStatus::Interrupted {
        reason: STOPPED_MID_ANSWER.to_owned(),
    };
    for message_id in streaming {
        let mut row = messages
            .iter()
            .find(|m| m.id == message_id)
            .cloned()
            .unwrap_or_else(|| empty_answer(&message_id));
        row.status = status.clone();
        session.save_message(row);
        session.publish(SessionEvent::MessageFinished {
            message_id,
            status: status.clone(),
            finish_reason: None,
        });
    }
    for action in active {
        session.publish(SessionEvent::ActionStatus {
            action,
            status: ActionStatus::Aborted,
        });
    }
    for port in previews {
        session.publish(SessionEvent::PreviewClosed { port });
    }
}

fn empty_answer(id: &str) -> MessageRow {
    MessageRow {
        id: id.to_owned(),
        role: Role::Assistant,
        text: String::new(),
        asked: None,
        model: None,
        usage: None,
        cost_usd: None,
        finish_reason: None,
        status: MessageStatus::Streaming,
        attachments: Default::default(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::kind::RuntimeKind;
    use crate::server::llm::client::ChatRole;

    fn row(id: &str, asked: Option<&str>, text: &str, status: MessageStatus) -> MessageRow {
        MessageRow {
            id: id.to_owned(),
            role: if asked.is_some() {
                Role::Assistant
            } else {
                Role::User
            },
            text: text.to_owned(),
            asked: asked.map(str::to_owned),
            model: None,
            usage: None,
            cost_usd: None,
            finish_reason: None,
            status,
            attachments: Default::default(),
        }
    }

    fn history(conversation: &Conversation) -> Vec<(bool, String)> {
        conversation
            .history()
            .iter()
            .map(|m| (m.role == ChatRole::User, m.content.clone()))
            .collect()
    }

    #[test]
    fn the_history_holds_each_finished_answer_after_its_question() {
        let interrupted = MessageStatus::Interrupted {
            reason: "cut".into(),
        };
        let rows = [
            row("m1", None, "todo app", MessageStatus::Complete),
            row("m2", Some("todo app"), "<boltArtifact>…", interrupted),
            // Retry of m2.
            row(
                "m3",
                Some("todo app"),
                "Here it is",
                MessageStatus::Complete,
            ),
            row("m4", None, "make it blue", MessageStatus::Complete),
            row(
                "m5",
                Some("make it blue"),
                "",
                MessageStatus::Failed {
                    error: "401".into(),
                },
            ),
        ];
        let conversation = conversation(&SessionState::default(), &rows, &|_| Vec::new());
        assert_eq!(
            history(&conversation),
            [
                (true, "todo app".to_owned()),
                (false, "Here it is".to_owned())
            ]
        );
        // Every answer can be asked again, the interrupted one too.
        assert_eq!(conversation.asked_count(), 3);
        assert_eq!(conversation.asked("m2"), Some("todo app"));
        assert_eq!(conversation.last_number(), 5);
    }

    #[test]
    fn only_the_latest_answer_cut_with_text_can_be_continued() {
        let cut = MessageStatus::Interrupted {
            reason: "cut".into(),
        };
        let done = row("m1", None, "hi", MessageStatus::Complete);
        let streaming = row("m2", Some("hi"), "Hel", MessageStatus::Streaming);
        let state = SessionState::default();
        let restored = conversation(&state, &[done.clone(), streaming.clone()], &|_| Vec::new());
        let unfinished = restored.unfinished().expect("continuable");
        assert_eq!(unfinished.message_id, "m2");
        assert_eq!(unfinished.text, "Hel");
        assert_eq!(unfinished.history.len(), 1);
        for rows in [
            vec![done.clone(), row("m2", Some("hi"), "", cut.clone())],
            vec![
                done.clone(),
                row("m2", Some("hi"), "x", MessageStatus::Complete),
            ],
            vec![
                done.clone(),
                row("m2", Some("hi"), "x", cut),
                row("m3", None, "again", MessageStatus::Complete),
            ],
        ] {
            assert!(
                conversation(&state, &rows, &|_| Vec::new())
                    .unfinished()
                    .is_none(),
                "{rows:?}"
            );
        }
    }

    #[test]
    fn message_numbers_continue_after_the_highest_seen() {
        let mut state = SessionState::default();
        state
            .messages
            .push(crate::runtime::session::Message::user("m7", "hi"));
        let conversation = conversation(&state, &[], &|_| Vec::new());
        assert_eq!(conversation.last_number(), 7);
    }

    /// Output rows a flood left before the limits existed.
    async fn flooded(store: &Store, project: &ProjectRow, rows: i64) {
        store.ensure_project(project).await.unwrap();
        let pool = store.writes().await.unwrap();
        let mut tx = pool.begin().await.unwrap();
        for seq in 1..=rows {
            let text = format!("{seq:08}\n").repeat(512);
            let json = serde_json::to_string(&SessionEvent::Terminal { text }).unwrap();
            sqlx::query("INSERT INTO events (project, seq, event) VALUES ($1, $2, $3)")
                .bind(&project.id)
                .bind(seq)
                .bind(json)
                .execute(&mut *tx)
                .await
                .unwrap();
        }
        tx.commit().await.unwrap();
    }

    #[tokio::test]
    async fn reopening_a_project_flooded_before_the_limits_keeps_only_its_tail() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::new(dir.path(), RuntimeKind::Sandbox);
        let project = ProjectRow {
            id: "p".into(),
            name: "p".into(),
            created_at: 0,
            updated_at: 0,
            runtime: RuntimeKind::Sandbox,
        };
        flooded(&store, &project, 3000).await;
        let restored = load(&store, &project).await.unwrap();
        assert_eq!(restored.seq, 3000);
        assert!(restored.state.terminal.ends_with("00003000\n"));
        let left = store.events("p").await.unwrap().events.len() as u64;
        let kept = crate::server::store::OUTPUT_KEPT / (9 * 512);
        assert_eq!(left, kept + 1, "the kept rows and the line that says");
    }
}
