//! A project whose processes print without end: the store keeps the end of
//! the output, says how much it dropped, and reads events back in pages.

use sqlx::Row;

use super::*;
use crate::server::store::output::dropped_line;

const PIECE: usize = 64 * 1024;

/// Output rows as (seq, text), in order.
async fn output_rows(store: &Store, id: &str) -> Vec<(u64, String)> {
    store
        .events(id)
        .await
        .unwrap()
        .events
        .into_iter()
        .filter_map(|e| match e.event {
            SessionEvent::Terminal { text } => Some((e.seq, text)),
            _ => None,
        })
        .collect()
}

fn piece(n: u64) -> String {
    format!("{n:08}\n").repeat(PIECE / 9)
}

#[tokio::test]
async fn a_process_that_prints_without_end_keeps_only_the_tail_of_its_output() {
    let (_dir, store) = store_with("p1").await;
    // 40 windows' worth of output (2.5 MiB), as the session hands it on.
    write_events(
        &store,
        "p1",
        (1..=40).map(|n| terminal(n, &piece(n))).collect(),
    )
    .await;
    store.compact_output("p1").await.unwrap();
    let rows = output_rows(&store, "p1").await;
    let kept: u64 = rows[1..].iter().map(|(_, t)| t.len() as u64).sum();
    assert!(kept <= OUTPUT_KEPT, "{kept} bytes kept");
    assert!(kept + PIECE as u64 > OUTPUT_KEPT, "only {kept} bytes kept");
    assert_eq!(
        rows.last().unwrap(),
        &(40, piece(40)),
        "the newest output is whole"
    );
    assert!(rows.len() < 20, "{} rows", rows.len());
}

#[tokio::test]
async fn the_dropped_output_is_counted_and_said() {
    let (_dir, store) = store_with("p1").await;
    write_events(
        &store,
        "p1",
        (1..=40).map(|n| terminal(n, &piece(n))).collect(),
    )
    .await;
    store.compact_output("p1").await.unwrap();
    let rows = output_rows(&store, "p1").await;
    let (seq, marker) = &rows[0];
    let dropped: usize = (1..=*seq).map(|n| piece(n).len()).sum();
    assert_eq!(marker, &dropped_line(dropped as u64));
    // Compacting again counts the bytes an earlier line already counted.
    write_events(
        &store,
        "p1",
        (41..=60).map(|n| terminal(n, &piece(n))).collect(),
    )
    .await;
    store.compact_output("p1").await.unwrap();
    let rows = output_rows(&store, "p1").await;
    let (seq, marker) = &rows[0];
    let dropped: usize = (1..=*seq).map(|n| piece(n).len()).sum();
    assert_eq!(marker, &dropped_line(dropped as u64));
}

#[tokio::test]
async fn the_writer_compacts_the_output_as_it_writes_it() {
    let (_dir, store) = store_with("p1").await;
    for round in 0..4u64 {
        let events = (1..=20)
            .map(|n| terminal(round * 20 + n, &piece(n)))
            .collect();
        write_events(&store, "p1", events).await;
    }
    let rows = output_rows(&store, "p1").await;
    let stored: u64 = rows.iter().map(|(_, t)| t.len() as u64).sum();
    // At most what is kept plus what was written since the last compaction.
    assert!(
        stored <= 2 * OUTPUT_KEPT + PIECE as u64,
        "{stored} bytes stored"
    );
    assert!(
        rows[0].1.contains("bytes of output dropped"),
        "{}",
        &rows[0].1[..40]
    );
}

#[tokio::test]
async fn compacting_keeps_every_event_that_is_not_output() {
    let (_dir, store) = store_with("p1").await;
    let mut events = Vec::new();
    for n in 1..=30u64 {
        events.push(terminal(2 * n - 1, &piece(n)));
        events.push(Arc::new(Envelope {
            seq: 2 * n,
            event: SessionEvent::FileWritten {
                path: format!("f{n}"),
                by_model: true,
            },
        }));
    }
    write_events(&store, "p1", events).await;
    store.compact_output("p1").await.unwrap();
    let replay = store.events("p1").await.unwrap();
    let files = replay
        .events
        .iter()
        .filter(|e| matches!(e.event, SessionEvent::FileWritten { .. }))
        .count();
    assert_eq!(files, 30);
    assert_eq!(replay.last_seq, 60);
}

#[tokio::test]
async fn a_project_with_little_output_is_left_as_it_is() {
    let (_dir, store) = store_with("p1").await;
    write_events(&store, "p1", vec![terminal(1, "a"), terminal(2, "b")]).await;
    assert_eq!(store.compact_output("p1").await.unwrap(), 0);
    assert_eq!(
        output_rows(&store, "p1").await,
        [(1, "a".to_owned()), (2, "b".to_owned())]
    );
}

/// Rows put straight into the table, as a flood before the limits left them.
async fn insert_output_rows(store: &Store, id: &str, count: i64, text: &str) {
    let pool = store.writes().await.unwrap();
    let mut tx = pool.begin().await.unwrap();
    let json = serde_json::to_string(&SessionEvent::Terminal { text: text.into() }).unwrap();
    for seq in 1..=count {
        sqlx::query("INSERT INTO events (project, seq, event) VALUES ($1, $2, $3)")
            .bind(id)
            .bind(seq)
            .bind(&json)
            .execute(&mut *tx)
            .await
            .unwrap();
    }
    tx.commit().await.unwrap();
}

#[tokio::test]
async fn reopening_a_flooded_project_reads_its_events_in_pages() {
    let (_dir, store) = store_with("p1").await;
    let rows = 2 * EVENT_PAGE + 5;
    insert_output_rows(&store, "p1", rows, "x").await;
    let mut seqs = Vec::new();
    let read = store.fold_events("p1", |e| seqs.push(e.seq)).await.unwrap();
    assert_eq!(read.pages, 3);
    assert_eq!(read.last_seq, rows as u64);
    assert_eq!(seqs, (1..=rows as u64).collect::<Vec<_>>());
}

#[tokio::test]
async fn a_page_that_ends_on_the_last_row_is_followed_by_an_empty_read() {
    let (_dir, store) = store_with("p1").await;
    insert_output_rows(&store, "p1", EVENT_PAGE, "x").await;
    let mut count = 0;
    let read = store.fold_events("p1", |_| count += 1).await.unwrap();
    assert_eq!((read.pages, count), (1, EVENT_PAGE));
}

#[tokio::test]
async fn a_project_flooded_before_the_limits_is_compacted_to_its_tail() {
    let (_dir, store) = store_with("p1").await;
    insert_output_rows(&store, "p1", 3 * EVENT_PAGE, &"y".repeat(4096)).await;
    let dropped = store.compact_output("p1").await.unwrap();
    let pool = store.ready().await.unwrap();
    let left: i64 = sqlx::query("SELECT COUNT(*) FROM events WHERE project = 'p1'")
        .fetch_one(pool)
        .await
        .unwrap()
        .get(0);
    let kept = OUTPUT_KEPT / 4096;
    assert_eq!(
        left as u64,
        kept + 1,
        "the kept rows and the line that says"
    );
    assert_eq!(dropped, (3 * EVENT_PAGE as u64 - kept) * 4096);
}
