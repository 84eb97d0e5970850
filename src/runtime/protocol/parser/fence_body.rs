//! The content of a markdown fence recovered as a file: every line goes to
//! the action as it comes, except the start of a line that may be the
//! closing fence, which is held until the line shows what it is.

use super::{Machine, State, Taken};
use crate::runtime::protocol::event::Event;
use crate::runtime::protocol::slip::fence::{FenceOpen, LineStart, MAX_FENCE_LINE, is_closing};

#[derive(Debug)]
pub(super) struct FenceBody {
    open: FenceOpen,
    /// The start of the current line, held while it may be the closing
    /// fence.
    hold: String,
    holding: bool,
    scan: LineStart,
    mid_line: bool,
}

/// What the held start of a line turned out to be.
enum Closer {
    /// The input ran out first.
    More,
    /// The closing fence; this many bytes (its line end included) were taken.
    Closed(usize),
    /// Content; this many bytes were taken, `line_ended` if up to the line
    /// end.
    Content { taken: usize, line_ended: bool },
}

impl FenceBody {
    pub(super) fn new(open: FenceOpen) -> FenceBody {
        FenceBody {
            open,
            hold: String::new(),
            holding: false,
            scan: LineStart::default(),
            mid_line: false,
        }
    }

    /// At the end of the message: whether the held line closes the fence;
    /// if not, it is content.
    pub(super) fn finish(&mut self, raw: &mut String) -> bool {
        if self.holding && is_closing(&self.hold, &self.open) {
            return true;
        }
        raw.push_str(&self.hold);
        false
    }

    /// Content up to the next line end, or the held line start: `Ok` with
    /// the bytes taken, `Err` with the bytes of the closing line.
    fn take(&mut self, rest: &str, raw: &mut String) -> Result<usize, usize> {
        if self.holding {
            return match self.closer(rest) {
                Closer::More => Ok(rest.len()),
                Closer::Closed(taken) => Err(taken),
                Closer::Content { taken, line_ended } => {
                    raw.push_str(&self.hold);
                    self.hold.clear();
                    self.holding = false;
                    self.mid_line = !line_ended;
                    Ok(taken)
                }
            };
        }
        if !self.mid_line
            && matches!(rest.as_bytes().first(), Some(&b) if b == b' ' || b == self.open.ch)
        {
            self.holding = true;
            self.scan = LineStart::default();
            return Ok(0);
        }
        let end = rest.find('\n').map_or(rest.len(), |i| i + 1);
        raw.push_str(&rest[..end]);
        self.mid_line = !rest[..end].ends_with('\n');
        Ok(end)
    }

    fn closer(&mut self, rest: &str) -> Closer {
        for (i, b) in rest.bytes().enumerate() {
            if b == b'\n' {
                self.hold.push_str(&rest[..i]);
                if is_closing(&self.hold, &self.open) {
                    return Closer::Closed(i + 1);
                }
                self.hold.push('\n');
                return Closer::Content {
                    taken: i + 1,
                    line_ended: true,
                };
            }
            let starts_char = b & 0xC0 != 0x80;
            if starts_char
                && (self.hold.len() + i >= MAX_FENCE_LINE || !self.scan.step(b, Some(&self.open)))
            {
                self.hold.push_str(&rest[..i]);
                return Closer::Content {
                    taken: i,
                    line_ended: false,
                };
            }
        }
        self.hold.push_str(rest);
        Closer::More
    }
}

impl Machine {
    /// Content of a fence recovered as a file; at its closing fence the
    /// action closes and the text goes on.
    pub(super) fn fence_body(&mut self, s: &str, emit: &mut impl FnMut(Event)) -> Taken {
        let mut at = 0;
        while at < s.len() {
            let State::Action { action, .. } = &mut self.state else {
                return Taken::Part(at);
            };
            let super::End::Fence(body) = &mut action.end else {
                return Taken::Part(at);
            };
            let rest = &s[at..];
            match body.take(rest, &mut action.raw) {
                Ok(taken) => at += taken,
                Err(taken) => {
                    self.close_fence(emit);
                    return Taken::Part(at + taken);
                }
            }
        }
        Taken::All
    }

    fn close_fence(&mut self, emit: &mut impl FnMut(Event)) {
        self.flush(emit);
        if let State::Action {
            artifact_id,
            action,
        } = std::mem::replace(&mut self.state, State::Text)
        {
            self.close(artifact_id, action, false, emit);
        }
        self.prose.after_block();
    }
}
