//! The store against a real SQLite file in a temporary data directory.

use std::sync::Arc;

use sqlx::Row;

use super::*;
use crate::runtime::llm::{FinishReason, TokenUsage};
use crate::runtime::session::{Envelope, Message, MessageStatus, Role, SessionEvent};

fn project(id: &str) -> ProjectRow {
    ProjectRow {
        id: id.to_owned(),
        name: format!("project {id}"),
        created_at: 1_700_000_000,
        updated_at: 1_700_000_000,
        runtime: RuntimeKind::Sandbox,
    }
}

fn terminal(seq: u64, text: &str) -> Arc<Envelope> {
    Arc::new(Envelope {
        seq,
        event: SessionEvent::Terminal { text: text.into() },
    })
}

fn answer(id: &str, text: &str, status: MessageStatus) -> MessageRow {
    MessageRow {
        id: id.to_owned(),
        role: Role::Assistant,
        text: text.to_owned(),
        asked: Some("build it".to_owned()),
        model: Some("rivet-replay".to_owned()),
        usage: Some(TokenUsage {
            prompt_tokens: 1,
            completion_tokens: 2,
            total_tokens: 3,
        }),
        // Kept beside the counts, and read back.
        cost_usd: Some(0.25),
        finish_reason: None,
        status,
        attachments: Default::default(),
    }
}

async fn store_with(id: &str) -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::new(&dir.path().join("data"), RuntimeKind::Sandbox);
    store.ensure_project(&project(id)).await.unwrap();
    (dir, store)
}

/// Writes `events` through a writer and waits for them.
/// The one number a `SELECT COUNT(*)` answers.
async fn count(store: &Store, sql: &'static str) -> i64 {
    sqlx::query(sql)
        .fetch_one(store.ready().await.unwrap())
        .await
        .unwrap()
        .get(0)
}

async fn write_events(store: &Store, id: &str, events: Vec<Arc<Envelope>>) {
    let writer = EventWriter::spawn(store.clone(), id.to_owned(), |_| {});
    for event in events {
        writer.event(event);
    }
    writer.flush().await;
}

#[tokio::test]
async fn migrations_create_the_database_in_an_empty_data_dir_with_wal_and_foreign_keys() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::new(&dir.path().join("new"), RuntimeKind::Sandbox);
    let pool = store.ready().await.unwrap();
    assert!(dir.path().join("new/rivet.db").is_file());
    let mode: String = sqlx::query("PRAGMA journal_mode")
        .fetch_one(pool)
        .await
        .unwrap()
        .get(0);
    assert_eq!(mode, "wal");
    let keys: i64 = sqlx::query("PRAGMA foreign_keys")
        .fetch_one(pool)
        .await
        .unwrap()
        .get(0);
    assert_eq!(keys, 1);
    // Running them again (a restart) is a no-op.
    Store::new(&dir.path().join("new"), RuntimeKind::Sandbox)
        .ready()
        .await
        .unwrap();
}

/// The writer never copies the log back into the database itself (it
/// would hold every streaming token meanwhile): the store's own task does,
/// so what is written reaches `rivet.db` while the writer only appends.
#[tokio::test]
async fn the_log_is_copied_into_the_database_by_its_own_task_not_the_writer() {
    let (dir, store) = store_with("p1").await;
    let writes = store.writes().await.unwrap();
    let every: i64 = sqlx::query("PRAGMA wal_autocheckpoint")
        .fetch_one(writes)
        .await
        .unwrap()
        .get(0);
    assert_eq!(every, 0);
    let db = dir.path().join("data/rivet.db");
    let before = std::fs::metadata(&db).unwrap().len();
    let text = "x".repeat(4096);
    let events: Vec<_> = (1..=400).map(|seq| terminal(seq, &text)).collect();
    write_events(&store, "p1", events).await;
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(30);
    while std::fs::metadata(&db).unwrap().len() < before + 1024 * 1024 {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the log was never copied back"
        );
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
}

/// Every write goes through the one writing connection: the pool that
/// reads refuses to write, so a write added there fails its tests at once
/// instead of racing the store's writer for SQLite's lock.
#[tokio::test]
async fn the_reading_pool_refuses_to_write_and_the_writing_one_writes() {
    let (_dir, store) = store_with("p1").await;
    let reads = store.ready().await.unwrap();
    let refused = sqlx::query("UPDATE projects SET name = 'x' WHERE id = 'p1'")
        .execute(reads)
        .await
        .unwrap_err();
    assert!(refused.to_string().contains("readonly"), "{refused}");
    let writes = store.writes().await.unwrap();
    sqlx::query("UPDATE projects SET name = 'x' WHERE id = 'p1'")
        .execute(writes)
        .await
        .unwrap();
    let name: String = sqlx::query("SELECT name FROM projects WHERE id = 'p1'")
        .fetch_one(reads)
        .await
        .unwrap()
        .get(0);
    assert_eq!(name, "x");
}

#[tokio::test]
async fn a_project_is_recorded_once() {
    let (_dir, store) = store_with("p1").await;
    let mut renamed = project("p1");
    renamed.name = "other".into();
    store.ensure_project(&renamed).await.unwrap();
    assert_eq!(store.project("p1").await.unwrap(), Some(project("p1")));
    assert_eq!(store.project("p2").await.unwrap(), None);
}

#[tokio::test]
async fn events_come_back_in_order_per_project() {
    let (_dir, store) = store_with("p1").await;
    store.ensure_project(&project("p2")).await.unwrap();
    write_events(&store, "p1", vec![terminal(1, "a"), terminal(2, "b")]).await;
    write_events(&store, "p2", vec![terminal(1, "other")]).await;
    let replay = store.events("p1").await.unwrap();
    let seqs: Vec<u64> = replay.events.iter().map(|e| e.seq).collect();
    assert_eq!(seqs, [1, 2]);
    assert_eq!(replay.events[1], *terminal(2, "b"));
    assert_eq!(replay.last_seq, 2);
    assert!(replay.skipped.is_empty());
}

#[tokio::test]
async fn a_corrupt_event_row_is_reported_and_skipped() {
    let (_dir, store) = store_with("p1").await;
    write_events(&store, "p1", vec![terminal(1, "a")]).await;
    let pool = store.writes().await.unwrap();
    sqlx::query("INSERT INTO events (project, seq, event) VALUES ('p1', 2, '{not json')")
        .execute(pool)
        .await
        .unwrap();
    sqlx::query(
        "INSERT INTO events (project, seq, event) VALUES ('p1', 3, '{\"type\":\"no_such_event\"}')",
    )
    .execute(pool)
    .await
    .unwrap();
    write_events(&store, "p1", vec![terminal(4, "d")]).await;
    let replay = store.events("p1").await.unwrap();
    assert_eq!(replay.skipped, [2, 3]);
    let seqs: Vec<u64> = replay.events.iter().map(|e| e.seq).collect();
    assert_eq!(seqs, [1, 4]);
    assert_eq!(replay.last_seq, 4);
}

#[tokio::test]
async fn events_of_an_unknown_project_are_refused() {
    let (_dir, store) = store_with("p1").await;
    write_events(&store, "nobody", vec![terminal(1, "a")]).await;
    assert!(store.events("nobody").await.unwrap().events.is_empty());
}

#[tokio::test]
async fn a_message_row_is_updated_in_place_and_keeps_what_it_answers() {
    let (_dir, store) = store_with("p1").await;
    let user = MessageRow {
        id: "m1".into(),
        role: Role::User,
        text: "build it".into(),
        asked: None,
        model: None,
        usage: None,
        cost_usd: None,
        finish_reason: None,
        status: MessageStatus::Complete,
        attachments: Default::default(),
    };
    store.save_message("p1", &user).await.unwrap();
    store
        .save_message("p1", &answer("m2", "Sure", MessageStatus::Streaming))
        .await
        .unwrap();
    let mut later = answer(
        "m2",
        "Sure, here",
        MessageStatus::Interrupted {
            reason: "cut".into(),
        },
    );
    later.asked = None;
    store.save_message("p1", &later).await.unwrap();
    let rows = store.messages("p1").await.unwrap();
    assert_eq!(rows.len(), 2);
    assert_eq!(rows[0], user);
    assert_eq!(rows[1].text, "Sure, here");
    assert_eq!(rows[1].asked.as_deref(), Some("build it"));
    assert_eq!(
        rows[1].status,
        MessageStatus::Interrupted {
            reason: "cut".into()
        }
    );
    assert_eq!(rows[1].usage.map(|u| u.total_tokens), Some(3));
}

#[tokio::test]
async fn a_finish_reason_stored_as_debug_text_still_loads_from_the_messages_table() {
    let (_dir, store) = store_with("p1").await;
    let mut row = answer("m1", "done", MessageStatus::Complete);
    row.finish_reason = Some(FinishReason::ToolCalls);
    store.save_message("p1", &row).await.unwrap();
    let pool = store.writes().await.unwrap();
    let written: String = sqlx::query("SELECT finish_reason FROM messages WHERE id = 'm1'")
        .fetch_one(pool)
        .await
        .unwrap()
        .get(0);
    assert_eq!(written, "tool_calls");
    // What earlier versions wrote (`format!("{:?}")`, lower-cased), what the
    // plain `Debug` text would be, and a reason this version does not know.
    for (stored, read) in [
        ("toolcalls", Some(FinishReason::ToolCalls)),
        ("contentfilter", Some(FinishReason::ContentFilter)),
        ("Length", Some(FinishReason::Length)),
        ("stop", Some(FinishReason::Stop)),
        ("made_up", None),
    ] {
        sqlx::query("UPDATE messages SET finish_reason = $1 WHERE id = 'm1'")
            .bind(stored)
            .execute(pool)
            .await
            .unwrap();
        let rows = store.messages("p1").await.unwrap();
        assert_eq!(rows[0].finish_reason, read, "{stored}");
    }
}

#[tokio::test]
async fn messages_are_ordered_by_number_not_by_text() {
    let (_dir, store) = store_with("p1").await;
    for id in ["m10", "m2", "m1"] {
        store
            .save_message("p1", &answer(id, id, MessageStatus::Complete))
            .await
            .unwrap();
    }
    let ids: Vec<String> = store
        .messages("p1")
        .await
        .unwrap()
        .into_iter()
        .map(|m| m.id)
        .collect();
    assert_eq!(ids, ["m1", "m2", "m10"]);
}

#[tokio::test]
async fn the_writer_stores_an_event_before_delivering_it() {
    let (_dir, store) = store_with("p1").await;
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let writer = {
        let store = store.clone();
        EventWriter::spawn(store.clone(), "p1".into(), move |envelope| {
            let _ = tx.send(envelope);
        })
    };
    // A finished message is queued before the event that announces it.
    writer.message(answer("m2", "x", MessageStatus::Complete), 0);
    writer.event(Arc::new(Envelope {
        seq: 1,
        event: SessionEvent::MessageAdded {
            message: Message::user("m1", "hi"),
        },
    }));
    let delivered = rx.recv().await.unwrap();
    // Once delivered, the event and the message queued before it are on disk.
    let replay = store.events("p1").await.unwrap();
    assert_eq!(replay.events, [(*delivered).clone()]);
    assert_eq!(store.messages("p1").await.unwrap().len(), 1);
}

/// One batch of many writes: events and pieces of text of two projects go
/// in multi-row inserts (more rows than one insert carries), and a message
/// saved whole in the middle of them still folds the pieces queued before
/// it and none after.
#[tokio::test]
async fn a_batch_of_many_events_and_pieces_is_stored_whole_and_in_order() {
    let (_dir, store) = store_with("p1").await;
    store.ensure_project(&project("p2")).await.unwrap();
    let first = EventWriter::spawn(store.clone(), "p1".into(), |_| {});
    let second = EventWriter::spawn(store.clone(), "p2".into(), |_| {});
    first.message(answer("m1", "", MessageStatus::Streaming), 0);
    for seq in 1..=300 {
        first.event(terminal(seq, "one"));
        first.append("m1", "a", seq);
        second.event(terminal(seq, "two"));
    }
    first.message(answer("m1", &"a".repeat(300), MessageStatus::Complete), 300);
    first.message(answer("m2", "", MessageStatus::Streaming), 300);
    first.append("m2", "next", 300);
    first.flush().await;
    second.flush().await;
    for project in ["p1", "p2"] {
        let seqs: Vec<u64> = store
            .events(project)
            .await
            .unwrap()
            .events
            .iter()
            .map(|e| e.seq)
            .collect();
        assert_eq!(seqs, (1..=300).collect::<Vec<_>>(), "{project}");
    }
    let rows = store.messages("p1").await.unwrap();
    assert_eq!(rows[0].text, "a".repeat(300));
    assert_eq!(rows[1].text, "next");
    let pieces = count(
        &store,
        "SELECT COUNT(*) FROM message_text WHERE project = 'p1'",
    )
    .await;
    assert_eq!(pieces, 1);
}

/// While the store cannot write (another process holds its write lock),
/// writes pile up; past the limit a producer that can wait does, and goes
/// on once the writer has caught up. Nothing queued is lost.
#[tokio::test]
async fn a_producer_waits_for_room_while_the_store_writer_is_behind() {
    let (_dir, store) = store_with("p1").await;
    let writer = EventWriter::spawn(store.clone(), "p1".into(), |_| {});
    let room = writer.room();
    // Room while nothing waits.
    room.wait().await;
    let mut blocker = store.begin_write().await.unwrap();
    let events = QUEUE_LIMIT as u64 + 10;
    for seq in 1..=events {
        writer.event(terminal(seq, "x"));
    }
    assert!(room.queued() >= QUEUE_LIMIT, "{} queued", room.queued());
    let waiting = tokio::spawn({
        let room = room.clone();
        async move { room.wait().await }
    });
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    assert!(
        !waiting.is_finished(),
        "the producer went on while the writer was stuck"
    );
    sqlx::query("SELECT 1")
        .execute(&mut *blocker)
        .await
        .unwrap();
    blocker.commit().await.unwrap();
    waiting.await.unwrap();
    writer.flush().await;
    assert_eq!(room.queued(), 0);
    let stored = store.events("p1").await.unwrap().events;
    assert_eq!(stored.len() as u64, events);
}

#[tokio::test]
async fn project_json_files_are_imported_once_and_a_corrupt_one_is_skipped() {
    let dir = tempfile::tempdir().unwrap();
    let projects = crate::server::projects::Projects::new(dir.path());
    // What versions before the store left: a project.json beside the files.
    let old = projects.create("kept in project.json").unwrap();
    let json = serde_json::to_vec(&old).unwrap();
    std::fs::write(projects.dir(&old.id).join("project.json"), json).unwrap();
    let bad = projects.create("bad").unwrap();
    std::fs::write(projects.dir(&bad.id).join("project.json"), b"{\"id\":").unwrap();
    let store = Store::new(dir.path(), RuntimeKind::Sandbox);
    assert_eq!(store.import_projects(&projects).await.unwrap(), 1);
    assert_eq!(store.import_projects(&projects).await.unwrap(), 0);
    let listed = store.list_projects().await.unwrap();
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].id, old.id.as_str());
    assert_eq!(listed[0].name, "kept in project.json");
    assert_eq!(listed[0].created_at, i64::try_from(old.created).unwrap());
}

#[tokio::test]
async fn projects_are_listed_latest_changed_first() {
    let (_dir, store) = store_with("p1").await;
    store.ensure_project(&project("p2")).await.unwrap();
    // A message makes p1 the latest changed.
    store
        .save_message("p1", &answer("m1", "x", MessageStatus::Complete))
        .await
        .unwrap();
    let ids: Vec<String> = store
        .list_projects()
        .await
        .unwrap()
        .into_iter()
        .map(|p| p.id)
        .collect();
    assert_eq!(ids, ["p1", "p2"]);
}

#[tokio::test]
async fn streamed_text_is_appended_to_the_stored_answer_in_order() {
    let (_dir, store) = store_with("p1").await;
    let writer = EventWriter::spawn(store.clone(), "p1".into(), |_| {});
    writer.message(answer("m2", "", MessageStatus::Streaming), 0);
    for piece in ["Here ", "it ", "is ✓"] {
        writer.append("m2", piece, 0);
    }
    writer.flush().await;
    let rows = store.messages("p1").await.unwrap();
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].text, "Here it is ✓");
    assert_eq!(rows[0].status, MessageStatus::Streaming);
    drop(writer);

    // A restarted server's writer numbers its pieces after the stored ones.
    let writer = EventWriter::spawn(store.clone(), "p1".into(), |_| {});
    writer.append("m2", "!", 0);
    writer.flush().await;
    assert_eq!(store.messages("p1").await.unwrap()[0].text, "Here it is ✓!");

    // Saved whole, the row holds the text and the pieces are gone.
    writer.message(answer("m2", "Here it is ✓!", MessageStatus::Complete), 0);
    writer.flush().await;
    let rows = store.messages("p1").await.unwrap();
    assert_eq!(rows[0].text, "Here it is ✓!");
    let pieces = count(
        &store,
        "SELECT COUNT(*) FROM message_text WHERE message_id = 'm2'",
    )
    .await;
    assert_eq!(pieces, 0);
}

fn notice(seq: u64, text: &str) -> Arc<Envelope> {
    Arc::new(Envelope {
        seq,
        event: SessionEvent::Notice {
            message_id: "m2".into(),
            notice: Some(text.into()),
        },
    })
}

/// A writer of project p1 that has stored answer m2 streaming "Here it is
/// ✓" in three pieces, each riding on one of events 1 to 3.
async fn streamed_answer(store: &Store) -> EventWriter {
    let writer = EventWriter::spawn(store.clone(), "p1".into(), |_| {});
    writer.message(answer("m2", "", MessageStatus::Streaming), 0);
    for (seq, piece) in (1..).zip(["Here ", "it ", "is ✓"]) {
        writer.append("m2", piece, seq - 1);
        writer.event(notice(seq, piece));
    }
    writer.flush().await;
    writer
}

#[tokio::test]
async fn a_token_is_one_row_its_text_riding_on_the_event_after_it() {
    let (_dir, store) = store_with("p1").await;
    let _writer = streamed_answer(&store).await;
    assert_eq!(store.messages("p1").await.unwrap()[0].text, "Here it is ✓");
    assert_eq!(count(&store, "SELECT COUNT(*) FROM message_text").await, 0);
    let riding = "SELECT COUNT(*) FROM events WHERE piece_of = 'm2' AND piece IS NOT NULL";
    assert_eq!(count(&store, riding).await, 3);
}

/// Once the answer's row is saved with its text, the copy of that text that
/// rode on its events is dropped when the writer is idle: the answer reads
/// the same, also after a restart, and is stored once. An answer still
/// streaming keeps what rides after its row's last save.
#[tokio::test]
async fn an_answer_saved_whole_keeps_no_second_copy_of_its_text_on_its_events() {
    let (dir, store) = store_with("p1").await;
    let writer = streamed_answer(&store).await;
    let riding = "SELECT COUNT(*) FROM events WHERE piece IS NOT NULL OR piece_of IS NOT NULL";
    assert_eq!(count(&store, riding).await, 3);
    // Another message's save in between changes nothing for this answer.
    writer.message(answer("m9", "other", MessageStatus::Complete), 2);
    // Saved mid-answer after event 2: the pieces on events 1 and 2 go.
    writer.message(answer("m2", "Here it ", MessageStatus::Streaming), 2);
    writer.flush().await;
    // The drop runs once the writer is idle, before the next flush.
    writer.flush().await;
    assert_eq!(count(&store, riding).await, 1);
    assert_eq!(store.messages("p1").await.unwrap()[0].text, "Here it is ✓");
    writer.message(answer("m9", "other", MessageStatus::Complete), 3);
    writer.message(answer("m2", "Here it is ✓", MessageStatus::Complete), 3);
    writer.flush().await;
    writer.flush().await;
    assert_eq!(count(&store, riding).await, 0);
    assert_eq!(count(&store, "SELECT COUNT(*) FROM events").await, 3);
    assert_eq!(store.messages("p1").await.unwrap()[0].text, "Here it is ✓");
    drop(writer);
    let reopened = Store::new(&dir.path().join("data"), RuntimeKind::Sandbox);
    assert_eq!(
        reopened.messages("p1").await.unwrap()[0].text,
        "Here it is ✓"
    );
}

/// A save whose row did not reach the store leaves the text riding on the
/// events it was noted for: there it is the only copy.
#[tokio::test]
async fn text_is_dropped_from_events_only_when_the_row_holds_it() {
    let (_dir, store) = store_with("p1").await;
    let writer = EventWriter::spawn(store.clone(), "p1".into(), |_| {});
    writer.message(answer("m2", "", MessageStatus::Streaming), 0);
    writer.append("m2", "kept", 0);
    writer.event(notice(1, "kept"));
    writer.flush().await;
    // The table refuses the answer's last save.
    sqlx::query(
        "CREATE TRIGGER refuse BEFORE UPDATE ON messages WHEN NEW.status = 'complete' \
         BEGIN SELECT RAISE(ABORT, 'refused'); END",
    )
    .execute(store.writes().await.unwrap())
    .await
    .unwrap();
    writer.message(answer("m2", "kept", MessageStatus::Complete), 1);
    writer.flush().await;
    writer.flush().await;
    let riding = "SELECT COUNT(*) FROM events WHERE piece IS NOT NULL";
    assert_eq!(count(&store, riding).await, 1);
    assert_eq!(store.messages("p1").await.unwrap()[0].text, "kept");
}

#[tokio::test]
async fn pieces_with_and_without_an_event_after_them_come_back_in_order() {
    let (dir, store) = store_with("p1").await;
    let writer = EventWriter::spawn(store.clone(), "p1".into(), |_| {});
    writer.message(answer("m2", "", MessageStatus::Streaming), 0);
    // "A" has no event of its own (the parser held it back); "B" rides on
    // event 1; "C" not on output (compaction deletes output), but on event
    // 3; "D" ends the batch with no event after it.
    writer.append("m2", "A", 0);
    writer.append("m2", "B", 0);
    writer.event(notice(1, "b"));
    writer.append("m2", "C", 1);
    writer.event(Arc::new(Envelope {
        seq: 2,
        event: SessionEvent::Terminal { text: "out".into() },
    }));
    writer.event(notice(3, "c"));
    writer.append("m2", "D", 3);
    writer.flush().await;
    assert_eq!(store.messages("p1").await.unwrap()[0].text, "ABCD");
    assert_eq!(count(&store, "SELECT COUNT(*) FROM message_text").await, 2);
    let riding = "SELECT COUNT(*) FROM events WHERE piece IS NOT NULL AND seq IN (1, 3)";
    assert_eq!(count(&store, riding).await, 2);

    // Read again by a restarted server's store, in the same order.
    drop(writer);
    let reopened = Store::new(&dir.path().join("data"), RuntimeKind::Sandbox);
    assert_eq!(reopened.messages("p1").await.unwrap()[0].text, "ABCD");
}

#[tokio::test]
async fn a_continued_answer_counts_the_text_before_its_row_was_saved_once() {
    let (_dir, store) = store_with("p1").await;
    let writer = EventWriter::spawn(store.clone(), "p1".into(), |_| {});
    writer.message(answer("m2", "", MessageStatus::Streaming), 0);
    writer.append("m2", "Hello", 0);
    writer.event(notice(1, "hello"));
    writer.flush().await;
    // Interrupted, then continued: the row is saved with the text so far.
    let interrupted = MessageStatus::Interrupted {
        reason: "stopped".into(),
    };
    writer.message(answer("m2", "Hello", interrupted), 1);
    writer.message(answer("m2", "Hello", MessageStatus::Streaming), 1);
    writer.append("m2", ", world", 1);
    writer.event(notice(2, "world"));
    writer.flush().await;
    assert_eq!(store.messages("p1").await.unwrap()[0].text, "Hello, world");
}

/// Two servers' pools on one file (as after a restart racing the old
/// process, or many writers at once): a transaction that reads before it
/// writes must wait for the other writer, not fail with "database is locked".
#[tokio::test]
async fn concurrent_read_then_write_transactions_do_not_fail_with_database_is_locked() {
    let (dir, first) = store_with("p1").await;
    let second = Store::new(&dir.path().join("data"), RuntimeKind::Sandbox);
    second.ready().await.unwrap();
    let mut tasks = Vec::new();
    for i in 0..40 {
        let store = if i % 2 == 0 {
            first.clone()
        } else {
            second.clone()
        };
        tasks.push(tokio::spawn(async move {
            store
                .add_checkpoint("p1", CheckpointKind::Answer, None, &format!("c{i}"), &[])
                .await
        }));
    }
    for task in tasks {
        task.await.unwrap().unwrap();
    }
    let seqs: Vec<i64> = first
        .checkpoints("p1")
        .await
        .unwrap()
        .iter()
        .map(|row| row.seq)
        .collect();
    assert_eq!(seqs, (1..=40).collect::<Vec<_>>());
}

/// A batch whose one event cannot be stored (here a number already taken)
/// is rolled back whole; the writer then stores the others one by one.
#[tokio::test]
async fn a_batch_with_one_bad_event_keeps_the_others() {
    let (_dir, store) = store_with("p1").await;
    write_events(&store, "p1", vec![terminal(2, "first")]).await;
    write_events(
        &store,
        "p1",
        vec![terminal(1, "a"), terminal(2, "again"), terminal(3, "c")],
    )
    .await;
    let seqs: Vec<u64> = store
        .events("p1")
        .await
        .unwrap()
        .events
        .iter()
        .map(|e| e.seq)
        .collect();
    assert_eq!(seqs, vec![1, 2, 3]);
}

/// Every project's writes go through the store's one writer: two projects
/// streaming at once each get their own events, in order, delivered to their
/// own subscribers only, and one project's bad write loses none of the
/// other's.
#[tokio::test]
async fn projects_share_one_writer_and_keep_their_own_order() {
    let (_dir, store) = store_with("p1").await;
    store.ensure_project(&project("p2")).await.unwrap();
    write_events(&store, "p2", vec![terminal(5, "taken")]).await;
    let subscriber = || {
        let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
        let deliver = move |envelope: Arc<Envelope>| {
            let _ = tx.send(envelope.seq);
        };
        (deliver, rx)
    };
    let (to_one, mut one) = subscriber();
    let (to_two, mut two) = subscriber();
    let first = EventWriter::spawn(store.clone(), "p1".into(), to_one);
    let second = EventWriter::spawn(store.clone(), "p2".into(), to_two);
    for seq in 1..=20 {
        first.event(terminal(seq, "one"));
        // p2's fifth event is a number already taken.
        second.event(terminal(seq, "two"));
    }
    first.flush().await;
    second.flush().await;
    let seqs = |project: &'static str| {
        let store = store.clone();
        async move {
            let events = store.events(project).await.unwrap().events;
            events.iter().map(|e| e.seq).collect::<Vec<_>>()
        }
    };
    assert_eq!(seqs("p1").await, (1..=20).collect::<Vec<_>>());
    assert_eq!(seqs("p2").await, (1..=20).collect::<Vec<_>>());
    let received = |rx: &mut tokio::sync::mpsc::UnboundedReceiver<u64>| {
        std::iter::from_fn(|| rx.try_recv().ok()).collect::<Vec<_>>()
    };
    assert_eq!(received(&mut one), (1..=20).collect::<Vec<_>>());
    assert_eq!(received(&mut two), (1..=20).collect::<Vec<_>>());
}

mod flood;
