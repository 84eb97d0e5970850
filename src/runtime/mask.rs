//! Masking secret values in a process's output as it streams.
//!
//! A value may arrive split across two reads, so the end of a chunk that
//! could be the start of a value is held back until the next chunk says
//! whether it is (or until [`Masker::flush`], which the reader calls when
//! the output pauses or ends).

use futures::future::LocalBoxFuture;
use futures::stream::LocalBoxStream;
use futures::{FutureExt, Stream, StreamExt};

/// Values shorter than this are not masked: every "1" or "ab" in the output
/// would be, and a value that short hides nothing.
pub const MIN_MASKED_BYTES: usize = 4;

/// Masks the values of a set of secrets in a stream of bytes.
pub struct Masker {
    /// (value, what replaces it), longest value first.
    secrets: Vec<(Vec<u8>, Vec<u8>)>,
    /// Bytes that begin some value, held until the next chunk.
    held: Vec<u8>,
    /// The first bytes of the values, for a fast scan.
    first: [bool; 256],
}

impl Masker {
    /// A masker for `(name, value)` pairs; each value shows as `[NAME]`.
    pub fn new<'a>(secrets: impl IntoIterator<Item = (&'a str, &'a str)>) -> Masker {
        let mut list: Vec<(Vec<u8>, Vec<u8>)> = secrets
            .into_iter()
            .filter(|(_, value)| value.len() >= MIN_MASKED_BYTES)
            .map(|(name, value)| (value.as_bytes().to_vec(), format!("[{name}]").into_bytes()))
            .collect();
        list.sort_by_key(|(value, _)| std::cmp::Reverse(value.len()));
        let mut first = [false; 256];
        for (value, _) in &list {
            first[usize::from(value[0])] = true;
        }
        Masker {
            secrets: list,
            held: Vec::new(),
            first,
        }
    }

    /// Whether there is nothing to mask.
    pub fn is_empty(&self) -> bool {
        self.secrets.is_empty()
    }

    /// Whether bytes are held back, waiting for the next chunk.
    pub fn is_holding(&self) -> bool {
        !self.held.is_empty()
    }

    /// The masked output that `chunk` (after what was held) releases.
    pub fn push(&mut self, chunk: &[u8]) -> Vec<u8> {
        if self.secrets.is_empty() {
            return chunk.to_vec();
        }
        let mut input = std::mem::take(&mut self.held);
        input.extend_from_slice(chunk);
        let mut out = Vec::with_capacity(input.len());
        let mut i = 0;
        while i < input.len() {
            if !self.first[usize::from(input[i])] {
                out.push(input[i]);
                i += 1;
                continue;
            }
            let rest = &input[i..];
            if let Some((value, mask)) = self.secrets.iter().find(|(v, _)| rest.starts_with(v)) {
                out.extend_from_slice(mask);
                i += value.len();
            } else if self.secrets.iter().any(|(v, _)| v.starts_with(rest)) {
                // The end of the input may be the start of a value.
                self.held = rest.to_vec();
                break;
            } else {
                out.push(input[i]);
                i += 1;
            }
        }
        out
    }

    /// Releases what is held: the output paused or ended without the rest
    /// of a value.
    pub fn flush(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.held)
    }
}

/// A stream of output chunks with the values masked: bytes that may begin a
/// value wait for the next chunk, or `hold` at most (measured with `sleep`,
/// the platform's clock), then show as they are. The browser's
/// WebContainer processes use it; the sandbox's pump does the same with
/// its own reader.
pub fn masked_stream<S>(
    output: S,
    masker: Masker,
    hold: std::time::Duration,
    sleep: impl Fn(std::time::Duration) -> LocalBoxFuture<'static, ()> + 'static,
) -> LocalBoxStream<'static, Vec<u8>>
where
    S: Stream<Item = Vec<u8>> + Unpin + 'static,
{
    if masker.is_empty() {
        return output.boxed_local();
    }
    let sleep = std::rc::Rc::new(sleep);
    futures::stream::unfold(
        (output, masker, false),
        move |(mut output, mut masker, ended)| {
            let sleep = std::rc::Rc::clone(&sleep);
            async move {
                if ended {
                    return None;
                }
                loop {
                    let next = if masker.is_holding() {
                        // A chunk that is there wins over the timer.
                        futures::select_biased! {
                            chunk = output.next().fuse() => Some(chunk),
                            () = sleep(hold).fuse() => None,
                        }
                    } else {
                        Some(output.next().await)
                    };
                    let (out, ended) = match next {
                        Some(Some(chunk)) => (masker.push(&chunk), false),
                        // The output paused with bytes held: no value followed.
                        None => (masker.flush(), false),
                        Some(None) => (masker.flush(), true),
                    };
                    if !out.is_empty() {
                        return Some((out, (output, masker, ended)));
                    }
                    if ended {
                        return None;
                    }
                }
            }
        },
    )
    .boxed_local()
}

/// Masks the values in a whole text at once.
pub fn mask_text<'a>(secrets: impl IntoIterator<Item = (&'a str, &'a str)>, text: &str) -> String {
    let mut masker = Masker::new(secrets);
    let mut out = masker.push(text.as_bytes());
    out.extend(masker.flush());
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    const SECRETS: [(&str, &str); 3] = [
        ("API_KEY", "sk-live-12345"),
        ("SHORT", "abc"),
        ("DB_PASSWORD", "hunter2hunter2"),
    ];

    /// Feeds `text` cut at every place in `cuts` and joins the output.
    fn streamed(text: &str, cuts: &[usize]) -> String {
        let mut masker = Masker::new(SECRETS);
        let mut out = Vec::new();
        let mut start = 0;
        for &cut in cuts.iter().chain(std::iter::once(&text.len())) {
            out.extend(masker.push(&text.as_bytes()[start..cut]));
            start = cut;
        }
        out.extend(masker.flush());
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn a_value_is_masked_wherever_the_output_is_cut() {
        let text = "key=sk-live-12345 pw=hunter2hunter2 abc sk-live-1234 end";
        let want = "key=[API_KEY] pw=[DB_PASSWORD] abc sk-live-1234 end";
        assert_eq!(streamed(text, &[]), want);
        for cut in 0..=text.len() {
            assert_eq!(streamed(text, &[cut]), want, "cut at {cut}");
        }
        let every_byte: Vec<usize> = (1..text.len()).collect();
        assert_eq!(streamed(text, &every_byte), want);
    }

    #[test]
    fn the_start_of_a_value_is_held_until_the_next_chunk_says_what_it_is() {
        let mut masker = Masker::new(SECRETS);
        assert_eq!(masker.push(b"prompt$ sk-li"), b"prompt$ ");
        assert!(masker.is_holding());
        assert_eq!(masker.push(b"ve-1234 "), b"sk-live-1234 ");
        assert!(!masker.is_holding());
        assert_eq!(masker.push(b"sk-"), b"");
        assert_eq!(masker.flush(), b"sk-");
    }

    fn chunks(list: &[&str]) -> Vec<Vec<u8>> {
        list.iter().map(|c| c.as_bytes().to_vec()).collect()
    }

    /// Runs `masked_stream` over `input` with a clock whose timer fires at
    /// once (`paused`) or never.
    fn through_stream(input: Vec<Vec<u8>>, paused: bool) -> Vec<String> {
        let sleep = move |_| {
            if paused {
                futures::future::ready(()).boxed_local()
            } else {
                futures::future::pending().boxed_local()
            }
        };
        let stream = masked_stream(
            futures::stream::iter(input),
            Masker::new(SECRETS),
            std::time::Duration::from_millis(100),
            sleep,
        );
        futures::executor::block_on(stream.collect::<Vec<_>>())
            .into_iter()
            .map(|c| String::from_utf8(c).unwrap())
            .collect()
    }

    #[test]
    fn a_masked_stream_joins_a_value_split_across_chunks() {
        let out = through_stream(chunks(&["key=sk-li", "ve-12345\n", "done sk-"]), false);
        assert_eq!(out, ["key=", "[API_KEY]\n", "done ", "sk-"]);
    }

    #[test]
    fn a_masked_stream_shows_held_bytes_when_the_output_pauses() {
        let (tx, rx) = futures::channel::mpsc::unbounded();
        tx.unbounded_send(b"ready sk-".to_vec()).unwrap();
        let mut stream = masked_stream(
            rx,
            Masker::new(SECRETS),
            std::time::Duration::from_millis(100),
            |_| futures::future::ready(()).boxed_local(),
        );
        let first = futures::executor::block_on(stream.next()).unwrap();
        assert_eq!(first, b"ready ");
        // Nothing more arrives: the timer releases what was held.
        let second = futures::executor::block_on(stream.next()).unwrap();
        assert_eq!(second, b"sk-");
        drop(tx);
        assert_eq!(futures::executor::block_on(stream.next()), None);
        assert_eq!(through_stream(chunks(&["plain"]), true), ["plain"]);
    }

    #[test]
    fn short_values_and_no_secrets_pass_output_through() {
        assert_eq!(mask_text(SECRETS, "abc abc"), "abc abc");
        let mut none = Masker::new([]);
        assert!(none.is_empty());
        assert_eq!(none.push(b"anything \xff"), b"anything \xff");
    }
}
