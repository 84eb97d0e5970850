//! Rivet's protocol module, compiled on its own for WebAssembly, with the
//! calls the timing script makes. Each input is loaded into a slot and cut
//! into chunks once; `run` then parses it, so only the parser is timed.

use std::cell::RefCell;

use wasm_bindgen::prelude::wasm_bindgen;

#[path = "../../../src/runtime"]
pub mod runtime {
    pub mod protocol;
}

use runtime::protocol::{Event, Parser};

struct Loaded {
    input: String,
    ends: Vec<usize>,
}

thread_local! {
    static LOADED: RefCell<Vec<Loaded>> = const { RefCell::new(Vec::new()) };
}

/// Keeps `input` in slot `slot` and cuts it into chunks of `chunk_chars`
/// characters (0: one chunk).
#[wasm_bindgen]
pub fn load(slot: usize, input: String, chunk_chars: usize) {
    let mut ends: Vec<usize> = if chunk_chars == 0 {
        Vec::new()
    } else {
        input
            .char_indices()
            .skip(chunk_chars)
            .step_by(chunk_chars)
            .map(|(i, _)| i)
            .collect()
    };
    ends.push(input.len());
    LOADED.with(|loaded| {
        let mut loaded = loaded.borrow_mut();
        if loaded.len() <= slot {
            loaded.resize_with(slot + 1, || Loaded {
                input: String::new(),
                ends: Vec::new(),
            });
        }
        loaded[slot] = Loaded { input, ends };
    });
}

fn weigh(event: &Event) -> usize {
    match event {
        Event::Text { text } => text.len(),
        Event::ActionDelta { delta, .. } => delta.len(),
        Event::ActionClose { action, .. } => action.content.len(),
        _ => 1,
    }
}

/// Parses the input in `slot`; `collect` picks `push` (events collected per
/// call) over `push_with`. Returns a checksum of the events.
#[wasm_bindgen]
pub fn run(slot: usize, collect: bool) -> usize {
    LOADED.with(|loaded| {
        let loaded = loaded.borrow();
        let Some(loaded) = loaded.get(slot) else {
            return 0;
        };
        let mut parser = Parser::new("bench");
        let mut weight = 0;
        let mut start = 0;
        for &end in &loaded.ends {
            let chunk = &loaded.input[start..end];
            if collect {
                weight += parser.push(chunk).map(|e| weigh(&e)).sum::<usize>();
            } else {
                parser.push_with(chunk, |e| weight += weigh(&e));
            }
            start = end;
        }
        weight + parser.finish().iter().map(weigh).sum::<usize>()
    })
}
