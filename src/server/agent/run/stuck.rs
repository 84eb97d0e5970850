//! The stuck detector: notices a run that goes round in circles, so the loop
//! can stop it with a reason instead of spending the step limit.

use serde::{Deserialize, Serialize};

use crate::runtime::llm::ToolCall;

/// How many times a repetition may happen before the run counts as stuck.
pub const REPEATS: usize = 3;
/// Steps an A-B-A-B alternation spans.
pub const ALTERNATION: usize = 6;

/// Why the run was stopped as stuck.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum StuckReason {
    /// The same call gave the same result again and again.
    RepeatedCall { tool: String },
    /// Calls kept failing with the same error.
    RepeatedError { error: String },
    /// Two calls alternated without progress.
    Alternating { first: String, second: String },
    /// Steps without a tool call that did not answer either.
    Monologue,
}

impl std::fmt::Display for StuckReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StuckReason::RepeatedCall { tool } => write!(
                f,
                "the model called {tool} with the same arguments {REPEATS} times and got the same result"
            ),
            StuckReason::RepeatedError { error } => {
                write!(f, "the same error came back {REPEATS} times: {error}")
            }
            StuckReason::Alternating { first, second } => write!(
                f,
                "the model kept alternating between {first} and {second} without progress"
            ),
            StuckReason::Monologue => write!(
                f,
                "the model answered {REPEATS} times in a row without calling a tool or finishing"
            ),
        }
    }
}

struct Seen {
    /// The tool and its arguments, normalised.
    call: String,
    tool: String,
    result: String,
    ok: bool,
}

/// Fed every tool call with its result, and every step without tools.
#[derive(Default)]
pub struct StuckDetector {
    seen: Vec<Seen>,
    monologue: usize,
}

impl StuckDetector {
    pub fn new() -> StuckDetector {
        StuckDetector::default()
    }

    /// Records a call and its result; says why the run is stuck, if it is.
    pub fn record_call(&mut self, call: &ToolCall, result: &str, ok: bool) -> Option<StuckReason> {
        self.monologue = 0;
        self.seen.push(Seen {
            call: signature(call),
            tool: call.name.clone(),
            result: result.to_owned(),
            ok,
        });
        self.repeated_call()
            .or_else(|| self.repeated_error())
            .or_else(|| self.alternating())
    }

    /// Records a step that called no tool and did not finish the run.
    pub fn record_tool_less(&mut self) -> Option<StuckReason> {
        self.monologue += 1;
        (self.monologue >= REPEATS).then_some(StuckReason::Monologue)
    }

    fn repeated_call(&self) -> Option<StuckReason> {
        let last = self.seen.last()?;
        let same = self
            .seen
            .iter()
            .filter(|s| s.call == last.call && s.result == last.result)
            .count();
        (same >= REPEATS).then(|| StuckReason::RepeatedCall {
            tool: last.tool.clone(),
        })
    }

    fn repeated_error(&self) -> Option<StuckReason> {
        let last = self.seen.last().filter(|s| !s.ok)?;
        let same = self
            .seen
            .iter()
            .filter(|s| !s.ok && s.result == last.result)
            .count();
        (same >= REPEATS).then(|| StuckReason::RepeatedError {
            error: first_line(&last.result),
        })
    }

    fn alternating(&self) -> Option<StuckReason> {
        let n = self.seen.len();
        if n < ALTERNATION {
            return None;
        }
        let window = &self.seen[n - ALTERNATION..];
        let (a, b) = (&window[0].call, &window[1].call);
        let alternates = a != b
            && window
                .iter()
                .enumerate()
                .all(|(i, s)| &s.call == if i % 2 == 0 { a } else { b });
        alternates.then(|| StuckReason::Alternating {
            first: window[0].tool.clone(),
            second: window[1].tool.clone(),
        })
    }
}

/// The tool and its arguments, with the arguments' JSON normalised so that
/// spacing and key order do not make two calls differ.
fn signature(call: &ToolCall) -> String {
    let arguments = serde_json::from_str::<serde_json::Value>(&call.arguments)
        .map(|v| v.to_string())
        .unwrap_or_else(|_| call.arguments.clone());
    format!("{}({arguments})", call.name)
}

fn first_line(text: &str) -> String {
    let line = text.lines().next().unwrap_or("");
    if line.chars().count() > 200 {
        format!("{}…", line.chars().take(200).collect::<String>())
    } else {
        line.to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(name: &str, arguments: &str) -> ToolCall {
        ToolCall {
            id: "c".into(),
            name: name.into(),
            arguments: arguments.into(),
        }
    }

    /// One call: tool, arguments, result, whether it succeeded.
    type Step<'a> = (&'a str, &'a str, &'a str, bool);
    /// A case: its name, its calls, and the step and kind the detector
    /// should fire at.
    type Case<'a> = (&'a str, Vec<Step<'a>>, Option<(usize, &'a str)>);

    /// Feeds calls and returns the step at which the detector fired, with
    /// its reason.
    fn fire(steps: &[Step]) -> Option<(usize, StuckReason)> {
        let mut detector = StuckDetector::new();
        steps
            .iter()
            .enumerate()
            .find_map(|(i, (tool, args, result, ok))| {
                detector
                    .record_call(&call(tool, args), result, *ok)
                    .map(|r| (i + 1, r))
            })
    }

    #[test]
    fn the_stuck_detector_fires_on_each_pattern_and_not_on_progress() {
        let read = ("read_file", r#"{"path":"a"}"#, "1| a", true);
        let read_spaced = ("read_file", r#"{ "path": "a" }"#, "1| a", true);
        let fail = |args| {
            (
                "run_shell_command",
                args,
                "Error: npm ERR! missing script",
                false,
            )
        };
        let cases: Vec<Case> = vec![
            (
                "same call, same result",
                vec![read, read_spaced, read],
                Some((3, "repeated_call")),
            ),
            (
                "same call, new result each time",
                vec![read, ("read_file", r#"{"path":"a"}"#, "1| b", true), read],
                None,
            ),
            (
                "same error from different calls",
                vec![
                    fail("{\"command\":\"npm run a\"}"),
                    fail("{\"command\":\"npm run b\"}"),
                    fail("{\"command\":\"npm run c\"}"),
                ],
                Some((3, "repeated_error")),
            ),
            (
                "A-B-A-B over six steps",
                vec![
                    ("glob", "{\"pattern\":\"*\"}", "x", true),
                    ("list_directory", "{\"path\":\".\"}", "y", true),
                    ("glob", "{\"pattern\":\"*\"}", "x2", true),
                    ("list_directory", "{\"path\":\".\"}", "y2", true),
                    ("glob", "{\"pattern\":\"*\"}", "x3", true),
                    ("list_directory", "{\"path\":\".\"}", "y3", true),
                ],
                Some((6, "alternating")),
            ),
            (
                "different files one after another",
                (0..8)
                    .map(|i| {
                        (
                            "write_file",
                            [
                                "{\"a\":0}",
                                "{\"a\":1}",
                                "{\"a\":2}",
                                "{\"a\":3}",
                                "{\"a\":4}",
                                "{\"a\":5}",
                                "{\"a\":6}",
                                "{\"a\":7}",
                            ][i],
                            "ok",
                            true,
                        )
                    })
                    .collect(),
                None,
            ),
        ];
        for (name, steps, want) in cases {
            let got = fire(&steps).map(|(step, reason)| {
                let kind = serde_json::to_value(&reason).unwrap()["kind"]
                    .as_str()
                    .unwrap()
                    .to_owned();
                (step, kind)
            });
            assert_eq!(got, want.map(|(s, k)| (s, k.to_owned())), "{name}");
        }
    }

    #[test]
    fn three_tool_less_steps_in_a_row_are_a_monologue() {
        let mut detector = StuckDetector::new();
        assert_eq!(detector.record_tool_less(), None);
        assert_eq!(detector.record_tool_less(), None);
        detector.record_call(&call("glob", "{}"), "x", true);
        assert_eq!(detector.record_tool_less(), None);
        assert_eq!(detector.record_tool_less(), None);
        assert_eq!(detector.record_tool_less(), Some(StuckReason::Monologue));
    }
}
