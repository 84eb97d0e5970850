//! An answer with code but nothing to build gets one automatic message
//! restating the format, counted as an attempt of the fix loop.

use std::path::Path;
use std::time::Duration;

use rivet::runtime::session::{FixReason, SessionState};

use super::super::llm::Mock;
use super::{Ide, summary};

fn script(name: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

fn reminders(state: &SessionState) -> Vec<(u32, FixReason)> {
    state
        .messages
        .iter()
        .filter_map(|m| m.automatic.map(|a| (a.attempt, a.reason)))
        .collect()
}

/// Settles the fix loop fast, so the tests wait less after each answer.
const SETTLE: [(&str, &str); 1] = [("RIVET_FIX_SETTLE_MS", "200")];

#[tokio::test(flavor = "multi_thread")]
async fn an_answer_with_code_but_no_action_gets_one_format_reminder_and_builds() {
    let mock = Mock::start_with(&script("nudge"), &[]);
    let ide = Ide::start_with(&mock, &SETTLE).await;
    let project = ide.new_project().await;
    let mut feed = ide.feed(&project).await;
    ide.send(&project, "a counter please").await;
    feed.until("the file from the answer after the reminder", |s| {
        s.files.contains("src/Counter.jsx")
    })
    .await;
    let state = &feed.state;
    assert_eq!(reminders(state), [(1, FixReason::Format)]);
    // The person's message, the code in the chat, the reminder, the artifact.
    assert_eq!(state.messages.len(), 4, "{:#?}", summary(state));
    let reminder = state.messages[2].text();
    assert!(reminder.contains("nothing was built"), "{reminder}");
    assert!(reminder.contains("<boltArtifact"), "{reminder}");
    let tokens = state.messages[2].automatic.map(|a| a.tokens_so_far);
    assert!(tokens > Some(0), "the first answer's tokens count");
}

#[tokio::test(flavor = "multi_thread")]
async fn the_format_reminder_is_sent_only_once_per_message() {
    let mock = Mock::start_with(&script("nudge-stubborn"), &[]);
    let ide = Ide::start_with(&mock, &SETTLE).await;
    let project = ide.new_project().await;
    let mut feed = ide.feed(&project).await;
    ide.send(&project, "a counter please").await;
    feed.until("the answer to the reminder", |s| {
        s.messages.len() == 4 && !s.is_busy() && super::answered(s)
    })
    .await;
    // Well past the loop's settle time: no second reminder.
    tokio::time::sleep(Duration::from_secs(2)).await;
    let mut later = ide.feed(&project).await;
    later
        .until("the snapshot", |s| !s.messages.is_empty())
        .await;
    let state = &later.state;
    assert_eq!(reminders(state), [(1, FixReason::Format)]);
    assert_eq!(state.messages.len(), 4, "{:#?}", summary(state));
    assert!(state.files.is_empty(), "{:?}", state.files);

    // Two slips in a row: from now on every request restates the format.
    ide.send(&project, "a counter again").await;
    later
        .until("the third answer", |s| {
            s.messages.len() == 6 && super::answered(s)
        })
        .await;
    let reminded: Vec<bool> = mock
        .log()
        .await
        .iter()
        .map(|entry| {
            let system = entry["system"].as_str().unwrap_or_default();
            system.contains("## Reminder: answer in the format")
        })
        .collect();
    assert_eq!(reminded, [false, false, true]);
    // With `[llm] format = "auto"`, it is offered the tools from then on.
    let offered: Vec<usize> = mock
        .log()
        .await
        .iter()
        .map(|e| e["tools"].as_array().map_or(0, Vec::len))
        .collect();
    assert_eq!(offered, [0, 0, 3]);
}
