//! Tools beside the built-in ones (the owner's MCP servers) in the loop:
//! offered after the built-in ones, asked about unless trusted or
//! auto-approved, with what their source says about the call.

use super::*;
use crate::server::agent::tools::ToolSource;
use crate::server::llm::client::{ImagePart, ToolSpec};

/// Two tools of a "docs" server: `docs__search` asks first, `docs__ping`
/// is trusted.
#[derive(Default)]
struct Docs {
    calls: Mutex<Vec<(String, String)>>,
}

#[async_trait]
impl ToolSource for Docs {
    fn specs(&self) -> Vec<ToolSpec> {
        ["docs__search", "docs__ping"]
            .map(|name| ToolSpec {
                name: name.to_owned(),
                description: "[MCP server docs]".to_owned(),
                parameters: json!({"type": "object"}),
            })
            .to_vec()
    }

    fn owns(&self, name: &str) -> bool {
        name.starts_with("docs__")
    }

    fn needs_approval(&self, name: &str) -> bool {
        name != "docs__ping"
    }

    fn describe(&self, name: &str, arguments: &str) -> String {
        format!("MCP server: docs\ntool: {name}\narguments: {arguments}")
    }

    async fn call(&self, name: &str, arguments: &str) -> ToolOutput {
        self.calls
            .lock()
            .unwrap()
            .push((name.to_owned(), arguments.to_owned()));
        let mut output = ToolOutput::ok(format!("{name} answered"));
        if arguments.contains("screenshot") {
            output.images.push(ImagePart {
                media_type: "image/png".to_owned(),
                base64: "iVBORw0KGgo=".to_owned(),
            });
        }
        output
    }
}

struct Recorded {
    subjects: Mutex<Vec<Subject>>,
    decision: Approval,
}

#[async_trait]
impl Approver for Recorded {
    async fn decide(&self, subject: Subject, _call: &ToolCall) -> Approval {
        self.subjects.lock().unwrap().push(subject);
        self.decision
    }
}

struct Ran {
    outcome: AgentOutcome,
    subjects: Vec<Subject>,
    calls: Vec<(String, String)>,
}

async fn run_with_docs(tool: &str, decision: Approval, auto_approve: bool) -> Ran {
    let docs = Arc::new(Docs::default());
    let tools = ToolContext::new(Arc::new(FakeRuntime::new())).with_extra(docs.clone());
    let model = Scripted::new(vec![
        call(tool, json!({"q": "router"})),
        answer("Found it."),
    ]);
    let approver = Recorded {
        subjects: Mutex::default(),
        decision,
    };
    let agent = Agent {
        model: &model,
        tools: &tools,
        approver: &approver,
        settings: AgentSettings {
            max_steps: 5,
            auto_approve,
        },
    };
    let outcome = agent
        .run(vec![ChatMessage::user("look it up")], |_| {})
        .await;
    let subjects = approver.subjects.lock().unwrap().clone();
    let calls = docs.calls.lock().unwrap().clone();
    Ran {
        outcome,
        subjects,
        calls,
    }
}

fn tool_result(outcome: &AgentOutcome) -> String {
    outcome
        .messages
        .iter()
        .find(|m| m.role == ChatRole::Tool)
        .map(|m| m.content.clone())
        .unwrap_or_default()
}

#[tokio::test]
async fn an_mcp_call_waits_for_approval_with_its_server_tool_and_arguments() {
    let ran = run_with_docs("docs__search", Approval::Approve, false).await;
    assert_eq!(
        ran.subjects,
        [Subject::Other {
            description: "MCP server: docs\ntool: docs__search\narguments: {\"q\":\"router\"}"
                .to_owned()
        }]
    );
    assert_eq!(
        ran.calls,
        [("docs__search".to_owned(), "{\"q\":\"router\"}".to_owned())]
    );
    assert_eq!(tool_result(&ran.outcome), "docs__search answered");
    assert_eq!(ran.outcome.end, AgentEnd::Done);
}

#[tokio::test]
async fn a_denied_mcp_call_is_not_made_and_the_model_reads_the_denial() {
    let ran = run_with_docs("docs__search", Approval::Deny, false).await;
    assert_eq!(ran.subjects.len(), 1);
    assert!(ran.calls.is_empty(), "{:?}", ran.calls);
    assert_eq!(tool_result(&ran.outcome), DENIED);
}

#[tokio::test]
async fn a_trusted_mcp_tool_and_auto_approval_run_without_asking() {
    let trusted = run_with_docs("docs__ping", Approval::Deny, false).await;
    assert!(trusted.subjects.is_empty());
    assert_eq!(tool_result(&trusted.outcome), "docs__ping answered");

    let auto = run_with_docs("docs__search", Approval::Deny, true).await;
    assert!(
        auto.subjects.is_empty(),
        "[agent] auto_approve covers MCP tools"
    );
    assert_eq!(tool_result(&auto.outcome), "docs__search answered");
}

#[test]
fn the_model_is_offered_the_built_in_tools_then_the_servers() {
    let tools =
        ToolContext::new(Arc::new(FakeRuntime::new())).with_extra(Arc::new(Docs::default()));
    let names: Vec<String> = tools.specs().into_iter().map(|s| s.name).collect();
    assert_eq!(names.len(), Tool::ALL.len() + 2);
    assert_eq!(
        names[..Tool::ALL.len()],
        Tool::ALL.map(|t| t.name().to_owned())
    );
    assert_eq!(names[Tool::ALL.len()..], ["docs__search", "docs__ping"]);
    assert!(tools.needs_approval("docs__search"));
    assert!(!tools.needs_approval("docs__ping"));
    assert!(tools.needs_approval("write_file"));
    assert!(!tools.needs_approval("read_file"));
}

#[tokio::test]
async fn a_tool_s_images_follow_the_step_s_results_as_a_user_message() {
    let docs = Arc::new(Docs::default());
    let tools = ToolContext::new(Arc::new(FakeRuntime::new())).with_extra(docs);
    let step = Ok(ModelStep {
        text: String::new(),
        tool_calls: vec![
            ToolCall {
                id: "c1".into(),
                name: "docs__ping".into(),
                arguments: r#"{"q": "screenshot"}"#.into(),
            },
            ToolCall {
                id: "c2".into(),
                name: "docs__ping".into(),
                arguments: "{}".into(),
            },
        ],
        finish_reason: FinishReason::ToolCalls,
        usage: None,
    });
    let model = Scripted::new(vec![step, answer("I see it.")]);
    let agent = Agent {
        model: &model,
        tools: &tools,
        approver: &AutoApprove,
        settings: AgentSettings {
            max_steps: 5,
            auto_approve: false,
        },
    };
    let outcome = agent.run(vec![ChatMessage::user("look")], |_| {}).await;
    assert_eq!(outcome.end, AgentEnd::Done);
    let second = &model.seen.lock().unwrap()[1];
    let roles: Vec<ChatRole> = second.iter().map(|m| m.role).collect();
    assert_eq!(
        roles,
        [
            ChatRole::User,
            ChatRole::Assistant,
            ChatRole::Tool,
            ChatRole::Tool,
            ChatRole::User
        ]
    );
    let images = second.last().unwrap();
    assert_eq!(images.content, TOOL_IMAGES);
    assert_eq!(images.images.len(), 1);
    assert_eq!(
        images.images[0].data_url(),
        "data:image/png;base64,iVBORw0KGgo="
    );
}
