use crate::runtime::build_result::Stage;
use crate::runtime::database::QueryResult;
use crate::runtime::runner::fake::Harness;
use crate::runtime::session::ActionStatus;

const CREATE: &str = "create table todos (id serial primary key, title text);";

#[test]
fn a_migration_writes_its_file_and_runs_once() {
    let mut h = Harness::new();
    h.supabase(
        "migration",
        Some("supabase/migrations/001_todos.sql"),
        CREATE,
    );
    assert_eq!(h.status(0), Some(ActionStatus::Complete));
    // Written as file actions are, with a final newline.
    let written = h.runtime.file("supabase/migrations/001_todos.sql").unwrap();
    assert_eq!(String::from_utf8(written).unwrap(), format!("{CREATE}\n"));
    h.next_turn();
    h.supabase(
        "migration",
        Some("supabase/migrations/001_todos.sql"),
        CREATE,
    );
    assert_eq!(h.status(1), Some(ActionStatus::Complete));
    assert_eq!(h.database.ran(), vec![format!("{CREATE}\n")], "ran once");
    let terminal = h.terminal();
    assert!(
        terminal.contains("$ migration supabase/migrations/001_todos.sql"),
        "{terminal}"
    );
    assert!(terminal.contains("already applied"), "{terminal}");
}

#[test]
fn a_changed_migration_is_reported_and_not_run_again() {
    let mut h = Harness::new();
    h.supabase(
        "migration",
        Some("supabase/migrations/001_todos.sql"),
        CREATE,
    );
    h.next_turn();
    h.supabase(
        "migration",
        Some("supabase/migrations/001_todos.sql"),
        "drop table todos;",
    );
    let Some(ActionStatus::Failed { reason }) = h.status(1) else {
        panic!("{:?}", h.status(1));
    };
    assert!(
        reason.contains("already ran with different contents"),
        "{reason}"
    );
    assert_eq!(h.database.ran().len(), 1);
    let results = h.build_results();
    assert_eq!(results.len(), 1);
    assert_eq!(results[0].stage, Stage::Database);
}

#[test]
fn a_failing_migration_reaches_the_fix_loop_with_the_database_s_words() {
    let mut h = Harness::new();
    h.database
        .refuse("tabel", "syntax error at or near \"tabel\"");
    h.supabase(
        "migration",
        Some("supabase/migrations/001.sql"),
        "create tabel t();",
    );
    let Some(ActionStatus::Failed { reason }) = h.status(0) else {
        panic!("{:?}", h.status(0));
    };
    assert_eq!(reason, "syntax error at or near \"tabel\"");
    let results = h.build_results();
    assert_eq!(results.len(), 1);
    assert_eq!(results[0].stage, Stage::Database);
    assert!(
        results[0].output.contains("near \"tabel\""),
        "{}",
        results[0].output
    );
    assert_eq!(h.alerts().len(), 1);
}

#[test]
fn a_migration_without_a_file_path_is_not_run() {
    let mut h = Harness::new();
    h.supabase("migration", None, CREATE);
    let Some(ActionStatus::Failed { reason }) = h.status(0) else {
        panic!("{:?}", h.status(0));
    };
    assert!(reason.contains("needs filePath"), "{reason}");
    assert!(h.database.ran().is_empty());
}

#[test]
fn a_query_s_result_reaches_the_card_and_the_terminal() {
    let mut h = Harness::new();
    let mut answer = QueryResult {
        columns: vec!["id".into(), "title".into()],
        ..QueryResult::default()
    };
    answer.push_row(vec![Some("1".into()), Some("milk".into())]);
    h.database.answer(answer.clone());
    h.supabase("query", None, "select * from todos;");
    assert_eq!(h.status(0), Some(ActionStatus::Complete));
    assert_eq!(h.query_results(), vec![answer]);
    let terminal = h.terminal();
    assert!(
        terminal.contains("$ query select * from todos;"),
        "{terminal}"
    );
    assert!(terminal.contains("1 | milk"), "{terminal}");
}

#[test]
fn a_project_without_a_database_says_why_and_asks_no_fix() {
    let mut h = Harness::new();
    h.database.unavailable("this project runs in the browser");
    h.supabase("query", None, "select 1;");
    let Some(ActionStatus::Failed { reason }) = h.status(0) else {
        panic!("{:?}", h.status(0));
    };
    assert_eq!(reason, "this project runs in the browser");
    assert_eq!(h.alerts().len(), 1);
    assert!(
        h.build_results().is_empty(),
        "another answer cannot give it a database"
    );
}

#[test]
fn where_the_sql_ran_is_said_once() {
    let mut h = Harness::new();
    h.database.note("the database is on the server");
    h.supabase("query", None, "select 1;");
    h.supabase("query", None, "select 2;");
    let alerts = h.alerts();
    assert_eq!(alerts.len(), 1);
    assert_eq!(alerts[0].detail, "the database is on the server");
    assert_eq!(h.statuses(), vec![Some(ActionStatus::Complete); 2]);
}
