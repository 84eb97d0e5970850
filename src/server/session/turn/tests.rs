//! The turn against a scripted model (the project's provider, in process)
//! and a path that records what reaches it: where the text goes, how the
//! answer ends, and what the model was offered, without a runtime.

use std::sync::Mutex;

use super::*;
use crate::runtime::kind::RuntimeKind;
use crate::runtime::llm::ActionFormat;
use crate::runtime::protocol::{Event, GivenAction};
use crate::runtime::session::ActionStatus;
use crate::server::session::scripted_tests::Scripted;

/// An answer path that keeps what reached it; it can stop the answer when
/// its first text arrives.
#[derive(Default)]
struct Recording {
    tools: bool,
    stop_on_text: Option<CancellationToken>,
    seen: Mutex<Seen>,
}

#[derive(Default, Debug)]
struct Seen {
    text: String,
    given: Vec<GivenAction>,
    /// One entry per end, `true` when stopped.
    ends: Vec<bool>,
}

impl Recording {
    fn seen<T>(&self, f: impl FnOnce(&Seen) -> T) -> T {
        f(&self.seen.lock().unwrap())
    }
}

impl AnswerPath for Recording {
    fn takes_tools(&self) -> bool {
        self.tools
    }

    fn text(&self, _: &ProjectHandle, _: &str, _: &mut Parser, text: &str) {
        self.seen.lock().unwrap().text.push_str(text);
        if let Some(cancel) = &self.stop_on_text {
            cancel.cancel();
        }
    }

    fn given(&self, _: &ProjectHandle, _: &str, _: &mut Parser, actions: Vec<GivenAction>) {
        self.seen.lock().unwrap().given.extend(actions);
    }

    fn end(&self, _: &ProjectHandle, _: &str, _: Parser, stopped: bool) {
        self.seen.lock().unwrap().ends.push(stopped);
    }

    fn events(&self, _: &ProjectHandle, _: &str, _: Vec<Event>) {}
}

struct Setup {
    scripted: Scripted,
    project: Arc<ProjectHandle>,
}

const HELLO: &str = "#! match: hello\nHello there. <boltArtifact id=\"a\" title=\"A\"><boltAction type=\"file\" filePath=\"a.txt\">one</boltAction></boltArtifact> Done.";
const SLOW: &str = "#! match: slow\n#! chunk-size: 4\n#! chunk-delay-ms: 20\nA slow answer that goes on for a while.";
const CUT: &str = "#! match: cut\n#! cut-after: 12\nThis answer is cut off in the middle.";
const REFUSED: &str = "#! match: refused\n#! status: 401\nnever sent";
const TOOL: &str = r#"{"match": "tool", "turns": [{"content": "", "tool_calls": [{"id": "c1", "name": "write_file", "arguments": {"file_path": "b.txt", "content": "two"}}]}]}"#;

async fn setup(format: ActionFormat) -> Setup {
    let transcripts = [
        ("hello.txt", HELLO),
        ("slow.txt", SLOW),
        ("cut.txt", CUT),
        ("refused.txt", REFUSED),
        ("tool.json", TOOL),
    ]
    .iter()
    .map(|(name, text)| crate::server::llm::mock::parse(name, text).unwrap())
    .collect();
    let scripted = Scripted::start(transcripts, |config| config.llm.format = format).await;
    let state = &scripted.state;
    let row = crate::server::state::project_for_tests(state, "p").await;
    let project = state.open_projects.open(state, &row.id).await;
    Setup { scripted, project }
}

impl Setup {
    /// Asks `text` on `path` and waits for the answer's end; its id.
    async fn ask(&self, text: &str, path: &Recording, cancel: CancellationToken) -> String {
        let history = vec![ChatMessage::user(text)];
        let answer = new_answer(&self.project, history, text, false);
        let id = answer.message_id.clone();
        let (project, llm) = (
            Arc::clone(&self.project),
            Arc::clone(&self.scripted.state.llm),
        );
        let sandbox = self.description(RuntimeKind::Sandbox);
        run_on(project, llm, sandbox, answer, cancel, path).await;
        id
    }

    fn description(&self, kind: RuntimeKind) -> RuntimeDescription {
        RuntimeDescription::for_kind(&self.scripted.state.config, kind)
    }

    fn status(&self, id: &str) -> MessageStatus {
        let status =
            |s: &crate::runtime::session::SessionState| s.message(id).map(|m| m.status.clone());
        self.project.session.read(status).unwrap()
    }

    /// The tool names each request to the model offered.
    async fn offered_tools(&self) -> Vec<Vec<String>> {
        let url = format!("http://{}/mock/log", self.scripted.mock.addr);
        let log: Vec<serde_json::Value> = reqwest::get(url).await.unwrap().json().await.unwrap();
        log.iter()
            .map(|entry| serde_json::from_value(entry["tools"].clone()).unwrap())
            .collect()
    }
}

#[tokio::test]
async fn an_answer_reaches_its_path_whole_and_ends_it_once() {
    let setup = setup(ActionFormat::Tags).await;
    let path = Recording::default();
    let id = setup
        .ask("say hello", &path, CancellationToken::new())
        .await;
    let body = HELLO.split_once('\n').unwrap().1;
    path.seen(|seen| {
        assert_eq!(seen.text, body);
        assert_eq!(seen.ends, [false]);
    });
    assert_eq!(setup.status(&id), MessageStatus::Complete);
    let history = setup.project.conversation().history().to_vec();
    assert_eq!(history.last().unwrap().content, body);
}

#[tokio::test]
async fn a_stopped_answer_ends_its_path_as_stopped() {
    let setup = setup(ActionFormat::Tags).await;
    let cancel = CancellationToken::new();
    let path = Recording {
        stop_on_text: Some(cancel.clone()),
        ..Recording::default()
    };
    let id = setup.ask("be slow", &path, cancel).await;
    path.seen(|seen| {
        assert!(!seen.text.is_empty());
        assert!(seen.text.len() < "A slow answer that goes on for a while.".len());
        assert_eq!(seen.ends, [true]);
    });
    assert_eq!(setup.status(&id), MessageStatus::Stopped);
}

#[tokio::test]
async fn a_cut_answer_keeps_its_parser_for_continue_and_leaves_its_path_open() {
    let setup = setup(ActionFormat::Tags).await;
    let path = Recording::default();
    let id = setup.ask("get cut", &path, CancellationToken::new()).await;
    path.seen(|seen| {
        assert_eq!(seen.text, "This answer ");
        assert!(seen.ends.is_empty(), "{seen:?}");
    });
    assert!(matches!(
        setup.status(&id),
        MessageStatus::Interrupted { .. }
    ));
    let unfinished = setup.project.conversation().take_unfinished_of(&id);
    assert_eq!(unfinished.unwrap().text, "This answer ");
}

#[tokio::test]
async fn a_refused_answer_without_text_fails_and_ends_its_path() {
    let setup = setup(ActionFormat::Tags).await;
    let path = Recording::default();
    let id = setup
        .ask("be refused", &path, CancellationToken::new())
        .await;
    path.seen(|seen| {
        assert!(seen.text.is_empty());
        assert_eq!(seen.ends, [false]);
    });
    assert!(matches!(setup.status(&id), MessageStatus::Failed { .. }));
    assert!(setup.project.conversation().unfinished().is_none());
}

#[tokio::test]
async fn tools_are_offered_only_on_a_path_that_takes_them() {
    for takes in [true, false] {
        let setup = setup(ActionFormat::Tools).await;
        let path = Recording {
            tools: takes,
            ..Recording::default()
        };
        setup
            .ask("say hello", &path, CancellationToken::new())
            .await;
        let offered = setup.offered_tools().await;
        assert_eq!(offered.len(), 1);
        assert_eq!(offered[0].contains(&"write_file".to_owned()), takes);
    }
}

#[tokio::test]
async fn a_tool_call_reaches_the_path_as_a_given_action_and_the_history_as_tags() {
    let setup = setup(ActionFormat::Tools).await;
    let path = Recording {
        tools: true,
        ..Recording::default()
    };
    let id = setup
        .ask("use a tool", &path, CancellationToken::new())
        .await;
    path.seen(|seen| {
        assert_eq!(seen.given.len(), 1, "{seen:?}");
        let given = &seen.given[0];
        let file_path = "b.txt".to_owned();
        assert_eq!(
            given.kind,
            crate::runtime::protocol::ActionKind::File { file_path }
        );
        assert_eq!(
            (given.content.as_str(), given.error.as_ref()),
            ("two", None)
        );
        assert_eq!(seen.ends, [false]);
    });
    assert_eq!(setup.status(&id), MessageStatus::Complete);
    let history = setup.project.conversation().history().to_vec();
    let recorded = &history.last().unwrap().content;
    assert!(recorded.contains("filePath=\"b.txt\""), "{recorded}");
}

/// The three real paths, each picked by `for_answer`.
#[tokio::test]
async fn each_runtime_and_mode_picks_its_path() {
    use crate::runtime::relay::RelayEvent;
    use futures::StreamExt;
    let setup = setup(ActionFormat::Tags).await;
    let project = &setup.project;
    let webcontainer = setup.description(RuntimeKind::Webcontainer);
    let browser = path::for_answer(webcontainer, false);
    let server = path::for_answer(setup.description(RuntimeKind::Sandbox), false);
    let plan = path::for_answer(webcontainer, true);
    assert!(server.takes_tools());
    assert!(!browser.takes_tools() && !plan.takes_tools());

    // The browser's path relays the text to the tab and parses nothing here.
    let mut tab = project.browser.subscribe();
    let mut parser = Parser::new("m9".to_owned());
    browser.text(
        project,
        "m9",
        &mut parser,
        "Hi <boltArtifact id=\"x\" title=\"X\">",
    );
    browser.end(project, "m9", parser, true);
    let relayed: Vec<RelayEvent> = tab.by_ref().take(2).collect().await;
    assert!(matches!(&relayed[0], RelayEvent::Delta { text, .. } if text.starts_with("Hi")));
    assert!(matches!(relayed[1], RelayEvent::End { stopped: true, .. }));
    assert!(setup.project.session.read(|s| s.artifacts.is_empty()));

    // A plan's actions are parsed here and marked planned, never run.
    let answer = new_answer(project, vec![ChatMessage::user("plan")], "plan", true);
    let id = answer.message_id;
    let mut parser = answer.parser;
    let planned = "<boltArtifact id=\"p\" title=\"P\"><boltAction type=\"shell\">echo hi</boltAction></boltArtifact>";
    plan.text(project, &id, &mut parser, planned);
    plan.end(project, &id, parser, false);
    let statuses: Vec<ActionStatus> = project.session.read(|s| {
        let actions = s.artifacts.iter().flat_map(|a| a.actions.iter());
        actions.map(|a| a.status.clone()).collect()
    });
    assert_eq!(statuses, [ActionStatus::Planned]);
}
