//! Build mode with tools: a provider that refuses tools gets the answer
//! asked again in tags. The todo app built from tool calls runs on fakes
//! (`session::scripted_tests::tool_calls`).

use std::path::Path;

use rivet::runtime::session::MessageStatus;
use serde_json::json;

use super::super::llm::Mock;
use super::{Ide, answered};

#[tokio::test(flavor = "multi_thread")]
async fn a_provider_that_refuses_tools_gets_the_answer_asked_in_tags() {
    let scripts = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/nudge");
    let mock = Mock::start_with(&scripts, &[]);
    let ide = Ide::start_with(&mock, &[("RIVET_LLM_FORMAT", "tools")]).await;
    mock.faults(json!({"status": 400, "message": "this model does not support tools"}))
        .await;
    let project = ide.new_project().await;
    let mut feed = ide.feed(&project).await;
    ide.send(&project, "nothing was built: use an artifact")
        .await;
    feed.until("the answer in tags", |s| {
        answered(s) && s.files.contains("src/Counter.jsx")
    })
    .await;
    // The notice said so while it streamed; it ends with the answer.
    assert_eq!(feed.state.messages[1].status, MessageStatus::Complete);

    // The next message goes straight to tags.
    ide.send(&project, "nothing was built: use an artifact")
        .await;
    feed.until("the second answer", |s| {
        s.messages.len() == 4 && answered(s)
    })
    .await;
    let log = mock.log().await;
    let offered: Vec<usize> = log
        .iter()
        .map(|e| e["tools"].as_array().map_or(0, Vec::len))
        .collect();
    assert_eq!(offered, [3, 0, 0]);
    let system = log[1]["system"].as_str().unwrap_or_default();
    assert!(!system.contains("Tools instead of tags"), "{system}");
}
