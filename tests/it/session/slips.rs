//! An answer that slips out of the bolt format, through the scripted
//! provider and a real `rivet serve`: a stream cut off inside its last
//! action (`tests/fixtures/slips/cut-off.txt`) still ends with the greeter
//! app served in the preview, its actions marked as recovered. Every shape
//! of `tests/fixtures/slips/`, the negative ones included, runs on fakes
//! (`session::scripted_tests::slips`), which also check that each shape
//! recovers the same files as this one.

use std::path::Path;

use rivet::runtime::session::ActionStatus;

use super::super::llm::Mock;
use super::{Ide, status_of, summary};

#[tokio::test(flavor = "multi_thread")]
async fn a_recovered_slip_ends_with_the_app_running() {
    let slips = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/slips");
    let mock = Mock::start_with(&slips, &["--chunk-size", "7"]);
    // Without the fix loop, what the answer itself gives is all there is.
    let ide = Ide::start_with(&mock, &[("RIVET_FIX_ENABLED", "false")]).await;
    let project = ide.new_project().await;
    let mut feed = ide.feed(&project).await;
    ide.send(&project, "cut off").await;
    feed.until("the greeter's dev server", |s| {
        status_of(s, "start") == Some(ActionStatus::Complete)
            && s.previews.first().is_some_and(|p| p.url.is_some())
    })
    .await;
    let state = &feed.state;
    for path in ["package.json", "index.html", "src/main.js"] {
        assert!(state.files.contains(path), "{:?}", state.files);
    }
    let actions = state.artifacts.iter().flat_map(|a| &a.actions);
    let recovered = actions.filter(|a| a.recovery.is_some()).count();
    assert!(recovered > 0, "{:#?}", summary(state));
    assert!(state.alerts.is_empty(), "{:?}", state.alerts);
    let url = state.previews[0].url.clone().unwrap_or_default();
    let html = ide
        .http
        .get(&url)
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(html.contains("id=\"greeting\""), "{html}");
}
