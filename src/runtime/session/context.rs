//! The context window as the chat shows it: how much of it a request used,
//! and the summary that stands in for the conversation's older turns.

use serde::{Deserialize, Serialize};

/// Estimated prompt tokens of the request an answer was asked with, and the
/// model's context window.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct ContextUse {
    pub used: u32,
    pub window: u32,
}

impl ContextUse {
    /// "38k / 128k tokens".
    pub fn label(&self) -> String {
        format!("{} / {} tokens", short(self.used), short(self.window))
    }
}

/// The model's summary of a conversation's older turns: it stands in for
/// the first `covers` messages of the conversation the model is sent.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, Default)]
pub struct ContextSummary {
    pub covers: u32,
    pub text: String,
}

/// The rules as the settings panel shows and saves them: the app-wide ones
/// and, when a project is open, its rules file (`AGENTS.md` unless only
/// `.rivet/rules.md` exists).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, Default)]
pub struct RulesSettings {
    pub app: String,
    pub project_path: Option<String>,
    pub project: Option<String>,
}

/// A count in thousands past 1000, rounded to the nearest.
fn short(tokens: u32) -> String {
    if tokens < 1000 {
        tokens.to_string()
    } else {
        format!("{}k", (tokens + 500) / 1000)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn context_use_reads_in_thousands() {
        for (used, window, label) in [
            (38_200, 128_000, "38k / 128k tokens"),
            (512, 8192, "512 / 8k tokens"),
            (0, 32_768, "0 / 33k tokens"),
            (1499, 2000, "1k / 2k tokens"),
        ] {
            assert_eq!(ContextUse { used, window }.label(), label);
        }
    }
}
