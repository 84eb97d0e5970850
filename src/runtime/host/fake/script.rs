//! What a spawned command does in the fake runtime, and which commands
//! play which script.

/// What a spawned command does.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Script {
    /// Printed at once (stdout and stderr interleaved).
    pub output: String,
    /// The exit code; `None` keeps the process running until the test ends
    /// it ([`super::FakeProcess::exit`]) or it is killed.
    pub exit_code: Option<i32>,
    /// A port the process starts listening on after printing its output.
    pub opens_port: Option<u16>,
    /// Files the process writes before it ends (a build writing `dist/`).
    pub writes: Vec<(String, String)>,
}

impl Script {
    /// A command that prints `output` and exits with `code`.
    pub fn exits(code: i32, output: impl Into<String>) -> Script {
        Script {
            output: output.into(),
            exit_code: Some(code),
            ..Script::default()
        }
    }

    /// A command that runs, silent, until the test ends it or it is killed.
    pub fn held() -> Script {
        Script::default()
    }

    /// A server that prints `output`, listens on `port` and runs until
    /// killed.
    pub fn serves(port: u16, output: impl Into<String>) -> Script {
        Script {
            output: output.into(),
            opens_port: Some(port),
            ..Script::default()
        }
    }

    pub fn writing(mut self, path: impl Into<String>, contents: impl Into<String>) -> Script {
        self.writes.push((path.into(), contents.into()));
        self
    }
}

/// Which command lines a script is for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Pattern {
    /// Any line containing this text.
    Contains(String),
    /// Exactly this line.
    Exactly(String),
}

impl Pattern {
    fn matches(&self, command: &str) -> bool {
        match self {
            Pattern::Contains(text) => command.contains(text.as_str()),
            Pattern::Exactly(line) => command == line,
        }
    }
}

/// The scripts given for one pattern: spawns take them in order, and the
/// last one stays.
struct Queue {
    pattern: Pattern,
    scripts: Vec<Script>,
    used: usize,
}

/// Every pattern's scripts, and what unmatched commands do.
#[derive(Default)]
pub(super) struct Scripts {
    queues: Vec<Queue>,
    otherwise: Option<Script>,
}

impl Scripts {
    pub(super) fn add(&mut self, pattern: Pattern, script: Script) {
        match self.queues.iter_mut().find(|q| q.pattern == pattern) {
            Some(queue) => queue.scripts.push(script),
            None => self.queues.push(Queue {
                pattern,
                scripts: vec![script],
                used: 0,
            }),
        }
    }

    pub(super) fn otherwise(&mut self, script: Script) {
        self.otherwise = Some(script);
    }

    /// The script the next spawn of `command` plays: the first pattern
    /// (in the order given) that matches it wins.
    pub(super) fn next(&mut self, command: &str) -> Script {
        let Some(queue) = self.queues.iter_mut().find(|q| q.pattern.matches(command)) else {
            return self.otherwise.clone().unwrap_or_else(|| {
                Script::exits(127, format!("fake runtime: no script for {command:?}\n"))
            });
        };
        let last = queue.scripts.len().saturating_sub(1);
        let script = queue.scripts.get(queue.used.min(last)).cloned();
        queue.used += 1;
        script.unwrap_or_default()
    }
}
