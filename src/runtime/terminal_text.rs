//! A terminal's output as plain text, the way a terminal would show it: the
//! runner's failure tails, build results and agent cards all quote command
//! output, and each must read what the person saw, not the escape codes.

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
}
