//! What checkpoints cost, on the todo fixture's files (`benches/fixtures/
//! todo-react.txt`, the demo's todo app) beside a `node_modules` of 5,000
//! small files that checkpoints leave out:
//!
//! - `checkpoint/answer_changed_one_file`: the checkpoint after an answer
//!   that edited `src/App.jsx` (stage, write the tree, commit);
//! - `checkpoint/answer_changed_nothing`: the same when nothing changed
//!   (the latest commit is reused);
//! - `restore/todo_all_files`: a restore that writes every file of the
//!   todo app back through the project's real sandbox (bubblewrap);
//! - `restore/one_file`: a restore that undoes the edit of one file.
//!
//! `cargo bench --features ssr --bench checkpoint`

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use rivet::runtime::project::ProjectId;
use rivet::runtime::protocol::{ActionKind, Event, Parser};
use rivet::server::checkpoint::apply;
use rivet::server::checkpoint::git::Repo;
use rivet::server::config::{Config, NetworkMode};
use rivet::server::sandbox::{Isolation, SandboxManager, SandboxSettings};

/// The files the todo answer writes.
fn todo_files() -> Vec<(String, String)> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/fixtures/todo-react.txt");
    let transcript = std::fs::read_to_string(path).unwrap();
    let mut parser = Parser::new("bench");
    let mut events: Vec<Event> = parser.push(&transcript).collect();
    events.extend(parser.finish());
    events
        .into_iter()
        .filter_map(|event| match event {
            Event::ActionClose { action, .. } => match action.kind {
                ActionKind::File { file_path } => Some((file_path, action.content)),
                _ => None,
            },
            _ => None,
        })
        .collect()
}

fn manager(dir: &Path) -> Arc<SandboxManager> {
    let mut config = Config::defaults().sandbox;
    config.network = NetworkMode::None;
    let manager = SandboxManager::new(SandboxSettings {
        data_dir: dir.to_owned(),
        config,
        helper_exe: PathBuf::from(env!("CARGO_BIN_EXE_rivet")),
        isolation: Isolation::Bubblewrap,
        database_socket: None,
    });
    manager.check().expect("bwrap works here");
    manager
}

fn write(workspace: &Path, path: &str, content: &str) {
    let full = workspace.join(path);
    std::fs::create_dir_all(full.parent().unwrap()).unwrap();
    std::fs::write(full, content).unwrap();
}

fn benches(c: &mut Criterion) {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let manager = manager(dir.path());
    let project = ProjectId::parse("bench").unwrap();
    let runtime = manager.runtime(&project);
    let workspace = manager.workspace_dir(&project);
    let files = todo_files();
    assert!(files.len() >= 5, "the todo fixture writes its files");
    rt.block_on(async {
        for (path, content) in &files {
            runtime.write_file(path, content.as_bytes()).await.unwrap();
        }
    });
    for i in 0..5000 {
        write(
            &workspace,
            &format!("node_modules/pkg{}/file{i}.js", i % 100),
            "x",
        );
    }
    let repo = Repo::new(dir.path().join("checkpoints.git"), &workspace);
    rt.block_on(repo.snapshot("todo")).unwrap();
    let app = files
        .iter()
        .find(|(p, _)| p == "src/App.jsx")
        .expect("App.jsx");

    let mut group = c.benchmark_group("checkpoint");
    let mut round = 0u64;
    group.bench_function("answer_changed_one_file", |b| {
        b.iter(|| {
            round += 1;
            write(
                &workspace,
                "src/App.jsx",
                &format!("{}\n// edit {round}\n", app.1),
            );
            rt.block_on(repo.snapshot("answer")).unwrap()
        })
    });
    group.bench_function("answer_changed_nothing", |b| {
        b.iter(|| rt.block_on(repo.snapshot("answer")).unwrap())
    });
    group.finish();

    // An empty checkpoint and the todo one, to restore between.
    write(&workspace, "src/App.jsx", &app.1);
    let restored = rt.block_on(repo.snapshot("todo again")).unwrap();
    assert_eq!(restored, rt.block_on(repo.snapshot("same")).unwrap());
    let edited = {
        write(
            &workspace,
            "src/App.jsx",
            &format!("{}\n// edited\n", app.1),
        );
        rt.block_on(repo.snapshot("edited")).unwrap()
    };
    let empty = {
        rt.block_on(async {
            for (path, _) in &files {
                runtime.remove(path).await.unwrap();
            }
        });
        rt.block_on(repo.snapshot("empty")).unwrap()
    };

    let mut group = c.benchmark_group("restore");
    group.sample_size(20);
    group.measurement_time(Duration::from_secs(8));
    group.bench_function("todo_all_files", |b| {
        b.iter_custom(|iterations| {
            let mut spent = Duration::ZERO;
            for _ in 0..iterations {
                let started = Instant::now();
                rt.block_on(apply(&repo, runtime.as_ref(), &empty, &restored))
                    .unwrap();
                spent += started.elapsed();
                rt.block_on(apply(&repo, runtime.as_ref(), &restored, &empty))
                    .unwrap();
            }
            spent
        })
    });
    rt.block_on(apply(&repo, runtime.as_ref(), &empty, &edited))
        .unwrap();
    group.bench_function("one_file", |b| {
        b.iter_custom(|iterations| {
            let mut spent = Duration::ZERO;
            for _ in 0..iterations {
                let started = Instant::now();
                rt.block_on(apply(&repo, runtime.as_ref(), &edited, &restored))
                    .unwrap();
                spent += started.elapsed();
                rt.block_on(apply(&repo, runtime.as_ref(), &restored, &edited))
                    .unwrap();
            }
            spent
        })
    });
    group.finish();
    rt.block_on(manager.shutdown());
}

criterion_group!(checkpoint, benches);
criterion_main!(checkpoint);
