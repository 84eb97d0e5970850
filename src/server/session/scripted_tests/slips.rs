//! Answers that slip out of the bolt format (`tests/fixtures/slips`): each
//! recoverable shape writes the same three-file greeter app, installs it
//! and starts its dev server, its actions marked as recovered; the two
//! negative shapes write and run nothing. `tests/it/session/slips.rs` runs
//! a recovered answer on the real sandbox, npm and Vite.

use super::{Scripted, answered, fixtures, serving, summary};
use crate::runtime::session::SessionState;

/// Recoverable shapes, by the words that pick their transcript.
const RECOVERABLE: [&str; 5] = [
    "fence title",
    "heading path",
    "comment path",
    "other tags",
    "cut off",
];

const GREETER: [&str; 3] = ["package.json", "index.html", "src/main.js"];

fn recovered(state: &SessionState) -> Vec<bool> {
    state
        .artifacts
        .iter()
        .flat_map(|a| &a.actions)
        .map(|a| a.recovery.is_some())
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn each_recoverable_slip_writes_the_greeter_and_starts_it_and_the_negative_ones_write_nothing()
 {
    // Without the fix loop, what the answer itself gives is all there is.
    let scripted = Scripted::start(fixtures("slips"), |config| config.fix.enabled = false).await;
    let mut written: Vec<(&str, Vec<String>)> = Vec::new();
    for shape in RECOVERABLE {
        let (project, runtime) = scripted.project().await;
        scripted.send(&project, shape).await;
        let state = scripted.until(&project, shape, serving).await;
        let files: Vec<String> = GREETER
            .iter()
            .map(|path| {
                let text = runtime.text(path);
                text.unwrap_or_else(|| panic!("{shape}: no {path}: {:?}", state.files))
            })
            .collect();
        assert!(
            files[1].contains("id=\"greeting\""),
            "{shape}: {}",
            files[1]
        );
        assert!(files[2].contains("#greeting"), "{shape}: {}", files[2]);
        let marks = recovered(&state);
        assert!(marks.iter().any(|r| *r), "{shape}: {:#?}", summary(&state));
        assert!(state.alerts.is_empty(), "{shape}: {:?}", state.alerts);
        assert_eq!(
            runtime.commands(),
            ["npm install", "npm run dev"],
            "{shape}"
        );
        written.push((shape, files));
    }
    // Every shape describes the same app, and each recovered all of it.
    let (first, app) = &written[0];
    for (shape, files) in &written[1..] {
        for ((path, theirs), ours) in GREETER.iter().zip(files).zip(app) {
            assert_eq!(
                theirs.trim_end(),
                ours.trim_end(),
                "{path}: {shape} against {first}"
            );
        }
    }
    for shape in ["snippet no path", "elided partial"] {
        let (project, runtime) = scripted.project().await;
        scripted.send(&project, shape).await;
        let state = scripted
            .until(&project, shape, |s| answered(s) && !s.is_busy())
            .await;
        assert!(state.files.is_empty(), "{shape}: {:?}", state.files);
        assert!(
            runtime.commands().is_empty(),
            "{shape}: {:?}",
            runtime.commands()
        );
    }
}
