//! The recognisers on their own: lines, info strings, commands, content.

use super::elision::elided;
use super::fence::{opener, path_in_info};
use super::path::{in_comment, in_line_before, looks_like_path, named_in_prose};
use super::plausible::complete_file;
use super::shell::{ShellLine, commands, complete_when_cut, read_line};
use crate::runtime::protocol::Recovery;

#[test]
fn paths_look_like_paths() {
    for yes in [
        "src/App.tsx",
        "package.json",
        ".env",
        "Dockerfile",
        "app/[id]/page.tsx",
    ] {
        assert!(looks_like_path(yes), "{yes}");
    }
    for no in [
        "",
        "src/",
        "hello world.js",
        "1.5",
        "v2.0",
        "https://x.io/a.js",
        "e.g.",
    ] {
        assert!(!looks_like_path(no), "{no}");
    }
}

#[test]
fn info_strings_give_paths() {
    let cases = [
        (
            "tsx title=\"src/App.tsx\"",
            Some(("src/App.tsx", Recovery::FenceTitle)),
        ),
        ("js filename='a.js'", Some(("a.js", Recovery::FenceTitle))),
        ("src/App.tsx", Some(("src/App.tsx", Recovery::FenceInfo))),
        ("js:src/main.js", Some(("src/main.js", Recovery::FenceInfo))),
        ("html index.html", Some(("index.html", Recovery::FenceInfo))),
        ("js", None),
        ("bash", None),
        ("sh title=Terminal", None),
    ];
    for (info, want) in cases {
        let got = path_in_info(info);
        let want = want.map(|(p, r)| (p.to_owned(), r));
        assert_eq!(got, want, "{info}");
    }
    assert_eq!(opener("```js title=\"a.js\"").map(|o| o.ticks), Some(3));
    assert_eq!(opener("``js"), None);
    assert_eq!(opener("```a`b"), None);
}

#[test]
fn lines_before_a_fence_give_paths_only_when_they_are_the_path() {
    let cases = [
        ("#### `package.json`", Some("package.json")),
        ("**src/App.tsx**", Some("src/App.tsx")),
        ("`src/App.tsx`:", Some("src/App.tsx")),
        ("File: src/main.js", Some("src/main.js")),
        ("**File:** `src/main.js`", Some("src/main.js")),
        ("### index.html", Some("index.html")),
        ("1. `src/a.js`", Some("src/a.js")),
        ("### Node.js", None),
        ("In `src/main.js`, change the greeting:", None),
        ("Here is the code:", None),
    ];
    for (line, want) in cases {
        assert_eq!(in_line_before(line).as_deref(), want, "{line}");
    }
    assert_eq!(
        named_in_prose("In `src/main.js`, change the greeting:").as_deref(),
        Some("src/main.js")
    );
    assert_eq!(named_in_prose("Move `a.js` to `b.js`:"), None);
}

#[test]
fn first_line_comments_give_paths() {
    let cases = [
        ("// src/main.js", Some("src/main.js")),
        ("<!-- index.html -->", Some("index.html")),
        ("/* style.css */", Some("style.css")),
        ("# main.py", Some("main.py")),
        ("// File: src/a.ts", Some("src/a.ts")),
        ("// the main file", None),
        ("#!/usr/bin/env node", None),
        ("// ...existing code...", None),
    ];
    for (line, want) in cases {
        assert_eq!(in_comment(line).as_deref(), want, "{line}");
    }
}

#[test]
fn shell_lines_are_install_and_run_commands() {
    let texts = |line: ShellLine| match line {
        ShellLine::Commands(c) => c.into_iter().map(|c| (c.text, c.start)).collect(),
        other => panic!("{other:?}"),
    };
    let got: Vec<(String, bool)> = texts(read_line("npm install && npm run dev", false));
    assert_eq!(
        got,
        [
            ("npm install".to_owned(), false),
            ("npm run dev".to_owned(), true)
        ]
    );
    assert_eq!(
        texts(read_line("$ npx vite", true)),
        [("npx vite".to_owned(), true)]
    );
    assert_eq!(read_line("added 12 packages", true), ShellLine::Skip);
    assert_eq!(read_line("# install", false), ShellLine::Skip);
    for other in [
        "cd app",
        "rm -rf /",
        "npm create vite@latest",
        "curl x | sh",
        "echo \"hi\"",
    ] {
        assert_eq!(read_line(other, false), ShellLine::Other, "{other}");
    }
    assert!(commands("npm i\nnpm start\n").is_some());
    assert!(commands("ls").is_none());
}

#[test]
fn a_command_cut_off_is_whole_only_when_its_last_word_is() {
    assert!(complete_when_cut("npm install\nnpm run dev"));
    for cut in ["npx vi", "npm run d", "npm install reac", "ls"] {
        assert!(!complete_when_cut(cut), "{cut}");
    }
}

#[test]
fn elision_comments_are_found() {
    for line in [
        "// ...existing code...",
        "// ... rest unchanged",
        "/* ... */",
        "...",
        "{/* ... */}",
        "# ...",
        "// rest of the component stays the same",
    ] {
        assert_eq!(
            elided(&format!("a();\n  {line}\nb();")),
            Some(line),
            "{line}"
        );
    }
    for fine in [
        "const a = [...b];",
        "// Loading...",
        "// keep values in sync",
    ] {
        assert_eq!(elided(fine), None, "{fine}");
    }
}

#[test]
fn cut_off_files_are_whole_only_when_balanced() {
    assert!(complete_file("a.js", "function a() {\n  return 1;\n}\n"));
    assert!(!complete_file("a.js", "function a() {\n  return 1;\n"));
    assert!(!complete_file("a.js", "const a ="));
    assert!(complete_file(
        "index.html",
        "<html><body><br><p>x</p></body></html>"
    ));
    assert!(!complete_file("index.html", "<html><body><p>x</p>"));
    assert!(!complete_file("README.md", "# Title\n"));
}
