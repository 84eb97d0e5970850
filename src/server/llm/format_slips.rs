//! Which models slip out of the bolt format: a model whose answers slipped
//! twice in a row gets the format restated in every request from then on
//! (for as long as the server runs). One record for the whole server, since
//! it is a trait of the model, not of a project.

use std::collections::HashMap;
use std::sync::Mutex;

use crate::runtime::session::AnswerFormat;

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
