use super::*;

fn at(mut result: BuildResult, at_ms: u64) -> BuildResult {
    result.at_ms = at_ms;
    result
}

#[test]
fn an_uncaught_error_is_a_page_error_and_console_error_its_own_stage() {
    let error = build_result(
        "error",
        "TypeError: x is undefined\n    at src/App.jsx:3:12",
    )
    .unwrap();
    assert_eq!(error.stage, Stage::PageError);
    assert_eq!(error.files, ["src/App.jsx"]);
    assert_eq!(
        build_result("rejection", "boom").unwrap().stage,
        Stage::PageError
    );
    assert_eq!(
        build_result("console", "oops").unwrap().stage,
        Stage::ConsoleError
    );
}

#[test]
fn an_unknown_kind_is_refused() {
    assert!(matches!(
        build_result("warning", "x"),
        Err(ReportError::UnknownKind(kind)) if kind == "warning"
    ));
}

#[test]
fn an_empty_message_is_refused() {
    assert!(matches!(
        build_result("error", "  \n "),
        Err(ReportError::Empty)
    ));
}

#[test]
fn a_long_message_is_cut_at_a_character() {
    let message = "é".repeat(MAX_MESSAGE);
    let result = build_result("error", &message).unwrap();
    assert!(result.output.len() <= crate::runtime::build_result::MAX_BYTES);
    assert!(result.output.starts_with('é'));
}

#[test]
fn the_same_error_again_at_once_is_a_duplicate() {
    let first = at(
        build_result("error", "boom at src/a.js:1:1").unwrap(),
        10_000,
    );
    let again = at(
        build_result("error", "boom at src/a.js:1:1").unwrap(),
        10_500,
    );
    assert_eq!(
        admit(std::slice::from_ref(&first), &again),
        Outcome::Duplicate
    );
    let later = at(again.clone(), 10_000 + DUPLICATE_MS);
    assert_eq!(
        admit(std::slice::from_ref(&first), &later),
        Outcome::Recorded
    );
    let other = at(build_result("error", "another").unwrap(), 10_500);
    assert_eq!(admit(&[first], &other), Outcome::Recorded);
}

#[test]
fn too_many_page_errors_in_a_minute_are_dropped() {
    let existing: Vec<BuildResult> = (0..PER_MINUTE)
        .map(|i| {
            at(
                build_result("console", &format!("error {i}x")).unwrap(),
                1_000 + i as u64,
            )
        })
        .collect();
    let next = at(build_result("error", "new").unwrap(), 2_000);
    assert_eq!(admit(&existing, &next), Outcome::TooMany);
    let a_minute_later = at(next, 62_000);
    assert_eq!(admit(&existing, &a_minute_later), Outcome::Recorded);
}

#[tokio::test]
async fn a_page_error_carrying_a_secret_value_is_recorded_masked() {
    let (state, _data) = crate::server::state::for_tests(|_| {});
    let row = crate::server::state::project_for_tests(&state, "p").await;
    state
        .sandbox
        .secrets()
        .set(&row.id, "STRIPE_KEY", "sk_test_4242abcd")
        .unwrap();
    let message = "Error: bad key sk_test_4242abcd at src/App.jsx:3:1";
    let outcome = report(&state, &row.id, "error", message).await.unwrap();
    assert_eq!(outcome, Outcome::Recorded);
    let handle = open_project(&state, &row.id).await.unwrap();
    let kept = handle
        .session
        .read(|s| s.build_results.last().cloned())
        .unwrap();
    assert!(
        kept.output.contains("bad key [STRIPE_KEY]"),
        "{}",
        kept.output
    );
    assert!(!kept.output.contains("sk_test"), "{}", kept.output);
}
