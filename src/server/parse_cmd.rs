//! `rivet parse`: reads a model's answer on stdin and writes the bolt
//! protocol events as JSON Lines (schema in `docs/protocol.md`). Input is fed
//! to the parser as it is read, or in chunks of `--chunk-size` characters,
//! and output is flushed after each read, so a live stream can be piped in.

use std::io::{BufWriter, ErrorKind, Read, Write};
use std::num::NonZeroUsize;
use std::process::ExitCode;

use anyhow::{Context, bail};

use crate::runtime::protocol::{Event, Parser};

#[derive(Debug, clap::Args)]
pub struct ParseArgs {
    /// Feed the parser this many characters at a time (default: as read).
    #[arg(long)]
    pub chunk_size: Option<NonZeroUsize>,
    /// The message id; artifacts without a usable id are named `{ID}-{n}`.
    #[arg(long, default_value = "message")]
    pub message_id: String,
}

pub fn run(args: &ParseArgs) -> anyhow::Result<ExitCode> {
    let stdin = std::io::stdin().lock();
    let stdout = BufWriter::new(std::io::stdout().lock());
    match parse(stdin, stdout, args) {
        // A reader that stopped early (`rivet parse | head`) is not an error.
        Err(e) if is_broken_pipe(&e) => Ok(ExitCode::SUCCESS),
        Err(e) => Err(e),
        Ok(()) => Ok(ExitCode::SUCCESS),
    }
}

fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|cause| {
        cause
            .downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == ErrorKind::BrokenPipe)
    })
}

fn parse(mut input: impl Read, mut out: impl Write, args: &ParseArgs) -> anyhow::Result<()> {
    let mut parser = Parser::new(args.message_id.clone());
    let mut chunker = Chunker::new(args.chunk_size);
    let mut bytes = Vec::new();
    let mut buf = vec![0; 64 * 1024];
    let mut offset = 0;
    loop {
        let n = match input.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == ErrorKind::Interrupted => continue,
            Err(e) => return Err(e).context("cannot read stdin"),
        };
        bytes.extend_from_slice(&buf[..n]);
        // Keep a character split across reads for the next read.
        let valid = match std::str::from_utf8(&bytes) {
            Ok(text) => text.len(),
            Err(e) if e.error_len().is_none() => e.valid_up_to(),
            Err(e) => bail!("stdin is not UTF-8 (byte {})", offset + e.valid_up_to()),
        };
        let text = std::str::from_utf8(&bytes[..valid]).context("stdin is not UTF-8")?;
        for chunk in chunker.feed(text) {
            write_events(&mut out, parser.push(&chunk))?;
        }
        out.flush()?;
        bytes.drain(..valid);
        offset += valid;
    }
    if !bytes.is_empty() {
        bail!("stdin ends inside a UTF-8 character (byte {offset})");
    }
    if let Some(rest) = chunker.rest() {
        write_events(&mut out, parser.push(&rest))?;
    }
    write_events(&mut out, parser.finish())?;
    out.flush()?;
    Ok(())
}

fn write_events(
    out: &mut impl Write,
    events: impl IntoIterator<Item = Event>,
) -> anyhow::Result<()> {
    for event in events {
        serde_json::to_writer(&mut *out, &event)?;
        out.write_all(b"\n")?;
    }
    Ok(())
}

/// Cuts text that arrives in arbitrary pieces into chunks of exactly `size`
/// characters (the last one may be shorter); without a size, passes each
/// piece through.
struct Chunker {
    size: Option<NonZeroUsize>,
    carry: String,
}

impl Chunker {
    fn new(size: Option<NonZeroUsize>) -> Chunker {
        Chunker {
            size,
            carry: String::new(),
        }
    }

    fn feed(&mut self, text: &str) -> Vec<String> {
        let Some(size) = self.size else {
            return if text.is_empty() {
                Vec::new()
            } else {
                vec![text.to_owned()]
            };
        };
        self.carry.push_str(text);
        let mut chunks = Vec::new();
        let mut start = 0;
        let mut count = 0;
        for (i, _) in self.carry.char_indices() {
            if count == size.get() {
                chunks.push(self.carry[start..i].to_owned());
                start = i;
                count = 0;
            }
            count += 1;
        }
        if count == size.get() {
            chunks.push(self.carry[start..].to_owned());
            start = self.carry.len();
        }
        self.carry.drain(..start);
        chunks
    }

    fn rest(self) -> Option<String> {
        Some(self.carry).filter(|c| !c.is_empty())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(size: usize, pieces: &[&str], expect: &[&str]) {
        let mut chunker = Chunker::new(NonZeroUsize::new(size));
        let mut chunks: Vec<String> = pieces.iter().flat_map(|p| chunker.feed(p)).collect();
        chunks.extend(chunker.rest());
        assert_eq!(chunks, expect);
    }

    #[test]
    fn chunks_have_the_asked_number_of_characters() {
        check(2, &["abcde"], &["ab", "cd", "e"]);
        check(2, &["a", "b", "c", "d"], &["ab", "cd"]);
        check(3, &["éü", "日本語x"], &["éü日", "本語x"]);
        check(0, &["ab", "", "c"], &["ab", "c"]);
    }
}
