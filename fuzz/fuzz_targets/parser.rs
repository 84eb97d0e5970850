//! Any input, cut anywhere: the parser must not panic, and the cut must not
//! change the events (once adjacent text and deltas are merged).

#![no_main]

use libfuzzer_sys::fuzz_target;

#[path = "../../src/runtime"]
#[allow(dead_code, unused_imports)] // Only the parser is used here.
mod runtime {
    pub mod protocol;
}

use runtime::protocol::{Event, Parser, merge_adjacent};

fn run(chunks: &[&str]) -> Vec<Event> {
    let mut parser = Parser::new("fuzz");
    let mut events: Vec<Event> = Vec::new();
    for chunk in chunks {
        events.extend(parser.push(chunk));
    }
    events.extend(parser.finish());
    merge_adjacent(events)
}

fuzz_target!(|data: &[u8]| {
    let Some((&cut, rest)) = data.split_first() else {
        return;
    };
    let Ok(input) = std::str::from_utf8(rest) else {
        return;
    };
    let mut at = usize::from(cut) % (input.len() + 1);
    while !input.is_char_boundary(at) {
        at -= 1;
    }
    let whole = run(&[input]);
    let halves = run(&[&input[..at], &input[at..]]);
    assert_eq!(whole, halves);
});
