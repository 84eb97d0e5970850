//! The runner on the fake runtime: the early install and the order of the
//! actions around it.

mod table;

use super::fake::Harness;
use crate::runtime::host::fake::Script;
use crate::runtime::session::ActionStatus;

const PACKAGE_JSON: &str = r#"{"name": "app", "dependencies": {"react": "^19.1.0"}}"#;
const CHANGED_PACKAGE_JSON: &str =
    r#"{"name": "app", "dependencies": {"react": "^19.1.0", "left-pad": "^1.3.0"}}"#;

fn complete() -> Option<ActionStatus> {
    Some(ActionStatus::Complete)
}

fn failed_with(harness: &Harness, n: usize, text: &str) {
    match harness.status(n) {
        Some(ActionStatus::Failed { reason }) => {
            assert!(
                reason.contains(text),
                "action {n}: {reason:?} lacks {text:?}"
            )
        }
        other => panic!("action {n} is {other:?}, not failed"),
    }
}

/// An answer that wrote `package.json` (with these other files already in
/// the project) while its early install is held open.
fn installing_early(files: &[(&str, &str)], package_json: &str, install: &str) -> Harness {
    let mut h = Harness::new();
    for (path, content) in files {
        h.runtime.put(path, content.as_bytes());
    }
    h.runtime.script_exact(install, Script::held());
    h.file("package.json", package_json);
    assert_eq!(h.runtime.commands(), [install], "the early install");
    assert_eq!(h.status(0), complete(), "package.json is written");
    h
}

/// A project, the early install it gets, and an answer's command joining it.
struct Joining {
    files: &'static [(&'static str, &'static str)],
    package_json: &'static str,
    install: &'static str,
    command: &'static str,
    /// What runs after the install, as written.
    after: &'static [&'static str],
}

#[test]
fn a_plain_install_joins_the_early_install() {
    let pnpm = r#"{"name": "app", "packageManager": "pnpm@9.1.0"}"#;
    let case = |files, package_json, install, command, after| Joining {
        files,
        package_json,
        install,
        command,
        after,
    };
    let cases = [
        case(&[], PACKAGE_JSON, "npm install", "npm install", &[]),
        case(&[], PACKAGE_JSON, "npm install", "npm i", &[]),
        case(
            &[("package-lock.json", "{}")],
            PACKAGE_JSON,
            "npm install",
            "npm install && npm run build",
            &["npm run build"],
        ),
        case(
            &[("pnpm-lock.yaml", "")],
            PACKAGE_JSON,
            "pnpm install",
            "pnpm i",
            &[],
        ),
        case(&[], pnpm, "pnpm install", "pnpm install", &[]),
        case(
            &[("yarn.lock", "")],
            PACKAGE_JSON,
            "yarn install",
            "yarn",
            &[],
        ),
    ];
    for Joining {
        files,
        package_json,
        install,
        command,
        after,
    } in cases
    {
        let mut h = installing_early(files, package_json, install);
        h.shell(command);
        assert_eq!(h.status(1), Some(ActionStatus::Running), "{command}");
        h.runtime.processes()[0].exit(0);
        h.settle();
        assert_eq!(h.status(1), complete(), "{command}");
        let mut expected = vec![install.to_owned()];
        expected.extend(after.iter().map(|c| c.to_string()));
        assert_eq!(h.runtime.commands(), expected, "{command}: one install");
        assert!(
            h.terminal().contains("installing dependencies early"),
            "{}",
            h.terminal()
        );
    }
}

#[test]
fn a_command_after_a_finished_early_install_joins_its_result() {
    let mut h = Harness::new();
    h.file("package.json", PACKAGE_JSON);
    assert_eq!(h.runtime.commands(), ["npm install"]);
    h.file("src/App.jsx", "export default () => null;");
    h.shell("npm install");
    assert_eq!(h.statuses(), [complete(), complete(), complete()]);
    assert_eq!(h.runtime.commands(), ["npm install"]);
}

#[test]
fn package_json_changed_after_the_early_install_began_installs_again() {
    let mut h = installing_early(&[], PACKAGE_JSON, "npm install");
    h.runtime.script_exact("npm install", Script::held());
    h.file("package.json", CHANGED_PACKAGE_JSON);
    h.shell("npm install");
    assert_eq!(h.runtime.commands(), ["npm install"], "never two at once");
    assert_eq!(h.status(2), Some(ActionStatus::Running));

    h.runtime.processes()[0].exit(0);
    h.settle();
    assert_eq!(h.runtime.commands(), ["npm install", "npm install"]);
    assert_eq!(
        h.status(2),
        Some(ActionStatus::Running),
        "waits for the second"
    );

    let second = &h.runtime.processes()[1];
    second.print("npm ERR! 404 left-pad\r\n");
    second.exit(1);
    h.settle();
    failed_with(&h, 2, "404 left-pad");
    assert_eq!(h.runtime.commands().len(), 2);
}

#[test]
fn an_install_that_is_not_plain_runs_as_written_after_the_early_install() {
    for command in [
        "npm install left-pad",
        "npm i -D vite",
        "npm ci",
        "npm install --legacy-peer-deps",
        "pnpm install",
        "rm -rf node_modules && npm install",
    ] {
        let mut h = installing_early(&[], PACKAGE_JSON, "npm install");
        h.shell(command);
        assert_eq!(h.runtime.commands(), ["npm install"], "{command} waits");
        h.runtime.processes()[0].exit(0);
        h.settle();
        assert_eq!(h.runtime.commands(), ["npm install", command], "{command}");
        assert_eq!(h.status(1), complete(), "{command}");
    }
}

#[test]
fn a_command_between_the_early_install_and_the_plain_install_makes_it_run_again() {
    let mut h = installing_early(&[], PACKAGE_JSON, "npm install");
    h.runtime.script_exact("npm install", Script::exits(0, ""));
    h.shell("rm -rf node_modules");
    h.runtime.processes()[0].exit(0);
    h.settle();
    h.shell("npm install");
    assert_eq!(
        h.runtime.commands(),
        ["npm install", "rm -rf node_modules", "npm install"]
    );
    assert_eq!(h.statuses(), [complete(), complete(), complete()]);
}

#[test]
fn a_failed_early_install_fails_the_joining_action_once() {
    let mut h = Harness::new();
    h.runtime.script_exact(
        "npm install",
        Script::exits(1, "npm ERR! code ETARGET\r\nnpm ERR! notarget vite@^99\r\n"),
    );
    h.file("package.json", PACKAGE_JSON);
    assert!(h.alerts().is_empty(), "nobody joined yet: {:?}", h.alerts());
    h.shell("npm install && npm run build");
    failed_with(&h, 1, "notarget vite@^99");
    failed_with(&h, 1, "`npm install` exited with code 1");
    let alerts = h.alerts();
    assert_eq!(alerts.len(), 1, "{alerts:?}");
    let on = alerts[0].action.as_ref().map(|a| a.action_id.to_string());
    assert_eq!(on.as_deref(), Some(h.action_id(1)));
    assert_eq!(h.runtime.commands(), ["npm install"], "the chain stops");
    // The fix loop sees it as the install's failure, on the joining action.
    let results = h.build_results();
    assert_eq!(results.len(), 1, "{results:?}");
    assert_eq!(
        results[0].stage,
        crate::runtime::build_result::Stage::Install
    );
    assert_eq!(results[0].command.as_deref(), Some("npm install"));
    assert_eq!(results[0].exit_code, Some(1));
    assert!(results[0].output.contains("notarget vite@^99"));
    let on = results[0].action.as_ref().map(|a| a.action_id.to_string());
    assert_eq!(on.as_deref(), Some(h.action_id(1)));
}

#[test]
fn stop_during_an_early_install_kills_it_and_aborts_later_actions() {
    let mut h = installing_early(&[], PACKAGE_JSON, "npm install");
    h.shell("npm install");
    h.start("npm run dev");
    h.runner.abort();
    h.settle();
    let install = &h.runtime.processes()[0];
    assert_eq!(install.exited().and_then(|s| s.signal), Some(9), "killed");
    assert_eq!(
        h.statuses(),
        [
            complete(),
            Some(ActionStatus::Aborted),
            Some(ActionStatus::Aborted)
        ]
    );
    assert!(h.alerts().is_empty(), "{:?}", h.alerts());
    assert_eq!(h.runtime.commands(), ["npm install"]);
}

#[test]
fn stop_kills_an_early_install_nobody_joined_yet_and_none_follows() {
    let mut h = installing_early(&[], PACKAGE_JSON, "npm install");
    h.file("package.json", CHANGED_PACKAGE_JSON);
    h.runner.abort();
    h.settle();
    assert!(h.runtime.processes()[0].exited().is_some());
    assert_eq!(h.runtime.commands(), ["npm install"]);
}

#[test]
fn the_dev_server_starts_as_soon_as_the_install_it_depends_on_is_done() {
    let mut h = installing_early(&[], PACKAGE_JSON, "npm install");
    h.runtime.script_exact("npm run dev", Script::held());
    h.shell("npm install");
    h.file("src/App.jsx", "export default () => null;");
    h.start("npm run dev");
    assert_eq!(
        h.runtime.commands(),
        ["npm install"],
        "not before the install"
    );
    assert_eq!(
        h.runtime.text("src/App.jsx"),
        None,
        "actions keep their order"
    );
    h.runtime.processes()[0].exit(0);
    h.settle();
    assert!(h.runtime.text("src/App.jsx").is_some());
    assert_eq!(h.runtime.commands(), ["npm install", "npm run dev"]);
    h.runtime.set_port(5173, true);
    h.settle();
    assert_eq!(
        h.statuses(),
        [complete(), complete(), complete(), complete()]
    );
}

#[test]
fn a_start_that_installs_first_joins_the_early_install() {
    let mut h = installing_early(&[], PACKAGE_JSON, "npm install");
    h.runtime.script_exact("npm run dev", Script::held());
    h.start("npm install && npm run dev");
    h.runtime.processes()[0].exit(0);
    h.settle();
    assert_eq!(h.runtime.commands(), ["npm install", "npm run dev"]);
    h.runtime.set_port(5173, true);
    h.settle();
    assert_eq!(h.statuses(), [complete(), complete()]);
}

#[test]
fn an_install_in_a_later_answer_runs_as_written() {
    let mut h = Harness::new();
    h.file("package.json", PACKAGE_JSON);
    h.shell("npm install");
    h.next_turn();
    h.shell("npm install");
    assert_eq!(h.runtime.commands(), ["npm install", "npm install"]);
}

#[test]
fn without_package_json_commands_run_as_written() {
    let mut h = Harness::new();
    h.file("src/App.jsx", "export default () => null;");
    h.shell("npm install");
    assert_eq!(h.runtime.commands(), ["npm install"]);
    assert!(!h.terminal().contains("early"), "{}", h.terminal());
}

#[test]
fn package_json_that_is_not_json_starts_no_early_install() {
    let mut h = Harness::new();
    h.file("package.json", "{ \"name\": ");
    assert!(h.runtime.commands().is_empty());
    h.shell("npm install");
    assert_eq!(h.runtime.commands(), ["npm install"]);
}

#[test]
fn only_the_root_package_json_starts_an_early_install() {
    let mut h = Harness::new();
    h.file("server/package.json", PACKAGE_JSON);
    assert!(h.runtime.commands().is_empty());
}

#[test]
fn an_edit_that_does_not_apply_goes_to_the_fix_loop_with_its_file() {
    use crate::runtime::build_result::Stage;
    let mut h = Harness::new();
    h.runtime.put("src/App.jsx", b"const a = 1;\n");
    h.stream(
        "<boltAction type=\"edit\" filePath=\"src/App.jsx\">\n<<<<<<< SEARCH\nconst b = 1;\n=======\nconst b = 2;\n>>>>>>> REPLACE\n</boltAction>",
    );
    failed_with(&h, 0, "src/App.jsx");
    let results = h.build_results();
    assert_eq!(results.len(), 1, "{results:?}");
    assert_eq!(results[0].stage, Stage::Action);
    assert_eq!(results[0].files, ["src/App.jsx"]);
    let on = results[0].action.as_ref().map(|a| a.action_id.to_string());
    assert_eq!(on.as_deref(), Some(h.action_id(0)));
    let alerts: Vec<String> = h.alerts().into_iter().map(|a| a.title).collect();
    assert_eq!(alerts, ["A file was not written"]);
}

#[test]
fn refused_actions_go_to_the_fix_loop() {
    use crate::runtime::build_result::Stage;
    let mut h = Harness::new();
    h.stream("<boltAction type=\"file\" filePath=\"../escape.js\">x</boltAction>");
    h.stream("<boltAction type=\"file\">x</boltAction>");
    h.shell("echo still runs");
    let results = h.build_results();
    assert_eq!(results.len(), 2, "{results:?}");
    assert!(results.iter().all(|r| r.stage == Stage::Action));
    assert!(
        results[0].output.contains("escape.js"),
        "{}",
        results[0].output
    );
    assert!(
        results[1].output.contains("filePath"),
        "{}",
        results[1].output
    );
    let alerts: Vec<String> = h.alerts().into_iter().map(|a| a.title).collect();
    assert_eq!(alerts, ["An action was not run", "An action was not run"]);
    assert_eq!(h.runtime.commands(), ["echo still runs"]);
}
