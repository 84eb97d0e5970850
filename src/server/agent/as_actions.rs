//! Build mode with tools (`[llm] format = "tools"`, or `auto` for a model
//! that slips out of the tags): the model gets the agent's `write_file`,
//! `replace` and `run_shell_command` for one answer, and its calls become
//! the bolt actions an answer in tags would have given, run by the same
//! runner. Nothing runs here; the calls are only read.

use super::tools::files::{ReplaceArgs, WriteArgs};
use super::tools::shell::ShellArgs;
use super::tools::{Tool, ToolError, parse_args};
use crate::runtime::llm::ToolCall;
use crate::runtime::protocol::{ActionKind, GivenAction, normalize_path, starts_a_server};
use crate::server::llm::client::ToolSpec;

/// The tools Build mode offers.
const OFFERED: [Tool; 3] = [Tool::WriteFile, Tool::Replace, Tool::RunShellCommand];

/// What the model is told about them.
pub fn specs() -> Vec<ToolSpec> {
    OFFERED.into_iter().map(Tool::spec).collect()
}

/// The action a call stands for; a call that cannot be one (another tool,
/// arguments that do not parse) is an action with an error, which the
/// runner reports and the fix loop tells the model.
pub fn given_action(call: &ToolCall) -> GivenAction {
    match read(call) {
        Ok(action) => action,
        Err(error) => GivenAction {
            kind: ActionKind::Unknown {
                kind: call.name.clone(),
            },
            content: String::new(),
            error: Some(format!("the call of {}: {error}", call.name)),
        },
    }
}

fn read(call: &ToolCall) -> Result<GivenAction, ToolError> {
    let tool = Tool::from_name(&call.name)
        .filter(|t| OFFERED.contains(t))
        .ok_or_else(|| ToolError::Unknown(call.name.clone()))?;
    let action = match tool {
        Tool::WriteFile => {
            let args: WriteArgs = parse_args(&call.arguments)?;
            file(&args.file_path, args.content)
        }
        Tool::Replace => replace(parse_args(&call.arguments)?)?,
        _ => {
            let args: ShellArgs = parse_args(&call.arguments)?;
            let kind = if starts_a_server(&args.command) {
                ActionKind::Start
            } else {
                ActionKind::Shell
            };
            given(kind, args.command)
        }
    };
    Ok(action)
}

/// An empty `old_string` creates the file; otherwise one SEARCH/REPLACE
/// block, which must match once, as the tool's default asks.
fn replace(args: ReplaceArgs) -> Result<GivenAction, ToolError> {
    if args.old_string.is_empty() {
        return Ok(file(&args.file_path, args.new_string));
    }
    if args.expected_replacements.is_some_and(|n| n != 1) {
        return Err(ToolError::Arguments(
            "Build mode replaces one occurrence; give a unique old_string per call".to_owned(),
        ));
    }
    let block = format!(
        "<<<<<<< SEARCH\n{}\n=======\n{}\n>>>>>>> REPLACE\n",
        without_last_newline(&args.old_string),
        without_last_newline(&args.new_string)
    );
    let kind = ActionKind::Edit {
        file_path: normalize_path(&args.file_path),
    };
    Ok(given(kind, block))
}

fn file(path: &str, content: String) -> GivenAction {
    let kind = ActionKind::File {
        file_path: normalize_path(path),
    };
    given(kind, content)
}

fn given(kind: ActionKind, content: String) -> GivenAction {
    GivenAction {
        kind,
        content,
        error: None,
    }
}

fn without_last_newline(text: &str) -> &str {
    text.strip_suffix('\n').unwrap_or(text)
}

/// The actions as an artifact in tags, for the conversation's history: the
/// next request shows the model what its calls did without tool results
/// (a Build answer is one turn).
pub fn as_tags(actions: &[GivenAction]) -> String {
    let mut out = String::from("<boltArtifact id=\"tool-calls\" title=\"Tool calls\">\n");
    for action in actions {
        let attributes = match &action.kind {
            ActionKind::File { file_path } | ActionKind::Edit { file_path } => {
                format!(" filePath=\"{file_path}\"")
            }
            _ => String::new(),
        };
        let newline = if action.content.ends_with('\n') {
            ""
        } else {
            "\n"
        };
        out.push_str(&format!(
            "<boltAction type=\"{}\"{attributes}>\n{}{newline}</boltAction>\n",
            action.kind.type_name(),
            action.content
        ));
    }
    out.push_str("</boltArtifact>\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::protocol::Parser;

    fn call(name: &str, arguments: serde_json::Value) -> ToolCall {
        ToolCall {
            id: "c1".into(),
            name: name.into(),
            arguments: arguments.to_string(),
        }
    }

    #[test]
    fn each_call_becomes_the_action_it_stands_for() {
        use serde_json::json;
        let cases = [
            (
                call(
                    "write_file",
                    json!({"file_path": "./src/App.jsx", "content": "x\n"}),
                ),
                "file src/App.jsx",
                "x\n",
            ),
            (
                call(
                    "replace",
                    json!({"file_path": "a.css", "old_string": "", "new_string": "b{}"}),
                ),
                "file a.css",
                "b{}",
            ),
            (
                call(
                    "replace",
                    json!({"file_path": "a.js", "old_string": "let a = 1;\n", "new_string": "let a = 2;\n"}),
                ),
                "edit a.js",
                "<<<<<<< SEARCH\nlet a = 1;\n=======\nlet a = 2;\n>>>>>>> REPLACE\n",
            ),
            (
                call("run_shell_command", json!({"command": "npm install"})),
                "shell",
                "npm install",
            ),
            (
                call(
                    "run_shell_command",
                    json!({"command": "npm run dev", "description": "serve"}),
                ),
                "start",
                "npm run dev",
            ),
            (
                call(
                    "run_shell_command",
                    json!({"command": "npm install && npx vite"}),
                ),
                "start",
                "npm install && npx vite",
            ),
        ];
        for (call, kind, content) in cases {
            let action = given_action(&call);
            let path = match &action.kind {
                ActionKind::File { file_path } | ActionKind::Edit { file_path } => {
                    format!(" {file_path}")
                }
                _ => String::new(),
            };
            assert_eq!(
                format!("{}{path}", action.kind.type_name()),
                kind,
                "{call:?}"
            );
            assert_eq!(action.content, content, "{call:?}");
            assert_eq!(action.error, None, "{call:?}");
        }
    }

    #[test]
    fn a_call_that_is_no_action_is_reported_not_dropped() {
        use serde_json::json;
        for (call, says) in [
            (call("read_file", json!({"path": "a.js"})), "no tool named"),
            (
                call("write_file", json!({"file_path": "a.js"})),
                "invalid arguments",
            ),
            (
                call(
                    "replace",
                    json!({"file_path": "a", "old_string": "x", "new_string": "y", "expected_replacements": 2}),
                ),
                "one occurrence",
            ),
            (
                ToolCall {
                    id: "c".into(),
                    name: "write_file".into(),
                    arguments: "{not json".into(),
                },
                "invalid arguments",
            ),
        ] {
            let action = given_action(&call);
            let error = action.error.unwrap_or_default();
            assert!(error.contains(says), "{call:?}: {error}");
        }
    }

    #[test]
    fn the_history_shows_the_calls_as_tags_the_parser_reads_back() {
        let actions = vec![
            file("package.json", "{}\n".into()),
            given(ActionKind::Shell, "npm install".into()),
            given(ActionKind::Start, "npm run dev".into()),
        ];
        let events = Parser::parse("m", &as_tags(&actions));
        let closed: Vec<(String, String)> = events
            .iter()
            .filter_map(|e| match e {
                crate::runtime::protocol::Event::ActionClose { action, .. } => {
                    Some((action.kind.type_name().to_owned(), action.content.clone()))
                }
                _ => None,
            })
            .collect();
        assert_eq!(
            closed,
            [
                ("file".into(), "{}\n".into()),
                ("shell".into(), "npm install".into()),
                ("start".into(), "npm run dev".into())
            ]
        );
    }

    #[test]
    fn build_mode_offers_the_file_and_shell_tools_only() {
        let names: Vec<String> = specs().into_iter().map(|s| s.name).collect();
        assert_eq!(names, ["write_file", "replace", "run_shell_command"]);
    }
}
