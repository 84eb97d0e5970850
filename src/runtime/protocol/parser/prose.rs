//! The text outside artifacts, read line by line for answers that slipped
//! out of the format. Prose is shown as it comes; held back are only the
//! start of a line that may be a fence line (at most `MAX_FENCE_LINE`
//! bytes), an `&` that may start an escaped tag, and a fence whose meaning
//! its first line or its end decides (a comment naming the file, commands:
//! at most `MAX_PENDING` bytes).

use super::{Machine, Taken};
use crate::runtime::protocol::event::Event;
use crate::runtime::protocol::recovery::Recovery;
use crate::runtime::protocol::slip::elision::elided;
use crate::runtime::protocol::slip::entity::{Trigger, ends_tag_name, trigger};
use crate::runtime::protocol::slip::fence::{
    FenceOpen, LineStart, MAX_FENCE_LINE, is_closing, opener, path_in_info,
};
use crate::runtime::protocol::slip::path::{in_comment, in_line_before, named_in_prose};
use crate::runtime::protocol::slip::shell::{self, Command, ShellLine};
use crate::runtime::protocol::tag::TagName;

/// The most a fence is held back before its meaning is known; a longer one
/// is shown as text.
const MAX_PENDING: usize = 4 * 1024;

/// How much of a line is kept to be read as a whole (a path, a command).
const LINE_COPY: usize = 512;

#[derive(Debug, Default)]
pub(super) struct Prose {
    mode: Mode,
    /// What is held back at the current position.
    hold: String,
    holding: Holding,
    scan: LineStart,
    /// The current line, as far as `LINE_COPY`.
    line: Line,
    /// The last line with text before the current one, when it is short
    /// and whole.
    before: Option<String>,
    /// Past the start of the current line.
    mid_line: bool,
}

#[derive(Debug, Default, PartialEq)]
enum Holding {
    #[default]
    Nothing,
    /// The start of a line that may be a fence line.
    Fence,
    /// An `&` that may start an escaped tag.
    Entity,
}

#[derive(Debug, Default)]
enum Mode {
    #[default]
    Prose,
    /// Inside a fence whose meaning is not known yet; all of it held.
    Pending(Box<Pending>),
    /// Inside a fence shown as text.
    Shown(Shown),
}

/// A fence read as text or not yet decided.
#[derive(Debug)]
struct Fence {
    open: FenceOpen,
    /// The file a sentence before the fence names.
    named: Option<String>,
    /// Its first line that leaves code out.
    elided: Option<String>,
}

#[derive(Debug)]
struct Pending {
    fence: Fence,
    text: String,
    /// Lines with text so far.
    lines: usize,
    shell: bool,
    commands: Vec<Command>,
}

#[derive(Debug)]
struct Shown {
    fence: Fence,
    /// The fence wraps an artifact: its closing line is not shown.
    drop_close: bool,
}

#[derive(Debug, Default)]
struct Line {
    text: String,
    /// Longer than `LINE_COPY`, or broken by a tag: not read as a whole.
    spoilt: bool,
}

impl Line {
    fn push(&mut self, s: &str) {
        if self.spoilt {
            return;
        }
        if self.text.len() + s.len() > LINE_COPY {
            self.spoilt = true;
            self.text.clear();
        } else {
            self.text.push_str(s);
        }
    }

    /// The line, if it was kept whole; and a fresh one.
    fn take(&mut self) -> Option<String> {
        let spoilt = std::mem::take(&mut self.spoilt);
        let text = std::mem::take(&mut self.text);
        (!spoilt).then_some(text)
    }
}

impl Prose {
    /// Inside a markdown fence: only an artifact is listened for.
    pub(super) fn in_fence(&self) -> bool {
        !matches!(self.mode, Mode::Prose)
    }

    /// After a recovered block: a new line of prose.
    pub(super) fn after_block(&mut self) {
        self.mode = Mode::Prose;
        self.mid_line = false;
        self.before = None;
        self.line = Line::default();
    }

    fn closing_of(&self) -> Option<&FenceOpen> {
        match &self.mode {
            Mode::Shown(shown) => Some(&shown.fence.open),
            _ => None,
        }
    }
}

impl Machine {
    /// Text-state input. Takes less than all when the state changed (a fence
    /// became an action) or an escaped tag began.
    pub(super) fn prose(&mut self, s: &str, triggers: bool, emit: &mut impl FnMut(Event)) -> Taken {
        let triggers = triggers && !self.escaped.on;
        let mut at = 0;
        while at < s.len() {
            if !self.state.is_text() {
                return Taken::Part(at);
            }
            let rest = &s[at..];
            let step = match self.prose.holding {
                Holding::Fence => self.fence_line(rest, emit),
                Holding::Entity => match self.entity_hold(rest, emit) {
                    Ok(taken) => taken,
                    Err(taken) => return Taken::Escape(at + taken),
                },
                Holding::Nothing => match &self.prose.mode {
                    Mode::Pending(_) => self.pending_run(rest, emit),
                    _ => self.line_run(rest, triggers, emit),
                },
            };
            at += step;
        }
        Taken::All
    }

    /// Shown text, up to a line end or an `&`; a line start that may be a
    /// fence line starts being held.
    fn line_run(&mut self, rest: &str, triggers: bool, emit: &mut impl FnMut(Event)) -> usize {
        let prose = &mut self.prose;
        if !prose.mid_line {
            let b = rest.as_bytes()[0];
            let fence_char = prose
                .closing_of()
                .map_or(b == b'`' || b == b'~', |o| b == o.ch);
            if b == b' ' || fence_char {
                prose.holding = Holding::Fence;
                prose.scan = LineStart::default();
                return 0;
            }
            prose.mid_line = true;
        }
        let watch_amp = triggers && matches!(prose.mode, Mode::Prose);
        let stop = rest
            .bytes()
            .position(|b| b == b'\n' || (watch_amp && b == b'&'))
            .unwrap_or(rest.len());
        let run = &rest[..stop];
        self.prose.line.push(run);
        self.say(run, emit);
        match rest.as_bytes().get(stop) {
            Some(b'\n') => {
                self.say("\n", emit);
                self.line_end();
                stop + 1
            }
            Some(_) => {
                self.prose.holding = Holding::Entity;
                self.prose.hold.push('&');
                stop + 1
            }
            None => stop,
        }
    }

    /// The end of a line of prose or of a shown fence.
    fn line_end(&mut self) {
        let prose = &mut self.prose;
        prose.mid_line = false;
        let line = prose.line.take();
        match &mut prose.mode {
            Mode::Shown(shown) => {
                if let Some(line) = line
                    && shown.fence.elided.is_none()
                {
                    shown.fence.elided = elided(&line).map(str::to_owned);
                }
            }
            _ => match line {
                Some(line) if line.trim().is_empty() => {}
                line => prose.before = line,
            },
        }
    }

    /// The held start of a line: taken as far as it stays a possible fence
    /// line, shown once it is not.
    fn fence_line(&mut self, rest: &str, emit: &mut impl FnMut(Event)) -> usize {
        let prose = &mut self.prose;
        let closing = prose.closing_of().cloned();
        for (i, b) in rest.bytes().enumerate() {
            if b == b'\n' {
                prose.hold.push_str(&rest[..i]);
                self.fence_line_end(emit);
                return i + 1;
            }
            let starts_char = b & 0xC0 != 0x80;
            if starts_char
                && (prose.hold.len() + i >= MAX_FENCE_LINE || !prose.scan.step(b, closing.as_ref()))
            {
                prose.hold.push_str(&rest[..i]);
                self.release_hold(emit);
                self.prose.mid_line = true;
                return i;
            }
        }
        prose.hold.push_str(rest);
        rest.len()
    }

    /// A whole held line: a fence opening (prose) or closing (shown fence),
    /// or text after all.
    fn fence_line_end(&mut self, emit: &mut impl FnMut(Event)) {
        let hold = &self.prose.hold;
        let closes = (self.prose.closing_of()).is_some_and(|open| is_closing(hold, open));
        let opens = match self.prose.closing_of() {
            None => opener(hold),
            Some(_) => None,
        };
        if closes {
            self.close_shown(true, emit);
        } else if let Some(open) = opens {
            self.open_fence(open, emit);
        } else {
            self.release_hold(emit);
            self.say("\n", emit);
            self.line_end();
        }
    }

    /// Shows what was held (and counts it as part of the line).
    fn release_hold(&mut self, emit: &mut impl FnMut(Event)) {
        let hold = std::mem::take(&mut self.prose.hold);
        self.prose.holding = Holding::Nothing;
        self.prose.line.push(&hold);
        self.say(&hold, emit);
        self.prose.hold = hold;
        self.prose.hold.clear();
    }

    /// Text for the person. Text with something on it ends the recovered
    /// artifact, so its card sits where its actions were.
    pub(super) fn say(&mut self, s: &str, emit: &mut impl FnMut(Event)) {
        let first_mark = match self.recovered {
            Some(_) => s.bytes().position(|b| !b.is_ascii_whitespace()),
            None => None,
        };
        if let Some(at) = first_mark {
            // The whitespace before it goes first whichever way the text was
            // cut into chunks.
            self.text.push_str(&s[..at]);
            self.close_recovered(emit);
        }
        self.text.push_str(&s[first_mark.unwrap_or(0)..]);
    }

    /// A fence opens: a file when its info string or the line before names
    /// the path, else held until its first line or its end decides.
    fn open_fence(&mut self, open: FenceOpen, emit: &mut impl FnMut(Event)) {
        let mut text = std::mem::take(&mut self.prose.hold);
        text.push('\n');
        self.prose.holding = Holding::Nothing;
        self.prose.line = Line::default();
        let before = self.prose.before.take();
        // After a bolt artifact a fence is prose, with nothing to report.
        let named = (!self.bolt_seen)
            .then(|| before.as_deref().and_then(named_in_prose))
            .flatten();
        let fence = Fence {
            open,
            named,
            elided: None,
        };
        if self.bolt_seen {
            self.say(&text, emit);
            self.prose.mode = Mode::Shown(Shown {
                fence,
                drop_close: false,
            });
            return;
        }
        let path = path_in_info(&fence.open.info).or_else(|| {
            let path = in_line_before(before.as_deref()?)?;
            Some((path, Recovery::HeadingBefore))
        });
        if let Some((path, how)) = path {
            return self.open_fence_file(&path, how, fence.open, emit);
        }
        let shell = shell::is_shell_lang(fence.open.lang());
        self.prose.mode = Mode::Pending(Box::new(Pending {
            fence,
            text,
            lines: 0,
            shell,
            commands: Vec::new(),
        }));
    }

    /// Inside an undecided fence: everything is held, and each whole line is
    /// read.
    fn pending_run(&mut self, rest: &str, emit: &mut impl FnMut(Event)) -> usize {
        let end = rest.find('\n').map_or(rest.len(), |i| i + 1);
        let piece = &rest[..end];
        let prose = &mut self.prose;
        prose.line.push(piece.trim_end_matches('\n'));
        if let Mode::Pending(pending) = &mut prose.mode {
            pending.text.push_str(piece);
        }
        if prose.line.spoilt {
            self.release_pending(emit);
            if piece.ends_with('\n') {
                self.line_end();
            } else {
                self.prose.mid_line = true;
            }
            return end;
        }
        if piece.ends_with('\n') {
            self.pending_line_end(emit);
        } else {
            self.prose.mid_line = true;
        }
        end
    }

    /// A whole line of an undecided fence: its end, a comment naming the
    /// file, a command, or the sign that it is a snippet after all.
    fn pending_line_end(&mut self, emit: &mut impl FnMut(Event)) {
        self.prose.mid_line = false;
        let line = self.prose.line.take().unwrap_or_default();
        let Mode::Pending(pending) = &mut self.prose.mode else {
            return;
        };
        if is_closing(&line, &pending.fence.open) {
            return self.close_pending(emit);
        }
        if pending.fence.elided.is_none() {
            pending.fence.elided = elided(&line).map(str::to_owned);
        }
        if line.trim().is_empty() {
            return;
        }
        pending.lines += 1;
        if pending.lines == 1
            && let Some(path) = in_comment(&line)
        {
            let open = pending.fence.open.clone();
            self.prose.mode = Mode::Prose;
            return self.open_fence_file(&path, Recovery::FirstLineComment, open, emit);
        }
        let console = pending.fence.open.lang().eq_ignore_ascii_case("console");
        let read = if pending.shell {
            shell::read_line(&line, console)
        } else {
            ShellLine::Other
        };
        match read {
            ShellLine::Skip => {}
            ShellLine::Commands(commands) => pending.commands.extend(commands),
            ShellLine::Other => return self.release_pending(emit),
        }
        if pending.text.len() > MAX_PENDING {
            self.release_pending(emit);
        }
    }

    /// The end of an undecided fence: its commands when it held only
    /// commands and a recovered file came before; else text.
    fn close_pending(&mut self, emit: &mut impl FnMut(Event)) {
        let Mode::Pending(pending) = std::mem::take(&mut self.prose.mode) else {
            return;
        };
        self.prose.before = None;
        if pending.shell && self.wrote_file && !pending.commands.is_empty() {
            return self.emit_commands(pending.commands, Recovery::ShellFence, emit);
        }
        self.say(&pending.text, emit);
        self.end_snippet(&pending.fence, emit);
    }

    /// The undecided fence is a snippet: shown from here on.
    fn release_pending(&mut self, emit: &mut impl FnMut(Event)) {
        let Mode::Pending(pending) = std::mem::take(&mut self.prose.mode) else {
            return;
        };
        let Pending { fence, text, .. } = *pending;
        self.say(&text, emit);
        self.prose.mode = Mode::Shown(Shown {
            fence,
            drop_close: false,
        });
    }

    /// The closing line of a shown fence (`line_end`: with its line end).
    fn close_shown(&mut self, line_end: bool, emit: &mut impl FnMut(Event)) {
        let Mode::Shown(shown) = std::mem::take(&mut self.prose.mode) else {
            return;
        };
        let mut hold = std::mem::take(&mut self.prose.hold);
        self.prose.holding = Holding::Nothing;
        if !shown.drop_close {
            if line_end {
                hold.push('\n');
            }
            self.say(&hold, emit);
        }
        self.prose.after_block();
        self.end_snippet(&shown.fence, emit);
    }

    /// A snippet ended: when it leaves code out of a file a sentence before
    /// it names, that is reported (nothing is written).
    fn end_snippet(&mut self, fence: &Fence, emit: &mut impl FnMut(Event)) {
        if let (Some(path), Some(line)) = (&fence.named, &fence.elided) {
            self.report_snippet(path, line, emit);
        }
    }

    /// After an `&`: read as far as it may be an escaped tag. `Err` when it
    /// is one (decoding starts), with the bytes taken before the character
    /// that ends its name.
    fn entity_hold(&mut self, rest: &str, emit: &mut impl FnMut(Event)) -> Result<usize, usize> {
        for (i, c) in rest.char_indices() {
            if trigger(&self.prose.hold) == Trigger::Whole {
                if ends_tag_name(c) {
                    self.start_escaped();
                    return Err(i);
                }
                self.release_hold(emit);
                return Ok(i);
            }
            self.prose.hold.push(c);
            if trigger(&self.prose.hold) == Trigger::Not {
                self.prose.hold.pop();
                self.release_hold(emit);
                return Ok(i);
            }
        }
        Ok(rest.len())
    }

    /// An escaped tag began: the held `&lt;bolt…` becomes `<bolt…` in the
    /// tag reader, and the rest of the input is decoded.
    fn start_escaped(&mut self) {
        let name = self.prose.hold.trim_start_matches("&lt;").to_owned();
        self.prose.hold.clear();
        self.prose.holding = Holding::Nothing;
        self.escaped.on = true;
        self.held.start();
        let _ = self.held.feed(&name, self.listens(), super::MAX_HELD_TAG);
    }

    /// A tag came in the middle of the text: what was held is text, and the
    /// line can no longer be read as a whole. In an undecided fence, an
    /// artifact right after the opening line is fenced: the fence's lines
    /// are not shown.
    pub(super) fn interrupt(&mut self, name: TagName, emit: &mut impl FnMut(Event)) {
        if !self.state.is_text() {
            return;
        }
        if self.prose.holding != Holding::Nothing {
            self.release_hold(emit);
        }
        if let Mode::Pending(pending) = &self.prose.mode {
            let bare = pending.lines == 0 && self.prose.line.text.trim().is_empty();
            if bare && name == TagName::OpenArtifact {
                let Mode::Pending(pending) = std::mem::take(&mut self.prose.mode) else {
                    return;
                };
                self.prose.mode = Mode::Shown(Shown {
                    fence: pending.fence,
                    drop_close: true,
                });
            } else {
                self.release_pending(emit);
            }
        }
        self.prose.line.spoilt = true;
        self.prose.mid_line = true;
        self.prose.before = None;
    }
}

impl Machine {
    /// At the end of the message: what is held is text (a closing fence
    /// line closes its fence), a snippet ends, and an undecided fence is
    /// commands when it would have been and its last line looks whole.
    pub(super) fn finish_prose(&mut self, emit: &mut impl FnMut(Event)) {
        let hold = &self.prose.hold;
        let closes = (self.prose.closing_of()).is_some_and(|open| is_closing(hold, open));
        match self.prose.holding {
            Holding::Fence if closes => self.close_shown(false, emit),
            Holding::Nothing => {}
            Holding::Fence | Holding::Entity => self.release_hold(emit),
        }
        match std::mem::take(&mut self.prose.mode) {
            Mode::Prose => {}
            Mode::Shown(shown) => self.end_snippet(&shown.fence, emit),
            Mode::Pending(pending) => self.finish_pending(*pending, emit),
        }
    }

    fn finish_pending(&mut self, mut pending: Pending, emit: &mut impl FnMut(Event)) {
        let partial = self.prose.line.take().unwrap_or_default();
        if is_closing(&partial, &pending.fence.open) {
            self.prose.mode = Mode::Pending(Box::new(pending));
            return self.close_pending(emit);
        }
        let console = pending.fence.open.lang().eq_ignore_ascii_case("console");
        let last_whole = partial.trim().is_empty() || shell::complete_when_cut(&partial);
        if pending.shell && self.wrote_file && last_whole {
            if let ShellLine::Commands(commands) = shell::read_line(&partial, console) {
                pending.commands.extend(commands);
            }
            if !pending.commands.is_empty() {
                return self.emit_commands(pending.commands, Recovery::CutOff, emit);
            }
        }
        self.say(&pending.text, emit);
        self.end_snippet(&pending.fence, emit);
    }
}
