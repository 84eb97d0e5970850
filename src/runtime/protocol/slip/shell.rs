//! Commands in a shell fence: only installing packages and running the
//! project's scripts, with the package managers a web project uses. Anything
//! else (`cd`, `rm`, pipes, quotes, `npm create`) makes the fence prose: a
//! recovered command must be one the model plainly meant to be run here.

use super::path::looks_like_path;

/// One command, and whether it serves the app (a `start` action) rather
/// than finishing (a `shell` action).
#[derive(Clone, Debug, PartialEq)]
pub(in crate::runtime::protocol) struct Command {
    pub text: String,
    pub start: bool,
}

/// What a line of a shell fence is.
#[derive(Debug, PartialEq)]
pub(in crate::runtime::protocol) enum ShellLine {
    /// Blank, a comment, or (in a `console` fence) output.
    Skip,
    Commands(Vec<Command>),
    /// Not an install or run command: the fence is prose.
    Other,
}

const SCRIPTS_THAT_SERVE: &[&str] = &["dev", "start", "serve", "preview", "watch"];
const KNOWN_SCRIPTS: &[&str] = &[
    "dev", "start", "serve", "preview", "watch", "build", "test", "lint",
];
/// Tools that `npx` runs as a server unless told to build.
const SERVING_TOOLS: &[&str] = &["vite", "serve", "http-server", "live-server", "parcel"];
/// Frameworks whose `dev`, `start` or `preview` serves.
const FRAMEWORKS: &[&str] = &[
    "next",
    "astro",
    "nuxi",
    "nuxt",
    "remix",
    "webpack-dev-server",
];

/// Whether a fence of this language may hold commands (no language counts).
pub(in crate::runtime::protocol) fn is_shell_lang(lang: &str) -> bool {
    [
        "",
        "bash",
        "sh",
        "shell",
        "zsh",
        "console",
        "terminal",
        "sh-session",
        "shell-session",
    ]
    .iter()
    .any(|l| lang.eq_ignore_ascii_case(l))
}

/// Reads one line of a shell fence. In a `console` fence only `$ ` lines
/// are commands; elsewhere a `$ ` prompt is dropped.
pub(in crate::runtime::protocol) fn read_line(line: &str, console: bool) -> ShellLine {
    let t = line.trim();
    let command = match t.strip_prefix("$ ") {
        Some(command) => command.trim(),
        None if t.is_empty() || t == "$" || console || t.starts_with('#') => {
            return ShellLine::Skip;
        }
        None => t,
    };
    match chain(command) {
        Some(commands) => ShellLine::Commands(commands),
        None => ShellLine::Other,
    }
}

/// Every command of `text` when each of its lines is blank, a comment or
/// install and run commands (the body of a `shell` or `start` action).
pub(in crate::runtime::protocol) fn commands(text: &str) -> Option<Vec<Command>> {
    let mut all = Vec::new();
    for line in text.lines() {
        match read_line(line, false) {
            ShellLine::Skip => {}
            ShellLine::Commands(commands) => all.extend(commands),
            ShellLine::Other => return None,
        }
    }
    (!all.is_empty()).then_some(all)
}

/// Whether `command` runs a dev server that keeps running (`npm run dev`,
/// `npx vite`, `npm install && npm run dev`, …): a `start`, not a `shell`.
pub fn starts_a_server(command: &str) -> bool {
    commands(command).is_some_and(|all| all.iter().any(|c| c.start))
}

/// Whether a command action cut off by the end of the answer is whole: its
/// commands are recognised and the last ends in a word that cannot be the
/// start of a longer one we would run wrongly (`npm run dev`, not `npx vi`
/// or `npm install reac`).
pub(in crate::runtime::protocol) fn complete_when_cut(text: &str) -> bool {
    commands(text).is_some_and(|all| all.last().is_some_and(|c| whole_words(&c.text)))
}

/// `a && b && c`: every part a command we recognise.
fn chain(line: &str) -> Option<Vec<Command>> {
    line.split("&&")
        .map(|part| {
            let text = part.split_whitespace().collect::<Vec<_>>().join(" ");
            classify(&text).map(|start| Command { text, start })
        })
        .collect()
}

/// Some(serves) for an install or run command, None for anything else.
fn classify(command: &str) -> Option<bool> {
    if command.is_empty() || command.contains(|c: char| ";|&<>`$(){}\\\"'*?!".contains(c)) {
        return None;
    }
    let words: Vec<&str> = command.split_whitespace().collect();
    match words[0] {
        "npm" => npm(&words[1..]),
        "pnpm" | "yarn" | "bun" => manager(&words[1..], words[0] == "yarn"),
        "npx" | "pnpx" | "bunx" => npx(&words[1..]),
        "node" if words.len() == 2 && looks_like_path(words[1]) => Some(true),
        _ => None,
    }
}

fn npm(args: &[&str]) -> Option<bool> {
    match args.first().copied()? {
        "install" | "i" | "ci" | "add" | "in" => Some(false),
        "run" | "run-script" => args.get(1).map(|script| serves(script)),
        "start" => Some(true),
        "test" | "t" => Some(false),
        _ => None,
    }
}

/// pnpm, yarn and bun: `install`, `add`, `run <script>` or `<script>`.
fn manager(args: &[&str], bare_installs: bool) -> Option<bool> {
    match args.first().copied() {
        None => bare_installs.then_some(false),
        Some("install" | "i" | "add") => Some(false),
        Some("run") => args.get(1).map(|script| serves(script)),
        Some(script) if KNOWN_SCRIPTS.contains(&script) => Some(serves(script)),
        Some(_) => None,
    }
}

fn npx(args: &[&str]) -> Option<bool> {
    let mut rest = args
        .iter()
        .copied()
        .skip_while(|a| matches!(*a, "-y" | "--yes"));
    let tool = rest.next()?;
    let name = tool.rsplit_once('@').map_or(tool, |(name, _)| name);
    if name.is_empty() || name.starts_with('-') || name.starts_with("create-") {
        return None;
    }
    let next = rest.next().unwrap_or("");
    let serving = (SERVING_TOOLS.contains(&name) && !matches!(next, "build" | "optimize"))
        || (FRAMEWORKS.contains(&name) && matches!(next, "dev" | "start" | "preview" | ""));
    Some(serving)
}

fn serves(script: &str) -> bool {
    SCRIPTS_THAT_SERVE.contains(&script) || script.starts_with("dev:")
}

/// A command whose every word is complete: an install without packages, a
/// known script, `npx vite`, `node <file>` with a known extension.
fn whole_words(command: &str) -> bool {
    let words: Vec<&str> = command.split_whitespace().collect();
    let script = |s: &str| KNOWN_SCRIPTS.contains(&s);
    match words.as_slice() {
        ["npm" | "pnpm" | "bun", "install" | "i" | "ci"] | ["yarn"] | ["yarn", "install"] => true,
        ["npm", "start"] | ["npx", "vite"] => true,
        ["npm" | "pnpm" | "yarn" | "bun", "run", s] => script(s),
        ["pnpm" | "yarn" | "bun", s] => script(s),
        ["node", file] => [".js", ".mjs", ".cjs", ".ts"]
            .iter()
            .any(|ext| file.ends_with(ext)),
        _ => false,
    }
}
