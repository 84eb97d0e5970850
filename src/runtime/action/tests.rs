//! Validation of parsed actions: each case is a message and what its single
//! action validates to.

use pretty_assertions::assert_eq;

use super::*;
use crate::runtime::protocol::{Event, Parser};

fn action_of(message: &str) -> Action {
    Parser::parse("m", &format!("<boltArtifact id='a'>{message}"))
        .into_iter()
        .find_map(|e| match e {
            Event::ActionClose { action, .. } => Some(*action),
            _ => None,
        })
        .expect("an action")
}

fn check(message: &str, expect: Result<ValidatedAction, &str>) {
    let actual = validate(action_of(message));
    match (actual, expect) {
        (Ok(action), Ok(want)) => assert_eq!(action, want),
        (Err(error), Err(want)) => assert_eq!(error.to_string(), want),
        (actual, expect) => panic!("expected {expect:?}, got {actual:?}"),
    }
}

fn path(p: &str) -> ProjectPath {
    ProjectPath::parse(p).expect("valid path")
}

#[test]
fn complete_actions_validate() {
    check(
        "<boltAction type='file' filePath='/home/project/src/a.js'>x</boltAction>",
        Ok(ValidatedAction::WriteFile {
            path: path("src/a.js"),
            content: "x\n".to_owned(),
        }),
    );
    check(
        "<boltAction type='shell'> npm i </boltAction>",
        Ok(ValidatedAction::Shell {
            command: "npm i".to_owned(),
        }),
    );
    check(
        "<boltAction type='start'>npm run dev</boltAction>",
        Ok(ValidatedAction::Start {
            command: "npm run dev".to_owned(),
        }),
    );
    check(
        "<boltAction type='build'>npm run build</boltAction>",
        Ok(ValidatedAction::Build {
            command: "npm run build".to_owned(),
        }),
    );
    check(
        "<boltAction type='edit' filePath='a.txt'>\n<<<<<<< SEARCH\na\n=======\nb\n>>>>>>> REPLACE\n</boltAction>",
        Ok(ValidatedAction::Edit {
            path: path("a.txt"),
            blocks: vec![EditBlock {
                search: "a\n".to_owned(),
                replace: "b\n".to_owned(),
            }],
        }),
    );
    check(
        "<boltAction type='supabase' operation='migration' filePath='supabase/migrations/1.sql'>create table t();</boltAction>",
        Ok(ValidatedAction::Supabase {
            operation: SupabaseOperation::Migration,
            path: Some(path("supabase/migrations/1.sql")),
            project_id: None,
            sql: "create table t();\n".to_owned(),
        }),
    );
}

#[test]
fn incomplete_or_unsafe_actions_are_refused() {
    check(
        "<boltAction type='file' filePath='a.js'>const a =",
        Err("the file action was cut off before </boltAction>; it was not run"),
    );
    check(
        "<boltAction type='deploy'>x</boltAction>",
        Err("unknown action type \"deploy\""),
    );
    check(
        "<boltAction type='file'>x</boltAction>",
        Err("invalid file action: the file action has no filePath attribute"),
    );
    check(
        "<boltAction type='supabase' operation='drop'>x</boltAction>",
        Err(
            "invalid supabase action: unknown supabase operation \"drop\" (expected migration or query)",
        ),
    );
    check(
        "<boltAction type='shell'>  </boltAction>",
        Err("the shell action has no command"),
    );
    check(
        "<boltAction type='file' filePath='../../etc/passwd'>x</boltAction>",
        Err("invalid path \"../../etc/passwd\": the path leaves the project"),
    );
    check(
        "<boltAction type='file' filePath='.git/hooks/pre-commit'>x</boltAction>",
        Err(
            "invalid path \".git/hooks/pre-commit\": the path is inside .git, which belongs to the IDE",
        ),
    );
    check(
        "<boltAction type='file' filePath='/etc/passwd'>x</boltAction>",
        Err(
            "invalid path \"/etc/passwd\": the path is absolute; use a path relative to the project",
        ),
    );
    check(
        "<boltAction type='edit' filePath='a.js'>a\n=======\nb</boltAction>",
        Err(
            "edit of a.js: SEARCH block 1: a ======= or >>>>>>> REPLACE line comes before <<<<<<< SEARCH",
        ),
    );
}
