//! The sandbox's cost per command: `true` run through a project's running
//! sandbox (a request to its helper, fork and exec inside bwrap's namespaces,
//! the exit reported back) against the same `bash -c true` spawned bare by
//! tokio; what starting a project's sandbox costs; and what the helper's
//! poll of the listening ports costs, the kernel asked by `sock_diag`
//! against `/proc/net/tcp{,6}` read.
//!
//! `cargo bench --profile dev --features ssr --bench sandbox`

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;
use std::sync::Arc;

use criterion::{Criterion, criterion_group, criterion_main};
use rivet::runtime::host::{CommandSpec, Runtime};
use rivet::runtime::project::ProjectId;
use rivet::server::config::{Config, NetworkMode};
use rivet::server::sandbox::{Isolation, SandboxManager, SandboxSettings, ports};

fn new_manager(dir: &std::path::Path, network: NetworkMode) -> Arc<SandboxManager> {
    let mut config = Config::defaults().sandbox;
    config.network = network;
    let settings = SandboxSettings {
        data_dir: dir.to_owned(),
        config,
        helper_exe: PathBuf::from(env!("CARGO_BIN_EXE_rivet")),
        isolation: Isolation::Bubblewrap,
        database_socket: None,
    };
    let manager = SandboxManager::new(settings);
    manager.check().expect("bwrap works here");
    manager
}

async fn run_true(runtime: &dyn Runtime) {
    let process = runtime.spawn(CommandSpec::command("true")).await.unwrap();
    let status = process.wait().await;
    assert!(status.success(), "{status:?}");
}

fn per_command(c: &mut Criterion) {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let manager = new_manager(dir.path(), NetworkMode::None);
    let project = ProjectId::parse("bench").unwrap();
    let runtime = manager.runtime(&project);
    // The sandbox starts once, on first use, and stays.
    rt.block_on(run_true(&*runtime));

    let mut group = c.benchmark_group("per_command");
    group.bench_function("true_in_sandbox", |b| {
        b.iter(|| rt.block_on(run_true(&*runtime)))
    });
    group.bench_function("true_bare", |b| {
        b.iter(|| {
            rt.block_on(async {
                let status = tokio::process::Command::new("/bin/bash")
                    .args(["-c", "true"])
                    .current_dir(dir.path())
                    .status()
                    .await
                    .unwrap();
                assert!(status.success());
            })
        })
    });
    group.finish();

    let mut group = c.benchmark_group("sandbox_start");
    group.sample_size(20);
    group.bench_function("first_command_of_a_project", |b| {
        b.iter(|| {
            rt.block_on(async {
                manager.close_project(&project).await;
                run_true(&*runtime).await;
            })
        })
    });
    let networked = new_manager(&dir.path().join("networked"), NetworkMode::Full);
    let networked_runtime = networked.runtime(&project);
    group.bench_function("first_command_of_a_project_with_network", |b| {
        b.iter(|| {
            rt.block_on(async {
                networked.close_project(&project).await;
                run_true(&*networked_runtime).await;
            })
        })
    });
    group.finish();
    rt.block_on(manager.shutdown());
    rt.block_on(networked.shutdown());
}

/// One poll of the listening ports, as the helper makes it every 50 ms
/// after a process starts and every second when idle.
fn port_poll(c: &mut Criterion) {
    let _listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let mut group = c.benchmark_group("port_poll");
    group.bench_function("sock_diag", |b| b.iter(|| ports::asked_by_state().unwrap()));
    group.bench_function("proc_net_tcp", |b| b.iter(ports::read_from_proc));
    group.finish();
}

criterion_group!(benches, per_command, port_poll);
criterion_main!(benches);
