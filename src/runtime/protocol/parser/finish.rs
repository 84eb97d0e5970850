//! The end of the message: what is held is released, and what is open is
//! closed. An action the end cut off is kept when its content looks whole
//! (recovered as cut off); otherwise it is truncated, as it always was.

use super::{End, Machine, OpenAction, Parent, State};
use crate::runtime::protocol::event::{ActionKind, Event};
use crate::runtime::protocol::id::Id;
use crate::runtime::protocol::recovery::Recovery;
use crate::runtime::protocol::slip::plausible::{complete_edit, complete_file};
use crate::runtime::protocol::slip::shell;

impl Machine {
    pub(super) fn finish(mut self, emit: &mut impl FnMut(Event)) {
        // A message cut inside a tag was cut in the middle of writing: what
        // the tag closed is not taken for whole.
        let cut_in_tag = self.held.is_active();
        if cut_in_tag {
            self.release_held(emit);
        }
        self.finish_escaped(emit);
        self.flush(emit);
        match std::mem::replace(&mut self.state, State::Text) {
            State::Text => {}
            State::Artifact { id, .. } => emit(Event::ArtifactClose { id }),
            State::Action {
                artifact_id,
                action,
            } => self.finish_action(artifact_id, action, cut_in_tag, emit),
            State::Withheld(withheld) => self.finish_withheld(*withheld, emit),
        }
        self.finish_prose(emit);
        self.close_recovered(emit);
        self.flush(emit);
    }

    fn finish_action(
        &mut self,
        artifact_id: Id,
        mut action: OpenAction,
        cut_in_tag: bool,
        emit: &mut impl FnMut(Event),
    ) {
        let parent = action.parent;
        let fence_closed = match &mut action.end {
            End::Fence(body) => body.finish(&mut action.raw),
            End::Tag(_) => false,
        };
        self.flush(emit);
        let whole = fence_closed || (!cut_in_tag && action.error.is_none() && looks_whole(&action));
        if whole && !fence_closed {
            action.recovery = Some(Recovery::CutOff);
        }
        self.close(artifact_id.clone(), action, !whole, emit);
        self.state = State::Text;
        if let Parent::Artifact(_) = parent {
            emit(Event::ArtifactClose { id: artifact_id });
        } else {
            self.prose.after_block();
        }
    }
}

/// Whether the content of an action the end cut off looks whole.
fn looks_whole(action: &OpenAction) -> bool {
    match &action.kind {
        ActionKind::File { file_path } => complete_file(file_path, &action.raw),
        ActionKind::Edit { .. } => complete_edit(&action.raw),
        ActionKind::Shell | ActionKind::Start | ActionKind::Build => {
            shell::complete_when_cut(&action.raw)
        }
        ActionKind::Supabase { .. } | ActionKind::Unknown { .. } => false,
    }
}
