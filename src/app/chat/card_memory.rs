//! Which parts of the chat's cards the person opened or closed, by step id
//! and part. A card is rendered anew whenever its step changes (a status,
//! live output); it reads its `<details>` state from here, so an expanded
//! result stays expanded across those updates.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

/// Shared by the chat pane's cards (cheap to clone).
#[derive(Clone, Default)]
pub struct CardMemory(Arc<Mutex<HashMap<String, bool>>>);

impl CardMemory {
    /// The key of `part` ("result", "change") of step `step_id`.
    pub fn key(step_id: &str, part: &str) -> String {
        format!("{step_id}/{part}")
    }

    /// Whether `key` is open: as the person left it, else `default`.
    pub fn is_open(&self, key: &str, default: bool) -> bool {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(key)
            .copied()
            .unwrap_or(default)
    }

    #[cfg_attr(not(feature = "hydrate"), allow(dead_code))]
    pub fn remember(&self, key: &str, open: bool) {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(key.to_owned(), open);
    }

    /// Remembers the state a `<details>` element's `toggle` event left it in.
    pub fn remember_toggle(&self, key: &str, event: &leptos::ev::Event) {
        #[cfg(feature = "hydrate")]
        {
            use wasm_bindgen::JsCast;
            let open = event
                .target()
                .and_then(|t| t.dyn_into::<web_sys::Element>().ok())
                .is_some_and(|details| details.has_attribute("open"));
            self.remember(key, open);
        }
        #[cfg(not(feature = "hydrate"))]
        let _ = (key, event);
    }
}

#[cfg(test)]
mod tests {
    use super::CardMemory;

    #[test]
    fn a_part_the_person_never_touched_follows_its_default() {
        let memory = CardMemory::default();
        let key = CardMemory::key("m2-1-1", "result");
        assert!(!memory.is_open(&key, false));
        assert!(memory.is_open(&key, true));
    }

    #[test]
    fn what_the_person_opened_or_closed_stays_so_whatever_the_default() {
        let memory = CardMemory::default();
        let result = CardMemory::key("m2-1-1", "result");
        let change = CardMemory::key("m2-1-1", "change");
        memory.remember(&result, true);
        memory.remember(&change, false);
        // A card rendered again for the step's next update, in another
        // status, reads the same.
        let again = memory.clone();
        assert!(again.is_open(&result, false));
        assert!(!again.is_open(&change, true));
        assert!(!again.is_open(&CardMemory::key("m2-1-2", "result"), false));
    }
}
