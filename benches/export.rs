//! What exporting a large project costs the IDE's memory: a real `rivet
//! serve` in a temporary data directory, a project of about 1 GiB written
//! straight into its workspace (4 files of 200 MiB that do not compress,
//! 20,000 files of 10 KiB in 200 folders, and a `node_modules` the export
//! leaves out), then `GET /api/v1/projects/{id}/export.zip` read to the end
//! while the server's resident memory (`VmRSS` of `/proc/<pid>/status`) is
//! sampled every 5 ms.
//!
//! It prints the resident memory before the export, its peak during it,
//! the growth (the goal is at most 100 MiB), the zip's size and the time.
//!
//! `cargo bench --features ssr --bench export` (about 3 GiB of disk in the
//! system's temporary folder while it runs; `RIVET_BENCH_EXPORT_MIB` sets
//! the size of each large file).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::Write;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

#[allow(dead_code)]
#[path = "../tests/it/support.rs"]
mod support;
use support::TOKEN;
const MIB: u64 = 1 << 20;
const LARGE_FILES: usize = 4;
const SMALL_FILES: usize = 20_000;
const SMALL_FILE_BYTES: usize = 10 * 1024;
const SAMPLE_EVERY: Duration = Duration::from_millis(5);

/// Bytes that do not compress (xorshift), written in 1 MiB pieces.
fn write_noise(path: &Path, bytes: u64, seed: u64) {
    let mut state = seed | 1;
    let mut file = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    let mut piece = vec![0u8; MIB as usize];
    let mut left = bytes;
    while left > 0 {
        for chunk in piece.chunks_exact_mut(8) {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            chunk.copy_from_slice(&state.to_le_bytes());
        }
        let n = left.min(MIB);
        file.write_all(&piece[..n as usize]).unwrap();
        left -= n;
    }
    file.flush().unwrap();
}

/// The project: large files, many small ones, and a skipped folder.
fn generate(workspace: &Path, large_mib: u64) -> u64 {
    let mut total = 0;
    std::fs::create_dir_all(workspace.join("assets")).unwrap();
    for n in 0..LARGE_FILES {
        let bytes = large_mib * MIB;
        write_noise(
            &workspace.join(format!("assets/large-{n}.bin")),
            bytes,
            n as u64 + 7,
        );
        total += bytes;
    }
    let text: Vec<u8> = b"export const value = 42; // some source text\n"
        .iter()
        .copied()
        .cycle()
        .take(SMALL_FILE_BYTES)
        .collect();
    for n in 0..SMALL_FILES {
        let dir = workspace.join(format!("src/part-{:03}", n % 200));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join(format!("module-{n}.js")), &text).unwrap();
        total += SMALL_FILE_BYTES as u64;
    }
    let skipped = workspace.join("node_modules/dep");
    std::fs::create_dir_all(&skipped).unwrap();
    write_noise(&skipped.join("blob.bin"), 50 * MIB, 99);
    total
}

/// The resident memory of process `pid`, in bytes.
fn rss(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let line = status
        .lines()
        .find(|l| l.starts_with("VmRSS:"))
        .expect("VmRSS in /proc/<pid>/status");
    let kib: u64 = line.split_whitespace().nth(1).unwrap().parse().unwrap();
    kib * 1024
}

async fn serve(data: &Path) -> (tokio::process::Child, SocketAddr) {
    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_rivet"));
    support::serve_in(&mut command, data);
    support::spawn_serve(command).await
}

async fn create(http: &reqwest::Client, addr: SocketAddr, name: &str) -> String {
    let response = http
        .post(format!("http://{addr}/api/v1/projects"))
        .bearer_auth(TOKEN)
        .json(&serde_json::json!({"name": name}))
        .send()
        .await
        .unwrap();
    assert!(response.status().is_success(), "{}", response.status());
    let body: serde_json::Value = response.json().await.unwrap();
    body["id"].as_str().unwrap().to_owned()
}

/// Downloads the project's zip to the end; its size.
async fn export(http: &reqwest::Client, addr: SocketAddr, id: &str) -> u64 {
    let mut response = http
        .get(format!("http://{addr}/api/v1/projects/{id}/export.zip"))
        .bearer_auth(TOKEN)
        .send()
        .await
        .unwrap();
    assert!(response.status().is_success(), "{}", response.status());
    let mut size = 0;
    while let Some(chunk) = response.chunk().await.unwrap() {
        size += chunk.len() as u64;
    }
    size
}

fn mib(bytes: u64) -> String {
    format!("{:.1} MiB", bytes as f64 / MIB as f64)
}

#[tokio::main]
async fn main() {
    let large_mib: u64 = std::env::var("RIVET_BENCH_EXPORT_MIB")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(200);
    let data = tempfile::tempdir().unwrap();
    let (child, addr) = serve(data.path()).await;
    let pid = child.id().unwrap();
    let http = reqwest::Client::new();

    // A small export first, so what the first request sets up is in the
    // baseline.
    let warm = create(&http, addr, "warm-up").await;
    let warm_dir = data.path().join(format!("projects/{warm}/workspace"));
    std::fs::create_dir_all(&warm_dir).unwrap();
    std::fs::write(warm_dir.join("index.html"), "<p>hi</p>").unwrap();
    export(&http, addr, &warm).await;

    let id = create(&http, addr, "large").await;
    let started = Instant::now();
    let project_bytes = generate(
        &data.path().join(format!("projects/{id}/workspace")),
        large_mib,
    );
    println!(
        "project: {} in {LARGE_FILES} large and {SMALL_FILES} small files (written in {:.1} s)",
        mib(project_bytes),
        started.elapsed().as_secs_f64()
    );

    tokio::time::sleep(Duration::from_millis(500)).await;
    let before = rss(pid);
    let peak = Arc::new(AtomicU64::new(before));
    let done = Arc::new(AtomicBool::new(false));
    let sampler = {
        let (peak, done) = (Arc::clone(&peak), Arc::clone(&done));
        std::thread::spawn(move || {
            while !done.load(Ordering::Relaxed) {
                peak.fetch_max(rss(pid), Ordering::Relaxed);
                std::thread::sleep(SAMPLE_EVERY);
            }
        })
    };
    let started = Instant::now();
    let zip_bytes = export(&http, addr, &id).await;
    let took = started.elapsed();
    done.store(true, Ordering::Relaxed);
    sampler.join().unwrap();
    let peak = peak.load(Ordering::Relaxed);
    let left = data.path().join("exports");
    let leftovers = std::fs::read_dir(&left).map(|d| d.count()).unwrap_or(0);

    println!("zip: {} in {:.1} s", mib(zip_bytes), took.as_secs_f64());
    println!(
        "IDE resident memory: {} before, {} at peak during the export: growth {} (goal: at most 100 MiB)",
        mib(before),
        mib(peak),
        mib(peak.saturating_sub(before))
    );
    println!("files left in {}: {leftovers}", left.display());
    drop(child);
}
