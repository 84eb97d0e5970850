//! Plan mode: the answer discusses and plans, and nothing in it runs (its
//! artifact is shown, its actions marked planned); "Build this plan" sends
//! the next message in Build mode, which builds it.

use rivet::runtime::session::{ActionStatus, Mode};

use super::super::llm::Mock;
use super::{Ide, answered, summary};

#[tokio::test(flavor = "multi_thread")]
async fn a_plan_runs_nothing_and_building_it_switches_to_build_mode() {
    // tests/fixtures/transcripts/plan-greeting.txt and build-plan.txt.
    let mock = Mock::start(&[]);
    let ide = Ide::start_with(&mock, &[("RIVET_FIX_ENABLED", "false")]).await;
    let project = ide.new_project().await;
    let mut feed = ide.feed(&project).await;
    let fields = [
        ("project", project.as_str()),
        ("text", "plan a greeting"),
        ("mode", "plan"),
    ];
    let (status, body) = ide.call("send_message", &fields).await;
    assert_eq!(status, 200, "{body}");
    feed.until("the plan", |s| s.messages.len() == 2 && answered(s))
        .await;
    let state = &feed.state;
    assert_eq!(state.mode, Some(Mode::Plan));
    assert!(state.messages[1].plan);
    let statuses: Vec<&ActionStatus> = state.artifacts[0]
        .actions
        .iter()
        .map(|a| &a.status)
        .collect();
    assert_eq!(statuses, [&ActionStatus::Planned], "{:#?}", summary(state));
    assert!(!state.files.contains("greeting.txt"), "{:?}", state.files);

    // "Build this plan": the same send, in Build mode.
    let fields = [
        ("project", project.as_str()),
        ("text", "Build the plan above."),
        ("mode", "build"),
    ];
    let (status, body) = ide.call("send_message", &fields).await;
    assert_eq!(status, 200, "{body}");
    feed.until("the plan built", |s| s.files.contains("greeting.txt"))
        .await;
    assert_eq!(feed.state.mode, Some(Mode::Build));
    assert!(!feed.state.messages[3].plan);

    let log = mock.log().await;
    let system = |i: usize| log[i]["system"].as_str().unwrap_or_default().to_owned();
    assert!(system(0).contains("## Plan mode: plan, do not build"));
    assert!(!system(1).contains("## Plan mode"));
    // The build request carries the plan.
    let messages = log[1]["messages"].to_string();
    assert!(messages.contains("I would add one file"), "{messages}");
}
