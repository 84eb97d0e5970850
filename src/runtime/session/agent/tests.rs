use super::super::{Message, Part, SessionEvent, SessionState, Touched};
use super::*;
use crate::runtime::llm::TokenUsage;

fn step(id: &str, status: StepStatus) -> AgentStep {
    AgentStep {
        id: id.into(),
        step: 1,
        tool: "write_file".into(),
        summary: "index.html".into(),
        status,
        preview: None,
        change: None,
        output: None,
        result: None,
    }
}

fn agent_answer() -> SessionState {
    let mut state = SessionState::default();
    state.apply(&SessionEvent::MessageAdded {
        message: Message::assistant("m2"),
    });
    state.apply(&SessionEvent::AgentStarted {
        message_id: "m2".into(),
        max_steps: 25,
    });
    state
}

fn step_event(step: AgentStep) -> SessionEvent {
    SessionEvent::AgentStep {
        message_id: "m2".into(),
        step,
    }
}

#[test]
fn a_step_is_added_once_and_then_updated_in_place() {
    let mut state = agent_answer();
    let touched = state.apply(&step_event(step("m2-call_1", StepStatus::Pending)));
    assert_eq!(touched, Touched::Message("m2".into()));
    let mut waiting = step("m2-call_1", StepStatus::Waiting);
    waiting.preview = Some("+<h1>Todos</h1>".into());
    state.apply(&step_event(waiting.clone()));
    let message = state.message("m2").unwrap();
    let run = message.agent.as_ref().unwrap();
    assert_eq!(run.steps, [waiting]);
    assert_eq!(run.max_steps, 25);
    assert_eq!(
        message.parts,
        [Part::Step {
            id: "m2-call_1".into()
        }]
    );
    assert_eq!(
        state.agent_step("m2-call_1").map(|(m, s)| (m, s.status)),
        Some(("m2", StepStatus::Waiting))
    );
    assert!(state.agent_step("m2-call_9").is_none());
}

#[test]
fn progress_and_end_are_kept_and_open_steps_become_not_run() {
    let mut state = agent_answer();
    state.apply(&step_event(step("m2-a", StepStatus::Done)));
    state.apply(&step_event(step("m2-b", StepStatus::Waiting)));
    let usage = TokenUsage {
        prompt_tokens: 10,
        completion_tokens: 5,
        total_tokens: 15,
    };
    state.apply(&SessionEvent::AgentProgress {
        message_id: "m2".into(),
        steps_used: 2,
        usage,
    });
    state.apply(&SessionEvent::AgentEnded {
        message_id: "m2".into(),
        end: "Stopped by the user.".into(),
    });
    let run = state.message("m2").unwrap().agent.clone().unwrap();
    assert_eq!((run.steps_used, run.usage), (2, usage));
    assert_eq!(run.end.as_deref(), Some("Stopped by the user."));
    let statuses: Vec<StepStatus> = run.steps.iter().map(|s| s.status).collect();
    assert_eq!(statuses, [StepStatus::Done, StepStatus::NotRun]);
}

#[test]
fn a_finished_message_leaves_no_step_waiting() {
    // As after a restart: the stored run is settled as interrupted.
    let mut state = agent_answer();
    state.apply(&step_event(step("m2-a", StepStatus::Waiting)));
    state.apply(&SessionEvent::MessageFinished {
        message_id: "m2".into(),
        status: crate::runtime::session::MessageStatus::Interrupted {
            reason: "the server stopped".into(),
        },
        finish_reason: None,
    });
    let (_, step) = state.agent_step("m2-a").unwrap();
    assert_eq!(step.status, StepStatus::NotRun);
}

#[test]
fn mode_and_always_allowed_tools_are_remembered() {
    let mut state = SessionState::default();
    assert_eq!(state.mode, None);
    state.apply(&SessionEvent::ModeChanged { mode: Mode::Agent });
    state.apply(&SessionEvent::AlwaysAllowed {
        tool: "write_file".into(),
    });
    assert_eq!(state.mode, Some(Mode::Agent));
    assert!(state.always_allowed.contains("write_file"));
    // A snapshot carries them, as a reload sees them.
    let json = serde_json::to_string(&state).unwrap();
    let back: SessionState = serde_json::from_str(&json).unwrap();
    assert_eq!(back, state);
}

#[test]
fn events_of_an_unknown_message_change_nothing() {
    let mut state = SessionState::default();
    let touched = state.apply(&step_event(step("m2-a", StepStatus::Pending)));
    assert_eq!(touched, Touched::Nothing);
    assert!(state.messages.is_empty());
}

#[test]
fn state_stored_before_agent_mode_still_reads() {
    let old = r#"{"messages":[{"id":"m1","role":"user","parts":[],"status":{"state":"complete"},"usage":null,"notice":null,"finish_reason":null}],"artifacts":[],"files":[],"changed_by_last_answer":[],"terminal":"","alerts":[],"previews":[]}"#;
    let state: SessionState = serde_json::from_str(old).unwrap();
    assert_eq!(state.mode, None);
    assert!(state.messages[0].agent.is_none());
}

#[test]
fn decisions_and_modes_have_their_wire_names() {
    let json = |v: serde_json::Result<String>| v.unwrap();
    assert_eq!(json(serde_json::to_string(&Decision::Always)), "\"always\"");
    assert_eq!(json(serde_json::to_string(&Mode::Agent)), "\"agent\"");
    assert_eq!(
        json(serde_json::to_string(&StepStatus::NotRun)),
        "\"not_run\""
    );
}

fn output_event(step_id: &str, output: &str) -> SessionEvent {
    SessionEvent::AgentStepOutput {
        message_id: "m2".into(),
        step_id: step_id.into(),
        output: output.into(),
    }
}

#[test]
fn a_running_steps_output_is_replaced_by_each_output_event() {
    let mut state = agent_answer();
    state.apply(&step_event(step("m2-a", StepStatus::Running)));
    let touched = state.apply(&output_event("m2-a", "added 1 package\n"));
    assert_eq!(touched, Touched::Message("m2".into()));
    state.apply(&output_event("m2-a", "added 1 package\nadded 2 packages\n"));
    let (_, shown) = state.agent_step("m2-a").unwrap();
    assert_eq!(
        shown.output.as_deref(),
        Some("added 1 package\nadded 2 packages\n")
    );
    // The step's end replaces the card: the result, and no live output.
    let mut done = step("m2-a", StepStatus::Done);
    done.result = Some("added 2 packages\n[exit code: 0]".into());
    state.apply(&step_event(done.clone()));
    assert_eq!(state.agent_step("m2-a").unwrap().1, &done);
}

#[test]
fn output_after_the_step_ended_or_for_a_waiting_step_is_ignored() {
    let mut state = agent_answer();
    state.apply(&step_event(step("m2-a", StepStatus::Done)));
    state.apply(&step_event(step("m2-b", StepStatus::Waiting)));
    state.apply(&output_event("m2-a", "late"));
    state.apply(&output_event("m2-b", "early"));
    assert_eq!(state.agent_step("m2-a").unwrap().1.output, None);
    assert_eq!(state.agent_step("m2-b").unwrap().1.output, None);
}

#[test]
fn output_for_an_unknown_step_or_message_changes_no_step() {
    let mut state = agent_answer();
    state.apply(&step_event(step("m2-a", StepStatus::Running)));
    state.apply(&output_event("m2-zz", "x"));
    let touched = state.apply(&SessionEvent::AgentStepOutput {
        message_id: "m9".into(),
        step_id: "m2-a".into(),
        output: "x".into(),
    });
    assert_eq!(touched, Touched::Nothing);
    assert_eq!(state.agent_step("m2-a").unwrap().1.output, None);
}

#[test]
fn output_longer_than_the_tail_keeps_its_end_at_a_character_boundary() {
    let mut state = agent_answer();
    state.apply(&step_event(step("m2-a", StepStatus::Pending)));
    let long = format!(
        "{}é{}",
        "x".repeat(10_000),
        "y".repeat(AgentStep::OUTPUT_TAIL - 1)
    );
    state.apply(&output_event("m2-a", &long));
    let shown = state.agent_step("m2-a").unwrap().1.output.clone().unwrap();
    assert!(shown.len() <= AgentStep::OUTPUT_TAIL, "{}", shown.len());
    assert!(shown.ends_with('y') && shown.len() >= AgentStep::OUTPUT_TAIL - 1);
}

#[test]
fn a_change_larger_than_the_cap_is_not_kept_whole() {
    let big = "x".repeat(StepChange::MAX_BYTES + 1);
    assert_eq!(StepChange::capped("a.txt", &big, "y"), None);
    assert_eq!(StepChange::capped("a.txt", "y", &big), None);
    let change = StepChange::capped("a.txt", "old\n", "new\n").unwrap();
    assert_eq!(
        (change.before.as_str(), change.after.as_str()),
        ("old\n", "new\n")
    );
}

#[test]
fn steps_stored_without_change_or_output_still_read_and_write_none() {
    let old = r#"{"id":"m2-a","step":1,"tool":"read_file","summary":"a","status":"done"}"#;
    let step: AgentStep = serde_json::from_str(old).unwrap();
    assert_eq!((step.change.clone(), step.output.clone()), (None, None));
    let json = serde_json::to_string(&step).unwrap();
    assert!(
        !json.contains("change") && !json.contains("output"),
        "{json}"
    );
}
