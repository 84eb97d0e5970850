//! Answers that escaped their tags (`&lt;boltAction type=&quot;file&quot;
//! …&gt;`): from an escaped `boltArtifact` or `boltAction` on, the input is
//! decoded entity by entity and read as bolt, so tags, attributes and
//! content are unescaped alike, until the parser is back in the text with
//! nothing held; then the input is read as written again.

use super::{Machine, State};
use crate::runtime::protocol::event::Event;
use crate::runtime::protocol::slip::entity::{Entity, MAX_ENTITY, entity};
use crate::runtime::protocol::tag::HeldTag;

#[derive(Debug, Default)]
pub(super) struct Escaped {
    /// The input is being decoded.
    pub(super) on: bool,
    /// The start of an entity that the next input completes (or not).
    carry: String,
}

impl Escaped {
    /// Whether decoding ends here (the escaped tags are closed); turns it
    /// off if so.
    pub(super) fn ends(&mut self, state: &State, held: &HeldTag) -> bool {
        let ends = self.on && state.is_text() && !held.is_active();
        if ends {
            self.on = false;
        }
        ends
    }
}

impl Machine {
    /// Feeds escaped input; returns how much it took, which is less than all
    /// when decoding ended and the rest is to be read as written.
    #[inline(never)]
    pub(super) fn feed_escaped(&mut self, input: &str, emit: &mut impl FnMut(Event)) -> usize {
        let mut at = 0;
        while at < input.len() && self.escaped.on {
            let rest = &input[at..];
            if !self.escaped.carry.is_empty() {
                at += self.continue_entity(rest, emit);
                continue;
            }
            let amp = rest.find('&').unwrap_or(rest.len());
            let used = self.feed(&rest[..amp], emit);
            at += used;
            if used < amp || !self.escaped.on {
                break;
            }
            if amp < rest.len() {
                self.escaped.carry.push('&');
                at += 1;
            }
        }
        at
    }

    /// Takes the next character into the entity being read; returns how
    /// many bytes of `rest` it took (none when the entity turned out not to
    /// be one: the character is read afresh).
    fn continue_entity(&mut self, rest: &str, emit: &mut impl FnMut(Event)) -> usize {
        let Some(c) = rest.chars().next() else {
            return 0;
        };
        let mut probe = std::mem::take(&mut self.escaped.carry);
        probe.push(c);
        match entity(&probe) {
            Entity::Char(decoded) => {
                self.feed_as_written(decoded.encode_utf8(&mut [0; 4]), emit);
                c.len_utf8()
            }
            Entity::Prefix if probe.len() < MAX_ENTITY => {
                self.escaped.carry = probe;
                c.len_utf8()
            }
            Entity::Prefix | Entity::Not => {
                probe.pop();
                self.feed_as_written(&probe, emit);
                0
            }
        }
    }

    /// Text that stands for itself (a decoded character, an `&` that starts
    /// no entity), fed without decoding; what follows a change of mode
    /// inside it is read in the new mode.
    fn feed_as_written(&mut self, text: &str, emit: &mut impl FnMut(Event)) {
        let used = self.feed(text, emit);
        self.drive(&text[used..], emit);
    }

    /// At the end of the message: an entity left unfinished is text.
    pub(super) fn finish_escaped(&mut self, emit: &mut impl FnMut(Event)) {
        let carry = std::mem::take(&mut self.escaped.carry);
        self.feed_as_written(&carry, emit);
    }
}
