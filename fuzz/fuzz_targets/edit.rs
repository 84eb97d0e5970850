//! Any file and any edit body: applying it must not panic.

#![no_main]

use libfuzzer_sys::fuzz_target;

#[path = "../../src/runtime/action/edit.rs"]
mod edit;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let (original, body) = text.split_once('\u{0}').unwrap_or((text, ""));
    let _ = edit::apply_edit(original, body);
    let (old, new) = body.split_once('\u{0}').unwrap_or((body, ""));
    let _ = edit::replace(original, old, new, 1);
});
