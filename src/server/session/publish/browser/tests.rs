//! A WebContainer project's publish against a stand-in tab: the relay's
//! receiver, answering as the browser's driver does.

use futures::StreamExt;
use futures::channel::mpsc;

use super::*;
use crate::runtime::kind::RuntimeKind;
use crate::server::session::publish::{PublishInput, publish};

const PACKAGE: &str = r#"{"scripts":{"build":"vite build"}}"#;

async fn browser_project(max_mb: u64) -> (AppState, tempfile::TempDir, ProjectId) {
    let (state, data) = crate::server::state::for_tests(|config| {
        config.runtime.default = RuntimeKind::Webcontainer;
        config.publish.max_mb = max_mb;
    });
    let files = [("package.json", PACKAGE)];
    let (project, _) = crate::server::state::project_on_fake_runtime(&state, &files).await;
    (state, data, project)
}

async fn tab(state: &AppState, project: &ProjectId) -> mpsc::UnboundedReceiver<RelayEvent> {
    crate::server::session::browser::answers(state, project)
        .await
        .unwrap()
}

/// The next build the tab is asked for: its request and command.
async fn asked(tab: &mut mpsc::UnboundedReceiver<RelayEvent>) -> (String, String) {
    match tab.next().await {
        Some(RelayEvent::BuildSite {
            request, command, ..
        }) => (request, command),
        other => panic!("the tab was asked {other:?}"),
    }
}

#[tokio::test]
async fn a_file_from_the_tab_is_written_off_the_async_thread() {
    use crate::server::session::publish::tests::{being_written, big_script, running_when_written};
    let (state, _data, project) = browser_project(50).await;
    let mut tab = tab(&state, &project).await;
    let publishing = tokio::spawn({
        let (state, project) = (state.clone(), project.clone());
        async move { publish(&state, &project, PublishInput::default()).await }
    });
    let (request, _) = asked(&mut tab).await;
    let file = being_written(&state.sites, &project, 1, "app.js");
    let adding = tokio::spawn({
        let (state, project, request) = (state.clone(), project.clone(), request.clone());
        let script = FileContent::new(big_script());
        async move { add_file(&state, &project, &request, "app.js", script).await }
    });
    assert!(
        running_when_written(&adding, &file).await,
        "the file was written on the async thread"
    );
    adding.await.unwrap().unwrap();
    let report = SiteBuildReport::Built {
        root: "dist".into(),
        files: 1,
    };
    finish(&state, &project, &request, report).await.unwrap();
    assert_eq!(publishing.await.unwrap().unwrap().version, 1);
    let dir = state.sites.version_dir(&project, 1);
    assert_eq!(std::fs::read(dir.join("app.js")).unwrap(), big_script());
}

fn text(content: &str) -> FileContent {
    FileContent::new(content.as_bytes().to_vec())
}

#[tokio::test]
async fn a_browser_project_is_published_from_the_files_its_tab_built() {
    let (state, _data, project) = browser_project(50).await;
    let mut tab = tab(&state, &project).await;
    let browser = async {
        let (request, command) = asked(&mut tab).await;
        assert_eq!(command, "npm run build");
        add_file(
            &state,
            &project,
            &request,
            "index.html",
            text("<h1>built</h1>"),
        )
        .await
        .unwrap();
        let js = FileContent::new(vec![0xff, 0x00, 0x01]);
        add_file(&state, &project, &request, "assets/app.js", js)
            .await
            .unwrap();
        let report = SiteBuildReport::Built {
            root: "dist".into(),
            files: 2,
        };
        finish(&state, &project, &request, report).await.unwrap();
    };
    let (published, ()) = tokio::join!(publish(&state, &project, PublishInput::default()), browser);
    let published = published.unwrap();
    assert_eq!(published.version, 1);
    let dir = state.sites.version_dir(&project, 1);
    let index = std::fs::read_to_string(dir.join("index.html")).unwrap();
    assert_eq!(index, "<h1>built</h1>");
    assert_eq!(
        std::fs::read(dir.join("assets/app.js")).unwrap(),
        [0xff, 0x00, 0x01]
    );
    let site = state.sites.site(&project).unwrap();
    assert_eq!(site.live, Some(1));
    assert_eq!(
        site.versions[0].built_with.as_deref(),
        Some("npm run build")
    );
}

#[tokio::test]
async fn a_browser_project_with_no_tab_open_says_to_open_one_and_keeps_no_version() {
    let (state, _data, project) = browser_project(50).await;
    let error = publish(&state, &project, PublishInput::default())
        .await
        .unwrap_err();
    assert!(
        matches!(&error, ApiError::Publish(PublishError::NeedsTab(why)) if why.contains("no tab")),
        "{error}"
    );
    assert!(state.sites.site(&project).unwrap().versions.is_empty());
}

#[tokio::test]
async fn a_tab_closing_during_the_build_ends_the_publish() {
    let (state, _data, project) = browser_project(50).await;
    let mut tab = tab(&state, &project).await;
    let browser = async {
        asked(&mut tab).await;
        drop(tab);
    };
    let (published, ()) = tokio::join!(publish(&state, &project, PublishInput::default()), browser);
    let error = published.unwrap_err();
    assert!(
        matches!(&error, ApiError::Publish(PublishError::NeedsTab(why)) if why.contains("closed")),
        "{error}"
    );
}

#[tokio::test]
async fn a_failed_build_in_the_tab_fails_the_publish_with_the_tabs_reason() {
    let (state, _data, project) = browser_project(50).await;
    let mut tab = tab(&state, &project).await;
    let browser = async {
        let (request, _) = asked(&mut tab).await;
        let report = SiteBuildReport::Failed {
            reason: "`npm run build` failed (exit code Some(1)):\nSyntaxError".into(),
        };
        finish(&state, &project, &request, report).await.unwrap();
    };
    let (published, ()) = tokio::join!(publish(&state, &project, PublishInput::default()), browser);
    let error = published.unwrap_err();
    assert!(
        matches!(&error, ApiError::Publish(PublishError::BuildFailed(why)) if why.ends_with("SyntaxError")),
        "{error}"
    );
    assert!(state.sites.site(&project).unwrap().versions.is_empty());
}

#[tokio::test]
async fn a_tab_reporting_more_files_than_arrived_fails_the_publish() {
    let (state, _data, project) = browser_project(50).await;
    let mut tab = tab(&state, &project).await;
    let browser = async {
        let (request, _) = asked(&mut tab).await;
        add_file(&state, &project, &request, "index.html", text("<h1>"))
            .await
            .unwrap();
        let report = SiteBuildReport::Built {
            root: "dist".into(),
            files: 3,
        };
        finish(&state, &project, &request, report).await.unwrap();
    };
    let (published, ()) = tokio::join!(publish(&state, &project, PublishInput::default()), browser);
    let error = published.unwrap_err();
    assert!(
        error.to_string().contains("3 files in dist/ but 1 arrived"),
        "{error}"
    );
}

#[tokio::test]
async fn a_file_past_the_sites_limit_ends_the_build_as_too_large() {
    let (state, _data, project) = browser_project(0).await;
    let mut tab = tab(&state, &project).await;
    let browser = async {
        let (request, _) = asked(&mut tab).await;
        let refused = add_file(
            &state,
            &project,
            &request,
            "index.html",
            text("<h1>big</h1>"),
        )
        .await;
        assert!(refused.is_err());
    };
    let (published, ()) = tokio::join!(publish(&state, &project, PublishInput::default()), browser);
    let error = published.unwrap_err();
    assert!(
        matches!(error, ApiError::Publish(PublishError::TooLarge(_))),
        "{error}"
    );
}

#[tokio::test]
async fn a_file_for_a_build_nobody_asked_for_is_refused() {
    let (state, _data, project) = browser_project(50).await;
    let error = add_file(&state, &project, "0123", "index.html", text("<h1>"))
        .await
        .unwrap_err();
    assert!(
        matches!(error, ApiError::Publish(PublishError::NoBuild(_))),
        "{error}"
    );
    let report = SiteBuildReport::NothingToPublish { reason: "x".into() };
    let error = finish(&state, &project, "0123", report).await.unwrap_err();
    assert!(
        matches!(error, ApiError::Publish(PublishError::NoBuild(_))),
        "{error}"
    );
}

#[tokio::test]
async fn a_browser_project_with_only_an_index_html_is_published_without_its_tab() {
    let (state, _data, project) = browser_project(50).await;
    let handle = open_project(&state, &project).await.unwrap();
    handle.runtime.remove("package.json").await.unwrap();
    handle
        .runtime
        .write_file("index.html", b"<h1>plain</h1>")
        .await
        .unwrap();
    let published = publish(&state, &project, PublishInput::default())
        .await
        .unwrap();
    let dir = state.sites.version_dir(&project, published.version);
    assert_eq!(
        std::fs::read_to_string(dir.join("index.html")).unwrap(),
        "<h1>plain</h1>"
    );
}
