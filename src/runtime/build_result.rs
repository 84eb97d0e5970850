//! Build results: every failure of a project's run (an install, a build, a
//! dev server that did not start or crashed, a compile error the dev server
//! printed after an edit, an error of the previewed page) as one record, with
//! the output that explains it in plain text and the project files it names.
//!
//! The runner makes them ([`BuildResult::new`]), the session keeps them per
//! project, and the server's fix loop quotes them to the model.

use serde::{Deserialize, Serialize};

use super::action::ActionRef;

pub mod report;

/// Lines of output a build result keeps.
pub const MAX_LINES: usize = 30;
/// Bytes of output a build result keeps.
pub const MAX_BYTES: usize = 4 * 1024;
/// Files a build result lists.
const MAX_FILES: usize = 8;
/// Where the project lives inside the sandbox; paths under it are made
/// relative to the project.
const WORKSPACE: &str = "/home/project/";
/// File extensions that count as project files when named in an error.
const SOURCE_EXTENSIONS: &[&str] = &[
    "js", "jsx", "ts", "tsx", "mjs", "cjs", "mts", "cts", "json", "css", "scss", "sass", "less",
    "html", "vue", "svelte", "astro", "md", "mdx", "yaml", "yml", "toml",
];

/// Which step of the run failed.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Stage {
    /// A package install (`npm install`, `pnpm add`, …).
    Install,
    /// A `build` action, or a command that builds.
    Build,
    /// Any other command of a `shell` action.
    Command,
    /// A `start` that did not get to serve.
    DevServerStart,
    /// A dev server that was serving and exited.
    DevServerCrash,
    /// A compile error the dev server printed (Vite's, after an edit).
    CompileError,
    /// An uncaught exception or unhandled rejection in the previewed page.
    PageError,
    /// A `console.error` in the previewed page.
    ConsoleError,
    /// An action that could not be carried out: refused (an invalid path, a
    /// file with code left out, cut off) or failed (an edit whose SEARCH
    /// does not match).
    Action,
    /// A `supabase` action's migration or query the database refused.
    Database,
}

impl Stage {
    /// The stage of a failed command.
    pub fn of_command(command: &str, is_build_action: bool) -> Stage {
        let words: Vec<&str> = command.split_whitespace().collect();
        let installs = words.windows(2).any(|pair| {
            matches!(pair[0], "npm" | "pnpm" | "yarn" | "bun")
                && matches!(pair[1], "install" | "i" | "ci" | "add")
        });
        if installs {
            Stage::Install
        } else if is_build_action || words.contains(&"build") {
            Stage::Build
        } else {
            Stage::Command
        }
    }

    pub fn describe(self) -> &'static str {
        match self {
            Stage::Install => "the install failed",
            Stage::Build => "the build failed",
            Stage::Command => "a command failed",
            Stage::DevServerStart => "the dev server did not start",
            Stage::DevServerCrash => "the dev server stopped",
            Stage::CompileError => "the dev server reported a compile error",
            Stage::PageError => "the page threw an error",
            Stage::ConsoleError => "the page logged an error",
            Stage::Action => "an action could not be carried out",
            Stage::Database => "the database refused a migration or query",
        }
    }
}

/// One failure of the run.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct BuildResult {
    /// Numbered within the session, from 1.
    pub id: u64,
    pub stage: Stage,
    /// The command that ran, when one did.
    pub command: Option<String>,
    pub exit_code: Option<i32>,
    /// The end of the output: plain text, repeated lines once, capped.
    pub output: String,
    /// Project files the output names, relative to the project.
    pub files: Vec<String>,
    /// When it happened, in milliseconds since the Unix epoch.
    pub at_ms: u64,
    pub action: Option<ActionRef>,
    /// Set once a later run fixed it: by what, in words.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resolved: Option<String>,
}

impl BuildResult {
    /// A result from raw output (terminal escapes and all).
    pub fn new(stage: Stage, command: Option<String>, exit_code: Option<i32>, raw: &str) -> Self {
        // A command's last lines say why it failed; a compile error or an
        // exception starts with its message and code frame.
        let output = match stage {
            Stage::CompileError | Stage::PageError | Stage::ConsoleError => {
                head(raw, MAX_LINES, MAX_BYTES)
            }
            _ => tail(raw, MAX_LINES, MAX_BYTES),
        };
        let mut files = named_files(&output);
        if stage == Stage::Install && !files.iter().any(|f| f == "package.json") {
            files.insert(0, "package.json".to_owned());
            files.truncate(MAX_FILES);
        }
        BuildResult {
            id: 0,
            stage,
            command,
            exit_code,
            output,
            files,
            at_ms: now_ms(),
            action: None,
            resolved: None,
        }
    }

    /// What identifies the error across attempts: the stage and the output
    /// with paths, numbers and hashes taken out.
    pub fn signature(&self) -> String {
        format!("{:?}: {}", self.stage, normalise(&self.output))
    }

    /// One line for alerts and lists.
    pub fn title(&self) -> String {
        let what = self.stage.describe();
        match &self.command {
            Some(command) => format!("{what}: `{command}`"),
            None => what.to_owned(),
        }
    }
}

#[cfg(not(target_arch = "wasm32"))]
fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

#[cfg(target_arch = "wasm32")]
fn now_ms() -> u64 {
    js_sys::Date::now() as u64
}

/// The end of `raw` as plain text: escapes and progress redraws removed,
/// blank lines and stack frames inside dependencies dropped, a line seen
/// before kept only the first time, then the last `max_lines` lines within
/// `max_bytes` bytes.
pub fn tail(raw: &str, max_lines: usize, max_bytes: usize) -> String {
    let text = crate::runtime::terminal_text::plain_text(raw);
    let lines = useful_lines(&text);
    let mut kept = take_within(lines.iter().rev(), max_lines, max_bytes);
    kept.reverse();
    kept.join("\n")
}

/// Like [`tail`], keeping the first lines instead.
pub fn head(raw: &str, max_lines: usize, max_bytes: usize) -> String {
    let text = crate::runtime::terminal_text::plain_text(raw);
    take_within(useful_lines(&text).iter(), max_lines, max_bytes).join("\n")
}

fn useful_lines(text: &str) -> Vec<&str> {
    let mut seen = std::collections::HashSet::new();
    text.lines()
        .map(str::trim_end)
        .filter(|l| !l.trim().is_empty() && !is_dependency_frame(l))
        .filter(|l| seen.insert(*l))
        .collect()
}

/// A stack frame inside a dependency or Node itself (`at f
/// (/home/project/node_modules/…)`), which says nothing about the project.
fn is_dependency_frame(line: &str) -> bool {
    line.trim_start().starts_with("at ")
        && (line.contains("node_modules/") || line.contains("node:internal"))
}

fn take_within<'a>(
    lines: impl Iterator<Item = &'a &'a str>,
    max_lines: usize,
    max_bytes: usize,
) -> Vec<&'a str> {
    let mut kept = Vec::new();
    let mut bytes = 0;
    for line in lines.take(max_lines) {
        let line = cap_line(line, max_bytes);
        if bytes + line.len() + 1 > max_bytes && !kept.is_empty() {
            break;
        }
        bytes += line.len() + 1;
        kept.push(line);
    }
    kept
}

/// A line cut to `max` bytes at a character boundary.
fn cap_line(line: &str, max: usize) -> &str {
    if line.len() <= max {
        return line;
    }
    let mut end = max;
    while !line.is_char_boundary(end) {
        end -= 1;
    }
    &line[..end]
}

/// Project files named in `text` (`src/App.jsx:12:3`,
/// `/home/project/src/main.jsx`, `(src/a.ts)`), relative, in order of first
/// mention, without dependencies under `node_modules` or URLs.
pub fn named_files(text: &str) -> Vec<String> {
    let mut files: Vec<String> = Vec::new();
    for token in text.split(|c: char| c.is_whitespace() || "()[]{}<>'\"`,;".contains(c)) {
        let Some(path) = project_path(token) else {
            continue;
        };
        if !files.contains(&path) {
            files.push(path);
        }
        if files.len() == MAX_FILES {
            break;
        }
    }
    files
}

fn project_path(token: &str) -> Option<String> {
    if token.contains("://") || token.contains("node_modules") {
        return None;
    }
    // Drop a trailing `:line:column` and punctuation.
    let token = token.trim_end_matches(|c: char| c.is_ascii_digit() || c == ':' || c == '.');
    let relative = match token.strip_prefix(WORKSPACE) {
        Some(rest) => rest,
        None if token.starts_with('/') => return None,
        None => token.trim_start_matches("./"),
    };
    let (stem, extension) = relative.rsplit_once('.')?;
    let name_ok = !stem.is_empty()
        && !relative.starts_with('@')
        && relative
            .chars()
            .all(|c| c.is_alphanumeric() || "/._-+$".contains(c));
    (name_ok && SOURCE_EXTENSIONS.contains(&extension) && !relative.contains(".."))
        .then(|| relative.to_owned())
}

/// `text` with what changes from one run to the next taken out: absolute
/// paths become their last part, digit runs become `0`, hex hashes `#`.
pub fn normalise(text: &str) -> String {
    text.lines()
        .map(|line| {
            line.split_whitespace()
                .map(normalise_word)
                .collect::<Vec<_>>()
                .join(" ")
        })
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join("\n")
}

fn normalise_word(word: &str) -> String {
    let word = match word.rfind('/') {
        Some(slash) if word.starts_with('/') || word.contains("://") => &word[slash + 1..],
        _ => word,
    };
    let mut out = String::with_capacity(word.len());
    let mut run = String::new();
    let flush = |run: &mut String, out: &mut String| {
        if run.is_empty() {
            return;
        }
        let is_hash = run.len() >= 7
            && run.chars().all(|c| c.is_ascii_hexdigit())
            && run.chars().any(|c| c.is_ascii_digit());
        let all_digits = run.chars().all(|c| c.is_ascii_digit());
        if is_hash && !all_digits {
            out.push('#');
        } else if all_digits {
            out.push('0');
        } else {
            // Letters only (a word), or hex-looking letters mixed with a few
            // digits: digits still become 0.
            let mut in_digits = false;
            for c in run.chars() {
                if c.is_ascii_digit() {
                    if !in_digits {
                        out.push('0');
                    }
                    in_digits = true;
                } else {
                    out.push(c);
                    in_digits = false;
                }
            }
        }
        run.clear();
    };
    for c in word.chars() {
        if c.is_ascii_alphanumeric() {
            run.push(c);
        } else {
            flush(&mut run, &mut out);
            out.push(c);
        }
    }
    flush(&mut run, &mut out);
    out
}

/// Markers of a compile error in a dev server's output (Vite and its
/// plugins).
const COMPILE_MARKERS: &[&str] = &[
    "Internal server error",
    "Pre-transform error",
    "Transform failed",
    "[plugin:vite:",
    "Failed to resolve import",
    "SyntaxError:",
];

/// The compile error in a piece of dev-server output, if it holds one: from
/// the first line with a marker to the end of the piece, as plain text.
pub fn compile_error(output: &str) -> Option<String> {
    let text = crate::runtime::terminal_text::plain_text(output);
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        if COMPILE_MARKERS.iter().any(|m| line.contains(m)) {
            // Up to the end, a line cut at the end of the piece included, so
            // the next piece continues it.
            return Some(text[offset..].to_owned());
        }
        offset += line.len();
    }
    None
}

#[cfg(test)]
mod tests;
