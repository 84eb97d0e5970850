//! The failures as the model reads them: what ran, how it ended, its output,
//! and the files it names with their content. One text for the fix loop's
//! automatic message and the agent's `read_build_result` tool.

use super::BuildResult;
use crate::runtime::host::Runtime;

/// Files larger than this are named but not quoted.
pub const LARGEST_QUOTED_FILE: usize = 8 * 1024;

/// `results` described, with `files` (path and content, for those small
/// enough to quote).
pub fn describe_failures(results: &[BuildResult], files: &[(String, String)]) -> String {
    let mut text = String::new();
    for result in results {
        text.push_str(&format!("## {}", capitalised(&result.title())));
        if let Some(code) = result.exit_code {
            text.push_str(&format!(" (exit code {code})"));
        }
        text.push_str(&format!("\n\n```\n{}\n```\n\n", result.output));
        if !result.files.is_empty() {
            text.push_str(&format!("Files it names: {}\n\n", result.files.join(", ")));
        }
    }
    for (path, content) in files {
        text.push_str(&format!(
            "### Current content of {path}\n\n```\n{content}\n```\n\n"
        ));
    }
    text
}

/// `results` described, with the files they name read from `runtime`.
pub async fn failure_report(runtime: &dyn Runtime, results: &[BuildResult]) -> String {
    let mut files: Vec<(String, String)> = Vec::new();
    for path in results.iter().flat_map(|r| &r.files) {
        if files.iter().any(|(p, _)| p == path) {
            continue;
        }
        if let Ok(bytes) = runtime.read_file(path).await
            && bytes.len() <= LARGEST_QUOTED_FILE
            && let Ok(content) = String::from_utf8(bytes)
        {
            files.push((path.clone(), content));
        }
    }
    describe_failures(results, &files)
}

/// `text` with its first letter upper-case.
pub fn capitalised(text: &str) -> String {
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}
