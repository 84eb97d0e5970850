//! The streaming parser. Each pushed chunk is scanned once: `<` is found with
//! a byte search, a `<` that may start a tag is held back until it is decided
//! (see `tag.rs`), and everything else goes straight to the text or to the
//! open action. Nothing already seen is scanned again.
//!
//! Answers that slip out of the format are read too: outside artifacts the
//! text is also read line by line for markdown fences (`prose.rs`,
//! `fence_body.rs`), escaped tags switch to reading decoded text
//! (`escaped.rs`), other builders' tags and actions outside an artifact are
//! taken in (`recover.rs`), and an answer cut off inside an action keeps what
//! looks whole (`finish.rs`). What they hold back is bounded, so the work
//! stays linear.

mod escaped;
mod fence_body;
mod finish;
mod given;
mod prose;
mod recover;

use std::collections::HashSet;

use super::content::{command_content, decoded_file_content, file_content, normalize_path};
use super::event::{Action, ActionKind, Artifact, Attributes, Event, SupabaseOperation};
use super::id::Id;
use super::recovery::Recovery;
use super::slip::elision::elided;
use super::tag::{HeldTag, Step, TagAttributes, TagName};
use escaped::Escaped;
use fence_body::FenceBody;
use prose::Prose;
use recover::Withheld;

/// The most bytes a `<` that may still become a tag is held back: a tag not
/// closed within this many bytes is text.
pub const MAX_HELD_TAG: usize = 8 * 1024;

/// What a `filePath` is misspelt as.
const MISSPELT_PATHS: &[&str] = &["filepath", "file_path", "path", "file", "filename"];

/// What the text state listens for (outside a fence).
const TEXT_TAGS: &[TagName] = &[
    TagName::OpenArtifact,
    TagName::OpenAction,
    TagName::OpenDyadWrite,
    TagName::OpenFile,
    TagName::OpenLovWrite,
];

const ARTIFACT_TAGS: &[TagName] = &[
    TagName::OpenAction,
    TagName::CloseArtifact,
    TagName::OpenDyadWrite,
    TagName::OpenFile,
    TagName::OpenLovWrite,
];

/// An action the model gave outside the text (a tool call), already read:
/// the parser gives it an id in the message and the usual events.
#[derive(Clone, Debug, PartialEq)]
pub struct GivenAction {
    pub kind: ActionKind,
    pub content: String,
    /// Why it cannot be carried out (the runner reports it).
    pub error: Option<String>,
}

/// The title of the artifact that holds given actions.
const GIVEN_TITLE: &str = "From the model's tool calls";

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
    /// The text state's reading of lines, for markdown fences.
    prose: Prose,
    /// The artifact recovered actions go into, while it is open.
    recovered: Option<Id>,
    /// A `boltArtifact` came: the answer uses the format, and a fence after
    /// it is prose (an answer in the format gives the events it always did).
    bolt_seen: bool,
    /// A recovered file was written: a shell fence after it is commands.
    wrote_file: bool,
    escaped: Escaped,
}

#[derive(Debug)]
enum State {
    Text,
    Artifact {
        id: Id,
        /// How the artifact slipped out of the format, given to its actions.
        how: Option<Recovery>,
    },
    Action {
        artifact_id: Id,
        action: OpenAction,
    },
    /// A command outside an artifact, kept back until its end says whether
    /// it is one to run.
    Withheld(Box<Withheld>),
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
    recovery: Option<Recovery>,
    end: End,
    parent: Parent,
    /// Its content was decoded from HTML entities as it streamed.
    decoded: bool,
}

/// What closes an action.
#[derive(Debug)]
enum End {
    /// The tag it listens for.
    Tag(&'static [TagName]),
    Fence(Box<FenceBody>),
}

/// Where the parser is once the action closes.
#[derive(Clone, Copy, Debug)]
enum Parent {
    Artifact(Option<Recovery>),
    /// The recovered artifact: back to the text.
    Recovered,
}

/// How much of some plain input a step took: less than all when the state
/// changed, so the caller looks at the rest again; `Escape` when an escaped
/// tag began and the rest is to be decoded.
#[derive(Debug, PartialEq)]
enum Taken {
    All,
    Part(usize),
    Escape(usize),
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
                prose: Prose::default(),
                recovered: None,
                bolt_seen: false,
                wrote_file: false,
                escaped: Escaped::default(),
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

    /// Actions the model gave as tool calls, in one artifact of their own
    /// after the text so far, numbered with the message's other actions.
    pub fn push_given(&mut self, actions: Vec<GivenAction>) -> std::vec::Drain<'_, Event> {
        let events = &mut self.events;
        self.machine.given(actions, &mut |event| events.push(event));
        self.events.drain(..)
    }

    /// Ends the message: held-back text is released, an open action is
    /// closed (as truncated unless it looks whole) and an open artifact is
    /// closed.
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

impl State {
    fn is_text(&self) -> bool {
        matches!(self, State::Text)
    }
}

impl Machine {
    fn push(&mut self, chunk: &str, emit: &mut impl FnMut(Event)) {
        // One call to `feed` reads a chunk whole unless the escape mode
        // changes in it: the common case costs no more than `feed` itself.
        let used = if self.escaped.on {
            0
        } else {
            self.feed(chunk, emit)
        };
        self.drive(&chunk[used..], emit);
        self.flush(emit);
    }

    /// Feeds input as written or, inside escaped tags, decoded.
    fn drive(&mut self, mut input: &str, emit: &mut impl FnMut(Event)) {
        while !input.is_empty() {
            let used = if self.escaped.on {
                self.feed_escaped(input, emit)
            } else {
                self.feed(input, emit)
            };
            input = &input[used..];
        }
    }

    fn listens(&self) -> &'static [TagName] {
        match &self.state {
            State::Text if self.prose.in_fence() => &[TagName::OpenArtifact],
            State::Text => TEXT_TAGS,
            State::Artifact { .. } => ARTIFACT_TAGS,
            State::Action { action, .. } => match action.end {
                End::Tag(closer) => closer,
                End::Fence(_) => &[],
            },
            State::Withheld(_) => &[TagName::CloseAction],
        }
    }

    /// Feeds input read as written; returns how much it took, which is less
    /// than all when the escape mode changed. Kept small: nearly all of a
    /// long answer is the content of actions in the format, read here as
    /// tightly as before recovery; the rest is in functions of its own.
    #[inline(always)]
    fn feed(&mut self, input: &str, emit: &mut impl FnMut(Event)) -> usize {
        let mut at = 0;
        while at < input.len() {
            let rest = &input[at..];
            if self.held.is_active() {
                let step = self.held.feed(rest, self.listens(), MAX_HELD_TAG);
                match step {
                    Step::NeedMore => return input.len(),
                    Step::Tag { name, consumed } => {
                        at += consumed;
                        if self.tag(name, emit) {
                            return at;
                        }
                    }
                    Step::NotATag { consumed } => {
                        at += consumed;
                        if self.not_a_tag(emit) {
                            return at;
                        }
                    }
                }
            } else if let State::Action { action, .. } = &mut self.state
                && let End::Tag(_) = action.end
            {
                let Some(lt) = find_lt(rest) else {
                    action.raw.push_str(rest);
                    return input.len();
                };
                action.raw.push_str(&rest[..lt]);
                self.held.start();
                at += lt + 1;
            } else {
                match self.feed_other(rest, emit) {
                    Ok(used) => at += used,
                    Err(used) => return at + used,
                }
            }
        }
        at
    }

    /// A whole tag; true when it ends the escaped tags.
    #[inline(never)]
    fn tag(&mut self, name: TagName, emit: &mut impl FnMut(Event)) -> bool {
        self.held.stop();
        self.on_tag(name, emit);
        self.escaped.ends(&self.state, &self.held)
    }

    /// A held `<` that was not a tag; true when that ends the escaped tags.
    fn not_a_tag(&mut self, emit: &mut impl FnMut(Event)) -> bool {
        self.held.stop();
        match &mut self.state {
            // The common case (a `<` in a file's content) copies nothing.
            State::Action { action, .. } if matches!(action.end, End::Tag(_)) => {
                action.raw.push_str(self.held.text());
                false
            }
            _ => self.release_elsewhere(emit),
        }
    }

    /// Input outside an action's content (text, between actions, a fence,
    /// a withheld command): `Ok` with how much it took (the state may have
    /// changed), `Err` when an escaped tag began there.
    #[inline(never)]
    fn feed_other(&mut self, rest: &str, emit: &mut impl FnMut(Event)) -> Result<usize, usize> {
        let lt = if self.listens().is_empty() {
            None
        } else {
            find_lt(rest)
        };
        let end = lt.unwrap_or(rest.len());
        match self.plain(&rest[..end], true, emit) {
            Taken::All if lt.is_some() => {
                self.held.start();
                Ok(end + 1)
            }
            Taken::All => Ok(end),
            Taken::Part(used) => Ok(used),
            Taken::Escape(used) => Err(used),
        }
    }

    /// Ordinary input: shown text, an action's content, or (inside an
    /// artifact, between actions) nothing. `triggers`: an escaped tag may
    /// begin in it (not in text released from a held tag).
    fn plain(&mut self, s: &str, triggers: bool, emit: &mut impl FnMut(Event)) -> Taken {
        match &mut self.state {
            State::Text => self.prose(s, triggers, emit),
            State::Artifact { .. } => Taken::All,
            State::Action { action, .. } => match action.end {
                End::Tag(_) => {
                    action.raw.push_str(s);
                    Taken::All
                }
                End::Fence(_) => self.fence_body(s, emit),
            },
            State::Withheld(_) => self.withhold(s, emit),
        }
    }

    /// Feeds text the parser already read once (a released tag, a command
    /// that was not one) as ordinary input, in whatever state it leads to.
    fn replay(&mut self, mut text: &str, emit: &mut impl FnMut(Event)) {
        while !text.is_empty() {
            match self.plain(text, false, emit) {
                Taken::All => return,
                Taken::Part(used) | Taken::Escape(used) => text = &text[used..],
            }
        }
    }

    fn release_held(&mut self, emit: &mut impl FnMut(Event)) {
        self.held.stop();
        match &mut self.state {
            State::Action { action, .. } if matches!(action.end, End::Tag(_)) => {
                action.raw.push_str(self.held.text());
            }
            _ => {
                self.release_elsewhere(emit);
            }
        }
    }

    /// Released held text outside an action's content is read again as
    /// ordinary input; true when that ends the escaped tags.
    #[inline(never)]
    fn release_elsewhere(&mut self, emit: &mut impl FnMut(Event)) -> bool {
        if !matches!(self.state, State::Artifact { .. }) {
            let text = self.held.take_text();
            self.replay(&text, emit);
            self.held.give_back(text);
        }
        self.escaped.ends(&self.state, &self.held)
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
        self.interrupt(name, emit);
        self.flush(emit);
        match (std::mem::replace(&mut self.state, State::Text), name) {
            (State::Text, TagName::OpenArtifact) => self.open_artifact(emit),
            (State::Text, TagName::OpenAction) => self.loose_action(emit),
            (State::Text, name) if name.is_foreign() => {
                self.foreign(name, Parent::Recovered, emit);
            }
            (State::Artifact { id, .. }, TagName::CloseArtifact) => {
                emit(Event::ArtifactClose { id });
            }
            (State::Artifact { id, how }, TagName::OpenAction) => self.open_action(id, how, emit),
            (State::Artifact { id, how }, name) if name.is_foreign() => {
                self.state = State::Artifact { id, how };
                self.foreign(name, Parent::Artifact(how), emit);
            }
            (
                State::Action {
                    artifact_id,
                    action,
                },
                _,
            ) => self.close(artifact_id, action, false, emit),
            (State::Withheld(withheld), _) => self.end_withheld(*withheld, emit),
            // Each state listens only for its own tags, so nothing else
            // reaches here; keeping the state is the harmless answer.
            (state, _) => self.state = state,
        }
    }

    fn open_artifact(&mut self, emit: &mut impl FnMut(Event)) {
        self.close_recovered(emit);
        let how = if self.escaped.on {
            Some(Recovery::HtmlEscaped)
        } else if self.prose.in_fence() && !self.bolt_seen {
            Some(Recovery::FencedArtifact)
        } else {
            None
        };
        self.bolt_seen = true;
        let mut attributes = TagAttributes::parse(self.held.text(), TagName::OpenArtifact);
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
            self.state = State::Artifact { id, how };
        }
    }

    fn open_action(
        &mut self,
        artifact_id: Id,
        how: Option<Recovery>,
        emit: &mut impl FnMut(Event),
    ) {
        let mut attributes = TagAttributes::parse(self.held.text(), TagName::OpenAction);
        let (kind, error, misspelt) = action_kind(&mut attributes);
        let action = OpenAction {
            id: self.next_action_id(),
            kind,
            attributes: attributes.pairs.drain(..).collect(),
            error,
            raw: String::new(),
            delivered: 0,
            recovery: how.or(misspelt.then_some(Recovery::MisspeltAttribute)),
            end: End::Tag(TagName::OpenAction.closer()),
            parent: Parent::Artifact(how),
            decoded: self.escaped.on,
        };
        self.start(artifact_id, action, attributes.self_closing, emit);
    }

    /// Emits an action's opening and makes it the open one (or closes it at
    /// once when its tag closed itself).
    fn start(
        &mut self,
        artifact_id: Id,
        action: OpenAction,
        self_closing: bool,
        emit: &mut impl FnMut(Event),
    ) {
        self.flush(emit);
        emit(Event::ActionOpen {
            artifact_id: artifact_id.clone(),
            action_id: action.id.clone(),
            action: Box::new(action.kind.clone()),
            recovery: action.recovery,
        });
        if self_closing {
            self.close(artifact_id, action, false, emit);
        } else {
            self.state = State::Action {
                artifact_id,
                action,
            };
        }
    }

    fn next_action_id(&mut self) -> Id {
        let id = Id::from(self.actions.to_string());
        self.actions += 1;
        id
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

    /// Emits the close of an action, with its final content, and moves to
    /// what follows it. Its last delta must have been flushed already. A
    /// recovered file that leaves code out is refused here.
    fn close(
        &mut self,
        artifact_id: Id,
        mut action: OpenAction,
        truncated: bool,
        emit: &mut impl FnMut(Event),
    ) {
        let content = final_content(&mut action);
        if let (Some(_), ActionKind::File { file_path }) = (action.recovery, &action.kind)
            && !truncated
            && action.error.is_none()
        {
            match elided(&content) {
                Some(line) => action.error = Some(elision_error(file_path, line)),
                None => self.wrote_file = true,
            }
        }
        self.state = match action.parent {
            Parent::Artifact(how) => State::Artifact {
                id: artifact_id.clone(),
                how,
            },
            Parent::Recovered => State::Text,
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
                recovery: action.recovery,
            }),
        });
    }
}

/// The content an action closes with, by its kind's rules.
fn final_content(action: &mut OpenAction) -> String {
    match action.kind {
        ActionKind::File { .. } | ActionKind::Supabase { .. } if action.decoded => {
            decoded_file_content(&action.raw)
        }
        ActionKind::File { .. } | ActionKind::Supabase { .. } => file_content(&action.raw),
        ActionKind::Shell | ActionKind::Start | ActionKind::Build => command_content(&action.raw),
        ActionKind::Edit { .. } | ActionKind::Unknown { .. } => std::mem::take(&mut action.raw),
    }
}

fn elision_error(path: &str, line: &str) -> String {
    format!(
        "{path} was not written: the code leaves some out ({line}), so it is not the whole file"
    )
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
/// what was wrong with them, and whether the path came from a misspelt
/// attribute.
fn action_kind(attributes: &mut TagAttributes) -> (ActionKind, Option<String>, bool) {
    let Some(kind) = attributes.take("type") else {
        let kind = ActionKind::Unknown {
            kind: String::new(),
        };
        return (
            kind,
            Some("the action has no type attribute".to_owned()),
            false,
        );
    };
    let mut error = None;
    let mut misspelt = false;
    let mut required_path = |attributes: &mut TagAttributes, error: &mut Option<String>| {
        let mut path = attributes.take("filePath");
        if path.is_none() {
            path = attributes.take_any(MISSPELT_PATHS);
            misspelt = path.is_some();
        }
        let path = path.map(|p| normalize_path(&p)).unwrap_or_default();
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
        "supabase" => supabase_kind(attributes, &mut error),
        _ => {
            error = Some(format!("unknown action type {kind:?}"));
            ActionKind::Unknown { kind }
        }
    };
    (action, error, misspelt)
}

fn supabase_kind(attributes: &mut TagAttributes, error: &mut Option<String>) -> ActionKind {
    let operation = match attributes.take("operation").as_deref() {
        Some("migration") => Some(SupabaseOperation::Migration),
        Some("query") => Some(SupabaseOperation::Query),
        Some(other) => {
            *error = Some(format!(
                "unknown supabase operation {other:?} (expected migration or query)"
            ));
            None
        }
        None => {
            *error = Some("the supabase action has no operation attribute".to_owned());
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
