//! Errors of the previewed page: the proxy puts the reporter into the app's
//! page, the IDE's page forwards what it reports (here the test does, with
//! the same server function), and the fix loop answers it.

use rivet::runtime::build_result::Stage;
use rivet::runtime::session::{ActionStatus, SessionState};

use super::super::llm::Mock;
use super::{Ide, summary};

fn automatic(state: &SessionState) -> usize {
    state
        .messages
        .iter()
        .filter(|m| m.automatic.is_some())
        .count()
}

fn last_action_status(state: &SessionState) -> Option<ActionStatus> {
    let last = state.messages.last()?.id.clone();
    state
        .artifacts
        .iter()
        .filter(|a| a.message_id == last)
        .flat_map(|a| &a.actions)
        .last()
        .map(|e| e.status.clone())
}

const THROWN: &str =
    "TypeError: Cannot read properties of undefined (reading 'map')\n    at app.js:2:60";

#[tokio::test(flavor = "multi_thread")]
async fn a_runtime_error_thrown_by_the_page_on_load_is_reported_and_fixed() {
    let mock = Mock::start(&["--chunk-size", "64"]);
    // The page error may come a while after the server is ready on a busy
    // machine; the default window is 5 s.
    let ide = Ide::start_with(&mock, &[("RIVET_FIX_PAGE_ERROR_MS", "60000")]).await;
    let project = ide.new_project().await;
    let mut feed = ide.feed(&project).await;
    ide.send(&project, "page throws").await;
    feed.until("the page's server", |s| {
        s.previews.first().is_some_and(|p| p.url.is_some())
            && last_action_status(s) == Some(ActionStatus::Complete)
    })
    .await;
    let preview = feed.state.previews[0].url.clone().unwrap();

    // The page comes with the reporter, which posts to the IDE's origin,
    // and the app's CSP lets it run.
    let page = ide.http.get(&preview).send().await.unwrap();
    assert_eq!(page.status(), 200);
    let csp = page.headers()["content-security-policy"]
        .to_str()
        .unwrap()
        .to_owned();
    assert!(csp.starts_with("script-src 'self' 'sha256-"), "{csp}");
    let html = page.text().await.unwrap();
    let tag = format!("<head><script data-rivet-ide=\"http://{}\">", ide.addr);
    assert!(html.contains(&tag), "{html}");
    // Scripts pass untouched.
    let script = ide
        .http
        .get(format!("{preview}app.js"))
        .send()
        .await
        .unwrap();
    assert!(!script.text().await.unwrap().contains("rivet"));

    // What the IDE's page forwards.
    let (status, body) = ide
        .call(
            "report_page_error",
            &[
                ("project", &project),
                ("kind", "error"),
                ("message", THROWN),
            ],
        )
        .await;
    assert_eq!((status, body.as_str()), (200, "true"));
    let (status, body) = ide
        .call(
            "report_page_error",
            &[
                ("project", &project),
                ("kind", "error"),
                ("message", THROWN),
            ],
        )
        .await;
    assert_eq!(
        (status, body.as_str()),
        (200, "false"),
        "the same error at once is kept once"
    );

    feed.until("the fix", |s| {
        automatic(s) == 1
            && s.messages.len() == 4
            && last_action_status(s) == Some(ActionStatus::Complete)
    })
    .await;
    let state = &feed.state;
    let result = &state.build_results[0];
    assert_eq!(result.stage, Stage::PageError, "{:#?}", summary(state));
    assert_eq!(result.files, ["app.js"]);
    let request = state.messages[2].text();
    assert!(request.contains("The page threw an error"), "{request}");
    assert!(request.contains("reading 'map'"), "{request}");
    assert!(request.contains("Current content of app.js"), "{request}");
    let fixed = ide
        .http
        .get(format!("{preview}app.js"))
        .send()
        .await
        .unwrap();
    assert!(
        fixed
            .text()
            .await
            .unwrap()
            .contains("items: ['one', 'two', 'three']")
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_page_error_of_an_unknown_kind_is_refused() {
    let mock = Mock::start(&[]);
    let ide = Ide::start(&mock).await;
    let project = ide.new_project().await;
    let (status, body) = ide
        .call(
            "report_page_error",
            &[("project", &project), ("kind", "warning"), ("message", "x")],
        )
        .await;
    assert_eq!(status, 500, "{body}");
    assert!(body.contains("not a kind of page error"), "{body}");
    assert!(body.contains(r#""code":"invalid""#), "{body}");
    let (status, body) = ide
        .call(
            "report_page_error",
            &[("project", &project), ("kind", "error"), ("message", " ")],
        )
        .await;
    assert_eq!(status, 500, "{body}");
    assert!(body.contains("no message"), "{body}");
    assert!(body.contains(r#""code":"invalid""#), "{body}");
}
