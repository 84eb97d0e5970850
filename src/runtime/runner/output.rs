//! The end of a command's output, kept to explain a failure: terminal escape
//! sequences removed and carriage-return redraws (progress bars) collapsed.

use crate::runtime::terminal_text::plain_text;

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

#[cfg(test)]
mod tests {
    use super::*;

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
