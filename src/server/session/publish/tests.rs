//! What a published version holds, copied through the in-memory runtime.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::*;
use crate::runtime::host::fake::FakeRuntime;
use crate::server::publish::Sites;

/// A script large and plain enough that writing it into a version (synced,
/// and compressed at gzip's best) takes a while.
pub(super) fn big_script() -> Vec<u8> {
    "let x = 1;\n".repeat(800_000).into_bytes()
}

/// Where the version being written keeps `file` until it is whole.
pub(super) fn being_written(
    sites: &Sites,
    project: &ProjectId,
    version: u32,
    file: &str,
) -> PathBuf {
    let dir = sites.version_dir(project, version);
    dir.with_file_name(format!(".writing-v{version}"))
        .join(file)
}

/// Whether `task` was still running when `file` appeared. On a
/// current-thread runtime (these tests') a file written on a blocking
/// thread appears while the task waits for it; one written on the task's
/// own thread, the only one, appears only after the task has gone on past
/// it, here to its end.
pub(super) async fn running_when_written<T>(
    task: &tokio::task::JoinHandle<T>,
    file: &Path,
) -> bool {
    loop {
        if file.exists() {
            return !task.is_finished();
        }
        if task.is_finished() {
            return false;
        }
        tokio::task::yield_now().await;
    }
}

#[tokio::test]
async fn a_file_is_copied_into_the_version_off_the_async_thread() {
    let big = String::from_utf8(big_script()).unwrap();
    let runtime = Arc::new(FakeRuntime::with_files([("app.js", big.as_str())]));
    let (_data, sites, project, version, writer) = new_version(64 << 20);
    let file = being_written(&sites, &project, version, "app.js");
    let copying = tokio::spawn({
        let runtime = Arc::clone(&runtime);
        async move { copy(runtime.as_ref(), "", writer).await }
    });
    assert!(
        running_when_written(&copying, &file).await,
        "the file was written on the async thread"
    );
    let writer = copying.await.unwrap().unwrap();
    writer.finish().unwrap();
    let dir = sites.version_dir(&project, version);
    assert_eq!(std::fs::read(dir.join("app.js")).unwrap(), big.as_bytes());
    assert!(dir.join("app.js.gz").exists());
}

/// A new version of a project's site in a data directory of its own,
/// taking at most `max_bytes`.
fn new_version(max_bytes: u64) -> (tempfile::TempDir, Sites, ProjectId, u32, VersionWriter) {
    let data = tempfile::tempdir().unwrap();
    let sites = Sites::new(data.path());
    let project = ProjectId::parse("site").unwrap();
    let limits = WriteLimits {
        max_bytes,
        max_files: 100,
    };
    let (version, writer) = sites.next_version(&project, limits).unwrap();
    (data, sites, project, version, writer)
}

/// Copies `root` of `runtime` into a new version; the version's files.
async fn published(runtime: &FakeRuntime, root: &str) -> Vec<String> {
    let (_data, sites, project, version, writer) = new_version(1 << 20);
    let writer = copy(runtime, root, writer).await.unwrap();
    writer.finish().unwrap();
    let dir = sites.version_dir(&project, version);
    let mut files = Vec::new();
    let mut folders = vec![dir.clone()];
    while let Some(folder) = folders.pop() {
        for entry in std::fs::read_dir(folder).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                folders.push(path);
            } else {
                let relative = path.strip_prefix(&dir).unwrap();
                files.push(relative.to_string_lossy().into_owned());
            }
        }
    }
    files.sort();
    files
}

#[tokio::test]
async fn a_site_keeps_the_folders_a_project_listing_skips() {
    let runtime = FakeRuntime::with_files([
        ("dist/index.html", "<h1>hi</h1>"),
        ("dist/build/app.js", "app"),
        ("dist/assets/dist/style.css", "css"),
        ("dist/coverage/report.html", "report"),
        ("dist/.env", "SECRET=1"),
        ("dist/.git/HEAD", "ref"),
        ("dist/node_modules/dep/index.js", "dep"),
        ("src/main.js", "not in the site"),
    ]);
    runtime.symlink("dist/escape", "/etc/passwd");
    assert_eq!(
        published(&runtime, "dist").await,
        [
            "assets/dist/style.css",
            "build/app.js",
            "coverage/report.html",
            "index.html"
        ]
    );
}

#[tokio::test]
async fn a_site_published_from_the_root_leaves_out_hidden_files_and_dependencies() {
    let runtime = FakeRuntime::with_files([
        ("index.html", "<h1>hi</h1>"),
        ("js/app.js", "app"),
        (".env", "SECRET=1"),
        ("node_modules/dep/index.js", "dep"),
    ]);
    assert_eq!(published(&runtime, "").await, ["index.html", "js/app.js"]);
}
