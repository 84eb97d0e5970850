//! Answers that slip out of the bolt format, through the scripted provider
//! and a real `rivet serve`: each recoverable shape of
//! `tests/fixtures/slips/` ends with the greeter app served in the preview,
//! its actions marked as recovered; the two negative shapes write nothing.

use std::path::Path;

use rivet::runtime::session::{ActionStatus, SessionState};

use super::super::llm::Mock;
use super::{Ide, answered, status_of, summary};

/// Recoverable shapes, by the words that pick their transcript.
const RECOVERABLE: [&str; 5] = [
    "fence title",
    "heading path",
    "comment path",
    "other tags",
    "cut off",
];

fn recovered(state: &SessionState) -> Vec<bool> {
    state
        .artifacts
        .iter()
        .flat_map(|a| &a.actions)
        .map(|a| a.recovery.is_some())
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn each_recoverable_slip_ends_with_the_app_running_and_the_negative_ones_write_nothing() {
    let slips = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/slips");
    let mock = Mock::start_with(&slips, &["--chunk-size", "7"]);
    // Without the fix loop, what the answer itself gives is all there is.
    let ide = Ide::start_with(&mock, &[("RIVET_FIX_ENABLED", "false")]).await;
    for shape in RECOVERABLE {
        let project = ide.new_project().await;
        let mut feed = ide.feed(&project).await;
        ide.send(&project, shape).await;
        feed.until(shape, |s| {
            status_of(s, "start") == Some(ActionStatus::Complete)
                && s.previews.first().is_some_and(|p| p.url.is_some())
        })
        .await;
        let state = &feed.state;
        for path in ["package.json", "index.html", "src/main.js"] {
            assert!(state.files.contains(path), "{shape}: {:?}", state.files);
        }
        let marks = recovered(state);
        assert!(marks.iter().any(|r| *r), "{shape}: {:#?}", summary(state));
        assert!(state.alerts.is_empty(), "{shape}: {:?}", state.alerts);
        let url = state.previews[0].url.clone().unwrap_or_default();
        let page = ide.http.get(&url).send().await.unwrap();
        let html = page.text().await.unwrap();
        assert!(html.contains("id=\"greeting\""), "{shape}: {html}");
    }
    for shape in ["snippet no path", "elided partial"] {
        let project = ide.new_project().await;
        let mut feed = ide.feed(&project).await;
        ide.send(&project, shape).await;
        feed.until(shape, |s| answered(s) && !s.is_busy()).await;
        assert!(
            feed.state.files.is_empty(),
            "{shape}: {:?}",
            feed.state.files
        );
    }
}
