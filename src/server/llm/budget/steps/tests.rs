use super::*;
use crate::server::llm::ToolCall;

fn call(id: &str, name: &str, arguments: &str) -> ToolCall {
    ToolCall {
        id: id.to_owned(),
        name: name.to_owned(),
        arguments: arguments.to_owned(),
    }
}

/// An earlier turn, the task, then `steps` steps each reading a large file.
fn run(steps: usize) -> Vec<ChatMessage> {
    let mut messages = vec![
        ChatMessage::user("an earlier question"),
        ChatMessage::assistant("an earlier answer ".repeat(50)),
        ChatMessage::user("the task"),
    ];
    for n in 0..steps {
        let id = format!("c{n}");
        let arguments = format!(r#"{{"path":"src/file{n}.js"}}"#);
        messages.push(ChatMessage::assistant_calls(
            format!("step {n}"),
            vec![call(&id, "read_file", &arguments)],
        ));
        messages.push(ChatMessage::tool(&id, format!("content {n} ").repeat(400)));
    }
    messages
}

fn texts(messages: &[ChatMessage]) -> Vec<&str> {
    messages.iter().map(|m| m.content.as_str()).collect()
}

#[test]
fn a_history_that_fits_is_sent_as_it_is() {
    let messages = run(2);
    assert_eq!(fit_steps(&messages, u32::MAX), messages);
}

#[test]
fn older_tool_results_are_replaced_first_and_the_latest_step_is_whole() {
    let messages = run(4);
    let room = messages_tokens(&messages) - 2000;
    let fitted = fit_steps(&messages, room);
    assert!(messages_tokens(&fitted) <= room);
    assert_eq!(fitted.len(), messages.len(), "no message is dropped");
    assert_eq!(fitted[4].content, omitted("read_file"));
    assert_eq!(fitted.last(), messages.last(), "the latest result is whole");
    assert_eq!(fitted[2].content, "the task");
    // Only as many results as needed are replaced: the third is whole.
    assert_eq!(fitted[8], messages[8]);
}

#[test]
fn every_older_result_is_replaced_before_anything_else_goes() {
    let messages = run(4);
    let latest = messages_tokens(&messages[9..]);
    let room = latest + 400;
    let fitted = fit_steps(&messages, room);
    assert!(messages_tokens(&fitted) <= room, "{:?}", texts(&fitted));
    assert!(fitted.iter().any(|m| m.content == "the task"));
    assert_eq!(fitted.last(), messages.last());
    for m in fitted.iter().filter(|m| m.role == ChatRole::Tool) {
        assert!(
            m.content == omitted("read_file") || Some(m) == messages.last(),
            "{}",
            m.content
        );
    }
}

#[test]
fn the_earlier_conversation_then_old_steps_go_when_placeholders_are_not_enough() {
    let messages = run(40);
    let room = messages_tokens(&messages[messages.len() - 2..]) + 150;
    let fitted = fit_steps(&messages, room);
    assert!(messages_tokens(&fitted) <= room, "{:?}", texts(&fitted));
    assert_eq!(fitted[0].content, "the task", "the task comes first");
    assert_eq!(fitted[fitted.len() - 2..], messages[messages.len() - 2..]);
    // Every result still answers a call that is sent.
    for result in fitted.iter().filter(|m| m.role == ChatRole::Tool) {
        let id = result.tool_call_id.as_deref().unwrap();
        assert!(
            fitted
                .iter()
                .flat_map(|m| &m.tool_calls)
                .any(|c| c.id == id)
        );
    }
}

#[test]
fn older_arguments_are_left_out_when_results_are_not_enough() {
    let mut messages = vec![ChatMessage::user("the task")];
    let big = format!(r#"{{"path":"a.js","content":"{}"}}"#, "x".repeat(4000));
    for n in 0..3 {
        let id = format!("w{n}");
        messages.push(ChatMessage::assistant_calls(
            "",
            vec![call(&id, "write_file", &big)],
        ));
        messages.push(ChatMessage::tool(&id, "Wrote a.js"));
    }
    let room = messages_tokens(&messages) - 1500;
    let fitted = fit_steps(&messages, room);
    assert!(messages_tokens(&fitted) <= room);
    assert_eq!(fitted.len(), messages.len());
    assert_eq!(fitted[1].tool_calls[0].arguments, ARGUMENTS_OMITTED);
    assert_eq!(
        fitted[5].tool_calls[0].arguments, big,
        "the latest call is whole"
    );
}

#[test]
fn a_latest_result_larger_than_the_window_is_cut() {
    let mut messages = run(1);
    messages.push(ChatMessage::assistant_calls(
        "",
        vec![call("big", "read_file", "{}")],
    ));
    messages.push(ChatMessage::tool("big", "y".repeat(40_000)));
    let fitted = fit_steps(&messages, 2000);
    assert!(messages_tokens(&fitted) <= 2000);
    let last = fitted.last().unwrap();
    assert!(last.content.ends_with("[… cut to fit the context window]"));
    assert_eq!(fitted[0].content, "the task");
}

#[test]
fn an_unknown_call_id_is_named_as_a_tool() {
    let messages = vec![
        ChatMessage::user("the task"),
        ChatMessage::tool("nobody", "z".repeat(4000)),
        ChatMessage::assistant("done"),
    ];
    let fitted = fit_steps(&messages, 100);
    assert_eq!(fitted[1].content, omitted("a tool"));
}
