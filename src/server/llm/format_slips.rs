//! Which models slip out of the bolt format: a model whose answers slipped
//! twice in a row gets the format restated in every request from then on
//! (for as long as the server runs) and, with `[llm] format = "auto"`, the
//! file and shell tools instead of tags unless it refused tools. One record
//! for the whole server, since it is a trait of the model, not of a
//! project.

use std::collections::HashMap;
use std::sync::Mutex;

use crate::runtime::session::AnswerFormat;
use crate::server::config::ActionFormat;

/// Slips in a row after which the reminder is sent.
pub const SLIPS_BEFORE_REMINDER: u32 = 2;

#[derive(Default)]
pub struct FormatSlips {
    models: Mutex<HashMap<String, Record>>,
}

#[derive(Default, Clone, Copy)]
struct Record {
    in_a_row: u32,
    reminded: bool,
    refuses_tools: bool,
}

impl FormatSlips {
    /// Counts the answer of `model` (at `base_url`): a slip adds one, an
    /// answer in the format starts the count again, prose changes nothing.
    pub fn record(&self, base_url: &str, model: &str, format: AnswerFormat) {
        let mut models = self.models.lock().unwrap_or_else(|e| e.into_inner());
        let record = models.entry(key(base_url, model)).or_default();
        match format {
            AnswerFormat::InFormat => record.in_a_row = 0,
            AnswerFormat::Prose => {}
            AnswerFormat::Recovered | AnswerFormat::CodeWithoutActions => {
                record.in_a_row += 1;
                if record.in_a_row >= SLIPS_BEFORE_REMINDER {
                    record.reminded = true;
                }
            }
        }
    }

    /// Whether requests to `model` restate the format.
    pub fn needs_reminder(&self, base_url: &str, model: &str) -> bool {
        let models = self.models.lock().unwrap_or_else(|e| e.into_inner());
        models
            .get(&key(base_url, model))
            .is_some_and(|r| r.reminded)
    }
}

impl FormatSlips {
    /// The model's provider refused a request with tools.
    pub fn record_tools_refused(&self, base_url: &str, model: &str) {
        let mut models = self.models.lock().unwrap_or_else(|e| e.into_inner());
        models
            .entry(key(base_url, model))
            .or_default()
            .refuses_tools = true;
    }

    /// Whether a Build answer of `model` is asked for tool calls.
    pub fn use_tools(&self, setting: ActionFormat, base_url: &str, model: &str) -> bool {
        let models = self.models.lock().unwrap_or_else(|e| e.into_inner());
        let record = models
            .get(&key(base_url, model))
            .copied()
            .unwrap_or_default();
        match setting {
            ActionFormat::Tags => false,
            ActionFormat::Tools => !record.refuses_tools,
            ActionFormat::Auto => record.reminded && !record.refuses_tools,
        }
    }
}

fn key(base_url: &str, model: &str) -> String {
    format!("{base_url}\n{model}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use AnswerFormat::*;

    /// (answers in order, whether the next request restates the format).
    #[test]
    fn two_slips_in_a_row_bring_the_reminder_for_good() {
        let cases: &[(&[AnswerFormat], bool)] = &[
            (&[], false),
            (&[CodeWithoutActions], false),
            (&[CodeWithoutActions, Recovered], true),
            (&[Recovered, Prose, Recovered], true),
            (&[Recovered, InFormat, Recovered], false),
            (&[Recovered, Recovered, InFormat, InFormat], true),
        ];
        for (answers, expected) in cases {
            let slips = FormatSlips::default();
            for format in *answers {
                slips.record("http://127.0.0.1:11434/v1", "qwen", *format);
            }
            assert_eq!(
                slips.needs_reminder("http://127.0.0.1:11434/v1", "qwen"),
                *expected,
                "{answers:?}"
            );
        }
    }

    #[test]
    fn tools_are_used_as_set_or_after_two_slips_unless_refused() {
        use ActionFormat::{Auto, Tags, Tools};
        // (setting, slips before, refused tools) → tools.
        let cases = [
            (Tags, 0, false, false),
            (Tags, 2, false, false),
            (Tools, 0, false, true),
            (Tools, 0, true, false),
            (Auto, 0, false, false),
            (Auto, 1, false, false),
            (Auto, 2, false, true),
            (Auto, 2, true, false),
        ];
        for (setting, slips_before, refused, expected) in cases {
            let slips = FormatSlips::default();
            for _ in 0..slips_before {
                slips.record("u", "m", CodeWithoutActions);
            }
            if refused {
                slips.record_tools_refused("u", "m");
            }
            assert_eq!(
                slips.use_tools(setting, "u", "m"),
                expected,
                "{setting:?} {slips_before} {refused}"
            );
        }
    }

    #[test]
    fn each_model_has_its_own_record() {
        let slips = FormatSlips::default();
        for _ in 0..2 {
            slips.record("http://a/v1", "small", CodeWithoutActions);
        }
        assert!(slips.needs_reminder("http://a/v1", "small"));
        assert!(!slips.needs_reminder("http://a/v1", "large"));
        assert!(!slips.needs_reminder("http://b/v1", "small"));
    }
}
