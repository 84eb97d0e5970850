//! The fix loop end to end: a failure of the run goes back to the model by
//! itself, within its limits, and Stop ends it. A misspelt dependency's
//! whole loop runs on fakes (`session::scripted_tests::fix`) and in the
//! browser (`fix-loop.spec.ts`).

use std::path::Path;
use std::time::Duration;

use rivet::runtime::build_result::Stage;
use rivet::runtime::session::{ActionStatus, SessionState};

use super::super::llm::Mock;
use super::{Ide, status_of, summary};

/// Transcripts that fail on purpose, each picked by its own word.
fn failing_script() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/fixloop")
}

fn automatic(state: &SessionState) -> usize {
    state
        .messages
        .iter()
        .filter(|m| m.automatic.is_some())
        .count()
}

fn stop_alert(state: &SessionState) -> Option<String> {
    state
        .alerts
        .iter()
        .find(|a| a.title.contains("Rivet stopped trying"))
        .map(|a| a.detail.clone())
}

#[tokio::test(flavor = "multi_thread")]
async fn a_vite_compile_error_after_start_is_fixed_by_one_automatic_attempt() {
    let mock = Mock::start(&["--chunk-size", "64"]);
    // Time for the test to load the module, as the preview would at once.
    let ide = Ide::start_with(&mock, &[("RIVET_FIX_SETTLE_MS", "15000")]).await;
    let project = ide.new_project().await;
    let mut feed = ide.feed(&project).await;
    ide.send(&project, "broken syntax").await;
    feed.until("the dev server", |s| {
        status_of(s, "start") == Some(ActionStatus::Complete)
            && s.previews.first().is_some_and(|p| p.url.is_some())
    })
    .await;
    let module = format!("{}src/App.jsx", feed.state.previews[0].url.clone().unwrap());
    let broken = ide.http.get(&module).send().await.unwrap();
    assert_eq!(
        broken.status(),
        500,
        "Vite cannot compile the broken module"
    );
    feed.until("the fix", |s| {
        automatic(s) == 1 && status_of(s, "edit") == Some(ActionStatus::Complete)
    })
    .await;
    let result = &feed.state.build_results[0];
    assert_eq!(result.stage, Stage::CompileError, "{result:?}");
    // The broken module comes first; Vite's dependency scan, when it runs
    // into the error, may name the page that imports it as well.
    assert_eq!(
        result.files.first().map(String::as_str),
        Some("src/App.jsx")
    );
    assert!(
        result
            .files
            .iter()
            .all(|f| ["src/App.jsx", "src/main.jsx", "index.html"].contains(&f.as_str())),
        "{:?}",
        result.files
    );
    // The whole message with its code frame, though the terminal gets it in
    // pieces.
    assert!(result.output.contains("App.jsx"), "{}", result.output);
    assert!(result.output.lines().count() >= 4, "{}", result.output);
    let request = feed.state.messages[2].text();
    assert!(
        request.contains("Current content of src/App.jsx"),
        "{request}"
    );
    let fixed = ide.http.get(&module).send().await.unwrap();
    assert_eq!(fixed.status(), 200, "{}", fixed.text().await.unwrap());
}

#[tokio::test(flavor = "multi_thread")]
async fn an_unfixable_error_gets_three_attempts_then_the_stop_alert() {
    let mock = Mock::start_with(&failing_script(), &[]);
    let ide = Ide::start(&mock).await;
    let project = ide.new_project().await;
    let mut feed = ide.feed(&project).await;
    ide.send(&project, "fail differently").await;
    feed.until("the stop alert", |s| stop_alert(s).is_some())
        .await;
    let state = &feed.state;
    assert_eq!(automatic(state), 3, "{:#?}", summary(state));
    let attempts: Vec<u32> = state
        .messages
        .iter()
        .filter_map(|m| m.automatic.map(|a| a.attempt))
        .collect();
    assert_eq!(attempts, [1, 2, 3]);
    // Four runs failed: the answer's and each attempt's.
    assert_eq!(state.build_results.len(), 4);
    let detail = stop_alert(state).unwrap();
    assert!(
        detail.contains("3 automatic attempts did not fix it"),
        "{detail}"
    );
    assert!(detail.contains("differently broken, try e"), "{detail}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_repeated_error_stops_the_loop_after_two_attempts() {
    let mock = Mock::start_with(&failing_script(), &[]);
    let ide = Ide::start(&mock).await;
    let project = ide.new_project().await;
    let mut feed = ide.feed(&project).await;
    ide.send(&project, "fail always").await;
    feed.until("the stop alert", |s| stop_alert(s).is_some())
        .await;
    let state = &feed.state;
    assert_eq!(automatic(state), 2, "{:#?}", summary(state));
    let detail = stop_alert(state).unwrap();
    assert!(
        detail.contains("the same error came back twice"),
        "{detail}"
    );
    assert!(detail.contains("always broken"), "{detail}");
    assert!(!state.is_busy());
}

#[tokio::test(flavor = "multi_thread")]
async fn stop_during_an_automatic_attempt_ends_the_loop() {
    let mock = Mock::start_with(&failing_script(), &[]);
    let ide = Ide::start(&mock).await;
    let project = ide.new_project().await;
    let mut feed = ide.feed(&project).await;
    ide.send(&project, "fail slowly").await;
    feed.until("the automatic attempt's command", |s| {
        automatic(s) == 1 && status_of(s, "shell") == Some(ActionStatus::Running)
    })
    .await;
    let (status, body) = ide.call("stop_run", &[("project", &project)]).await;
    assert_eq!(status, 200, "{body}");
    feed.until("the run to end", |s| !s.is_busy()).await;
    assert_eq!(
        status_of(&feed.state, "shell"),
        Some(ActionStatus::Aborted),
        "{:#?}",
        summary(&feed.state)
    );
    // Longer than the loop waits after a run ([fix] settle_ms): no new
    // attempt and no stop alert follow.
    tokio::time::sleep(Duration::from_secs(5)).await;
    let mut idle = ide.feed(&project).await;
    idle.until("the snapshot", |s| !s.messages.is_empty()).await;
    assert_eq!(automatic(&idle.state), 1, "{:#?}", summary(&idle.state));
    assert!(stop_alert(&idle.state).is_none(), "{:?}", idle.state.alerts);
    assert_eq!(idle.state.build_results.len(), 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn try_again_on_the_stop_alert_starts_a_fresh_count() {
    let mock = Mock::start_with(&failing_script(), &[]);
    let ide = Ide::start_with(&mock, &[("RIVET_FIX_MAX_ATTEMPTS", "1")]).await;
    let project = ide.new_project().await;
    let mut feed = ide.feed(&project).await;
    ide.send(&project, "fail differently").await;
    feed.until("the stop alert", |s| stop_alert(s).is_some())
        .await;
    assert_eq!(automatic(&feed.state), 1);
    let alert = feed
        .state
        .alerts
        .iter()
        .find(|a| a.title.contains("Rivet stopped trying"))
        .unwrap()
        .clone();
    assert!(!alert.fix_results.is_empty(), "{alert:?}");
    let (status, body) = ide
        .call(
            "try_fix_again",
            &[("project", &project), ("alert", &alert.id.to_string())],
        )
        .await;
    assert_eq!(status, 200, "{body}");
    feed.until("a second stop alert", |s| {
        s.alerts
            .iter()
            .filter(|a| a.title.contains("Rivet stopped trying"))
            .count()
            == 2
    })
    .await;
    let attempts: Vec<u32> = feed
        .state
        .messages
        .iter()
        .filter_map(|m| m.automatic.map(|a| a.attempt))
        .collect();
    assert_eq!(attempts, [1, 1], "Try again counts from one again");
}

#[tokio::test(flavor = "multi_thread")]
async fn try_again_on_an_alert_that_is_no_stop_alert_is_refused() {
    let mock = Mock::start(&[]);
    let ide = Ide::start(&mock).await;
    let project = ide.new_project().await;
    let (status, body) = ide
        .call("try_fix_again", &[("project", &project), ("alert", "7")])
        .await;
    assert_eq!(status, 500, "{body}");
    assert!(body.contains("not the fix loop's stop alert"), "{body}");
    assert!(body.contains(r#""code":"invalid""#), "{body}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_project_with_auto_fix_switched_off_gets_no_attempt() {
    let mock = Mock::start_with(&failing_script(), &[]);
    let ide = Ide::start_with(&mock, &[("RIVET_FIX_SETTLE_MS", "100")]).await;
    let project = ide.new_project().await;
    let mut feed = ide.feed(&project).await;
    let (status, body) = ide
        .call(
            "set_project_auto_fix",
            &[("project", &project), ("enabled", "false")],
        )
        .await;
    assert_eq!(status, 200, "{body}");
    feed.until("the switch", |s| s.auto_fix == Some(false))
        .await;
    ide.send(&project, "fail differently").await;
    feed.until("the failure", |s| !s.build_results.is_empty())
        .await;
    // The loop would have started its attempt well within this.
    tokio::time::sleep(Duration::from_secs(3)).await;
    let mut later = ide.feed(&project).await;
    later
        .until("the snapshot", |s| !s.messages.is_empty())
        .await;
    assert_eq!(automatic(&later.state), 0, "{:#?}", summary(&later.state));
    assert_eq!(later.state.messages.len(), 2);
}
