//! Listing, search, rename and delete against a real SQLite file.

use std::sync::Arc;

use super::*;
use crate::runtime::session::{MessageStatus, Role, SessionEvent};
use crate::server::store::{EventWriter, MessageRow};

fn row(id: &str, name: &str, updated_at: i64) -> ProjectRow {
    ProjectRow {
        id: id.to_owned(),
        name: name.to_owned(),
        created_at: 1_700_000_000,
        updated_at,
        runtime: RuntimeKind::Sandbox,
    }
}

fn user(id: &str, text: &str) -> MessageRow {
    MessageRow {
        id: id.to_owned(),
        role: Role::User,
        text: text.to_owned(),
        asked: None,
        model: None,
        usage: None,
        cost_usd: None,
        finish_reason: None,
        status: MessageStatus::Complete,
        attachments: Default::default(),
    }
}

async fn store() -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::new(&dir.path().join("data"), RuntimeKind::Sandbox);
    store
        .ensure_project(&row("old", "Weather app", 100))
        .await
        .unwrap();
    store
        .ensure_project(&row("new", "Todo list", 200))
        .await
        .unwrap();
    (dir, store)
}

fn ids(listing: &[ProjectListing]) -> Vec<&str> {
    listing.iter().map(|p| p.id.as_str()).collect()
}

#[tokio::test]
async fn projects_are_listed_newest_first_with_their_last_message_time() {
    let (_dir, store) = store().await;
    let all = store.find_projects("").await.unwrap();
    assert_eq!(ids(&all), ["new", "old"]);
    assert_eq!(all[0].last_message_at, None);
    store
        .save_message("old", &user("m1", "hello"))
        .await
        .unwrap();
    let all = store.find_projects("  ").await.unwrap();
    // A message makes its project the latest changed.
    assert_eq!(ids(&all), ["old", "new"]);
    assert!(all[0].last_message_at.is_some_and(|t| t > 200));
}

#[tokio::test]
async fn search_finds_projects_by_name_or_message_text_ignoring_case() {
    let (_dir, store) = store().await;
    store
        .save_message("old", &user("m1", "Show the forecast for Lyon"))
        .await
        .unwrap();
    assert_eq!(ids(&store.find_projects("todo").await.unwrap()), ["new"]);
    assert_eq!(ids(&store.find_projects("LYON").await.unwrap()), ["old"]);
    assert!(store.find_projects("nothing").await.unwrap().is_empty());
}

#[tokio::test]
async fn search_wildcards_are_matched_literally() {
    let (_dir, store) = store().await;
    store
        .ensure_project(&row("pct", "100% done", 50))
        .await
        .unwrap();
    assert_eq!(ids(&store.find_projects("%").await.unwrap()), ["pct"]);
    assert!(store.find_projects("_o").await.unwrap().is_empty());
}

#[tokio::test]
async fn rename_changes_the_name_and_reports_an_unknown_project() {
    let (_dir, store) = store().await;
    assert!(store.rename_project("new", "Chores").await.unwrap());
    assert_eq!(store.project("new").await.unwrap().unwrap().name, "Chores");
    assert!(!store.rename_project("nothere", "x").await.unwrap());
}

#[tokio::test]
async fn the_first_message_names_an_untitled_project_only() {
    let (_dir, store) = store().await;
    store
        .ensure_project(&row("blank", UNTITLED, 300))
        .await
        .unwrap();
    let named = store
        .name_after_message("blank", "\n  Build a todo app\nwith React")
        .await
        .unwrap();
    assert_eq!(named.as_deref(), Some("Build a todo app"));
    assert_eq!(
        store
            .name_after_message("blank", "Something else")
            .await
            .unwrap(),
        None
    );
    assert_eq!(
        store.name_after_message("new", "Rename me").await.unwrap(),
        None
    );
    assert_eq!(
        store.project("new").await.unwrap().unwrap().name,
        "Todo list"
    );
}

#[test]
fn a_long_first_message_is_cut_at_a_word() {
    let long = "Build a todo app with React and a dark theme and keyboard shortcuts please";
    let name = name_from_message(long).unwrap();
    assert_eq!(
        name,
        "Build a todo app with React and a dark theme and keyboard…"
    );
    assert_eq!(name_from_message(" \n "), None);
}

#[tokio::test]
async fn delete_removes_the_project_with_its_messages_and_events() {
    let (_dir, store) = store().await;
    store
        .save_message("old", &user("m1", "hello"))
        .await
        .unwrap();
    write_events(&store, "old", 3).await;
    assert!(store.delete_project("old").await.unwrap());
    assert!(store.project("old").await.unwrap().is_none());
    assert!(store.messages("old").await.unwrap().is_empty());
    assert!(store.events("old").await.unwrap().events.is_empty());
    assert!(!store.delete_project("old").await.unwrap());
    assert_eq!(ids(&store.find_projects("").await.unwrap()), ["new"]);
}

async fn write_events(store: &Store, id: &str, count: u64) {
    let writer = EventWriter::spawn(store.clone(), id.to_owned(), |_| {});
    for seq in 1..=count {
        writer.event(Arc::new(Envelope {
            seq,
            event: SessionEvent::Terminal {
                text: format!("{seq}"),
            },
        }));
    }
    writer.flush().await;
}

#[tokio::test]
async fn events_after_a_number_are_read_in_order() {
    let (_dir, store) = store().await;
    write_events(&store, "new", 5).await;
    let events = store.events_after("new", 2, 5).await.unwrap().unwrap();
    let seqs: Vec<u64> = events.iter().map(|e| e.seq).collect();
    assert_eq!(seqs, [3, 4, 5]);
    assert_eq!(store.events_after("new", 5, 5).await.unwrap(), Some(vec![]));
    assert_eq!(store.events_after("new", 4, 4).await.unwrap(), Some(vec![]));
}

#[tokio::test]
async fn events_after_a_number_that_are_missing_give_none() {
    let (_dir, store) = store().await;
    write_events(&store, "new", 3).await;
    // Events 4 and 5 were published but never stored.
    assert_eq!(store.events_after("new", 1, 5).await.unwrap(), None);
    let pool = store.writes().await.unwrap();
    sqlx::query("DELETE FROM events WHERE seq = 2")
        .execute(pool)
        .await
        .unwrap();
    assert_eq!(store.events_after("new", 1, 3).await.unwrap(), None);
}
