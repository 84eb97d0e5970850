//! The task is driven for real; a period of an hour means "not again in
//! this test", so nothing here depends on how fast the machine is.

use tokio::sync::mpsc::UnboundedReceiver;

use super::*;

const HOUR: Duration = Duration::from_secs(3600);

fn live(period: Duration) -> (LiveOutput, UnboundedReceiver<(String, String)>) {
    let (tx, rx) = mpsc::unbounded_channel();
    let live = LiveOutput::spawn(
        move |step_id, output| {
            let _ = tx.send((step_id.to_owned(), output));
        },
        period,
    );
    (live, rx)
}

async fn next(rx: &mut UnboundedReceiver<(String, String)>) -> (String, String) {
    tokio::time::timeout(Duration::from_secs(30), rx.recv())
        .await
        .expect("an output event")
        .expect("the task runs")
}

/// Lets the task take everything queued.
async fn settle() {
    tokio::time::sleep(Duration::from_millis(50)).await;
}

#[tokio::test]
async fn a_burst_of_chunks_is_one_event_with_all_of_it() {
    let (live, mut rx) = live(HOUR);
    let sink = live.sink();
    live.start("m2-1-1");
    for i in 0..200 {
        sink(format!("line {i}\n").as_bytes());
    }
    let (step_id, output) = next(&mut rx).await;
    assert_eq!(step_id, "m2-1-1");
    assert!(output.starts_with("line 0\n"), "{output}");
    assert!(output.ends_with("line 199\n"), "{output}");
    settle().await;
    assert!(rx.try_recv().is_err(), "one event for the burst");
}

#[tokio::test]
async fn output_within_the_period_waits_for_the_next_tick() {
    let (live, mut rx) = live(HOUR);
    let sink = live.sink();
    live.start("m2-1-1");
    sink(b"first\n");
    assert_eq!(next(&mut rx).await.1, "first\n");
    sink(b"second\n");
    settle().await;
    assert!(rx.try_recv().is_err(), "not again within the period");
}

#[tokio::test]
async fn output_before_a_step_starts_or_after_it_ends_is_not_shown() {
    let (live, mut rx) = live(Duration::from_millis(1));
    let sink = live.sink();
    sink(b"no step runs\n");
    live.start("m2-1-1");
    sink(b"unshown\n");
    live.end();
    sink(b"after the end\n");
    // The next step starts from nothing.
    live.start("m2-2-1");
    sink(b"second\n");
    assert_eq!(
        next(&mut rx).await,
        ("m2-2-1".to_owned(), "second\n".to_owned())
    );
    settle().await;
    assert!(rx.try_recv().is_err());
}

#[tokio::test]
async fn escapes_are_removed_redraws_applied_and_only_the_tail_is_shown() {
    let (live, mut rx) = live(HOUR);
    let sink = live.sink();
    live.start("m2-1-1");
    sink(b"\x1b[32mok\x1b[0m\n10%\r50%\r100%\n");
    assert_eq!(next(&mut rx).await.1, "ok\n100%\n");

    let (live, mut rx) = self::live(HOUR);
    let sink = live.sink();
    live.start("m2-1-1");
    sink(&vec![b'x'; 3 * AgentStep::OUTPUT_TAIL]);
    sink(b"end");
    let output = next(&mut rx).await.1;
    assert_eq!(output.len(), AgentStep::OUTPUT_TAIL);
    assert!(output.ends_with("xend"));
}
