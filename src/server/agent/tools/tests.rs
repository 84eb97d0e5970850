use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};

use super::shell::cap_middle;
use super::*;
use crate::runtime::build_result::Stage;
use crate::runtime::host::fake::{FakeRuntime, Script};

fn context(fake: &FakeRuntime) -> ToolContext {
    ToolContext::new(Arc::new(fake.clone()))
}

async fn call(fake: &FakeRuntime, tool: &str, args: Value) -> ToolOutput {
    run_tool(&context(fake), tool, &args.to_string()).await
}

fn app() -> FakeRuntime {
    FakeRuntime::with_files([
        ("package.json", "{\n  \"name\": \"todo\"\n}\n"),
        (
            "src/App.jsx",
            "export default function App() {\n  return <h1>Todo</h1>;\n}\n",
        ),
        ("src/main.jsx", "import App from './App';\nrender(App);\n"),
        ("src/styles/app.CSS", "h1 { color: red; }\n"),
        ("node_modules/react/index.js", "export const Todo = 1;\n"),
        ("dist/bundle.js", "const Todo = 1;\n"),
        ("generated/out.js", "const Todo = 2;\n"),
        (".gitignore", "generated\n*.log\n"),
        ("debug.log", "Todo: log line\n"),
    ])
}

// --- arguments and dispatch ---

#[tokio::test]
async fn an_unknown_tool_is_answered_with_the_list_of_tools() {
    let out = call(&app(), "delete_everything", json!({})).await;
    assert!(!out.ok);
    assert!(
        out.text.contains("no tool named \"delete_everything\""),
        "{}",
        out.text
    );
    assert!(out.text.contains("run_shell_command"), "{}", out.text);
}

#[tokio::test]
async fn malformed_or_missing_arguments_are_tool_errors() {
    let fake = app();
    let cx = context(&fake);
    for (tool, args) in [
        ("read_file", "{\"path\": "),
        ("read_file", "[]"),
        ("read_file", "{}"),
        ("write_file", "{\"file_path\": \"a.txt\"}"),
        ("write_file", "{\"path\": \"a.txt\", \"content\": \"x\"}"),
        (
            "replace",
            "{\"file_path\": \"a\", \"old_string\": 1, \"new_string\": \"\"}",
        ),
        ("read_build_result", "{\"verbose\": true}"),
    ] {
        let out = run_tool(&cx, tool, args).await;
        assert!(!out.ok, "{tool} {args}");
        assert!(
            out.text.starts_with("Error: invalid arguments"),
            "{tool} {args}: {}",
            out.text
        );
    }
}

#[test]
fn every_tool_has_an_object_schema_naming_its_required_arguments() {
    let specs = specs();
    assert_eq!(specs.len(), Tool::ALL.len());
    for spec in specs {
        assert_eq!(spec.parameters["type"], "object", "{}", spec.name);
        let properties = spec.parameters["properties"].as_object().unwrap();
        for required in spec.parameters["required"].as_array().unwrap() {
            assert!(
                properties.contains_key(required.as_str().unwrap()),
                "{}",
                spec.name
            );
        }
        assert!(Tool::from_name(&spec.name).is_some());
    }
    assert!(Tool::WriteFile.needs_approval() && Tool::Replace.needs_approval());
    assert!(Tool::RunShellCommand.needs_approval() && !Tool::ReadFile.needs_approval());
}

// --- paths ---

#[tokio::test]
async fn path_escapes_are_refused_by_every_file_tool() {
    let fake = app();
    fake.symlink("linked", "/etc");
    for path in [
        "../outside.txt",
        "src/../../x",
        "/etc/passwd",
        ".git/config",
        "linked/passwd",
    ] {
        for (tool, args) in [
            ("read_file", json!({ "path": path })),
            ("write_file", json!({ "file_path": path, "content": "x" })),
            (
                "replace",
                json!({ "file_path": path, "old_string": "a", "new_string": "b" }),
            ),
        ] {
            let out = call(&fake, tool, args).await;
            assert!(!out.ok, "{tool} {path}: {}", out.text);
        }
    }
    for (tool, args) in [
        ("list_directory", json!({ "path": "../" })),
        ("list_directory", json!({ "path": "/etc" })),
        ("list_directory", json!({ "path": "linked" })),
        ("glob", json!({ "pattern": "*", "path": "/" })),
        (
            "search_file_content",
            json!({ "pattern": "root", "path": "linked" }),
        ),
    ] {
        let out = call(&fake, tool, args.clone()).await;
        assert!(!out.ok, "{tool} {args}: {}", out.text);
    }
    assert_eq!(fake.file("outside.txt"), None);
}

#[tokio::test]
async fn paths_under_home_project_are_the_projects_own() {
    let fake = app();
    let out = call(
        &fake,
        "read_file",
        json!({ "path": "/home/project/src/main.jsx" }),
    )
    .await;
    assert!(out.ok && out.text.contains("import App"), "{}", out.text);
    let out = call(&fake, "list_directory", json!({ "path": "/home/project" })).await;
    assert!(out.text.contains("[DIR] src"), "{}", out.text);
    let out = call(&fake, "read_file", json!({ "path": "/home/projectx/a" })).await;
    assert!(!out.ok, "{}", out.text);
}

// --- read_file ---

#[tokio::test]
async fn read_file_numbers_lines() {
    let out = call(&app(), "read_file", json!({ "path": "src/App.jsx" })).await;
    assert!(out.ok);
    assert!(
        out.text
            .starts_with("     1| export default function App() {\n"),
        "{}",
        out.text
    );
    assert!(out.text.contains("     3| }\n"), "{}", out.text);
}

#[tokio::test]
async fn read_file_pages_with_offset_and_limit() {
    let fake = FakeRuntime::new();
    let text: String = (1..=2500).map(|n| format!("line {n}\n")).collect();
    fake.put("big.txt", text.as_bytes());
    let first = call(&fake, "read_file", json!({ "path": "big.txt" })).await;
    assert!(
        first
            .text
            .starts_with("Lines 1-2000 of 2500 in big.txt; read more with offset=2000.")
    );
    assert!(first.text.contains("  2000| line 2000\n") && !first.text.contains("line 2001"));
    let page = call(
        &fake,
        "read_file",
        json!({ "path": "big.txt", "offset": 2400, "limit": 3 }),
    )
    .await;
    assert!(
        page.text
            .contains("  2401| line 2401\n  2402| line 2402\n  2403| line 2403\n"),
        "{}",
        page.text
    );
    assert!(!page.text.contains("line 2404"));
}

#[tokio::test]
async fn read_file_limits_out_of_range_are_refused() {
    let fake = app();
    for args in [
        json!({ "path": "src/App.jsx", "limit": 0 }),
        json!({ "path": "src/App.jsx", "limit": 2001 }),
        json!({ "path": "src/App.jsx", "offset": 3 }),
        json!({ "path": "src/App.jsx", "offset": -1 }),
    ] {
        let out = call(&fake, "read_file", args.clone()).await;
        assert!(!out.ok, "{args}: {}", out.text);
    }
}

#[tokio::test]
async fn read_file_describes_binary_files_without_dumping_them() {
    let fake = FakeRuntime::new();
    fake.put("logo.png", &[0x89, b'P', b'N', b'G', 0, 0, 1, 2]);
    let out = call(&fake, "read_file", json!({ "path": "logo.png" })).await;
    assert!(out.ok);
    assert_eq!(
        out.text,
        "logo.png is a binary file of 8 bytes; its contents are not shown."
    );
}

#[tokio::test]
async fn read_file_of_a_missing_file_or_a_folder_is_an_error() {
    let fake = app();
    let out = call(&fake, "read_file", json!({ "path": "src/Nope.jsx" })).await;
    assert!(!out.ok && out.text.contains("no such file"), "{}", out.text);
    let out = call(&fake, "read_file", json!({ "path": "src" })).await;
    assert!(!out.ok && out.text.contains("directory"), "{}", out.text);
}

#[tokio::test]
async fn read_file_cuts_very_long_lines() {
    let fake = FakeRuntime::new();
    fake.put("min.js", "x".repeat(5000).as_bytes());
    let out = call(&fake, "read_file", json!({ "path": "min.js" })).await;
    assert!(
        out.text.ends_with(" …[line cut]\n"),
        "{}",
        &out.text[out.text.len() - 40..]
    );
    assert!(out.text.len() < 2100);
}

// --- write_file ---

#[tokio::test]
async fn write_file_creates_then_overwrites() {
    let fake = FakeRuntime::new();
    let out = call(
        &fake,
        "write_file",
        json!({ "file_path": "src/new/a.js", "content": "a\nb\n" }),
    )
    .await;
    assert_eq!(out.text, "Created src/new/a.js (2 lines).");
    let out = call(
        &fake,
        "write_file",
        json!({ "file_path": "./src/new/a.js", "content": "c\n" }),
    )
    .await;
    assert_eq!(out.text, "Overwrote src/new/a.js (1 lines).");
    assert_eq!(fake.text("src/new/a.js").as_deref(), Some("c\n"));
}

#[tokio::test]
async fn write_file_onto_a_folder_is_an_error() {
    let fake = app();
    let out = call(
        &fake,
        "write_file",
        json!({ "file_path": "src", "content": "x" }),
    )
    .await;
    assert!(!out.ok, "{}", out.text);
}

// --- replace ---

#[tokio::test]
async fn replace_changes_the_one_match() {
    let fake = app();
    let out = call(
        &fake,
        "replace",
        json!({ "file_path": "src/App.jsx", "old_string": "<h1>Todo</h1>", "new_string": "<h1>Todos</h1>" }),
    )
    .await;
    assert!(out.ok, "{}", out.text);
    assert_eq!(out.text, "Replaced once in src/App.jsx.");
    assert!(fake.text("src/App.jsx").unwrap().contains("<h1>Todos</h1>"));
}

#[tokio::test]
async fn replace_with_a_different_number_of_matches_names_how_many_were_found() {
    let fake = FakeRuntime::with_files([("a.txt", "x = 1\ny = 1\nz = 1\n")]);
    let out = call(
        &fake,
        "replace",
        json!({ "file_path": "a.txt", "old_string": "= 1", "new_string": "= 2" }),
    )
    .await;
    assert!(!out.ok);
    assert!(
        out.text.contains("expected 1 times but occurs 3 times"),
        "{}",
        out.text
    );
    assert_eq!(fake.text("a.txt").as_deref(), Some("x = 1\ny = 1\nz = 1\n"));
    let out = call(
        &fake,
        "replace",
        json!({ "file_path": "a.txt", "old_string": "= 1", "new_string": "= 2", "expected_replacements": 3 }),
    )
    .await;
    assert_eq!(out.text, "Replaced 3 times in a.txt.");
    assert_eq!(fake.text("a.txt").as_deref(), Some("x = 2\ny = 2\nz = 2\n"));
}

#[tokio::test]
async fn replace_of_missing_text_quotes_the_closest_lines() {
    let fake = app();
    let out = call(
        &fake,
        "replace",
        json!({ "file_path": "src/App.jsx", "old_string": "  return <h2>Todo</h2>;", "new_string": "x" }),
    )
    .await;
    assert!(!out.ok);
    assert!(
        out.text.contains("matches nowhere") && out.text.contains("2 |   return <h1>Todo</h1>;"),
        "{}",
        out.text
    );
}

#[tokio::test]
async fn replace_with_an_empty_old_string_creates_a_new_file_only() {
    let fake = app();
    let out = call(
        &fake,
        "replace",
        json!({ "file_path": "NEW.md", "old_string": "", "new_string": "# New\n" }),
    )
    .await;
    assert_eq!(out.text, "Created NEW.md.");
    let out = call(
        &fake,
        "replace",
        json!({ "file_path": "NEW.md", "old_string": "", "new_string": "x" }),
    )
    .await;
    assert!(
        !out.ok && out.text.contains("old_string is empty"),
        "{}",
        out.text
    );
    assert_eq!(fake.text("NEW.md").as_deref(), Some("# New\n"));
}

#[tokio::test]
async fn replace_arguments_that_change_nothing_are_refused() {
    let fake = app();
    for args in [
        json!({ "file_path": "src/App.jsx", "old_string": "Todo", "new_string": "Todo" }),
        json!({ "file_path": "src/App.jsx", "old_string": "Todo", "new_string": "x", "expected_replacements": 0 }),
        json!({ "file_path": "src/Gone.jsx", "old_string": "a", "new_string": "b" }),
    ] {
        let out = call(&fake, "replace", args.clone()).await;
        assert!(!out.ok, "{args}: {}", out.text);
    }
}

// --- list_directory ---

#[tokio::test]
async fn list_directory_shows_folders_first_and_leaves_out_ignored_names() {
    let fake = app();
    let out = call(&fake, "list_directory", json!({ "path": "." })).await;
    assert_eq!(
        out.text,
        "Directory listing for .:\n[DIR] dist\n[DIR] node_modules\n[DIR] src\n.gitignore\npackage.json\n(2 ignored)\n"
    );
    let out = call(
        &fake,
        "list_directory",
        json!({ "path": "", "ignore": ["*.json", "node_*"], "respect_git_ignore": false }),
    )
    .await;
    assert_eq!(
        out.text,
        "Directory listing for .:\n[DIR] dist\n[DIR] generated\n[DIR] src\n.gitignore\ndebug.log\n(2 ignored)\n"
    );
}

#[tokio::test]
async fn list_directory_of_a_missing_folder_or_with_a_bad_pattern_is_an_error() {
    let fake = app();
    let out = call(&fake, "list_directory", json!({ "path": "nope" })).await;
    assert!(!out.ok, "{}", out.text);
    let out = call(
        &fake,
        "list_directory",
        json!({ "path": ".", "ignore": ["a[b"] }),
    )
    .await;
    assert!(
        !out.ok && out.text.contains("invalid pattern"),
        "{}",
        out.text
    );
}

// --- glob ---

#[tokio::test]
async fn glob_matches_paths_relative_to_the_folder_case_insensitively_by_default() {
    let fake = app();
    let out = call(&fake, "glob", json!({ "pattern": "**/*.css" })).await;
    assert_eq!(
        out.text,
        "Found 1 file(s) matching \"**/*.css\" in .:\nsrc/styles/app.CSS\n"
    );
    let out = call(
        &fake,
        "glob",
        json!({ "pattern": "**/*.css", "case_sensitive": true }),
    )
    .await;
    assert!(out.text.starts_with("No files match"), "{}", out.text);
    let out = call(&fake, "glob", json!({ "pattern": "*.jsx", "path": "src" })).await;
    assert_eq!(
        out.text, "Found 2 file(s) matching \"*.jsx\" in src:\nsrc/main.jsx\nsrc/App.jsx\n",
        "newest first"
    );
}

#[tokio::test]
async fn glob_respects_gitignore_and_never_enters_dependencies() {
    let fake = app();
    let out = call(&fake, "glob", json!({ "pattern": "**/*.js" })).await;
    assert!(out.text.starts_with("No files match"), "{}", out.text);
    let out = call(
        &fake,
        "glob",
        json!({ "pattern": "**/*.js", "respect_git_ignore": false }),
    )
    .await;
    assert_eq!(
        out.text,
        "Found 1 file(s) matching \"**/*.js\" in .:\ngenerated/out.js\n"
    );
}

#[tokio::test]
async fn glob_with_an_empty_or_broken_pattern_is_an_error() {
    let fake = app();
    for pattern in ["", "src/{a"] {
        let out = call(&fake, "glob", json!({ "pattern": pattern })).await;
        assert!(!out.ok, "{pattern}: {}", out.text);
    }
}

// --- search_file_content ---

#[tokio::test]
async fn search_file_content_answers_file_and_line_for_each_match() {
    let fake = app();
    let out = call(
        &fake,
        "search_file_content",
        json!({ "pattern": "Todo|App\\b" }),
    )
    .await;
    assert_eq!(
        out.text,
        "Found 4 match(es) for \"Todo|App\\\\b\" in .:\n---\n\
         File: src/App.jsx\nL1: export default function App() {\nL2:   return <h1>Todo</h1>;\n---\n\
         File: src/main.jsx\nL1: import App from './App';\nL2: render(App);\n---\n"
    );
}

#[tokio::test]
async fn search_file_content_filters_by_folder_and_include() {
    let fake = app();
    let out = call(
        &fake,
        "search_file_content",
        json!({ "pattern": "App", "include": "*App.jsx" }),
    )
    .await;
    assert!(
        out.text.contains("File: src/App.jsx") && !out.text.contains("main.jsx"),
        "{}",
        out.text
    );
    let out = call(
        &fake,
        "search_file_content",
        json!({ "pattern": "color", "path": "src/styles" }),
    )
    .await;
    assert!(
        out.text
            .contains("File: src/styles/app.CSS\nL1: h1 { color: red; }"),
        "{}",
        out.text
    );
    let out = call(
        &fake,
        "search_file_content",
        json!({ "pattern": "nothing here" }),
    )
    .await;
    assert_eq!(out.text, "No matches for \"nothing here\" in ..");
}

#[tokio::test]
async fn search_file_content_skips_binary_files() {
    let fake = FakeRuntime::new();
    fake.put("a.bin", b"needle\0\x01");
    fake.put("a.txt", b"needle\n");
    let out = call(&fake, "search_file_content", json!({ "pattern": "needle" })).await;
    assert!(
        out.text.contains("File: a.txt") && !out.text.contains("a.bin"),
        "{}",
        out.text
    );
}

#[tokio::test]
async fn search_file_content_with_a_broken_regex_is_an_error() {
    let out = call(
        &app(),
        "search_file_content",
        json!({ "pattern": "(unclosed" }),
    )
    .await;
    assert!(
        !out.ok && out.text.contains("invalid pattern \"(unclosed\""),
        "{}",
        out.text
    );
    let out = call(&app(), "search_file_content", json!({ "pattern": "" })).await;
    assert!(!out.ok, "{}", out.text);
}

// --- run_shell_command ---

#[tokio::test]
async fn run_shell_command_answers_output_and_exit_code() {
    let fake = FakeRuntime::new();
    fake.script("npm install", Script::exits(0, "added 12 packages\n"));
    fake.script("npm test", Script::exits(1, "1 failing"));
    let out = call(
        &fake,
        "run_shell_command",
        json!({ "command": "npm install", "description": "deps" }),
    )
    .await;
    assert!(out.ok);
    assert_eq!(out.text, "added 12 packages\n[exit code: 0]");
    let out = call(&fake, "run_shell_command", json!({ "command": "npm test" })).await;
    assert!(!out.ok);
    assert_eq!(out.text, "1 failing\n[exit code: 1]");
}

#[tokio::test]
async fn run_shell_command_leaves_a_server_running_and_reports_its_port() {
    let fake = FakeRuntime::new();
    fake.script("npm run dev", Script::serves(5173, "VITE ready\n"));
    let cx = context(&fake);
    let out = run_tool(&cx, "run_shell_command", r#"{"command": "npm run dev"}"#).await;
    assert!(out.ok, "{}", out.text);
    assert_eq!(out.port, Some(5173));
    assert!(
        out.text.contains("VITE ready") && out.text.contains("listening on port 5173"),
        "{}",
        out.text
    );
    assert_eq!(fake.open_ports().await, [5173], "the server keeps running");
    cx.stop_servers().await;
    assert!(fake.open_ports().await.is_empty());
}

#[tokio::test]
async fn run_shell_command_that_never_ends_is_stopped_at_the_time_limit() {
    let fake = FakeRuntime::new();
    fake.script(
        "sleep",
        Script {
            output: "waiting\n".to_owned(),
            ..Script::default()
        },
    );
    let cx = context(&fake).with_command_timeout(Duration::from_millis(50));
    let out = run_tool(&cx, "run_shell_command", r#"{"command": "sleep infinity"}"#).await;
    assert!(!out.ok);
    assert!(
        out.text.contains("waiting") && out.text.contains("[stopped: still running after"),
        "{}",
        out.text
    );
}

#[tokio::test]
async fn run_shell_command_hands_its_output_to_the_sink_while_it_runs() {
    let fake = FakeRuntime::new();
    fake.script(
        "sleep",
        Script {
            output: "still going\n".to_owned(),
            ..Script::default()
        },
    );
    let seen = Arc::new(std::sync::Mutex::new(Vec::<u8>::new()));
    let sink = Arc::clone(&seen);
    let cx = context(&fake)
        .with_command_timeout(Duration::from_millis(50))
        .with_output(Arc::new(move |bytes: &[u8]| {
            sink.lock().unwrap().extend_from_slice(bytes)
        }));
    let out = run_tool(&cx, "run_shell_command", r#"{"command": "sleep infinity"}"#).await;
    assert!(!out.ok, "{}", out.text);
    assert_eq!(seen.lock().unwrap().as_slice(), b"still going\n");
}

#[tokio::test]
async fn run_shell_command_stops_when_the_run_is_stopped() {
    let fake = FakeRuntime::new();
    fake.script("sleep", Script::default());
    let cancel = tokio_util::sync::CancellationToken::new();
    cancel.cancel();
    let cx = context(&fake).with_cancel(cancel);
    let out = run_tool(&cx, "run_shell_command", r#"{"command": "sleep 100"}"#).await;
    assert!(
        !out.ok && out.text.contains("[stopped by the user]"),
        "{}",
        out.text
    );
}

#[tokio::test]
async fn run_shell_command_with_an_empty_command_is_an_error() {
    let out = call(
        &FakeRuntime::new(),
        "run_shell_command",
        json!({ "command": "  " }),
    )
    .await;
    assert!(
        !out.ok && out.text.contains("command is empty"),
        "{}",
        out.text
    );
}

#[tokio::test]
async fn run_shell_command_cuts_long_output_in_the_middle() {
    let fake = FakeRuntime::new();
    let long = format!("START{}END", "x".repeat(50_000));
    fake.script("build", Script::exits(0, long));
    let out = call(&fake, "run_shell_command", json!({ "command": "build" })).await;
    assert!(out.text.starts_with("START") && out.text.ends_with("END\n[exit code: 0]"));
    assert!(
        out.text.contains("[… 20008 characters cut …]"),
        "{}",
        &out.text[14_990..15_050]
    );
}

#[test]
fn cap_middle_keeps_short_text_and_cuts_on_characters() {
    assert_eq!(cap_middle("short", 10), "short");
    assert_eq!(cap_middle("ééééééé", 4), "éé\n[… 3 characters cut …]\néé");
}

// --- read_build_result ---

#[tokio::test]
async fn read_build_result_reports_the_latest_failures() {
    let fake = FakeRuntime::new();
    let cx = context(&fake);
    assert!(
        run_tool(&cx, "read_build_result", "")
            .await
            .text
            .starts_with("No failures")
    );
    fake.put("package.json", b"{\"dependencies\": {\"vitee\": \"^5\"}}");
    let cx = cx.with_build_results(Arc::new(|| {
        vec![BuildResult::new(
            Stage::Install,
            Some("npm install".into()),
            Some(1),
            "npm error 404 Not Found - GET https://registry.npmjs.org/vitee",
        )]
    }));
    let out = run_tool(&cx, "read_build_result", "{}").await;
    // The fix loop's text: the failure, its output and the file it names.
    for part in [
        "1 failure(s):\n\n## The install failed: `npm install` (exit code 1)",
        "npm error 404 Not Found",
        "Files it names: package.json",
        "### Current content of package.json",
        "\"vitee\": \"^5\"",
    ] {
        assert!(
            out.text.contains(part),
            "{part:?} missing from:\n{}",
            out.text
        );
    }
}

#[tokio::test]
async fn glob_answers_the_newest_file_first() {
    let fake = FakeRuntime::with_files([("b.txt", "1"), ("a.txt", "2"), ("c.txt", "3")]);
    // Written again, so newest of all.
    fake.put("b.txt", b"4");
    let out = call(&fake, "glob", json!({ "pattern": "*.txt" })).await;
    assert_eq!(
        out.text,
        "Found 3 file(s) matching \"*.txt\" in .:\nb.txt\nc.txt\na.txt\n"
    );
}
