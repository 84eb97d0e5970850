use super::*;

/// What Vite 7 prints when a module no longer compiles, with
/// `@vitejs/plugin-react` (Babel) and with esbuild.
const VITE_BABEL_ERROR: &str = "\u{1b}[2m2:18:02 PM\u{1b}[22m \u{1b}[31m\u{1b}[1m[vite]\u{1b}[22m\u{1b}[39m \u{1b}[31mInternal server error: /home/project/src/App.jsx: Unexpected token, expected \",\" (62:9)\r\n\r\n  60 |             </button>\r\n  61 |           </li>\r\n> 62 |         )}\r\n     |          ^\r\n  63 |       </ul>\u{1b}[39m\r\n  Plugin: vite:react-babel\r\n  File: /home/project/src/App.jsx:62:9\r\n";
const VITE_COMPILE_ERROR: &str = "\u{1b}[2m2:14:03 PM\u{1b}[22m \u{1b}[31m\u{1b}[1m[vite]\u{1b}[22m\u{1b}[39m \u{1b}[2m(client)\u{1b}[22m \u{1b}[31mPre-transform error: Transform failed with 1 error:\r\n/home/project/src/App.jsx:86:9: ERROR: Expected \")\" but found \"}\"\u{1b}[39m\r\n  Plugin: vite:esbuild\r\n  File: /home/project/src/App.jsx:86:9\r\n  \r\n  Expected \")\" but found \"}\"\r\n  84 |            </li>\r\n  85 |          )}\r\n  86 |        </ul>\r\n";

#[test]
fn tails_are_plain_deduplicated_and_capped() {
    let cases: &[(&str, usize, usize, &str)] = &[
        // (raw output, max lines, max bytes, expected)
        ("\u{1b}[31merror\u{1b}[0m: no\r\n", 10, 100, "error: no"),
        ("10%\r50%\r100%\ndone\n", 10, 100, "100%\ndone"),
        ("a\n\n   \nb\n", 10, 100, "a\nb"),
        ("warn x\nwarn x\nwarn x\nfatal\n", 10, 100, "warn x\nfatal"),
        ("1\n2\n3\n4\n5\n", 2, 100, "4\n5"),
        ("aaaa\nbbbb\ncccc\n", 10, 10, "bbbb\ncccc"),
        ("0123456789abcdef\n", 10, 8, "01234567"),
        ("éééééééééé", 10, 5, "éé"),
        ("", 10, 100, ""),
        (
            "Error: x\n    at f (/home/project/node_modules/a/b.js:1:2)\n    at g (src/App.jsx:3:4)\n    at node:internal/x:1\n",
            10,
            100,
            "Error: x\n    at g (src/App.jsx:3:4)",
        ),
    ];
    for (raw, lines, bytes, expected) in cases {
        assert_eq!(tail(raw, *lines, *bytes), *expected, "{raw:?}");
    }
}

#[test]
fn heads_keep_the_first_lines() {
    let cases: &[(&str, usize, usize, &str)] = &[
        ("1\n2\n3\n4\n5\n", 2, 100, "1\n2"),
        ("aaaa\nbbbb\ncccc\n", 10, 10, "aaaa\nbbbb"),
        (
            "msg\n  at x (/home/project/node_modules/p/i.js:1:1)\nmsg\n",
            10,
            100,
            "msg",
        ),
    ];
    for (raw, lines, bytes, expected) in cases {
        assert_eq!(head(raw, *lines, *bytes), *expected, "{raw:?}");
    }
}

#[test]
fn a_compile_error_keeps_its_message_over_a_long_stack() {
    let frames: String = (0..60)
        .map(|i| format!("      at Parser.parse{i} (/home/project/node_modules/@babel/parser/lib/index.js:{i}:1)\r\n"))
        .collect();
    let error = compile_error(&format!("{VITE_BABEL_ERROR}{frames}")).unwrap();
    let result = BuildResult::new(Stage::CompileError, None, None, &error);
    assert!(
        result.output.contains("Unexpected token"),
        "{}",
        result.output
    );
    assert!(!result.output.contains("node_modules"), "{}", result.output);
    assert_eq!(result.files, ["src/App.jsx"]);
}

#[test]
fn files_named_in_errors_are_found_relative_to_the_project() {
    let cases: &[(&str, &[&str])] = &[
        (
            "/home/project/src/App.jsx:86:9: ERROR: Expected",
            &["src/App.jsx"],
        ),
        ("File: ./src/main.tsx:3", &["src/main.tsx"]),
        (
            "at render (src/App.jsx:12:5)\nat src/App.jsx:14:1",
            &["src/App.jsx"],
        ),
        ("in 'vite.config.js'.", &["vite.config.js"]),
        ("/home/project/node_modules/react/index.js:1", &[]),
        ("GET https://registry.npmjs.org/foo.json", &[]),
        ("/etc/passwd.json and ../secret.js", &[]),
        (
            "'@vitejs/plugin-recat@^5.0.0' is not in this registry.",
            &[],
        ),
        ("npm error code E404", &[]),
        ("version 1.2.3 of package.json", &["package.json"]),
    ];
    for (text, expected) in cases {
        assert_eq!(named_files(text), *expected, "{text:?}");
    }
}

#[test]
fn normalising_removes_what_changes_between_runs() {
    let same: &[(&str, &str)] = &[
        (
            "/home/project/src/App.jsx:86:9: Expected \")\"",
            "/tmp/other/src/App.jsx:12:3: Expected \")\"",
        ),
        (
            "chunk index-1a2b3c4d.js failed",
            "chunk index-9f8e7d6c.js failed",
        ),
        ("2:14:03 PM [vite] error", "11:02:59 PM [vite] error"),
        ("exited with code 1", "exited with code 127"),
        ("a   b\n\n", "a b"),
    ];
    for (a, b) in same {
        assert_eq!(normalise(a), normalise(b), "{a:?} vs {b:?}");
    }
    let different: &[(&str, &str)] = &[
        ("Expected \")\"", "Expected \"}\""),
        ("cannot find module 'react'", "cannot find module 'vue'"),
        ("b", "c"),
    ];
    for (a, b) in different {
        assert_ne!(normalise(a), normalise(b), "{a:?} vs {b:?}");
    }
}

#[test]
fn commands_get_their_stage() {
    let cases: &[(&str, bool, Stage)] = &[
        ("npm install", false, Stage::Install),
        ("npm i react", false, Stage::Install),
        ("cd app && pnpm add vite", false, Stage::Install),
        ("yarn install --frozen-lockfile", false, Stage::Install),
        ("npm run build", false, Stage::Build),
        ("tsc", true, Stage::Build),
        ("node seed.js", false, Stage::Command),
    ];
    for (command, build, stage) in cases {
        assert_eq!(Stage::of_command(command, *build), *stage, "{command}");
    }
}

#[test]
fn a_vite_compile_error_is_found_in_dev_server_output() {
    let error = compile_error(VITE_COMPILE_ERROR).unwrap();
    assert!(
        error.starts_with("2:14:03 PM [vite] (client) Pre-transform error"),
        "{error}"
    );
    let result = BuildResult::new(Stage::CompileError, None, None, &error);
    assert_eq!(result.files, ["src/App.jsx"]);
    assert!(
        result.output.contains("Expected \")\" but found \"}\""),
        "{}",
        result.output
    );
    assert!(!result.output.contains('\u{1b}'));
}

#[test]
fn a_babel_compile_error_keeps_its_code_frame() {
    let error = compile_error(&format!("  VITE v7.1.0  ready\r\n{VITE_BABEL_ERROR}")).unwrap();
    let result = BuildResult::new(Stage::CompileError, None, None, &error);
    assert_eq!(result.files, ["src/App.jsx"]);
    let lines: Vec<&str> = result.output.lines().collect();
    assert!(
        lines[0].ends_with("Unexpected token, expected \",\" (62:9)"),
        "{lines:?}"
    );
    assert!(lines.contains(&"> 62 |         )}"), "{lines:?}");
    assert!(!result.output.contains("ready"), "{}", result.output);
}

#[test]
fn a_compile_error_split_across_pieces_of_output_joins_up() {
    let (first, rest) = VITE_BABEL_ERROR.split_at(VITE_BABEL_ERROR.find("  61").unwrap());
    let mut error = compile_error(first).unwrap();
    error.push_str(rest);
    let result = BuildResult::new(Stage::CompileError, None, None, &error);
    let whole = BuildResult::new(
        Stage::CompileError,
        None,
        None,
        &compile_error(VITE_BABEL_ERROR).unwrap(),
    );
    assert_eq!(result.output, whole.output);
    assert!(result.output.contains("\n  61 |"), "{}", result.output);
}

#[test]
fn ordinary_dev_server_output_is_not_a_compile_error() {
    let cases = [
        "  VITE v7.1.0  ready in 312 ms\r\n\r\n  ➜  Local:   http://localhost:5173/\r\n",
        "2:14:05 PM [vite] hmr update /src/App.jsx\r\n",
        "",
    ];
    for output in cases {
        assert_eq!(compile_error(output), None, "{output:?}");
    }
}

#[test]
fn an_install_failure_names_package_json() {
    let raw = "npm error code E404\nnpm error 404 Not Found - GET https://registry.npmjs.org/@vitejs%2fplugin-recat\n";
    let result = BuildResult::new(Stage::Install, Some("npm install".into()), Some(1), raw);
    assert_eq!(result.files, ["package.json"]);
    assert_eq!(result.title(), "the install failed: `npm install`");
    assert!(result.at_ms > 0);
}

#[test]
fn the_same_error_twice_has_one_signature() {
    let a = BuildResult::new(Stage::CompileError, None, None, VITE_COMPILE_ERROR);
    let b = BuildResult::new(
        Stage::CompileError,
        None,
        None,
        &VITE_COMPILE_ERROR
            .replace("86:9", "90:2")
            .replace("2:14:03", "3:01:44"),
    );
    assert_eq!(a.signature(), b.signature());
    let install = BuildResult::new(Stage::Install, None, None, VITE_COMPILE_ERROR);
    assert_ne!(a.signature(), install.signature());
}
