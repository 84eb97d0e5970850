use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use serde_json::json;
use tokio_util::sync::CancellationToken;

use super::*;
use crate::runtime::host::fake::{FakeRuntime, Script};
use crate::server::llm::ChatRole;

/// A model that plays its steps in order, then fails.
struct Scripted {
    steps: Mutex<VecDeque<Result<ModelStep, LlmError>>>,
    /// The conversation each request saw.
    seen: Mutex<Vec<Vec<ChatMessage>>>,
}

impl Scripted {
    fn new(steps: Vec<Result<ModelStep, LlmError>>) -> Scripted {
        Scripted {
            steps: Mutex::new(steps.into()),
            seen: Mutex::default(),
        }
    }
}

#[async_trait]
impl Model for Scripted {
    async fn step(&self, messages: &[ChatMessage]) -> Result<ModelStep, LlmError> {
        self.seen.lock().unwrap().push(messages.to_vec());
        self.steps
            .lock()
            .unwrap()
            .pop_front()
            .unwrap_or(Err(LlmError::Interrupted {
                message: "the script has no more steps".into(),
            }))
    }
}

/// Answers approvals in order; presses Stop when it runs out.
struct Decisions {
    queue: Mutex<VecDeque<Approval>>,
    asked: Mutex<Vec<String>>,
    stop: CancellationToken,
}

#[async_trait]
impl Approver for Decisions {
    async fn decide(&self, _subject: Subject, call: &ToolCall) -> Approval {
        self.asked.lock().unwrap().push(call.name.clone());
        let next = self.queue.lock().unwrap().pop_front();
        match next {
            Some(decision) => decision,
            None => {
                self.stop.cancel();
                std::future::pending().await
            }
        }
    }
}

fn call(name: &str, arguments: serde_json::Value) -> Result<ModelStep, LlmError> {
    Ok(ModelStep {
        text: String::new(),
        tool_calls: vec![ToolCall {
            id: format!("call_{name}"),
            name: name.into(),
            arguments: arguments.to_string(),
        }],
        finish_reason: FinishReason::ToolCalls,
        usage: Some(TokenUsage {
            prompt_tokens: 10,
            completion_tokens: 5,
            total_tokens: 15,
        }),
    })
}

fn answer(text: &str) -> Result<ModelStep, LlmError> {
    Ok(ModelStep {
        text: text.into(),
        tool_calls: Vec::new(),
        finish_reason: FinishReason::Stop,
        usage: None,
    })
}

fn write(path: &str) -> Result<ModelStep, LlmError> {
    call("write_file", json!({ "file_path": path, "content": "x\n" }))
}

struct Case {
    name: &'static str,
    steps: Vec<Result<ModelStep, LlmError>>,
    auto_approve: bool,
    decisions: Vec<Approval>,
    max_steps: u32,
    want: &'static str,
    want_steps: u32,
}

struct Played {
    outcome: AgentOutcome,
    events: Vec<AgentEvent>,
    fake: FakeRuntime,
    model: Scripted,
    asked: Vec<String>,
}

async fn play(case: Case) -> Played {
    let fake = FakeRuntime::new();
    fake.script("npm test", Script::exits(0, "1 passing\n"));
    fake.script(
        "npm run missing",
        Script::exits(1, "npm ERR! missing script: missing\n"),
    );
    let cancel = CancellationToken::new();
    let tools = ToolContext::new(Arc::new(fake.clone())).with_cancel(cancel.clone());
    let model = Scripted::new(case.steps);
    let approver = Decisions {
        queue: Mutex::new(case.decisions.into()),
        asked: Mutex::default(),
        stop: cancel,
    };
    let agent = Agent {
        model: &model,
        tools: &tools,
        approver: &approver,
        settings: AgentSettings {
            max_steps: case.max_steps,
            auto_approve: case.auto_approve,
        },
    };
    let mut events = Vec::new();
    let outcome = agent
        .run(vec![ChatMessage::user("build it")], |e| events.push(e))
        .await;
    let asked = approver.asked.lock().unwrap().clone();
    Played {
        outcome,
        events,
        fake,
        model,
        asked,
    }
}

fn kind(end: &AgentEnd) -> String {
    let value = serde_json::to_value(end).unwrap();
    match &value["reason"]["kind"] {
        serde_json::Value::String(reason) => format!("stuck:{reason}"),
        _ => value["kind"].as_str().unwrap().to_owned(),
    }
}

fn cases() -> Vec<Case> {
    vec![
        Case {
            name: "done: the model answers without tools",
            steps: vec![
                write("a.txt"),
                call("run_shell_command", json!({"command": "npm test"})),
                answer("Built."),
            ],
            auto_approve: true,
            decisions: vec![],
            max_steps: 25,
            want: "done",
            want_steps: 3,
        },
        Case {
            name: "step limit: a script that never ends",
            steps: (0..10).map(|i| write(&format!("f{i}.txt"))).collect(),
            auto_approve: true,
            decisions: vec![],
            max_steps: 4,
            want: "step_limit",
            want_steps: 4,
        },
        Case {
            name: "stuck: the same failing call again and again",
            steps: (0..10)
                .map(|_| call("run_shell_command", json!({"command": "npm run missing"})))
                .collect(),
            auto_approve: true,
            decisions: vec![],
            max_steps: 25,
            want: "stuck:repeated_call",
            want_steps: 3,
        },
        Case {
            name: "stuck: answers that neither call tools nor finish",
            steps: vec![answer(""), answer("  "), answer("")],
            auto_approve: true,
            decisions: vec![],
            max_steps: 25,
            want: "stuck:monologue",
            want_steps: 3,
        },
        Case {
            name: "denied, then the model goes on",
            steps: vec![write("a.txt"), answer("Understood, I leave a.txt alone.")],
            auto_approve: false,
            decisions: vec![Approval::Deny],
            max_steps: 25,
            want: "done",
            want_steps: 2,
        },
        Case {
            name: "approved, then done",
            steps: vec![write("a.txt"), answer("Wrote it.")],
            auto_approve: false,
            decisions: vec![Approval::Approve],
            max_steps: 25,
            want: "done",
            want_steps: 2,
        },
        Case {
            name: "stopped while a confirmation waits",
            steps: vec![
                call("read_file", json!({"path": "nope"})),
                write("a.txt"),
                answer("never"),
            ],
            auto_approve: false,
            decisions: vec![],
            max_steps: 25,
            want: "stopped",
            want_steps: 2,
        },
        Case {
            name: "the provider fails",
            steps: vec![Err(LlmError::Connection {
                provider: "p".into(),
                message: "refused".into(),
            })],
            auto_approve: true,
            decisions: vec![],
            max_steps: 25,
            want: "failed",
            want_steps: 1,
        },
    ]
}

#[tokio::test]
async fn every_run_ends_with_its_reason() {
    for case in cases() {
        let name = case.name;
        let (want, want_steps) = (case.want, case.want_steps);
        let played = play(case).await;
        assert_eq!(kind(&played.outcome.end), want, "{name}");
        assert_eq!(played.outcome.steps, want_steps, "{name}");
        let Some(AgentEvent::Finished { end, .. }) = played.events.last() else {
            panic!(
                "{name}: the events do not end with Finished: {:?}",
                played.events
            );
        };
        assert_eq!(end, &played.outcome.end, "{name}");
        // Every call in the conversation has its answer.
        let calls: usize = played
            .outcome
            .messages
            .iter()
            .map(|m| m.tool_calls.len())
            .sum();
        let results = played
            .outcome
            .messages
            .iter()
            .filter(|m| m.role == ChatRole::Tool)
            .count();
        assert_eq!(calls, results, "{name}");
    }
}

#[tokio::test]
async fn a_finished_run_wrote_its_files_ran_its_commands_and_counted_its_tokens() {
    let played = play(cases().remove(0)).await;
    assert_eq!(played.fake.text("a.txt").as_deref(), Some("x\n"));
    assert_eq!(played.fake.spawned()[0].command, "npm test");
    assert!(played.asked.is_empty(), "auto-approved runs ask nobody");
    assert_eq!(played.outcome.usage.total_tokens, 30);
    let last = &played.model.seen.lock().unwrap()[2];
    assert_eq!(last.last().unwrap().content, "1 passing\n[exit code: 0]");
    assert_eq!(
        last.last().unwrap().tool_call_id.as_deref(),
        Some("call_run_shell_command")
    );
}

#[tokio::test]
async fn a_denied_write_leaves_the_file_untouched_and_the_model_sees_the_denial() {
    let played = play(cases().remove(4)).await;
    assert_eq!(played.asked, ["write_file"]);
    assert_eq!(played.fake.file("a.txt"), None);
    let second = &played.model.seen.lock().unwrap()[1];
    assert_eq!(second.last().unwrap().content, DENIED);
    assert!(played.events.iter().any(|e| matches!(e,
        AgentEvent::AwaitingApproval { call, .. } if call.name == "write_file")));
    assert!(
        !played
            .events
            .iter()
            .any(|e| matches!(e, AgentEvent::ToolStarted { .. })),
        "a denied call never starts: {:?}",
        played.events
    );
}

#[tokio::test]
async fn each_call_that_runs_is_announced_before_its_result() {
    let played = play(cases().remove(0)).await;
    let order: Vec<(&str, &str)> = played
        .events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::ToolStarted { call_id, .. } => Some(("started", call_id.as_str())),
            AgentEvent::ToolResult { call_id, .. } => Some(("result", call_id.as_str())),
            _ => None,
        })
        .collect();
    assert!(!order.is_empty());
    for pair in order.chunks(2) {
        assert_eq!(pair.len(), 2, "{order:?}");
        assert_eq!((pair[0].0, pair[1].0), ("started", "result"), "{order:?}");
        assert_eq!(pair[0].1, pair[1].1, "{order:?}");
    }
}

#[tokio::test]
async fn safe_tools_run_without_asking_and_a_stop_during_a_confirmation_runs_nothing() {
    let played = play(cases().remove(6)).await;
    assert_eq!(
        played.asked,
        ["write_file"],
        "read_file was not asked about"
    );
    assert_eq!(played.fake.file("a.txt"), None);
    let last = played.outcome.messages.last().unwrap();
    assert_eq!(last.content, "not run: the run ended first");
}

#[tokio::test]
async fn the_stuck_run_says_why_in_a_sentence() {
    let played = play(cases().remove(2)).await;
    assert_eq!(
        played.outcome.end.to_string(),
        "Stopped because the run was stuck: the model called run_shell_command with the same \
         arguments 3 times and got the same result."
    );
    assert_eq!(played.fake.spawned().len(), 3);
}

/// Against a real model, when one is configured: one tool call goes out
/// and its result comes back. Skipped, saying why, otherwise.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_real_model_round_trips_a_tool_call() {
    let (Ok(url), Ok(model)) = (
        std::env::var("RIVET_REAL_LLM_URL"),
        std::env::var("RIVET_REAL_LLM_MODEL"),
    ) else {
        eprintln!(
            "skipped: set RIVET_REAL_LLM_URL (an OpenAI-compatible /v1 address), RIVET_REAL_LLM_MODEL and, if needed, RIVET_REAL_LLM_KEY to run this test against a real model"
        );
        return;
    };
    let key = std::env::var("RIVET_REAL_LLM_KEY").ok().map(|key| {
        crate::server::llm::secret::Secret::new(&key)
            .expect("RIVET_REAL_LLM_KEY is not a usable key")
    });
    let runtime = Arc::new(FakeRuntime::with_files([(
        "notes.txt",
        "The secret word is marmalade.\n",
    )]));
    let cancel = CancellationToken::new();
    let tools = ToolContext::new(runtime).with_cancel(cancel.clone());
    let model = LlmModel {
        llm: crate::server::llm::ResolvedLlm::custom(&url, &model, key),
        system: "You answer questions about the project's files with the tools.".to_owned(),
        window: crate::server::llm::budget::fit::Window::new(32_768, None),
        cancel,
        tools: tools.specs(),
    };
    let agent = Agent {
        model: &model,
        tools: &tools,
        approver: &AutoApprove,
        settings: AgentSettings {
            max_steps: 6,
            auto_approve: true,
        },
    };
    let mut events = Vec::new();
    let outcome = agent
        .run(
            vec![ChatMessage::user(
                "Use the read_file tool on notes.txt, then tell me the secret word.",
            )],
            |e| events.push(e),
        )
        .await;
    let read = events.iter().any(|e| {
        matches!(e, AgentEvent::ToolResult { output, .. } if output.ok && output.text.contains("marmalade"))
    });
    assert!(read, "no read_file result came back: {events:#?}");
    assert_eq!(outcome.end, AgentEnd::Done, "{events:#?}");
}

mod extra;
