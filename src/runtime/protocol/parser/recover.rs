//! Actions recovered from outside the format: the artifact they go into,
//! a `boltAction` with no artifact around it, other builders' file tags,
//! fences that are files or commands, and snippets that are reported.

use super::fence_body::FenceBody;
use super::{End, Machine, OpenAction, Parent, State, Taken, action_kind};
use crate::runtime::protocol::content::normalize_path;
use crate::runtime::protocol::event::{Action, ActionKind, Artifact, Attributes, Event};
use crate::runtime::protocol::id::Id;
use crate::runtime::protocol::recovery::Recovery;
use crate::runtime::protocol::slip::fence::FenceOpen;
use crate::runtime::protocol::slip::shell::{self, Command};
use crate::runtime::protocol::tag::{TagAttributes, TagName};

/// The title of the artifact recovered actions go into.
const RECOVERED_TITLE: &str = "Recovered from the answer";

/// The most a command outside an artifact is held back; a longer one is
/// text.
const MAX_WITHHELD: usize = 4 * 1024;

/// Where other builders' tags give the path.
const FOREIGN_PATHS: &[&str] = &["path", "filepath", "file_path", "file", "filename", "name"];

/// A command outside an artifact, not yet shown anywhere.
#[derive(Debug)]
pub(super) struct Withheld {
    /// Its opening tag as written.
    tag: String,
    kind: ActionKind,
    attributes: Attributes,
    raw: String,
    recovery: Recovery,
    decoded: bool,
}

impl Machine {
    /// The open recovered artifact, opened now if there is none.
    pub(super) fn recovered_artifact(&mut self, emit: &mut impl FnMut(Event)) -> Id {
        if let Some(id) = &self.recovered {
            return id.clone();
        }
        self.flush(emit);
        let id = self.artifact_id(None);
        emit(Event::ArtifactOpen {
            id: id.clone(),
            artifact: Box::new(Artifact {
                title: RECOVERED_TITLE.to_owned(),
                kind: None,
                attributes: Attributes::new(),
            }),
        });
        self.recovered = Some(id.clone());
        id
    }

    pub(super) fn close_recovered(&mut self, emit: &mut impl FnMut(Event)) {
        if self.recovered.is_some() {
            self.flush(emit);
        }
        if let Some(id) = self.recovered.take() {
            emit(Event::ArtifactClose { id });
        }
    }

    /// A recovered action, for the recovered artifact unless said otherwise.
    fn recovered_action(
        &mut self,
        kind: ActionKind,
        attributes: Attributes,
        recovery: Recovery,
        end: End,
    ) -> OpenAction {
        OpenAction {
            id: self.next_action_id(),
            kind,
            attributes,
            error: None,
            raw: String::new(),
            delivered: 0,
            recovery: Some(recovery),
            end,
            parent: Parent::Recovered,
            decoded: self.escaped.on,
        }
    }

    /// A fence that is a file: its content streams into a file action.
    pub(super) fn open_fence_file(
        &mut self,
        path: &str,
        how: Recovery,
        open: FenceOpen,
        emit: &mut impl FnMut(Event),
    ) {
        self.prose.after_block();
        let artifact_id = self.recovered_artifact(emit);
        let kind = ActionKind::File {
            file_path: normalize_path(path),
        };
        let end = End::Fence(Box::new(FenceBody::new(open)));
        let action = self.recovered_action(kind, Attributes::new(), how, end);
        self.start(artifact_id, action, false, emit);
    }

    /// A `boltAction` in the text: a file or edit with a path is taken; a
    /// command is held until its end shows whether it is one to run; any
    /// other stays text.
    pub(super) fn loose_action(&mut self, emit: &mut impl FnMut(Event)) {
        let tag = self.held.text().to_owned();
        let mut attributes = TagAttributes::parse(&tag, TagName::OpenAction);
        let (kind, error, _) = action_kind(&mut attributes);
        let recovery = self.tag_recovery(Recovery::NoArtifact);
        let pairs: Attributes = attributes.pairs.drain(..).collect();
        match kind {
            ActionKind::File { .. } | ActionKind::Edit { .. } if error.is_none() => {
                let artifact_id = self.recovered_artifact(emit);
                let end = End::Tag(TagName::OpenAction.closer());
                let action = self.recovered_action(kind, pairs, recovery, end);
                self.start(artifact_id, action, attributes.self_closing, emit);
            }
            ActionKind::Shell | ActionKind::Start | ActionKind::Build => {
                let withheld = Withheld {
                    tag,
                    kind,
                    attributes: pairs,
                    raw: String::new(),
                    recovery,
                    decoded: self.escaped.on,
                };
                if attributes.self_closing {
                    self.end_withheld(withheld, emit);
                } else {
                    self.state = State::Withheld(Box::new(withheld));
                }
            }
            _ => self.replay(&tag, emit),
        }
    }

    /// How a tag found in the text slipped: escaped, or `plain`.
    fn tag_recovery(&self, plain: Recovery) -> Recovery {
        if self.escaped.on {
            Recovery::HtmlEscaped
        } else {
            plain
        }
    }

    /// Another builder's file tag, in the text or in an artifact: a file
    /// when it names a path; else text (or, in an artifact, nothing).
    pub(super) fn foreign(&mut self, name: TagName, parent: Parent, emit: &mut impl FnMut(Event)) {
        let tag = self.held.text().to_owned();
        let mut attributes = TagAttributes::parse(&tag, name);
        let path = (attributes.take_any(FOREIGN_PATHS))
            .map(|p| normalize_path(&p))
            .filter(|p| !p.is_empty());
        let Some(file_path) = path else {
            if let Parent::Recovered = parent {
                self.replay(&tag, emit);
            }
            return;
        };
        let kind = ActionKind::File { file_path };
        let pairs: Attributes = attributes.pairs.drain(..).collect();
        let end = End::Tag(name.closer());
        let (artifact_id, recovery) = match (parent, &self.state) {
            (Parent::Recovered, _) => (
                self.recovered_artifact(emit),
                self.tag_recovery(Recovery::ForeignTag),
            ),
            (Parent::Artifact(how), State::Artifact { id, .. }) => {
                (id.clone(), how.unwrap_or(Recovery::ForeignTag))
            }
            (Parent::Artifact(_), _) => return,
        };
        let mut action = self.recovered_action(kind, pairs, recovery, end);
        action.parent = parent;
        self.start(artifact_id, action, attributes.self_closing, emit);
    }

    /// Content of a withheld command; past `MAX_WITHHELD` it is text.
    pub(super) fn withhold(&mut self, s: &str, emit: &mut impl FnMut(Event)) -> Taken {
        let State::Withheld(withheld) = &mut self.state else {
            return Taken::All;
        };
        let room = MAX_WITHHELD.saturating_sub(withheld.raw.len());
        if s.len() <= room {
            withheld.raw.push_str(s);
            return Taken::All;
        }
        let mut cut = room;
        while !s.is_char_boundary(cut) {
            cut -= 1;
        }
        withheld.raw.push_str(&s[..cut]);
        if let State::Withheld(withheld) = std::mem::replace(&mut self.state, State::Text) {
            let text = format!("{}{}", withheld.tag, withheld.raw);
            self.replay(&text, emit);
        }
        Taken::Part(cut)
    }

    /// A withheld command closed: run when all its lines are install and run
    /// commands, else text as it was written.
    pub(super) fn end_withheld(&mut self, withheld: Withheld, emit: &mut impl FnMut(Event)) {
        self.state = State::Text;
        if shell::commands(&withheld.raw).is_some() {
            let recovery = withheld.recovery;
            return self.emit_withheld(withheld, recovery, emit);
        }
        let close = self.held.text().to_owned();
        let text = format!("{}{}{close}", withheld.tag, withheld.raw);
        self.replay(&text, emit);
    }

    /// A withheld command as an action of the recovered artifact.
    pub(super) fn emit_withheld(
        &mut self,
        withheld: Withheld,
        recovery: Recovery,
        emit: &mut impl FnMut(Event),
    ) {
        let artifact_id = self.recovered_artifact(emit);
        let end = End::Tag(TagName::OpenAction.closer());
        let mut action = self.recovered_action(withheld.kind, withheld.attributes, recovery, end);
        action.decoded = withheld.decoded;
        action.raw = withheld.raw;
        self.start(artifact_id.clone(), action, false, emit);
        self.flush(emit);
        if let State::Action { action, .. } = std::mem::replace(&mut self.state, State::Text) {
            self.close(artifact_id, action, false, emit);
        }
    }

    /// At the end of the message: a withheld command that looks whole runs
    /// (recovered as cut off); else it is text.
    pub(super) fn finish_withheld(&mut self, withheld: Withheld, emit: &mut impl FnMut(Event)) {
        if shell::complete_when_cut(&withheld.raw) {
            return self.emit_withheld(withheld, Recovery::CutOff, emit);
        }
        let text = format!("{}{}", withheld.tag, withheld.raw);
        self.replay(&text, emit);
    }

    /// The commands of a shell fence, each an action.
    pub(super) fn emit_commands(
        &mut self,
        commands: Vec<Command>,
        recovery: Recovery,
        emit: &mut impl FnMut(Event),
    ) {
        self.flush(emit);
        let artifact_id = self.recovered_artifact(emit);
        for command in commands {
            let kind = if command.start {
                ActionKind::Start
            } else {
                ActionKind::Shell
            };
            let action_id = self.next_action_id();
            emit(Event::ActionOpen {
                artifact_id: artifact_id.clone(),
                action_id: action_id.clone(),
                action: Box::new(kind.clone()),
                recovery: Some(recovery),
            });
            emit(Event::ActionDelta {
                artifact_id: artifact_id.clone(),
                action_id: action_id.clone(),
                delta: command.text.clone(),
            });
            emit(Event::ActionClose {
                artifact_id: artifact_id.clone(),
                action_id,
                action: Box::new(Action {
                    kind,
                    attributes: Attributes::new(),
                    content: command.text,
                    truncated: false,
                    error: None,
                    recovery: Some(recovery),
                }),
            });
        }
    }

    /// A snippet that leaves code out of a file a sentence names: reported
    /// as a file action that was not written.
    pub(super) fn report_snippet(&mut self, path: &str, line: &str, emit: &mut impl FnMut(Event)) {
        self.flush(emit);
        let artifact_id = self.recovered_artifact(emit);
        let kind = ActionKind::File {
            file_path: normalize_path(path),
        };
        let action_id = self.next_action_id();
        let recovery = Some(Recovery::PathInProse);
        emit(Event::ActionOpen {
            artifact_id: artifact_id.clone(),
            action_id: action_id.clone(),
            action: Box::new(kind.clone()),
            recovery,
        });
        let error = format!(
            "{path} was not written: the code block after the sentence that names it leaves \
             code out ({line}); only a whole file with its path is written"
        );
        emit(Event::ActionClose {
            artifact_id,
            action_id,
            action: Box::new(Action {
                kind,
                attributes: Attributes::new(),
                content: String::new(),
                truncated: false,
                error: Some(error),
                recovery,
            }),
        });
    }
}
