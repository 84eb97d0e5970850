//! The early-install state machine on its own; the runner's tests
//! (`runner/tests.rs`) drive it through whole answers.

use super::{Before, Early, Manager};

fn decision(before: Before) -> &'static str {
    match before {
        Before::Run => "run",
        Before::Wait(_) => "wait",
        Before::Join { .. } => "join",
    }
}

#[test]
fn a_plain_install_joins_once_and_only_in_its_turn() {
    let mut early = Early::default();
    let start = early.package_json_written(1, Some(Manager::Npm));
    let start = start.expect("an install starts");
    assert_eq!(
        decision(early.before(2, "npm install")),
        "wait",
        "a later turn"
    );
    assert_eq!(decision(early.before(1, "yarn")), "wait", "another manager");
    assert_eq!(decision(early.before(1, "npm i")), "join");
    assert_eq!(decision(early.before(1, "npm i")), "wait", "joined already");
    assert!(early.ended(start.id, 0).is_none());
    assert_eq!(decision(early.before(1, "npm i")), "run");
}

#[test]
fn a_command_run_after_the_install_makes_it_stale() {
    let mut early = Early::default();
    let start = early.package_json_written(1, Some(Manager::Npm));
    let id = start.map(|s| s.id).unwrap_or_default();
    assert!(early.ended(id, 0).is_none());
    assert_eq!(decision(early.before(1, "rm -rf node_modules")), "run");
    assert_eq!(decision(early.before(1, "npm install")), "run");
}

#[test]
fn a_change_while_installing_is_installed_next() {
    let mut early = Early::default();
    let first = early.package_json_written(1, Some(Manager::Npm));
    let first = first.expect("an install starts");
    assert!(early.package_json_written(1, Some(Manager::Npm)).is_none());
    assert_eq!(decision(early.before(1, "npm install")), "wait", "stale");
    let next = early.ended(first.id, 0).expect("another install follows");
    assert_eq!((next.turn, next.manager), (1, Manager::Npm));
    assert_eq!(decision(early.before(1, "npm install")), "join");
}

#[test]
fn a_change_to_json_that_does_not_parse_queues_no_install() {
    let mut early = Early::default();
    let first = early.package_json_written(1, Some(Manager::Npm));
    let first = first.expect("an install starts");
    assert!(early.package_json_written(1, None).is_none());
    assert!(early.ended(first.id, 0).is_none());
    assert_eq!(decision(early.before(1, "npm install")), "run");
}

#[test]
fn stop_drops_the_next_install_of_its_turn_but_not_of_a_later_one() {
    let mut early = Early::default();
    let first = early.package_json_written(1, Some(Manager::Npm));
    let first = first.expect("an install starts");
    assert!(early.package_json_written(1, Some(Manager::Npm)).is_none());
    early.abort();
    // The killed install has not ended yet when the next answer changes
    // package.json.
    assert!(early.package_json_written(2, Some(Manager::Pnpm)).is_none());
    let next = early.ended(first.id, 1).expect("the next answer's install");
    assert_eq!((next.turn, next.manager), (2, Manager::Pnpm));

    let mut early = Early::default();
    let first = early.package_json_written(1, Some(Manager::Npm));
    let first = first.expect("an install starts");
    assert!(early.package_json_written(1, Some(Manager::Npm)).is_none());
    assert!(early.ended(first.id, 1).is_none(), "stopped in its turn");
}
