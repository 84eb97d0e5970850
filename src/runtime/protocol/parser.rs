//! The streaming parser. Each pushed chunk is scanned once: `<` is found with
//! a byte search, a `<` that may start a tag is held back until it is decided
//! (see `tag.rs`), and everything else goes straight to the text or to the
//! open action. Nothing already seen is scanned again.

use std::collections::HashSet;

use super::content::{command_content, file_content, normalize_path};
use super::event::{Action, ActionKind, Artifact, Attributes, Event, SupabaseOperation};
use super::id::Id;
use super::tag::{HeldTag, Step, TagAttributes, TagName};

/// The most bytes a `<` that may still become a tag is held back: a tag not
/// closed within this many bytes is text.
pub const MAX_HELD_TAG: usize = 8 * 1024;

/// Parses one model message, fed as deltas.
#[derive(Debug)]
pub struct Parser {
    machine: Machine,
    /// The events of the current push, drained by the caller.
    events: Vec<Event>,
}

/// The parser's state; it hands each event to an `emit` callback.
#[derive(Debug)]
struct Machine {
    message_id: String,
    state: State,
    held: HeldTag,
    /// Text of the current push, emitted as one event when the push ends or
    /// a tag comes.
    text: String,
    artifacts: usize,
    actions: usize,
    used_artifact_ids: HashSet<Id>,
}

#[derive(Debug)]
enum State {
    Text,
    Artifact { id: Id },
    Action { artifact_id: Id, action: OpenAction },
}

#[derive(Debug)]
struct OpenAction {
    id: Id,
    kind: ActionKind,
    attributes: Attributes,
    error: Option<String>,
    raw: String,
    /// How much of `raw` earlier deltas carried.
    delivered: usize,
}

impl State {
    fn listens(&self) -> &'static [TagName] {
        match self {
            State::Text => &[TagName::OpenArtifact],
            State::Artifact { .. } => &[TagName::OpenAction, TagName::CloseArtifact],
            State::Action { .. } => &[TagName::CloseAction],
        }
    }
}

impl Parser {
    /// A parser for the message `message_id`, which names artifacts that
    /// bring no usable id of their own.
    pub fn new(message_id: impl Into<String>) -> Parser {
        Parser {
            machine: Machine {
                message_id: message_id.into(),
                state: State::Text,
                held: HeldTag::default(),
                text: String::new(),
                artifacts: 0,
                actions: 0,
                used_artifact_ids: HashSet::new(),
            },
            events: Vec::new(),
        }
    }

    /// Parses a whole message at once.
    pub fn parse(message_id: impl Into<String>, message: &str) -> Vec<Event> {
        let mut parser = Parser::new(message_id);
        let mut events: Vec<Event> = parser.push(message).collect();
        events.extend(parser.finish());
        events
    }

    /// Feeds the next piece of the message (a delta, never the accumulated
    /// message) and yields the events it completes.
    pub fn push(&mut self, chunk: &str) -> std::vec::Drain<'_, Event> {
        let events = &mut self.events;
        self.machine.push(chunk, &mut |event| events.push(event));
        self.events.drain(..)
    }

    /// Like [`Parser::push`], handing each event to `emit` as it is made
    /// instead of collecting them: for consumers that forward events at once.
    pub fn push_with(&mut self, chunk: &str, mut emit: impl FnMut(Event)) {
        self.machine.push(chunk, &mut emit);
    }

    /// Ends the message: held-back text is released, an open action is
    /// closed as truncated and an open artifact is closed.
    pub fn finish(self) -> Vec<Event> {
        let mut events = self.events;
        self.machine.finish(&mut |event| events.push(event));
        events
    }

    /// Like [`Parser::finish`], handing each event to `emit`.
    pub fn finish_with(self, mut emit: impl FnMut(Event)) {
        self.machine.finish(&mut emit);
    }
}

impl Machine {
    fn push(&mut self, chunk: &str, emit: &mut impl FnMut(Event)) {
        self.feed(chunk, emit);
        self.flush(emit);
    }

    fn finish(mut self, emit: &mut impl FnMut(Event)) {
        if self.held.is_active() {
            self.release_held();
        }
        self.flush(emit);
        match std::mem::replace(&mut self.state, State::Text) {
            State::Text => {}
            State::Artifact { id } => emit(Event::ArtifactClose { id }),
            State::Action {
                artifact_id,
                action,
            } => {
                close_action(artifact_id.clone(), action, true, emit);
                emit(Event::ArtifactClose { id: artifact_id });
            }
        }
    }

    fn feed(&mut self, mut input: &str, emit: &mut impl FnMut(Event)) {
        while !input.is_empty() {
            if self.held.is_active() {
                match self.held.feed(input, self.state.listens(), MAX_HELD_TAG) {
                    Step::NeedMore => return,
                    Step::Tag { name, consumed } => {
                        self.held.stop();
                        self.on_tag(name, emit);
                        input = &input[consumed..];
                    }
                    Step::NotATag { consumed } => {
                        self.release_held();
                        input = &input[consumed..];
                    }
                }
            } else if let Some(at) = find_lt(input) {
                Self::plain(&mut self.state, &mut self.text, &input[..at]);
                self.held.start();
                input = &input[at + 1..];
            } else {
                Self::plain(&mut self.state, &mut self.text, input);
                return;
            }
        }
    }

    /// Ordinary input: shown text, an action's content, or (inside an
    /// artifact, between actions) nothing.
    fn plain(state: &mut State, text: &mut String, s: &str) {
        match state {
            State::Text => text.push_str(s),
            State::Artifact { .. } => {}
            State::Action { action, .. } => action.raw.push_str(s),
        }
    }

    fn release_held(&mut self) {
        self.held.stop();
        Self::plain(&mut self.state, &mut self.text, self.held.text());
    }

    fn flush(&mut self, emit: &mut impl FnMut(Event)) {
        if !self.text.is_empty() {
            let text = std::mem::take(&mut self.text);
            emit(Event::Text { text });
        }
        if let State::Action {
            artifact_id,
            action,
        } = &mut self.state
            && action.raw.len() > action.delivered
        {
            let delta = action.raw[action.delivered..].to_owned();
            action.delivered = action.raw.len();
            emit(Event::ActionDelta {
                artifact_id: artifact_id.clone(),
                action_id: action.id.clone(),
                delta,
            });
        }
    }

    fn on_tag(&mut self, name: TagName, emit: &mut impl FnMut(Event)) {
        self.flush(emit);
        match (std::mem::replace(&mut self.state, State::Text), name) {
            (State::Text, TagName::OpenArtifact) => {
                let mut attributes = TagAttributes::parse(self.held.text(), name);
                let id = self.artifact_id(attributes.take("id"));
                emit(Event::ArtifactOpen {
                    id: id.clone(),
                    artifact: Box::new(Artifact {
                        title: attributes.take("title").unwrap_or_default(),
                        kind: attributes.take("type"),
                        attributes: attributes.pairs.drain(..).collect(),
                    }),
                });
                if attributes.self_closing {
                    emit(Event::ArtifactClose { id });
                } else {
                    self.state = State::Artifact { id };
                }
            }
            (State::Artifact { id }, TagName::CloseArtifact) => {
                emit(Event::ArtifactClose { id });
            }
            (State::Artifact { id: artifact_id }, TagName::OpenAction) => {
                let mut attributes = TagAttributes::parse(self.held.text(), name);
                let (kind, error) = action_kind(&mut attributes);
                let action = OpenAction {
                    id: Id::from(self.actions.to_string()),
                    kind,
                    attributes: attributes.pairs.drain(..).collect(),
                    error,
                    raw: String::new(),
                    delivered: 0,
                };
                self.actions += 1;
                emit(Event::ActionOpen {
                    artifact_id: artifact_id.clone(),
                    action_id: action.id.clone(),
                    action: Box::new(action.kind.clone()),
                });
                if attributes.self_closing {
                    close_action(artifact_id.clone(), action, false, emit);
                    self.state = State::Artifact { id: artifact_id };
                } else {
                    self.state = State::Action {
                        artifact_id,
                        action,
                    };
                }
            }
            (
                State::Action {
                    artifact_id,
                    action,
                },
                TagName::CloseAction,
            ) => {
                close_action(artifact_id.clone(), action, false, emit);
                self.state = State::Artifact { id: artifact_id };
            }
            // Each state listens only for its own tags, so nothing else
            // reaches here; keeping the state is the harmless answer.
            (state, _) => self.state = state,
        }
    }

    /// The artifact's own id when it has one not used yet in this message,
    /// else `{message_id}-{n}` with `n` its index (raised past used ids).
    fn artifact_id(&mut self, wanted: Option<String>) -> Id {
        let index = self.artifacts;
        self.artifacts += 1;
        let id: Id = match wanted {
            Some(id) if !id.is_empty() && !self.used_artifact_ids.contains(id.as_str()) => {
                Id::from(id)
            }
            _ => (index..)
                .map(|n| format!("{}-{n}", self.message_id))
                .find(|id| !self.used_artifact_ids.contains(id.as_str()))
                .map(Id::from)
                .unwrap_or_else(|| Id::from(self.message_id.as_str())),
        };
        self.used_artifact_ids.insert(id.clone());
        id
    }
}

/// Emits the close of an action, with its final content. Its last delta
/// must have been flushed already.
fn close_action(
    artifact_id: Id,
    mut action: OpenAction,
    truncated: bool,
    emit: &mut impl FnMut(Event),
) {
    let content = match action.kind {
        ActionKind::File { .. } | ActionKind::Supabase { .. } => file_content(&action.raw),
        ActionKind::Shell | ActionKind::Start | ActionKind::Build => command_content(&action.raw),
        ActionKind::Edit { .. } | ActionKind::Unknown { .. } => std::mem::take(&mut action.raw),
    };
    emit(Event::ActionClose {
        artifact_id,
        action_id: action.id,
        action: Box::new(Action {
            kind: action.kind,
            attributes: action.attributes,
            content,
            truncated,
            error: action.error,
        }),
    });
}

/// The first `<` in `s`, eight bytes at a time. Streamed chunks are mostly a
/// few bytes long, where this beats the set-up of `str::find`.
fn find_lt(s: &str) -> Option<usize> {
    const ONES: u64 = u64::from_ne_bytes([1; 8]);
    const HIGHS: u64 = u64::from_ne_bytes([0x80; 8]);
    const LTS: u64 = u64::from_ne_bytes([b'<'; 8]);
    if s.len() >= 64 {
        return s.find('<');
    }
    let (words, tail) = s.as_bytes().as_chunks::<8>();
    for (n, word) in words.iter().enumerate() {
        // A zero byte of `x` is a `<` of the word; the lowest flagged byte is
        // exact (only bytes above a true zero can be flagged wrongly).
        let x = u64::from_le_bytes(*word) ^ LTS;
        let zeros = x.wrapping_sub(ONES) & !x & HIGHS;
        if zeros != 0 {
            return Some(n * 8 + zeros.trailing_zeros() as usize / 8);
        }
    }
    let done = words.len() * 8;
    tail.iter().position(|&b| b == b'<').map(|i| done + i)
}

/// The action's kind from its tag's attributes (which lose the known ones),
/// and what was wrong with them.
fn action_kind(attributes: &mut TagAttributes) -> (ActionKind, Option<String>) {
    let Some(kind) = attributes.take("type") else {
        return (
            ActionKind::Unknown {
                kind: String::new(),
            },
            Some("the action has no type attribute".to_owned()),
        );
    };
    let mut error = None;
    let required_path = |attributes: &mut TagAttributes, error: &mut Option<String>| {
        let path = attributes
            .take("filePath")
            .map(|p| normalize_path(&p))
            .unwrap_or_default();
        if path.is_empty() {
            *error = Some(format!("the {kind} action has no filePath attribute"));
        }
        path
    };
    let action = match kind.as_str() {
        "file" => ActionKind::File {
            file_path: required_path(attributes, &mut error),
        },
        "edit" => ActionKind::Edit {
            file_path: required_path(attributes, &mut error),
        },
        "shell" => ActionKind::Shell,
        "start" => ActionKind::Start,
        "build" => ActionKind::Build,
        "supabase" => {
            let operation = match attributes.take("operation").as_deref() {
                Some("migration") => Some(SupabaseOperation::Migration),
                Some("query") => Some(SupabaseOperation::Query),
                Some(other) => {
                    error = Some(format!(
                        "unknown supabase operation {other:?} (expected migration or query)"
                    ));
                    None
                }
                None => {
                    error = Some("the supabase action has no operation attribute".to_owned());
                    None
                }
            };
            ActionKind::Supabase {
                operation,
                file_path: attributes
                    .take("filePath")
                    .map(|p| normalize_path(&p))
                    .filter(|p| !p.is_empty()),
                project_id: attributes.take("projectId"),
            }
        }
        _ => {
            error = Some(format!("unknown action type {kind:?}"));
            ActionKind::Unknown { kind }
        }
    };
    (action, error)
}
