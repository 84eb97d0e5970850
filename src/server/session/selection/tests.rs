//! Placing selections and editing text in place, on a real project whose
//! files are the in-memory runtime's.

use std::sync::Arc;

use super::*;
use crate::runtime::host::fake::FakeRuntime;
use crate::runtime::selection::Rect;
use crate::runtime::session::SessionState;
use crate::server::session::{ProjectHandle, Session};

struct Project {
    state: AppState,
    id: ProjectId,
    runtime: Arc<FakeRuntime>,
    handle: Arc<ProjectHandle>,
    _data: tempfile::TempDir,
}

/// A project whose files are `files`, in the in-memory runtime.
async fn project(files: &[(&str, &str)]) -> Project {
    let (state, data) = crate::server::state::for_tests(|_| {});
    let row = crate::server::state::project_for_tests(&state, "p").await;
    let runtime = Arc::new(FakeRuntime::with_files(files.iter().copied()));
    let session = Arc::new(Session::new(row.id.clone(), SessionState::default()));
    let handle = ProjectHandle::new(
        row.id.clone(),
        session,
        Arc::clone(&runtime) as Arc<dyn Runtime>,
        state.databases.for_project(&row.id),
        state.preview_ports.hooks(&row.id),
    );
    state
        .open_projects
        .handles
        .lock()
        .unwrap()
        .insert(row.id.clone(), Arc::clone(&handle));
    Project {
        state,
        id: row.id,
        runtime,
        handle,
        _data: data,
    }
}

fn heading(text: &str) -> ElementSelection {
    ElementSelection {
        selector: "#root > h1".to_owned(),
        tag: "h1".to_owned(),
        id: None,
        classes: Vec::new(),
        text: text.to_owned(),
        html: format!("<h1>{text}</h1>"),
        rect: Rect::default(),
        source: None,
        files: Vec::new(),
    }
}

const APP: &str = "export default function App() {\n  return <h1>Hello there</h1>;\n}\n";

#[tokio::test]
async fn a_text_found_once_is_replaced_in_its_file() {
    let p = project(&[
        ("src/App.jsx", APP),
        ("src/main.jsx", "import App from './App';"),
    ])
    .await;
    let edit = edit_text(&p.state, &p.id, "Hello there", "Goodbye")
        .await
        .unwrap();
    assert_eq!(
        edit,
        TextEdit::Applied {
            path: "src/App.jsx".to_owned()
        }
    );
    assert_eq!(
        p.runtime.text("src/App.jsx").unwrap(),
        "export default function App() {\n  return <h1>Goodbye</h1>;\n}\n"
    );
    // The person's kind of edit: the model hears of it with the next message.
    let edits = p.handle.conversation().take_user_edits();
    assert!(edits.contains_key("src/App.jsx"), "{edits:?}");
}

#[tokio::test]
async fn a_text_found_twice_is_left_to_the_model() {
    let footer = "export const Footer = () => <p>Hello there</p>;\n";
    let p = project(&[("src/App.jsx", APP), ("src/Footer.jsx", footer)]).await;
    let edit = edit_text(&p.state, &p.id, "Hello there", "Bye")
        .await
        .unwrap();
    assert_eq!(edit, TextEdit::Ambiguous { occurrences: 2 });
    assert_eq!(p.runtime.text("src/App.jsx").unwrap(), APP);
    assert_eq!(p.runtime.text("src/Footer.jsx").unwrap(), footer);
    let absent = edit_text(&p.state, &p.id, "Not here", "Bye").await.unwrap();
    assert_eq!(absent, TextEdit::Ambiguous { occurrences: 0 });
}

#[tokio::test]
async fn a_text_in_node_modules_does_not_count() {
    let p = project(&[
        ("src/App.jsx", APP),
        ("node_modules/lib/index.js", "'Hello there'"),
        ("dist/assets/index.js", "'Hello there'"),
        ("package-lock.json", "{\"Hello there\": 1}"),
    ])
    .await;
    let edit = edit_text(&p.state, &p.id, "Hello there", "Hi")
        .await
        .unwrap();
    assert_eq!(
        edit,
        TextEdit::Applied {
            path: "src/App.jsx".to_owned()
        }
    );
    assert_eq!(
        p.runtime.text("node_modules/lib/index.js").unwrap(),
        "'Hello there'"
    );
}

#[tokio::test]
async fn an_edit_while_an_answer_streams_is_busy_and_writes_nothing() {
    let p = project(&[("src/App.jsx", APP)]).await;
    conversation::pretend_streaming(&p.handle, true);
    let refused = edit_text(&p.state, &p.id, "Hello there", "Hi").await;
    assert!(matches!(refused, Err(ApiError::Busy)), "{refused:?}");
    assert_eq!(p.runtime.text("src/App.jsx").unwrap(), APP);
}

#[tokio::test]
async fn an_edit_with_nothing_to_change_is_invalid() {
    let p = project(&[("src/App.jsx", APP)]).await;
    let refused = edit_text(&p.state, &p.id, "", "").await;
    assert!(
        matches!(refused, Err(ApiError::InvalidSelection)),
        "{refused:?}"
    );
}

#[tokio::test]
async fn a_sandbox_source_path_becomes_a_project_path() {
    let p = project(&[("src/App.jsx", APP)]).await;
    let mut element = heading("Hello there");
    element.source = Some(SourceLocation {
        file: "/home/project/src/App.jsx".to_owned(),
        line: Some(2),
        column: Some(10),
    });
    element.files = vec!["from/the/browser.js".to_owned()];
    let located = locate(&p.state, &p.id, element).await.unwrap();
    assert_eq!(
        located.source,
        Some(SourceLocation {
            file: "src/App.jsx".to_owned(),
            line: Some(2),
            column: Some(10),
        })
    );
    assert!(located.files.is_empty(), "{:?}", located.files);
}

#[tokio::test]
async fn a_source_outside_the_project_is_dropped_and_the_files_named() {
    let p = project(&[("src/App.jsx", APP)]).await;
    let mut element = heading("Hello there");
    element.source = Some(SourceLocation {
        file: "/home/project/node_modules/lib/Title.jsx".to_owned(),
        line: None,
        column: None,
    });
    let located = locate(&p.state, &p.id, element).await.unwrap();
    assert_eq!(located.source, None);
    assert_eq!(located.files, ["src/App.jsx"]);
}

#[tokio::test]
async fn a_selection_without_source_names_the_files_with_its_text() {
    let p = project(&[
        ("src/App.jsx", APP),
        ("src/Other.jsx", "const title = 'Hello there';"),
        ("src/Unrelated.jsx", "const x = 1;"),
        ("node_modules/lib/index.js", "'Hello there'"),
    ])
    .await;
    let located = locate(&p.state, &p.id, heading("Hello there"))
        .await
        .unwrap();
    assert_eq!(located.files, ["src/App.jsx", "src/Other.jsx"]);
}

#[tokio::test]
async fn a_selection_with_little_text_is_placed_by_its_class_names() {
    let card = "export const Card = () => <div className=\"card todo-card\">{n}</div>;\n";
    let style = ".todo-card { color: red }\n";
    let p = project(&[
        ("src/Card.jsx", card),
        ("src/card.css", style),
        ("src/App.jsx", APP),
    ])
    .await;
    let mut element = heading("7");
    element.tag = "div".to_owned();
    element.classes = vec!["card".to_owned(), "todo-card".to_owned()];
    let located = locate(&p.state, &p.id, element).await.unwrap();
    assert_eq!(located.files, ["src/Card.jsx"]);
}

#[tokio::test]
async fn a_malformed_selection_is_refused() {
    let p = project(&[("src/App.jsx", APP)]).await;
    let mut element = heading("Hello there");
    element.selector = String::new();
    let refused = locate(&p.state, &p.id, element).await;
    assert!(
        matches!(refused, Err(ApiError::InvalidSelection)),
        "{refused:?}"
    );
}
