//! The fix loop on a whole conversation: a failed install goes back to the
//! model by itself and its fix runs. `tests/it/session.rs` proves on the
//! real sandbox that npm's 404 becomes this failure; the browser test
//! `fix-loop.spec.ts` runs the whole loop on it, up to the fixed app's page.

use super::{Scripted, fixtures, serving, summary};
use crate::runtime::build_result::Stage;
use crate::runtime::host::fake::Script;
use crate::runtime::session::{ActionStatus, SessionState};

/// What npm 11 prints for the misspelt plugin of `broken-dep.txt`.
const NPM_404: &str = "npm error code E404
npm error 404 Not Found - GET https://registry.npmjs.org/@vitejs%2fplugin-recat
npm error 404
npm error 404  The requested resource '@vitejs/plugin-recat@^5.0.0' could not be found or you do not have permission to access it.
npm error 404
npm error 404 Note that you can also install from a
npm error 404 tarball, folder, http url, or git url.
npm error A complete log of this run can be found in: /home/project/.npm/_logs/2026-11-29T19_46_43_045Z-debug-0.log
";

/// `npm run dev` when the install left no `vite` behind.
const NO_VITE: &str = "\n> todo-app@0.0.0 dev\n> vite\n\nsh: 1: vite: not found\n";

fn automatic(state: &SessionState) -> usize {
    state
        .messages
        .iter()
        .filter(|m| m.automatic.is_some())
        .count()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_misspelt_dependency_is_fixed_by_one_automatic_attempt() {
    let scripted = Scripted::start(fixtures("transcripts"), |_| {}).await;
    let (project, runtime) = scripted
        .project_with(&[
            ("npm install", Script::exits(1, NPM_404)),
            ("npm install", Script::exits(0, "added 61 packages\n")),
            ("npm run dev", Script::exits(127, NO_VITE)),
            ("npm run dev", Script::serves(5173, "VITE ready\n")),
        ])
        .await;
    scripted.send(&project, "broken dep").await;
    let state = scripted
        .until(&project, "the fixed app's dev server", |s| {
            automatic(s) == 1 && serving(s)
        })
        .await;
    // The person's message, the broken answer, the automatic request, the fix.
    assert_eq!(state.messages.len(), 4, "{:#?}", summary(&state));
    let request = &state.messages[2];
    let fix = request.automatic.unwrap();
    assert_eq!((fix.attempt, fix.max_attempts), (1, 3));
    assert!(fix.tokens_so_far > 0, "the broken answer's tokens count");
    let text = request.text();
    assert!(text.contains("The install failed: `npm install`"), "{text}");
    assert!(text.contains("plugin-recat"), "{text}");
    assert!(text.contains("Current content of package.json"), "{text}");
    assert_eq!(state.build_results[0].stage, Stage::Install);
    assert_eq!(
        super::status_of(&state, "shell"),
        Some(ActionStatus::Complete)
    );
    assert!(
        runtime
            .text("package.json")
            .unwrap()
            .contains("@vitejs/plugin-react"),
        "the fix's package.json is written"
    );

    // The failures the attempt fixed (the install and what followed from
    // it) are marked resolved once its run ends without a new one.
    let later = scripted
        .until(&project, "the failures resolved", |s| {
            !s.alerts.is_empty() && s.alerts.iter().all(|a| a.resolved.is_some())
        })
        .await;
    let fixed = Some("fixed by automatic attempt 1");
    let results = &later.build_results;
    assert!(
        results.iter().all(|r| r.resolved.as_deref() == fixed),
        "{results:#?}"
    );
    assert!(later.alerts.iter().all(|a| a.resolved.as_deref() == fixed));
    assert_eq!(
        results.len(),
        2,
        "the install, and the dev server it left without vite"
    );
    let settled = scripted.settled(&project).await;
    assert_eq!(automatic(&settled), 1, "{:#?}", summary(&settled));
    assert_eq!(
        runtime.commands(),
        ["npm install", "npm run dev", "npm install", "npm run dev"]
    );
}
