//! The end of a command's output, kept to explain a failure: terminal escape
//! sequences removed and carriage-return redraws (progress bars) collapsed.

/// Bytes of raw output kept.
const KEEP: usize = 16 * 1024;

#[derive(Default)]
pub struct OutputTail {
    raw: Vec<u8>,
}

impl OutputTail {
    pub fn push(&mut self, bytes: &[u8]) {
        self.raw.extend_from_slice(bytes);
        if self.raw.len() > 2 * KEEP {
            self.raw.drain(..self.raw.len() - KEEP);
        }
    }

    /// Everything kept, as received.
    pub fn raw_text(&self) -> String {
        String::from_utf8_lossy(&self.raw).into_owned()
    }

    /// The last `lines` non-empty lines as plain text.
    pub fn last_lines(&self, lines: usize) -> String {
        let text = plain_text(&String::from_utf8_lossy(&self.raw));
        let kept: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
        kept[kept.len().saturating_sub(lines)..].join("\n")
    }
}

/// Removes ANSI escape sequences and applies redraws the way a terminal
/// would: after `\r`, or a cursor move to the first column (`ESC[G`,
/// `ESC[1G`), or erasing the whole line (`ESC[2K`), the text that follows
/// overwrites the line, so only the final state of each redrawn line is
/// kept. Spinner frames (Braille patterns, U+2800 to U+28FF, as npm and
/// others draw them) are dropped.
pub fn plain_text(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut line = String::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\u{1b}' => match chars.next() {
                // CSI: parameters, then one final byte in @..~.
                Some('[') => {
                    let mut params = String::new();
                    for c in chars.by_ref() {
                        if ('@'..='~').contains(&c) {
                            if redraws_the_line(&params, c) {
                                line.clear();
                            }
                            break;
                        }
                        params.push(c);
                    }
                }
                // OSC: up to BEL or ESC \.
                Some(']') => {
                    while let Some(c) = chars.next() {
                        if c == '\u{7}' || (c == '\u{1b}' && chars.next_if_eq(&'\\').is_some()) {
                            break;
                        }
                    }
                }
                _ => {}
            },
            '\r' if chars.peek() == Some(&'\n') => {}
            '\r' => line.clear(),
            '\n' => {
                out.push_str(&line);
                out.push('\n');
                line.clear();
            }
            c if c.is_control() && c != '\t' => {}
            c if is_spinner_frame(c) => {}
            c => line.push(c),
        }
    }
    out.push_str(&line);
    out
}

/// A CSI sequence after which the line is drawn again from its start.
fn redraws_the_line(params: &str, last: char) -> bool {
    match last {
        'G' => matches!(params, "" | "0" | "1"),
        'K' => params == "2",
        _ => false,
    }
}

/// A Braille pattern: the frames of terminal spinners.
fn is_spinner_frame(c: char) -> bool {
    ('\u{2800}'..='\u{28FF}').contains(&c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_and_redraws_are_removed() {
        assert_eq!(
            plain_text("\u{1b}[31merror\u{1b}[0m: no\r\n"),
            "error: no\n"
        );
        assert_eq!(plain_text("10%\r50%\r100%\ndone"), "100%\ndone");
        assert_eq!(plain_text("\u{1b}]0;title\u{7}npm ERR!"), "npm ERR!");
        assert_eq!(plain_text("a\u{8}b\tc"), "ab\tc");
    }

    #[test]
    fn spinner_frames_and_their_redraws_leave_only_the_final_line() {
        let npm = "\u{1b}[1G\u{2819}\u{1b}[0K\u{1b}[1G\u{2839}\u{1b}[0K\u{1b}[1G\u{2838}\u{1b}[0K\
                   \u{1b}[1G\u{1b}[0Knpm ERR! code E404\n";
        assert_eq!(plain_text(npm), "npm ERR! code E404\n");
        assert_eq!(
            plain_text("\u{280b} building\r\u{2819} building\rbuilt\n"),
            "built\n"
        );
        assert_eq!(plain_text("old\u{1b}[2Knew\n"), "new\n");
        assert_eq!(plain_text("\u{1b}[G\u{1b}[Kdone"), "done");
        // Cursor moves that do not go back to the line's start keep it.
        assert_eq!(plain_text("ab\u{1b}[5Gc"), "abc");
    }

    #[test]
    fn the_tail_keeps_the_last_lines() {
        let mut tail = OutputTail::default();
        for i in 0..10_000 {
            tail.push(format!("line {i}\r\n").as_bytes());
        }
        assert_eq!(tail.last_lines(2), "line 9998\nline 9999");
        assert!(tail.raw.len() <= 2 * KEEP);
    }
}
