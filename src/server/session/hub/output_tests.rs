//! A stored session's output windows, against a real store in a temporary
//! data directory.

use std::time::Duration;

use futures::StreamExt;

use super::*;
use crate::runtime::kind::RuntimeKind;
use crate::server::store::{OUTPUT_EVENT_MAX, ProjectRow, dropped_line};

async fn stored() -> (tempfile::TempDir, Store, Arc<Session>) {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::new(dir.path(), RuntimeKind::Sandbox);
    store
        .ensure_project(&ProjectRow {
            id: "p".into(),
            name: "p".into(),
            created_at: 0,
            updated_at: 0,
            runtime: RuntimeKind::Sandbox,
        })
        .await
        .unwrap();
    let project = ProjectId::parse("p").unwrap();
    let session = Session::stored(project, SessionState::default(), 0, store.clone());
    (dir, store, Arc::new(session))
}

fn terminal(text: &str) -> SessionEvent {
    SessionEvent::Terminal { text: text.into() }
}

fn file(path: &str) -> SessionEvent {
    SessionEvent::FileRemoved { path: path.into() }
}

/// The stored events as (seq, event).
async fn stored_events(store: &Store) -> Vec<(u64, SessionEvent)> {
    let replay = store.events("p").await.unwrap();
    replay
        .events
        .into_iter()
        .map(|e| (e.seq, e.event))
        .collect()
}

#[tokio::test]
async fn output_published_within_a_window_is_stored_as_one_event() {
    let (_dir, store, session) = stored().await;
    for i in 0..1000 {
        session.publish(terminal(&format!("{i}\n")));
    }
    session.flush().await;
    let all: String = (0..1000).map(|i| format!("{i}\n")).collect();
    assert_eq!(stored_events(&store).await, [(1, terminal(&all))]);
    assert_eq!(session.read(|s| s.terminal.clone()), all);
}

#[tokio::test]
async fn output_and_other_events_keep_their_order_and_numbers() {
    let (_dir, store, session) = stored().await;
    session.publish(terminal("a"));
    session.publish(terminal("b"));
    session.publish(file("x"));
    session.publish(terminal("c"));
    session.flush().await;
    assert_eq!(
        stored_events(&store).await,
        [(1, terminal("ab")), (2, file("x")), (3, terminal("c"))]
    );
}

#[tokio::test]
async fn an_output_window_ends_by_itself() {
    let (_dir, _store, session) = stored().await;
    let mut events = Box::pin(session.subscribe());
    let _snapshot = events.next().await.unwrap();
    session.publish(terminal("late"));
    let next = tokio::time::timeout(Duration::from_secs(5), events.next())
        .await
        .expect("the window never ended")
        .unwrap();
    assert_eq!((next.seq, &next.event), (1, &terminal("late")));
}

#[tokio::test]
async fn the_dropped_output_is_said_in_the_terminal() {
    let (_dir, store, session) = stored().await;
    let chunk = "z".repeat(1024);
    for _ in 0..1024 {
        session.publish(terminal(&chunk));
    }
    session.flush().await;
    let dropped = (1024 * 1024 - OUTPUT_EVENT_MAX) as u64;
    let expected = dropped_line(dropped) + &"z".repeat(OUTPUT_EVENT_MAX);
    assert_eq!(stored_events(&store).await, [(1, terminal(&expected))]);
    assert!(session.read(|s| s.terminal.contains(&dropped_line(dropped))));
}

/// The writer is held up (another connection holds the write lock) while a
/// process prints 64 MiB: the session holds one window's end, the queue
/// gets one bounded event per window, and nothing else is lost.
#[tokio::test]
async fn a_flood_reaches_the_writer_as_one_bounded_event_per_window() {
    let (_dir, store, session) = stored().await;
    let pool = store.writes().await.unwrap();
    let lock = pool.begin_with("BEGIN IMMEDIATE").await.unwrap();
    let chunk = "f".repeat(64 * 1024);
    for round in 0..3 {
        for _ in 0..340 {
            session.publish(terminal(&chunk));
            assert!(session.output_held() <= OUTPUT_EVENT_MAX);
        }
        session.publish(file(&format!("f{round}")));
        tokio::time::sleep(OUTPUT_WINDOW).await;
    }
    lock.rollback().await.unwrap();
    session.flush().await;
    let events = stored_events(&store).await;
    let seqs: Vec<u64> = events.iter().map(|(seq, _)| *seq).collect();
    assert_eq!(seqs, (1..=events.len() as u64).collect::<Vec<_>>());
    // Each round: its output in a window or two, then its file.
    assert!(events.len() <= 9, "{} events", events.len());
    let files: Vec<&SessionEvent> = events
        .iter()
        .map(|(_, e)| e)
        .filter(|e| !matches!(e, SessionEvent::Terminal { .. }))
        .collect();
    assert_eq!(files, [&file("f0"), &file("f1"), &file("f2")]);
    for (_, event) in &events {
        if let SessionEvent::Terminal { text } = event {
            assert!(text.len() <= OUTPUT_EVENT_MAX + 64, "{} bytes", text.len());
        }
    }
}
