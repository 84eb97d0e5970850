//! The user's rules: the project's `AGENTS.md` and the settings' app-wide
//! rules, saved through the settings panel's server functions, go with
//! every request (Build and Agent mode) and each answer names them.

use serde_json::{Value, json};

use super::super::llm::Mock;
use super::{Ide, answered};

fn scripts(dir: &std::path::Path) {
    std::fs::write(
        dir.join("rules.txt"),
        "#! match: rules in build\nNoted: tabs and pnpm.\n",
    )
    .unwrap();
    let agent = json!({"match": "rules in agent", "turns": [{"content": "Noted in Agent mode."}]});
    std::fs::write(dir.join("rules-agent.json"), agent.to_string()).unwrap();
}

async fn save_rules(ide: &Ide, project: &str, own: &str) -> Value {
    let body = json!({"app": "Use pnpm, never npm.", "project": [project, own]});
    let response = ide
        .http
        .post(ide.url("/api/save_rules"))
        .json(&body)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    response.json().await.unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn the_rules_go_with_every_request_and_each_answer_names_them() {
    let dir = tempfile::tempdir().unwrap();
    scripts(dir.path());
    let mock = Mock::start_with(dir.path(), &[]);
    let ide = Ide::start_with(&mock, &[("RIVET_FIX_ENABLED", "false")]).await;
    let project = ide.new_project().await;
    let saved = save_rules(&ide, &project, "Indent with tabs.\n").await;
    assert_eq!(saved["project_path"], "AGENTS.md");
    assert_eq!(saved["project"], "Indent with tabs.\n");
    let (status, body) = ide.call("get_rules", &[("project", &project)]).await;
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("Use pnpm, never npm."), "{body}");

    let mut feed = ide.feed(&project).await;
    ide.send(&project, "rules in build").await;
    feed.until("the Build answer", |s| s.messages.len() == 2 && answered(s))
        .await;
    assert_eq!(feed.state.messages[1].rules, ["AGENTS.md", "settings"]);

    let (status, body) = ide
        .call(
            "set_conversation_mode",
            &[("project", &project), ("mode", "agent")],
        )
        .await;
    assert_eq!(status, 200, "{body}");
    ide.send(&project, "rules in agent").await;
    feed.until("the Agent answer", |s| s.messages.len() == 4 && answered(s))
        .await;
    assert_eq!(feed.state.messages[3].rules, ["AGENTS.md", "settings"]);

    let log = mock.log().await;
    assert_eq!(log.len(), 2, "{log:#?}");
    for entry in &log {
        let system = entry["system"].as_str().unwrap_or_default();
        assert!(system.contains("## The user's rules"), "{system}");
        assert!(system.contains("Indent with tabs."), "{system}");
        assert!(system.contains("Use pnpm, never npm."), "{system}");
        // Once, in the rules: not again among the project's files.
        assert_eq!(system.matches("Indent with tabs.").count(), 1, "{system}");
    }
}
