//! The system prompt: the bolt protocol the answer must follow, the runtime
//! its actions run in, and the project as it is now (its files, and what
//! the user changed by hand since the last answer).

use std::fmt::Write;

use crate::server::config::{Config, NetworkMode, RuntimeKind};

/// Where the answer's actions will run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RuntimeDescription {
    /// Processes on the IDE's server, in a bubblewrap sandbox.
    Sandbox {
        /// What commands can reach (the npm registry, everything, nothing).
        network: NetworkMode,
        /// Wall-clock limit of a command that is not `start`.
        timeout_secs: u64,
    },
    /// A WebContainer in the user's browser.
    Webcontainer,
}

impl RuntimeDescription {
    pub fn from_config(config: &Config) -> RuntimeDescription {
        RuntimeDescription::for_kind(config, config.runtime.default)
    }

    /// The description of a project that runs on `kind`.
    pub fn for_kind(config: &Config, kind: RuntimeKind) -> RuntimeDescription {
        match kind {
            RuntimeKind::Sandbox => RuntimeDescription::Sandbox {
                network: config.sandbox.network,
                timeout_secs: config.sandbox.timeout_secs,
            },
            RuntimeKind::Webcontainer => RuntimeDescription::Webcontainer,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProjectFile {
    pub path: String,
    pub content: String,
}

/// A file the user changed by hand; an empty `before` is a new file, an
/// empty `after` a deleted one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UserEdit {
    pub path: String,
    pub before: String,
    pub after: String,
}

#[derive(Clone, Debug)]
pub struct PromptContext {
    pub runtime: RuntimeDescription,
    pub files: Vec<ProjectFile>,
    pub user_edits: Vec<UserEdit>,
    /// Tokens the project part (diffs and file contents) may take.
    pub token_budget: usize,
    /// Paths shown first, most relevant first (`budget::fit::relevant_first`).
    pub relevant: Vec<String>,
    /// A summary of the conversation's older turns, which the request leaves out.
    pub summary: Option<String>,
    /// The model's window is small ([`COMPACT_WINDOW`] or less): the format
    /// is taught in a few lines, leaving the room to the project.
    pub compact: bool,
    /// The model slipped out of the format twice in a row: the rules are
    /// restated at the end of every request.
    pub remind_format: bool,
    /// The request offers the file and shell tools (`agent::as_actions`):
    /// the prompt ends by saying to call them instead of writing tags.
    pub tools: bool,
    /// The user's rules, as a section of the prompt (`session::rules`);
    /// empty when there are none.
    pub rules: String,
    /// Plan mode: the answer discusses and plans; nothing in it runs.
    pub plan: bool,
}

/// Windows of this many tokens or fewer get the compact prompt.
pub const COMPACT_WINDOW: u32 = 8 * 1024;

/// A rough token count: about four bytes per token for code and English.
pub fn estimate_tokens(text: &str) -> usize {
    text.len().div_ceil(4)
}

const PROTOCOL: &str = r#"You build and change web applications inside Rivet, an IDE. The user describes what they want; you answer with a short explanation and one artifact that the IDE carries out at once: it writes the files and runs the commands, and the user watches the app appear in the preview.

## How to answer

Say in one or two sentences what you will do, then give exactly one artifact, then at most one or two closing sentences. For a question that needs no change, answer in plain text without an artifact.

<boltArtifact id="short-kebab-case-id" title="Short title">
<boltAction type="file" filePath="package.json">
...the complete content of the file...
</boltAction>
<boltAction type="edit" filePath="src/App.jsx">
<<<<<<< SEARCH
...lines copied exactly from the current file...
=======
...the lines that replace them...
>>>>>>> REPLACE
</boltAction>
<boltAction type="shell">
npm install
</boltAction>
<boltAction type="start">
npm run dev
</boltAction>
</boltArtifact>

Rules:
1. Actions run one after another, in the order you write them.
2. A `file` action writes the whole file. Always give the complete content. Never abbreviate: no placeholders such as "// rest of the code unchanged", "...", "same as before" or "existing code here". What you write is exactly what the file will contain.
3. An `edit` action changes an existing file with one or more SEARCH/REPLACE blocks. Each SEARCH part must match the current file exactly, whitespace included, and only once: include enough lines to make it unique. Use `edit` for small changes to a large file, `file` for new files and for rewriting most of a file.
4. Write package.json first, listing every package the code imports.
5. After creating or changing package.json, run `npm install` in a `shell` action, before any `start`.
6. A `start` action launches the dev server and keeps it running. Put it last, and only once. Include it when the app is new or its dependencies changed; after source changes alone the running dev server reloads by itself. Never start a server with a `shell` action.
7. Paths are relative to the project root: no leading slash, no `..`.
8. Do not put the artifact inside a Markdown code fence. Markdown is fine in the text around it.
9. Commands must not wait for input: pass flags such as `--yes` instead. No `sudo`, no global installs.
10. Prefer Vite for new projects (React, Vue, Svelte or plain JavaScript), with the scripts "dev", "build" and "preview"."#;

/// The format in a few lines: the prompt for small windows, and the
/// reminder for a model that slips out of the format.
const COMPACT_RULES: &str = r#"Answer with one or two sentences, then one artifact that the IDE runs at once:

<boltArtifact id="kebab-id" title="Title">
<boltAction type="file" filePath="path/from/root.ext">
complete file content
</boltAction>
<boltAction type="shell">
npm install
</boltAction>
<boltAction type="start">
npm run dev
</boltAction>
</boltArtifact>

- Only tags write files and run commands: code in a Markdown fence is shown, never written. Never put the artifact in a fence.
- A `file` action holds the whole file: no "..." or "rest unchanged". To change part of a file use `<boltAction type="edit" filePath="…">` with `<<<<<<< SEARCH`, the exact current lines, `=======`, the new lines, `>>>>>>> REPLACE`.
- package.json first, then `npm install` (shell), then one `start` last. Relative paths, no `..`. Commands never wait for input."#;

const COMPACT_INTRO: &str = "You build web apps inside Rivet, an IDE: the user says what they want and the IDE carries out your artifact at once.";

/// The project's PostgreSQL database, as the sandbox runtime offers it.
const DATABASE: &str = "### Database\n\n\
The project has its own PostgreSQL database. Create and change tables with a migration, which \
runs once, in one transaction, and is recorded: \
`<boltAction type=\"supabase\" operation=\"migration\" filePath=\"supabase/migrations/001_create_todos.sql\">SQL</boltAction>`. \
Never change a migration that ran: write a new file for each change. To look at data, \
`<boltAction type=\"supabase\" operation=\"query\">SELECT …</boltAction>` shows the result to you \
and the user. From the first migration on, the project's processes get `DATABASE_URL` (and \
`PGHOST`, `PGDATABASE`, `PGUSER`, `PGPASSWORD`), so server code connects with `pg`, Prisma, \
Drizzle or `psql` and no setup; write the migration before the `start` action. Only server code \
(an Express or Node server, an API route) can reach the database: browser code calls that \
server, which Vite can proxy (`server.proxy`). Never print or hard-code these values.";

fn describe_runtime(runtime: RuntimeDescription) -> String {
    match runtime {
        RuntimeDescription::Sandbox {
            network,
            timeout_secs,
        } => {
            let network = match network {
                NetworkMode::Registry => {
                    "Commands reach only the package registry: npm installs packages, but nothing else on the network is reachable (no downloads with curl or git, no external APIs from build scripts)."
                }
                NetworkMode::Full => {
                    "Commands can reach the internet, so npm installs packages from the registry."
                }
                NetworkMode::None => {
                    "Commands have no network access: only packages already in the local npm cache can be installed, so keep to common ones."
                }
            };
            format!(
                "## Where the actions run\n\n\
                 A Linux sandbox on the IDE's server: Node.js 20 and npm, with bash and the usual \
                 command-line tools. Every `shell` action starts in the project directory. There is \
                 no display and no browser, so tools that need one (Playwright browsers, Electron, \
                 GUI programs) do not work; prefer pure JavaScript packages to ones that compile \
                 native code. {network} A command other than `start` is stopped after \
                 {timeout_secs} s. The preview shows the dev server: the IDE detects the port it \
                 listens on, so keep the framework's default host and port.\n\n{DATABASE}"
            )
        }
        RuntimeDescription::Webcontainer => "## Where the actions run\n\n\
             A WebContainer in the user's browser: Node.js and npm running in WebAssembly, with a \
             small shell (no bash, no git, no Python, no native binaries). Only pure JavaScript or \
             WebAssembly packages work. npm installs packages from the registry over the \
             internet. The preview shows the dev server as soon as it listens on a port. There is \
             no database here: an app that stores data on a server needs the sandbox runtime \
             (the project's settings), so keep data in the browser (localStorage, IndexedDB)."
            .to_owned(),
    }
}

/// Lock files, dependencies and build output say nothing useful to the
/// model and would eat the budget: they are listed, never included.
fn worth_including(file: &ProjectFile) -> bool {
    const SKIPPED_FILES: &[&str] = &["package-lock.json", "yarn.lock", "pnpm-lock.yaml"];
    let name = file.path.rsplit('/').next().unwrap_or(&file.path);
    !crate::runtime::tree::is_inside_skipped_dir(&file.path)
        && !SKIPPED_FILES.contains(&name)
        && !file.content.contains('\0')
}

/// The relevant files first, in their order; then package.json (the model
/// needs it most), then the rest in path order.
fn priority<'a>(file: &'a ProjectFile, relevant: &[String]) -> (usize, u8, &'a str) {
    let rank = relevant
        .iter()
        .position(|p| *p == file.path)
        .unwrap_or(relevant.len());
    (
        rank,
        u8::from(file.path != "package.json"),
        file.path.as_str(),
    )
}

pub fn system_prompt(ctx: &PromptContext) -> String {
    let mut out = String::with_capacity(8 * 1024);
    if ctx.compact {
        let _ = write!(
            out,
            "{COMPACT_INTRO}\n\n{COMPACT_RULES}\n\n{}\n\n",
            compact_runtime(ctx.runtime)
        );
    } else {
        out.push_str(PROTOCOL);
        out.push_str("\n\n");
        out.push_str(&describe_runtime(ctx.runtime));
        out.push_str("\n\n");
    }
    if !ctx.rules.is_empty() {
        out.push_str(ctx.rules.trim_start());
        out.push('\n');
    }
    let mut budget = ctx.token_budget;
    if !ctx.user_edits.is_empty() {
        out.push_str(&user_edits_section(&ctx.user_edits, &mut budget));
        out.push('\n');
    }
    out.push_str(&files_section(&ctx.files, &ctx.relevant, &mut budget));
    if let Some(summary) = &ctx.summary {
        let _ = write!(
            out,
            "\n## The conversation so far\n\nThe older part of the conversation, summarized \
             (the newest messages follow in full):\n\n{summary}\n"
        );
    }
    if ctx.tools {
        out.push_str(TOOLS_INSTEAD);
    }
    // A plan has no artifact to remind of.
    if ctx.plan {
        out.push_str(PLAN_MODE);
    } else if ctx.remind_format {
        let _ = write!(
            out,
            "\n## Reminder: answer in the format\n\nYour recent answers put code in Markdown \
             instead of the artifact's tags, so the IDE could not build them. \
             {COMPACT_RULES}\n"
        );
    }
    out
}

/// The end of the prompt in Plan mode: it overrides "give one artifact".
pub const PLAN_MODE: &str = "\n## Plan mode: plan, do not build\n\nThe user wants to discuss and plan before anything is \
built. For this answer, do not write an artifact, tags or whole files: nothing in this answer runs. Answer with what \
you understood, the approach, the files you would create or change (one line each, with what goes in them), the \
packages, and any question the user should decide. Keep it short. The user will then ask you to build the plan.\n";

/// The end of the prompt when the request offers tools; a request that
/// drops them (the provider refused tools) drops this too.
pub const TOOLS_INSTEAD: &str = "\n## Tools instead of tags\n\nFor this answer, do not write the artifact or any tags: call the tools instead, \
in the order the actions would run. `write_file` writes a whole file (package.json first); `replace` changes one \
unique piece of a file; `run_shell_command` runs `npm install` and, last and once, the dev server (`npm run dev`). \
The IDE runs the calls once your answer ends; say in a sentence what you do.\n";

/// The fix loop's message after an answer that had code but no action.
pub fn format_nudge() -> String {
    format!(
        "Your last answer put code in the chat, but Rivet writes files and runs commands only \
         from the artifact's tags, so nothing was built. Answer again with the same work as \
         one artifact.\n\n{COMPACT_RULES}"
    )
}

/// The runtime in one sentence, for the compact prompt.
fn compact_runtime(runtime: RuntimeDescription) -> &'static str {
    match runtime {
        RuntimeDescription::Sandbox { network, .. } => match network {
            NetworkMode::None => {
                "Actions run in a Linux sandbox with Node.js 20 and npm, without network: keep to packages in the local npm cache. Use Vite."
            }
            NetworkMode::Registry | NetworkMode::Full => {
                "Actions run in a Linux sandbox with Node.js 20 and npm (the registry is reachable). Use Vite; keep its default host and port. A PostgreSQL database is there for server code: <boltAction type=\"supabase\" operation=\"migration\" filePath=\"supabase/migrations/001_x.sql\">SQL</boltAction> runs once; then DATABASE_URL is set."
            }
        },
        RuntimeDescription::Webcontainer => {
            "Actions run in a WebContainer in the browser: Node.js and npm, no native binaries. Use Vite."
        }
    }
}

fn user_edits_section(edits: &[UserEdit], budget: &mut usize) -> String {
    let mut out = String::from(
        "## Changes the user made by hand since your last answer\n\n\
         Keep them: build on the files as they are now, not as you last wrote them.\n\n",
    );
    for edit in edits {
        let diff = unified_diff(edit);
        let cost = estimate_tokens(&diff);
        if cost <= *budget {
            *budget -= cost;
            let _ = write!(out, "```diff\n{diff}```\n\n");
        } else {
            let _ = writeln!(
                out,
                "- {} changed (the diff is too large to show; its current content is listed below)\n",
                edit.path
            );
        }
    }
    out
}

fn unified_diff(edit: &UserEdit) -> String {
    let before = if edit.before.is_empty() {
        "/dev/null".to_owned()
    } else {
        format!("a/{}", edit.path)
    };
    let after = if edit.after.is_empty() {
        "/dev/null".to_owned()
    } else {
        format!("b/{}", edit.path)
    };
    let mut diff = similar::TextDiff::from_lines(&edit.before, &edit.after)
        .unified_diff()
        .context_radius(3)
        .header(&before, &after)
        .to_string();
    if !diff.ends_with('\n') {
        diff.push('\n');
    }
    diff
}

fn files_section(files: &[ProjectFile], relevant: &[String], budget: &mut usize) -> String {
    if files.is_empty() {
        return "## The project\n\nThe project is empty: start with package.json.\n".to_owned();
    }
    let mut ordered: Vec<&ProjectFile> = files.iter().collect();
    ordered.sort_by(|a, b| priority(a, relevant).cmp(&priority(b, relevant)));
    let mut included = Vec::new();
    let mut listed = String::new();
    for file in &ordered {
        let cost = estimate_tokens(&file.content);
        let fits = worth_including(file) && cost <= *budget;
        if fits {
            *budget -= cost;
            included.push(*file);
        }
        let _ = writeln!(
            listed,
            "- {} ({} bytes){}",
            file.path,
            file.content.len(),
            if fits { "" } else { ", content not shown" }
        );
    }
    let mut out = format!(
        "## The project\n\nFiles ({}), with the content of those that fit:\n\n{listed}\n",
        files.len()
    );
    for file in included {
        let newline = if file.content.ends_with('\n') {
            ""
        } else {
            "\n"
        };
        let _ = write!(
            out,
            "<projectFile path=\"{}\">\n{}{newline}</projectFile>\n\n",
            file.path, file.content
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(path: &str, content: &str) -> ProjectFile {
        ProjectFile {
            path: path.into(),
            content: content.into(),
        }
    }

    fn context(files: Vec<ProjectFile>, user_edits: Vec<UserEdit>, budget: usize) -> PromptContext {
        PromptContext {
            runtime: RuntimeDescription::Sandbox {
                network: NetworkMode::Registry,
                timeout_secs: 300,
            },
            files,
            user_edits,
            token_budget: budget,
            relevant: Vec::new(),
            summary: None,
            compact: false,
            remind_format: false,
            tools: false,
            rules: String::new(),
            plan: false,
        }
    }

    #[test]
    fn the_protocol_rules_are_taught() {
        let prompt = system_prompt(&context(vec![], vec![], 1000));
        for needle in [
            "<boltArtifact",
            "type=\"file\"",
            "<<<<<<< SEARCH",
            ">>>>>>> REPLACE",
            "package.json first",
            "`npm install`",
            "Put it last",
            "rest of the code unchanged",
            "Node.js 20",
            "The project is empty",
        ] {
            assert!(prompt.contains(needle), "missing {needle}");
        }
    }

    #[test]
    fn a_small_window_gets_the_format_in_a_few_lines() {
        let full = system_prompt(&context(vec![], vec![], 1000));
        let mut ctx = context(vec![], vec![], 1000);
        ctx.compact = true;
        let compact = system_prompt(&ctx);
        assert!(
            compact.len() * 2 < full.len(),
            "compact {} bytes, full {}",
            compact.len(),
            full.len()
        );
        for needle in [
            "<boltArtifact",
            "type=\"file\" filePath=",
            "<<<<<<< SEARCH",
            ">>>>>>> REPLACE",
            "npm install",
            "type=\"start\"",
            "never written",
            "Node.js 20",
            "The project is empty",
        ] {
            assert!(compact.contains(needle), "missing {needle}");
        }
        assert!(!compact.contains("Reminder"));
    }

    #[test]
    fn a_model_that_slips_is_reminded_of_the_format_at_the_end() {
        for compact in [false, true] {
            let mut ctx = context(vec![file("package.json", "{}")], vec![], 1000);
            ctx.compact = compact;
            ctx.remind_format = true;
            let prompt = system_prompt(&ctx);
            let reminder = prompt.rfind("## Reminder: answer in the format").unwrap();
            assert!(reminder > prompt.find("<projectFile").unwrap(), "{compact}");
            assert!(prompt[reminder..].contains("<boltAction type=\"file\""));
        }
    }

    #[test]
    fn the_users_rules_come_before_the_project_in_both_prompts() {
        for compact in [false, true] {
            let mut ctx = context(vec![file("package.json", "{}")], vec![], 1000);
            ctx.compact = compact;
            assert!(!system_prompt(&ctx).contains("## The user's rules"));
            ctx.rules = "\n## The user's rules\n\nUse tabs.\n".into();
            let prompt = system_prompt(&ctx);
            let rules = prompt.find("Use tabs.").unwrap();
            assert!(rules < prompt.find("<projectFile").unwrap(), "{compact}");
        }
    }

    #[test]
    fn a_plan_is_asked_for_at_the_end_of_both_prompts() {
        for compact in [false, true] {
            let mut ctx = context(vec![file("package.json", "{}")], vec![], 1000);
            ctx.compact = compact;
            ctx.remind_format = true;
            assert!(!system_prompt(&ctx).contains(PLAN_MODE));
            ctx.plan = true;
            let prompt = system_prompt(&ctx);
            assert!(prompt.ends_with(PLAN_MODE), "{compact}");
        }
    }

    #[test]
    fn a_request_with_tools_says_to_call_them_at_the_end() {
        let mut ctx = context(vec![file("package.json", "{}")], vec![], 1000);
        assert!(!system_prompt(&ctx).contains("Tools instead of tags"));
        ctx.tools = true;
        ctx.remind_format = true;
        let prompt = system_prompt(&ctx);
        let tools = prompt.find(TOOLS_INSTEAD).unwrap();
        assert!(tools > prompt.find("<projectFile").unwrap());
        for name in ["write_file", "replace", "run_shell_command"] {
            assert!(prompt[tools..].contains(name), "{name}");
        }
    }

    #[test]
    fn the_runtime_is_described() {
        let check = |runtime, needle: &str| {
            let mut ctx = context(vec![], vec![], 0);
            ctx.runtime = runtime;
            assert!(system_prompt(&ctx).contains(needle), "{needle}");
        };
        check(RuntimeDescription::Webcontainer, "WebContainer");
        check(
            RuntimeDescription::Webcontainer,
            "needs the sandbox runtime",
        );
        check(
            RuntimeDescription::Sandbox {
                network: NetworkMode::Registry,
                timeout_secs: 60,
            },
            "operation=\"migration\"",
        );
        check(
            RuntimeDescription::Sandbox {
                network: NetworkMode::Registry,
                timeout_secs: 60,
            },
            "`DATABASE_URL`",
        );
        check(
            RuntimeDescription::Sandbox {
                network: NetworkMode::None,
                timeout_secs: 60,
            },
            "no network access",
        );
        check(
            RuntimeDescription::Sandbox {
                network: NetworkMode::Registry,
                timeout_secs: 60,
            },
            "reach only the package registry",
        );
        check(
            RuntimeDescription::Sandbox {
                network: NetworkMode::Full,
                timeout_secs: 60,
            },
            "stopped after 60 s",
        );
    }

    /// (files, budget) → which paths have their content included.
    fn check_budget(files: &[(&str, usize)], budget: usize, expect_included: &[&str]) {
        let files = files
            .iter()
            .map(|(p, n)| file(p, &"x".repeat(*n)))
            .collect();
        let prompt = system_prompt(&context(files, vec![], budget));
        let included: Vec<&str> = prompt
            .split("<projectFile path=\"")
            .skip(1)
            .filter_map(|s| s.split('"').next())
            .collect();
        assert_eq!(included, expect_included, "budget {budget}");
    }

    #[test]
    fn contents_fit_the_budget_package_json_first() {
        check_budget(
            &[("src/a.js", 40), ("package.json", 40)],
            20,
            &["package.json", "src/a.js"],
        );
        check_budget(
            &[("src/a.js", 40), ("package.json", 40)],
            19,
            &["package.json"],
        );
        // A large file is skipped, smaller later ones still fit.
        check_budget(
            &[("a.js", 400), ("b.js", 40), ("c.js", 40)],
            25,
            &["b.js", "c.js"],
        );
        check_budget(&[("a.js", 4)], 0, &[]);
        check_budget(
            &[
                ("package-lock.json", 4),
                ("node_modules/x/i.js", 4),
                ("web/dist/a.js", 4),
            ],
            100,
            &[],
        );
    }

    #[test]
    fn the_files_named_by_the_build_or_changed_come_first_and_keep_the_budget() {
        let files = vec![
            file("package.json", &"p".repeat(40)),
            file("src/a.js", &"a".repeat(40)),
            file("src/b.js", &"b".repeat(40)),
        ];
        let included = |relevant: &[&str], budget| {
            let mut ctx = context(files.clone(), vec![], budget);
            ctx.relevant = relevant.iter().map(|p| (*p).to_owned()).collect();
            let prompt = system_prompt(&ctx);
            prompt
                .split("<projectFile path=\"")
                .skip(1)
                .filter_map(|s| s.split('"').next().map(str::to_owned))
                .collect::<Vec<_>>()
        };
        assert_eq!(included(&["src/b.js"], 10), ["src/b.js"]);
        assert_eq!(
            included(&["src/b.js", "src/a.js"], 30),
            ["src/b.js", "src/a.js", "package.json"]
        );
        assert_eq!(included(&[], 10), ["package.json"]);
    }

    #[test]
    fn a_summary_of_older_turns_is_given_as_such() {
        let mut ctx = context(vec![], vec![], 0);
        ctx.summary = Some("The user built a todo app.".into());
        let prompt = system_prompt(&ctx);
        assert!(prompt.contains("## The conversation so far"));
        assert!(prompt.ends_with("The user built a todo app.\n"));
        assert!(!system_prompt(&context(vec![], vec![], 0)).contains("conversation so far"));
    }

    #[test]
    fn every_file_is_listed_even_when_not_shown() {
        let prompt = system_prompt(&context(
            vec![
                file("big.js", &"y".repeat(4000)),
                file("package-lock.json", "{}"),
            ],
            vec![],
            10,
        ));
        assert!(prompt.contains("- big.js (4000 bytes), content not shown"));
        assert!(prompt.contains("- package-lock.json (2 bytes), content not shown"));
        assert!(!prompt.contains("yyyy"));
    }

    #[test]
    fn user_edits_become_unified_diffs() {
        let edit = UserEdit {
            path: "src/App.jsx".into(),
            before: "a\nb\nc\n".into(),
            after: "a\nB\nc\n".into(),
        };
        let created = UserEdit {
            path: "notes.md".into(),
            before: String::new(),
            after: "hi\n".into(),
        };
        let prompt = system_prompt(&context(vec![], vec![edit, created], 1000));
        assert!(
            prompt.contains(
                "--- a/src/App.jsx\n+++ b/src/App.jsx\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n"
            ),
            "{prompt}"
        );
        assert!(
            prompt.contains("--- /dev/null\n+++ b/notes.md\n"),
            "{prompt}"
        );
    }

    #[test]
    fn diffs_count_against_the_budget() {
        let edit = UserEdit {
            path: "a.js".into(),
            before: "x\n".repeat(100),
            after: "y\n".repeat(100),
        };
        let prompt = system_prompt(&context(vec![file("a.js", "y\n")], vec![edit], 50));
        assert!(prompt.contains("a.js changed (the diff is too large"));
        assert!(prompt.contains("<projectFile path=\"a.js\">\ny\n</projectFile>"));
    }
}
