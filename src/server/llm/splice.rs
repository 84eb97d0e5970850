//! Joining a continuation to the answer it continues. Asked to go on where
//! it stopped, a model often starts by repeating the end of what it wrote
//! (typically the current line). The repeated part is removed, so the parser
//! sees one answer and a file cut by the token limit comes out whole.

/// The user message that asks for a continuation.
pub const CONTINUE_PROMPT: &str = "Your answer was cut off by the length limit. Continue \
exactly where it stopped, starting with the very next character. Do not repeat anything you \
already wrote, do not add an introduction, and do not reopen an artifact or action that is \
already open.";

/// The longest repetition looked for, in bytes.
pub const MAX_OVERLAP: usize = 4096;

/// The shortest repetition removed, in characters: shorter matches (a
/// newline, a brace) are more likely new text than repetition.
pub const MIN_OVERLAP: usize = 6;

/// Holds back the start of a continuation until it is clear how much of it
/// repeats the end of the answer so far, then passes text straight through.
#[derive(Debug)]
pub struct OverlapTrimmer {
    /// The last [`MAX_OVERLAP`] bytes of the answer so far.
    tail: String,
    pending: String,
    decided: bool,
}

impl OverlapTrimmer {
    pub fn new(answer_so_far: &str) -> OverlapTrimmer {
        let mut start = answer_so_far.len().saturating_sub(MAX_OVERLAP);
        while !answer_so_far.is_char_boundary(start) {
            start += 1;
        }
        OverlapTrimmer {
            tail: answer_so_far[start..].to_owned(),
            pending: String::new(),
            decided: false,
        }
    }

    /// Takes the next piece of the continuation; returns the text that can
    /// be shown now (possibly empty while undecided).
    pub fn push(&mut self, text: &str) -> String {
        if self.decided {
            return text.to_owned();
        }
        self.pending.push_str(text);
        // While what arrived still occurs in the tail, it may be the start of
        // a repetition that is not complete yet.
        if self.pending.len() < self.tail.len() && self.tail.contains(&self.pending) {
            return String::new();
        }
        self.decide()
    }

    /// The continuation ended: whatever is held back is decided now.
    pub fn finish(&mut self) -> String {
        if self.decided {
            String::new()
        } else {
            self.decide()
        }
    }

    fn decide(&mut self) -> String {
        self.decided = true;
        let overlap = overlap(&self.tail, &self.pending);
        let rest = self.pending.split_off(overlap);
        self.pending.clear();
        self.tail.clear();
        rest
    }
}

/// The length in bytes of the longest prefix of `next` (at least
/// [`MIN_OVERLAP`] characters) that is also a suffix of `tail`; 0 if none.
pub fn overlap(tail: &str, next: &str) -> usize {
    let max = tail.len().min(next.len());
    (1..=max)
        .rev()
        .filter(|&k| next.is_char_boundary(k))
        .find(|&k| tail.ends_with(&next[..k]))
        .filter(|&k| next[..k].chars().count() >= MIN_OVERLAP)
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Feeds `pieces` as a continuation of `before`; the result must be
    /// `expect` (the continuation without its repetition).
    fn check(before: &str, pieces: &[&str], expect: &str) {
        let mut trimmer = OverlapTrimmer::new(before);
        let mut out = String::new();
        for piece in pieces {
            out.push_str(&trimmer.push(piece));
        }
        out.push_str(&trimmer.finish());
        assert_eq!(out, expect, "{before:?} + {pieces:?}");
    }

    #[test]
    fn repeated_text_is_removed_once() {
        // The model restarts the current line.
        check(
            "const [todos, set",
            &["const [todos, set", "Todos] = useState([]);"],
            "Todos] = useState([]);",
        );
        // It repeats the whole last line, split over many pieces.
        check("a\n  return x;\n", &["  ret", "urn x;\n", "}\n"], "}\n");
        // Nothing repeated: passed through as is.
        check("abc\n", &["def", "ghi"], "defghi");
        check("", &["hello"], "hello");
        check("hello", &[], "");
    }

    #[test]
    fn short_coincidences_are_kept() {
        check("}\n", &["\nfunction f() {}"], "\nfunction f() {}");
        check("x = 1;\n", &["1;\ny = 2;"], "1;\ny = 2;");
    }

    #[test]
    fn multibyte_text_splits_on_characters() {
        check("Préférences é", &["éférences é", "t\u{e9}"], "t\u{e9}");
        check("日本語のテキスト", &["語のテキスト", "です"], "です");
    }

    #[test]
    fn text_passes_through_as_soon_as_it_is_new() {
        let mut trimmer = OverlapTrimmer::new("some earlier text");
        assert_eq!(trimmer.push("earlier"), "");
        assert_eq!(trimmer.push(" text and"), " and");
        assert_eq!(trimmer.push(" more"), " more");
        let mut trimmer = OverlapTrimmer::new("abc");
        assert_eq!(trimmer.push("zzz"), "zzz");
    }

    #[test]
    fn overlap_is_the_longest_match() {
        let check = |tail: &str, next: &str, expect: usize| {
            assert_eq!(overlap(tail, next), expect, "{tail:?} {next:?}");
        };
        check("abcabcabc", "abcabcX", 6);
        check("xxxxxxxx", "xxxxxxxxxxxx", 8);
        check("abcdef", "ghijkl", 0);
        check("abcdef", "", 0);
    }
}
