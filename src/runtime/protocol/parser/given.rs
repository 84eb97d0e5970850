//! Actions the model gave as tool calls: one artifact of their own, with
//! the ids and events of any other action, so the runner and the session
//! treat them alike.

use super::{GIVEN_TITLE, GivenAction, Machine};
use crate::runtime::protocol::event::{Action, Artifact, Attributes, Event};

impl Machine {
    pub(super) fn given(&mut self, actions: Vec<GivenAction>, emit: &mut impl FnMut(Event)) {
        if actions.is_empty() {
            return;
        }
        self.flush(emit);
        let artifact_id = self.artifact_id(None);
        emit(Event::ArtifactOpen {
            id: artifact_id.clone(),
            artifact: Box::new(Artifact {
                title: GIVEN_TITLE.to_owned(),
                kind: None,
                attributes: Attributes::new(),
            }),
        });
        for action in actions {
            let action_id = self.next_action_id();
            emit(Event::ActionOpen {
                artifact_id: artifact_id.clone(),
                action_id: action_id.clone(),
                action: Box::new(action.kind.clone()),
                recovery: None,
            });
            if !action.content.is_empty() {
                emit(Event::ActionDelta {
                    artifact_id: artifact_id.clone(),
                    action_id: action_id.clone(),
                    delta: action.content.clone(),
                });
            }
            emit(Event::ActionClose {
                artifact_id: artifact_id.clone(),
                action_id,
                action: Box::new(Action {
                    kind: action.kind,
                    attributes: Attributes::new(),
                    content: action.content,
                    truncated: false,
                    error: action.error,
                    recovery: None,
                }),
            });
        }
        emit(Event::ArtifactClose { id: artifact_id });
    }
}

#[cfg(test)]
mod tests {
    use crate::runtime::protocol::{ActionKind, Event, GivenAction, Parser, merge_adjacent};

    fn file(path: &str, content: &str) -> GivenAction {
        GivenAction {
            kind: ActionKind::File {
                file_path: path.into(),
            },
            content: content.into(),
            error: None,
        }
    }

    #[test]
    fn given_actions_follow_the_text_with_ids_of_their_own() {
        let mut parser = Parser::new("m1");
        let mut events: Vec<Event> = parser
            .push("Here.\n<boltArtifact id=\"a\" title=\"A\"><boltAction type=\"shell\">ls</boltAction></boltArtifact>\nThen ")
            .collect();
        events.extend(parser.push_given(vec![
            file("src/a.js", "export {};\n"),
            GivenAction {
                kind: ActionKind::Start,
                content: "npm run dev".into(),
                error: None,
            },
        ]));
        events.extend(parser.finish());
        let events = merge_adjacent(events);
        // The text before them comes first.
        assert_eq!(
            events
                .iter()
                .position(|e| matches!(e, Event::Text { text } if text.ends_with("Then "))),
            Some(events.len() - 9),
            "{events:#?}"
        );
        let ids: Vec<(String, String)> = events
            .iter()
            .filter_map(|e| match e {
                Event::ActionClose {
                    artifact_id,
                    action_id,
                    ..
                } => Some((artifact_id.to_string(), action_id.to_string())),
                _ => None,
            })
            .collect();
        assert_eq!(
            ids,
            [
                ("a".into(), "0".into()),
                ("m1-1".into(), "1".into()),
                ("m1-1".into(), "2".into())
            ]
        );
        let Some(Event::ArtifactOpen { artifact, .. }) = events.get(events.len() - 8) else {
            panic!("{events:#?}")
        };
        assert_eq!(artifact.title, "From the model's tool calls");
        assert!(
            matches!(events.last(), Some(Event::ArtifactClose { id }) if id.as_str() == "m1-1")
        );
    }

    #[test]
    fn no_given_action_makes_no_artifact() {
        let mut parser = Parser::new("m1");
        assert_eq!(parser.push_given(Vec::new()).count(), 0);
    }
}
