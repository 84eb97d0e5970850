//! Against a real PostgreSQL: one server for the module, started by the
//! first test that needs it and kept by a thread of its own (the server
//! stops when the thread that started it ends).

use std::sync::{Arc, OnceLock};

use super::*;
use crate::runtime::database::DatabaseError;

struct Shared {
    databases: Arc<Databases>,
    _data: tempfile::TempDir,
}

fn config_for(data: &Path) -> Config {
    let mut config = Config::defaults();
    config.server.data_dir = data.to_owned();
    config
}

fn shared() -> &'static Arc<Databases> {
    static SHARED: OnceLock<Shared> = OnceLock::new();
    &SHARED
        .get_or_init(|| {
            let data = tempfile::tempdir().unwrap();
            let databases = Databases::new(&config_for(data.path()));
            let starter = Arc::clone(&databases);
            let (started, wait) = std::sync::mpsc::channel();
            std::thread::spawn(move || {
                let runtime = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .unwrap();
                runtime.block_on(async {
                    let result = starter.admin().await.map(|_| ());
                    started.send(result).unwrap();
                    std::future::pending::<()>().await;
                });
            });
            wait.recv().unwrap().expect("PostgreSQL starts");
            Shared {
                databases,
                _data: data,
            }
        })
        .databases
}

fn project(name: &str) -> ProjectId {
    ProjectId::parse(name).unwrap()
}

const TODOS: &str = "create table todos (id serial primary key, title text not null);\ninsert into todos (title) values ('milk'), ('bread');";

#[tokio::test]
async fn a_migration_creates_and_seeds_a_table_once() {
    let databases = shared();
    let db = databases.for_project(&project("migrateonce"));
    assert_eq!(
        db.migrate("supabase/migrations/1.sql", TODOS).await,
        Ok(Migrated::Applied)
    );
    assert_eq!(
        db.migrate("supabase/migrations/1.sql", TODOS).await,
        Ok(Migrated::AlreadyApplied)
    );
    let rows = db
        .query("select title from todos order by id")
        .await
        .unwrap();
    assert_eq!(rows.columns, vec!["title"]);
    assert_eq!(
        rows.rows,
        vec![
            vec![Some("milk".to_owned())],
            vec![Some("bread".to_owned())]
        ]
    );
    let changed = db
        .migrate("supabase/migrations/1.sql", "drop table todos;")
        .await;
    assert_eq!(
        changed,
        Err(DatabaseError::Changed {
            name: "supabase/migrations/1.sql".into()
        })
    );
    assert_eq!(
        db.query("select count(*) from todos").await.unwrap().rows,
        vec![vec![Some("2".to_owned())]]
    );
}

#[tokio::test]
async fn a_failing_migration_leaves_nothing_behind_and_names_its_line() {
    let db = shared().for_project(&project("migratefails"));
    let sql = "create table kept (id int);\ncreate tabel broken (id int);";
    let Err(DatabaseError::Sql(message)) = db.migrate("m/1.sql", sql).await else {
        panic!("the migration should fail");
    };
    assert!(
        message.contains("syntax error at or near \"tabel\" (line 2)"),
        "{message}"
    );
    let tables = shared().tables(&project("migratefails")).await.unwrap();
    assert!(tables.is_empty(), "one transaction: {tables:?}");
    // Not recorded, so the fixed text runs.
    assert_eq!(
        db.migrate("m/1.sql", "create table kept (id int);").await,
        Ok(Migrated::Applied)
    );
}

#[tokio::test]
async fn a_query_answers_its_last_statement_with_at_most_its_first_rows() {
    let db = shared().for_project(&project("queries"));
    let result = db
        .query("create table n (v int); insert into n select generate_series(1, 250); select v, null as nothing from n order by v")
        .await
        .unwrap();
    assert_eq!(result.columns, vec!["v", "nothing"]);
    assert_eq!(result.rows.len(), crate::runtime::database::MAX_ROWS);
    assert_eq!(result.total_rows, 250);
    assert_eq!(result.rows[0], vec![Some("1".to_owned()), None]);
    let changed = db
        .query("update n set v = v + 1 where v <= 3")
        .await
        .unwrap();
    assert!(changed.columns.is_empty());
    assert_eq!(changed.total_rows, 3);
    let Err(DatabaseError::Sql(message)) = db.query("select * from missing").await else {
        panic!("a missing table is an error");
    };
    assert!(
        message.contains("relation \"missing\" does not exist"),
        "{message}"
    );
}

#[tokio::test]
async fn tables_list_their_columns_and_rows() {
    let id = project("tablelist");
    let db = shared().for_project(&id);
    db.migrate("1.sql", TODOS).await.unwrap();
    let tables = shared().tables(&id).await.unwrap();
    assert_eq!(
        tables.len(),
        1,
        "rivet's own migrations table is not listed: {tables:?}"
    );
    assert_eq!(tables[0].name, "todos");
    assert_eq!(tables[0].rows, 2);
    let columns: Vec<(&str, &str)> = tables[0]
        .columns
        .iter()
        .map(|c| (c.name.as_str(), c.kind.as_str()))
        .collect();
    assert_eq!(columns, vec![("id", "integer"), ("title", "text")]);
}

#[tokio::test]
async fn another_project_s_role_is_refused() {
    let databases = shared();
    let (mine, theirs) = (project("isolatedmine"), project("isolatedtheirs"));
    databases
        .for_project(&mine)
        .query("select 1")
        .await
        .unwrap();
    databases
        .for_project(&theirs)
        .query("create table secret (v text)")
        .await
        .unwrap();
    let mut config = databases.project_config(&mine).await.unwrap();
    for other in ["project_isolatedtheirs", "postgres", "template1"] {
        config.dbname(other);
        let error = project::connect(&config)
            .await
            .err()
            .unwrap_or_else(|| panic!("{other} opened"));
        assert!(
            error.to_string().contains("permission denied for database"),
            "{other}: {error}"
        );
    }
    let roles = databases
        .for_project(&mine)
        .query("select rolsuper, rolcreaterole, rolcreatedb from pg_roles where rolname = current_user")
        .await
        .unwrap();
    assert_eq!(roles.rows, vec![vec![Some("f".to_owned()); 3]]);
}

#[tokio::test]
async fn a_project_s_processes_get_its_database_only_after_first_use() {
    let databases = shared();
    let id = project("envafteruse");
    assert!(databases.env(&id).is_empty());
    databases.for_project(&id).query("select 1").await.unwrap();
    let env = databases.env(&id);
    assert_eq!(env["PGHOST"], SANDBOX_SOCKET_DIR);
    assert_eq!(env["PGUSER"], "project_envafteruse");
    assert_eq!(env["PGDATABASE"], "project_envafteruse");
    let password = &env["PGPASSWORD"];
    assert_eq!(password.len(), 32);
    assert_eq!(
        env["DATABASE_URL"],
        format!(
            "postgresql://project_envafteruse:{password}@localhost:5432/project_envafteruse?host=/run/postgresql"
        )
    );
}

#[tokio::test]
async fn a_deleted_project_s_database_and_role_are_dropped() {
    let databases = shared();
    let id = project("forgotten");
    databases
        .for_project(&id)
        .migrate("1.sql", TODOS)
        .await
        .unwrap();
    databases.forget(&id).await.unwrap();
    assert!(databases.env(&id).is_empty(), "its password is forgotten");
    let admin = databases.admin().await.unwrap();
    let client = project::connect(&admin).await.unwrap();
    let left = client
        .query_one(
            "select (select count(*) from pg_database where datname = 'project_forgotten') + (select count(*) from pg_roles where rolname = 'project_forgotten')",
            &[],
        )
        .await
        .unwrap();
    assert_eq!(left.get::<_, i64>(0), 0);
    // Forgetting a project with no database starts nothing and is no error.
    databases.forget(&project("neverhadone")).await.unwrap();
}

#[tokio::test]
async fn data_survives_a_restart_of_the_server() {
    let data = tempfile::tempdir().unwrap();
    let id = project("restarted");
    {
        let databases = Databases::new(&config_for(data.path()));
        databases
            .for_project(&id)
            .migrate("1.sql", TODOS)
            .await
            .unwrap();
    }
    // The server was told to stop; it may take a moment to let go.
    let databases = Databases::new(&config_for(data.path()));
    let mut rows = None;
    for _ in 0..100 {
        match databases
            .for_project(&id)
            .query("select count(*) from todos")
            .await
        {
            Ok(result) => {
                rows = Some(result.rows);
                break;
            }
            Err(_) => tokio::time::sleep(std::time::Duration::from_millis(100)).await,
        }
    }
    assert_eq!(rows, Some(vec![vec![Some("2".to_owned())]]));
}

#[tokio::test]
async fn a_missing_postgresql_is_named_with_what_to_do() {
    let data = tempfile::tempdir().unwrap();
    let mut config = config_for(data.path());
    config.database.bin_dir = data.path().join("nowhere").to_string_lossy().into_owned();
    let databases = Databases::new(&config);
    let Err(DatabaseError::Unavailable(message)) = databases
        .for_project(&project("nopg"))
        .query("select 1")
        .await
    else {
        panic!("no server to run");
    };
    assert!(message.contains("has no initdb and postgres"), "{message}");
}

#[tokio::test]
async fn a_server_named_by_url_is_used_as_it_is() {
    let shared_data = shared().layout.base.clone();
    let password = std::fs::read_to_string(shared_data.join("admin.password")).unwrap();
    let socket = shared_data.join("run");
    let data = tempfile::tempdir().unwrap();
    let mut config = config_for(data.path());
    config.database.url = format!(
        "postgresql://rivet:{}@/postgres?host={}",
        password.trim(),
        socket.display()
    );
    assert_eq!(socket_dir(&config), Some(socket));
    let databases = Databases::new(&config);
    let id = project("byurl");
    databases
        .for_project(&id)
        .migrate("1.sql", TODOS)
        .await
        .unwrap();
    assert_eq!(databases.tables(&id).await.unwrap()[0].rows, 2);
    assert_eq!(databases.env(&id)["PGHOST"], SANDBOX_SOCKET_DIR);
    assert!(
        !data.path().join("postgres").exists(),
        "no server of its own"
    );

    config.database.url = "postgresql://rivet:pw@db.lan:6543/postgres".to_owned();
    assert_eq!(
        socket_dir(&config),
        None,
        "a TCP server has no socket to mount"
    );
    let tcp = Databases::new(&config);
    assert_eq!(tcp.sandbox_host(), ("db.lan".to_owned(), 6543));
    // Without a sandbox, processes see the socket where it is.
    let unsandboxed = Databases::new(&config_for(data.path()));
    unsandboxed.without_sandbox();
    let real = data
        .path()
        .join("postgres/run")
        .to_string_lossy()
        .into_owned();
    assert_eq!(unsandboxed.sandbox_host(), (real, 5432));
}

#[tokio::test]
async fn a_dump_holds_the_data_and_replays_into_an_empty_database() {
    let databases = shared();
    let id = project("dumped");
    let data = tempfile::tempdir().unwrap();
    let out = std::fs::File::create(data.path().join("none.sql")).unwrap();
    assert!(
        databases.dump(&id, out).await.unwrap().is_none(),
        "no database, no dump"
    );
    databases
        .for_project(&id)
        .migrate("1.sql", TODOS)
        .await
        .unwrap();
    let out = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(true)
        .open(data.path().join("dump.sql"))
        .unwrap();
    let (mut file, len) = databases.dump(&id, out).await.unwrap().unwrap();
    let mut text = String::new();
    std::io::Read::read_to_string(&mut file, &mut text).unwrap();
    assert_eq!(text.len() as u64, len);
    assert!(text.contains("CREATE TABLE public.todos"), "{text}");
    assert!(text.contains("milk"), "{text}");
    assert!(!text.contains("OWNER TO"), "no owners: it replays anywhere");
    // Into another project's empty database, with psql.
    let copy = databases.for_project(&project("dumpcopy"));
    copy.query("select 1").await.unwrap();
    let env = databases.env(&project("dumpcopy"));
    let psql = cluster::find_bin_dir("").unwrap().join("psql");
    let socket = databases.layout.socket_dir();
    let replayed = std::process::Command::new(psql)
        .args(["-v", "ON_ERROR_STOP=1", "-q", "-f"])
        .arg(data.path().join("dump.sql"))
        .env("PGHOST", &socket)
        .env("PGUSER", &env["PGUSER"])
        .env("PGPASSWORD", &env["PGPASSWORD"])
        .env("PGDATABASE", &env["PGDATABASE"])
        .output()
        .unwrap();
    assert!(
        replayed.status.success(),
        "{}",
        String::from_utf8_lossy(&replayed.stderr)
    );
    let rows = copy.query("select count(*) from todos").await.unwrap();
    assert_eq!(rows.rows, vec![vec![Some("2".to_owned())]]);
}
