//! The window a provider reports in `/v1/models` is the one answers are
//! fitted to, whatever the configuration says.

use std::path::Path;

use rivet::runtime::session::{MessageStatus, Role, SessionState};

use super::super::llm::Mock;
use super::{Ide, summary};

fn finished_answers(state: &SessionState) -> usize {
    state
        .messages
        .iter()
        .filter(|m| m.role == Role::Assistant && m.status != MessageStatus::Streaming)
        .count()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_model_reporting_8k_gets_8k_requests_though_the_configuration_says_128k() {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/context");
    let mock = Mock::start_with(
        &script,
        &[
            "--chunk-size",
            "256",
            "--context-length",
            "8192",
            "--context-limit",
            "8192",
        ],
    );
    let ide = Ide::start_with(&mock, &[("RIVET_LLM_CONTEXT_TOKENS", "131072")]).await;
    let project = ide.new_project().await;
    let mut feed = ide.feed(&project).await;
    // Each question alone is about 3,300 tokens: the second would not fit
    // 8k beside the first, which a 128k budget would keep.
    let padding = "with every detail spelt out ".repeat(430);
    for turn in 0..3 {
        ide.send(&project, &format!("chatter turn {turn} {padding}"))
            .await;
        feed.until("the turn's answer", |s| finished_answers(s) == turn + 1)
            .await;
    }
    let state = &feed.state;
    for answer in state.messages.iter().filter(|m| m.role == Role::Assistant) {
        assert_eq!(
            answer.status,
            MessageStatus::Complete,
            "{:#?}",
            summary(state)
        );
        let context = answer.context.expect("each answer says its context");
        assert_eq!(context.window, 8192);
        assert!(context.used <= 8192, "{context:?}");
    }
    let log = mock.log().await;
    assert!(log.len() >= 3);
    for entry in &log {
        assert_eq!(entry["status"], 200, "{entry}");
        assert!(
            entry["prompt_estimate"].as_u64().unwrap() <= 8192,
            "{entry}"
        );
    }
}
