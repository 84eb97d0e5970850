//! An agent run whose tool results outgrow a small context window: each
//! step's request fits the window the provider reports, older results are
//! left out with a placeholder, and the run still finishes.

use super::*;

const WINDOW: &str = "4096";

/// Writes two files of about 1,000 tokens each and reads each back.
fn script(dir: &Path) {
    let big = |name: &str| "a line of the big file\n".repeat(160).replace("big", name);
    let turns = json!({
        "match": "big files",
        "turns": [
            {"tool_calls": [{"id": "call_1", "name": "write_file",
              "arguments": {"file_path": "one.txt", "content": big("one")}}]},
            {"expect_results": ["Created one.txt"], "tool_calls": [
              {"id": "call_2", "name": "run_shell_command", "arguments": {"command": "cat one.txt"}}]},
            {"expect_results": ["a line of the one file"], "tool_calls": [
              {"id": "call_3", "name": "write_file",
               "arguments": {"file_path": "two.txt", "content": big("two")}}]},
            {"expect_results": ["Created two.txt"], "tool_calls": [
              {"id": "call_4", "name": "run_shell_command", "arguments": {"command": "cat two.txt"}}]},
            {"expect_results": ["a line of the two file"], "content": "Both files are written and read."}
        ]
    });
    std::fs::write(dir.join("big-files.json"), turns.to_string()).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_run_fits_a_small_window_by_leaving_out_old_results_and_finishes() {
    let dir = tempfile::tempdir().unwrap();
    script(dir.path());
    let mock = Mock::start_with(
        dir.path(),
        &["--context-length", WINDOW, "--context-limit", WINDOW],
    );
    let env = [("RIVET_AGENT_AUTO_APPROVE", "true")];
    let ide = agent_ide(&mock, tempfile::tempdir().unwrap(), &env).await;
    let project = ide.create("agent").await;
    let mut feed = ide.feed(&project).await;
    ide.send(&project, "write the big files").await;
    let message = feed.finished().await;
    let log = mock.log().await;
    assert_eq!(message.status, MessageStatus::Complete, "{log:#?}");
    assert_eq!(
        message.agent.as_ref().unwrap().end.as_deref(),
        Some("Done.")
    );
    assert!(message.text().contains("Both files are written and read."));
    assert_eq!(log.len(), 5, "{log:#?}");
    for entry in &log {
        assert_eq!(entry["status"], 200, "{entry}");
        assert!(
            entry["prompt_estimate"].as_u64().unwrap() <= 4096,
            "{entry}"
        );
    }
    // The whole history would not have fitted: the last request left the
    // first write's arguments or results out.
    let last: Vec<&str> = log[4]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m.as_str().unwrap())
        .collect();
    assert!(
        last.iter()
            .any(|m| m.contains("omitted to fit the context window")),
        "{last:#?}"
    );
    assert!(last.iter().any(|m| m.contains("write the big files")));
    assert_eq!(
        ide.file_text(&project, "two.txt").await,
        (200, "a line of the two file\n".repeat(160))
    );
}
