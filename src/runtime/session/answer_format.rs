//! Whether an answer kept to the bolt format: the fix loop nudges a model
//! whose answer had code but nothing to run, and a model that slips twice
//! in a row gets the format restated in every request.

use super::state::{Message, SessionState};

/// How an answer used the format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AnswerFormat {
    /// At least one action was written in the format.
    InFormat,
    /// Every action was recovered from a slip (a fence, another tag, …).
    Recovered,
    /// Code that looks like files in the prose, and no action at all:
    /// nothing was written or run.
    CodeWithoutActions,
    /// Prose, maybe with a short snippet: an answer to a question.
    Prose,
}

impl AnswerFormat {
    /// Whether the answer slipped out of the format.
    pub fn slipped(self) -> bool {
        matches!(
            self,
            AnswerFormat::Recovered | AnswerFormat::CodeWithoutActions
        )
    }
}

impl SessionState {
    /// How the answer `message_id` used the format.
    pub fn answer_format(&self, message_id: &str) -> AnswerFormat {
        let mut actions = self
            .artifacts
            .iter()
            .filter(|a| a.message_id == message_id)
            .flat_map(|a| &a.actions)
            .peekable();
        if actions.peek().is_some() {
            return if actions.any(|a| a.recovery.is_none()) {
                AnswerFormat::InFormat
            } else {
                AnswerFormat::Recovered
            };
        }
        match self.message(message_id) {
            Some(message) if has_code(message) => AnswerFormat::CodeWithoutActions,
            _ => AnswerFormat::Prose,
        }
    }
}

/// Lines of a fenced block from which it looks like a file, not a snippet
/// that answers a question.
const FILE_LINES: usize = 8;
/// Fenced blocks (of any length) from which an answer looks like an app.
const APP_BLOCKS: usize = 3;

/// Code that looks like files the model meant to write: a fenced block of
/// [`FILE_LINES`] lines or more, [`APP_BLOCKS`] blocks, or a tag of the
/// format that the parser could not read. A short snippet is an answer.
fn has_code(message: &Message) -> bool {
    let text = message.text();
    if text.contains("<boltAction") || text.contains("<boltArtifact") {
        return true;
    }
    let blocks = fenced_blocks(&text);
    blocks.len() >= APP_BLOCKS || blocks.iter().any(|&lines| lines >= FILE_LINES)
}

/// The non-blank lines of each fenced block with any (a block the answer
/// never closed included).
fn fenced_blocks(text: &str) -> Vec<usize> {
    let mut blocks = Vec::new();
    let mut inside: Option<usize> = None;
    for line in text.lines() {
        let trimmed = line.trim_start();
        if trimmed.starts_with("```") || trimmed.starts_with("~~~") {
            inside = match inside {
                Some(lines) => {
                    blocks.push(lines);
                    None
                }
                None => Some(0),
            };
        } else if let Some(lines) = &mut inside
            && !trimmed.is_empty()
        {
            *lines += 1;
        }
    }
    blocks.extend(inside);
    blocks.retain(|&lines| lines > 0);
    blocks
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::protocol::{Id, Recovery};
    use crate::runtime::session::{ActionEntry, ActionStatus, Artifact, Part};

    fn answer(text: &str, actions: &[Option<Recovery>]) -> SessionState {
        let mut message = Message::assistant("m1");
        message.parts.push(Part::Text { text: text.into() });
        let mut state = SessionState {
            messages: vec![message],
            ..SessionState::default()
        };
        if !actions.is_empty() {
            state.artifacts.push(Artifact {
                message_id: "m1".into(),
                id: Id::from("a1"),
                title: String::new(),
                closed: true,
                actions: actions
                    .iter()
                    .enumerate()
                    .map(|(i, r)| entry(i, *r))
                    .collect(),
            });
        }
        state
    }

    fn entry(i: usize, recovery: Option<Recovery>) -> ActionEntry {
        ActionEntry {
            id: Id::from(format!("x{i}").as_str()),
            kind: crate::runtime::protocol::ActionKind::Shell,
            content: "npm install".into(),
            closed: true,
            truncated: false,
            error: None,
            status: ActionStatus::Complete,
            recovery,
            result: None,
        }
    }

    #[test]
    fn answers_are_told_apart_by_their_actions_and_their_code() {
        let file = format!(
            "Here it is:\n\n```jsx\n{}```\n",
            "let a = 1;\n".repeat(FILE_LINES)
        );
        let fence = file.as_str();
        let unclosed = format!("Unclosed:\n```\n{}", "let a = 1;\n".repeat(FILE_LINES));
        let three = "```\na\n```\n```css\nb{}\n```\n```sh\nnpm i\n```\n";
        let snippet = "A counter:\n```jsx\nconst [n, setN] = useState(0);\n```\nInstall:\n```sh\nnpm install react\n```\n";
        let cases: &[(&str, &[Option<Recovery>], AnswerFormat)] = &[
            ("Done.", &[None], AnswerFormat::InFormat),
            (
                "Done.",
                &[Some(Recovery::FenceTitle), None],
                AnswerFormat::InFormat,
            ),
            (
                "Done.",
                &[Some(Recovery::FenceTitle), Some(Recovery::ShellFence)],
                AnswerFormat::Recovered,
            ),
            (fence, &[], AnswerFormat::CodeWithoutActions),
            (&unclosed, &[], AnswerFormat::CodeWithoutActions),
            (three, &[], AnswerFormat::CodeWithoutActions),
            (snippet, &[], AnswerFormat::Prose),
            (
                "<boltAction type=\"fil\" nonsense",
                &[],
                AnswerFormat::CodeWithoutActions,
            ),
            ("Use `npm run dev` to start it.", &[], AnswerFormat::Prose),
            ("An empty fence:\n```\n\n```\n", &[], AnswerFormat::Prose),
            ("Vite is a build tool.", &[], AnswerFormat::Prose),
        ];
        for (text, actions, expected) in cases {
            let state = answer(text, actions);
            assert_eq!(state.answer_format("m1"), *expected, "{text:?} {actions:?}");
        }
    }

    #[test]
    fn the_snippet_answer_is_prose_and_the_app_without_paths_is_not() {
        let prose = |text: &str| -> String {
            text.lines()
                .filter(|l| !l.starts_with("#!"))
                .map(|l| format!("{l}\n"))
                .collect()
        };
        let snippet = include_str!("../../../tests/fixtures/transcripts/code-sample.txt");
        let app = include_str!("../../../tests/fixtures/nudge/code-only.txt");
        let format = |text: &str| answer(&prose(text), &[]).answer_format("m1");
        assert_eq!(format(snippet), AnswerFormat::Prose);
        assert_eq!(format(app), AnswerFormat::CodeWithoutActions);
    }

    #[test]
    fn an_unknown_message_is_prose() {
        assert_eq!(
            SessionState::default().answer_format("nope"),
            AnswerFormat::Prose
        );
    }

    #[test]
    fn only_recovered_and_codeless_answers_slipped() {
        assert!(AnswerFormat::Recovered.slipped());
        assert!(AnswerFormat::CodeWithoutActions.slipped());
        assert!(!AnswerFormat::InFormat.slipped());
        assert!(!AnswerFormat::Prose.slipped());
    }
}
