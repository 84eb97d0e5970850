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
    /// Code in the prose, and no action at all: nothing was written or run.
    CodeWithoutActions,
    /// Prose only: an answer to a question.
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

/// A fenced code block with at least one line in it, or a tag of the
/// format that the parser could not read.
fn has_code(message: &Message) -> bool {
    let text = message.text();
    if text.contains("<boltAction") || text.contains("<boltArtifact") {
        return true;
    }
    let mut open = false;
    let mut lines_inside = 0;
    for line in text.lines() {
        let trimmed = line.trim_start();
        if trimmed.starts_with("```") || trimmed.starts_with("~~~") {
            if open && lines_inside > 0 {
                return true;
            }
            open = !open;
            lines_inside = 0;
        } else if open && !trimmed.is_empty() {
            lines_inside += 1;
        }
    }
    // A fence the answer never closed.
    open && lines_inside > 0
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
        }
    }

    #[test]
    fn answers_are_told_apart_by_their_actions_and_their_code() {
        let fence = "Here it is:\n\n```jsx\nexport default function App() {}\n```\n";
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
            (
                "Unclosed:\n```\nconst a = 1;\n",
                &[],
                AnswerFormat::CodeWithoutActions,
            ),
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
