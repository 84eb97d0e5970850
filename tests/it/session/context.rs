//! A long conversation against a model with an 8k window: every request
//! fits, older turns become a summary the model wrote, the newest turns go
//! whole.

use std::path::{Path, PathBuf};

use rivet::runtime::session::{MessageStatus, Role, SessionState};
use serde_json::Value;

use super::super::llm::Mock;
use super::{Ide, summary};

const WINDOW: u32 = 8192;
const TURNS: usize = 60;

fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/context")
}

/// The chatter transcript's answer, as the mock plays it.
fn chatter_answer() -> String {
    std::fs::read_to_string(script().join("chatter.txt"))
        .unwrap()
        .lines()
        .filter(|l| !l.starts_with("#!"))
        .map(|l| format!("{l}\n"))
        .collect()
}

fn question(turn: usize) -> String {
    format!("chatter turn {turn}: go on with part {turn} of the plan")
}

fn finished_answers(state: &SessionState) -> usize {
    state
        .messages
        .iter()
        .filter(|m| m.role == Role::Assistant && m.status != MessageStatus::Streaming)
        .count()
}

fn entries_of<'a>(log: &'a [Value], transcript: &str) -> Vec<&'a Value> {
    log.iter()
        .filter(|e| e["transcript"] == transcript)
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_long_conversation_fits_an_8k_window_with_a_summary_and_the_last_turns_whole() {
    let limit = WINDOW.to_string();
    let mock = Mock::start_with(
        &script(),
        &["--chunk-size", "256", "--context-limit", &limit],
    );
    let ide = Ide::start_with(&mock, &[("RIVET_LLM_CONTEXT_TOKENS", &limit)]).await;
    let project = ide.new_project().await;
    let mut feed = ide.feed(&project).await;
    for turn in 0..TURNS {
        ide.send(&project, &question(turn)).await;
        feed.until("the turn's answer", |s| finished_answers(s) == turn + 1)
            .await;
    }
    let state = &feed.state;
    let answers: Vec<_> = state
        .messages
        .iter()
        .filter(|m| m.role == Role::Assistant)
        .collect();
    assert_eq!(answers.len(), TURNS, "{:#?}", summary(state));
    // No request was refused: every answer is complete, and every request
    // the model received fits its window.
    for answer in &answers {
        assert_eq!(answer.status, MessageStatus::Complete, "{}", answer.id);
        let context = answer
            .context
            .expect("each answer says the context it used");
        assert_eq!(context.window, WINDOW);
        assert!(context.used <= WINDOW, "{}: {context:?}", answer.id);
    }
    let log = mock.log().await;
    for entry in &log {
        assert_eq!(entry["status"], 200, "{entry}");
        let used = entry["prompt_estimate"].as_u64().unwrap();
        assert!(used <= u64::from(WINDOW), "{used}");
    }
    // The older turns became a summary the model wrote, shown as such.
    let summaries = entries_of(&log, "summary");
    assert!(!summaries.is_empty(), "no summary was asked for");
    assert!(
        summaries.len() < TURNS / 4,
        "a summary reaches far enough not to be redone every turn: {}",
        summaries.len()
    );
    let shown: Vec<_> = answers
        .iter()
        .filter_map(|m| m.context_summary.as_ref())
        .collect();
    assert_eq!(shown.len(), summaries.len());
    assert!(
        shown[0].text.starts_with("Summary of the earlier turns"),
        "{:?}",
        shown[0]
    );
    assert!(
        shown.windows(2).all(|w| w[0].covers < w[1].covers),
        "{shown:?}"
    );
    // The last request: the summary in its system prompt, the first turn
    // left out, the last turns whole and in order.
    let chats = entries_of(&log, "chatter");
    let last = chats.last().unwrap();
    assert!(
        last["system"]
            .as_str()
            .unwrap()
            .contains("Summary of the earlier turns")
    );
    let messages: Vec<&str> = last["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m.as_str().unwrap())
        .collect();
    assert!(!messages.iter().any(|m| m.contains(&question(0))));
    let answer = chatter_answer();
    let tail = [
        format!("user: {}", question(TURNS - 3)),
        format!("assistant: {answer}"),
        format!("user: {}", question(TURNS - 2)),
        format!("assistant: {answer}"),
        format!("user: {}", question(TURNS - 1)),
    ];
    assert!(messages.len() >= tail.len(), "{messages:#?}");
    assert_eq!(messages[messages.len() - tail.len()..], tail);
}

#[tokio::test(flavor = "multi_thread")]
async fn the_summary_is_kept_across_a_restart_and_not_asked_for_again() {
    let limit = WINDOW.to_string();
    let env = [("RIVET_LLM_CONTEXT_TOKENS", limit.as_str())];
    let mock = Mock::start_with(
        &script(),
        &["--chunk-size", "256", "--context-limit", &limit],
    );
    let ide = Ide::start_with(&mock, &env).await;
    let project = ide.new_project().await;
    let mut feed = ide.feed(&project).await;
    let mut turn = 0;
    while entries_of(&mock.log().await, "summary").is_empty() {
        ide.send(&project, &question(turn)).await;
        turn += 1;
        feed.until("the turn's answer", |s| finished_answers(s) == turn)
            .await;
    }
    let data = ide.kill().await;
    let ide = Ide::start_in_with(&mock, data, &env).await;
    ide.send(&project, &question(turn)).await;
    let mut feed = ide.feed(&project).await;
    feed.until("the answer after the restart", |s| {
        finished_answers(s) == turn + 1
    })
    .await;
    let log = mock.log().await;
    assert_eq!(entries_of(&log, "summary").len(), 1, "{log:#?}");
    let last = entries_of(&log, "chatter").pop().unwrap().clone();
    assert!(
        last["system"]
            .as_str()
            .unwrap()
            .contains("Summary of the earlier turns")
    );
    assert_eq!(
        last["messages"].as_array().unwrap().last().unwrap(),
        &format!("user: {}", question(turn))
    );
}
