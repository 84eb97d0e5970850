//! The streaming slot's rules, on a real project without a model: a
//! refused start leaves the slot as it found it.

use super::*;
use crate::runtime::session::FixReason;

async fn project() -> (AppState, Arc<ProjectHandle>, tempfile::TempDir) {
    let (state, data) = crate::server::state::for_tests(|_| {});
    let row = crate::server::state::project_for_tests(&state, "p").await;
    let handle = state.open_projects.open(&state, &row.id).await;
    (state, handle, data)
}

#[tokio::test]
async fn a_second_claim_while_one_holds_the_slot_is_busy() {
    let (_state, handle, _data) = project().await;
    let first = claim(&handle).await.unwrap();
    assert!(is_busy(&handle));
    assert!(matches!(claim(&handle).await, Err(ApiError::Busy)));
    handle.conversation().streaming().cancel();
    assert!(first.is_cancelled(), "cancel reaches the holder's token");
    release(&handle);
    assert!(!is_busy(&handle));
    claim(&handle).await.unwrap();
}

/// An answer's end is published just before its task frees the slot: a
/// message sent on seeing the end waits for that instead of being refused
/// as busy (`it` `session::a_rejected_key_fails_the_answer_with_a_clear_message`,
/// whose retry follows the failure at once, once failed so).
#[tokio::test]
async fn a_claim_right_after_an_answer_ended_waits_for_the_slot_and_one_while_it_streams_is_busy() {
    let (_state, handle, _data) = project().await;
    pretend_streaming(&handle, true);
    let ending = Arc::clone(&handle);
    tokio::spawn(async move {
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        release(&ending);
    });
    claim(&handle).await.unwrap();
    release(&handle);

    pretend_streaming(&handle, true);
    handle.publish(SessionEvent::MessageAdded {
        message: Message::assistant("m2"),
    });
    assert!(matches!(claim(&handle).await, Err(ApiError::Busy)));
}

/// A claim waiting for an ended answer is told when the slot is freed: on
/// this one-threaded runtime it has run by the time the test's task yields
/// a few times, where a claim that polls on a timer would still sleep.
#[tokio::test]
async fn a_claim_waiting_for_the_slot_wakes_when_it_is_freed_not_on_a_timer() {
    let (_state, handle, _data) = project().await;
    pretend_streaming(&handle, true);
    let waiting = {
        let handle = Arc::clone(&handle);
        tokio::spawn(async move { claim(&handle).await.map(|_| ()) })
    };
    let turns = || async {
        for _ in 0..8 {
            tokio::task::yield_now().await;
        }
    };
    turns().await;
    assert!(!waiting.is_finished(), "the slot is held: the claim waits");
    release(&handle);
    turns().await;
    assert!(waiting.is_finished(), "the release woke the claim");
    waiting.await.unwrap().unwrap();
    assert!(is_busy(&handle));
}

#[tokio::test]
async fn send_while_an_answer_streams_is_busy_and_records_nothing() {
    let (state, handle, _data) = project().await;
    pretend_streaming(&handle, true);
    let refused = send(
        &state,
        &handle,
        "hello",
        Default::default(),
        Attached::text_only("hello"),
    )
    .await;
    assert!(matches!(refused, Err(ApiError::Busy)));
    assert!(handle.session.read(|s| s.messages.is_empty()));
    assert!(handle.conversation().history().is_empty());
}

#[tokio::test]
async fn continue_of_a_message_that_was_not_interrupted_is_refused_and_frees_the_slot() {
    let (state, handle, _data) = project().await;
    let refused = continue_answer(&state, &handle, "m2").await;
    assert!(matches!(refused, Err(ApiError::NotContinuable(id)) if id == "m2"));
    assert!(!is_busy(&handle));
}

#[tokio::test]
async fn retry_of_a_message_that_is_no_answer_is_refused_and_leaves_the_slot_free() {
    let (state, handle, _data) = project().await;
    let refused = retry(&state, &handle, "m1").await;
    assert!(matches!(refused, Err(ApiError::NotRetryable(id)) if id == "m1"));
    assert!(!is_busy(&handle));
}

#[tokio::test]
async fn an_automatic_attempt_after_stop_records_nothing() {
    let (state, handle, _data) = project().await;
    let cx = FixContext {
        project: Arc::clone(&handle),
        llm: Arc::clone(&state.llm),
        description: crate::server::llm::prompt::RuntimeDescription::from_config(&state.config),
        config: state.config.fix.clone(),
    };
    let cancel = CancellationToken::new();
    cancel.cancel();
    let automatic = FixAttempt {
        attempt: 1,
        max_attempts: 3,
        tokens_so_far: 0,
        reason: FixReason::Failure,
    };
    assert_eq!(attempt(&cx, &cancel, "fix it", automatic).await, None);
    assert!(!is_busy(&handle));
    assert!(handle.session.read(|s| s.messages.is_empty()));
}

#[tokio::test]
async fn a_message_to_a_chat_the_project_does_not_have_is_refused_and_records_nothing() {
    let (state, handle, _data) = project().await;
    let options = crate::server::session::api::SendOptions {
        chat: Some(ChatId::numbered(2)),
        ..Default::default()
    };
    let refused = send(
        &state,
        &handle,
        "hello",
        options,
        Attached::text_only("hello"),
    )
    .await;
    assert!(matches!(refused, Err(ApiError::ChatNotFound(chat)) if chat == "c2"));
    assert!(!is_busy(&handle));
    assert!(handle.session.read(|s| s.messages.is_empty()));
}

#[test]
fn switching_chats_keeps_each_chats_turns_apart() {
    let mut conversation = super::Conversation::default();
    conversation.set_history(vec![ChatMessage::user("build a todo app")]);
    conversation.pick_model(Some("big".into()));
    let second = ChatId::numbered(2);
    conversation.switch_to(&second);
    assert!(conversation.history().is_empty() && conversation.model().is_none());
    conversation.set_history(vec![ChatMessage::user("what is in main.js?")]);
    conversation.switch_to(&ChatId::main());
    assert_eq!(conversation.history().len(), 1);
    assert_eq!(conversation.history()[0].content, "build a todo app");
    assert_eq!(conversation.model(), Some("big"));
    conversation.switch_to(&second);
    assert_eq!(conversation.history()[0].content, "what is in main.js?");
}
