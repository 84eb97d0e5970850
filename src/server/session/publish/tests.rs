//! What a published version holds, copied through the in-memory runtime.

use super::*;
use crate::runtime::host::fake::FakeRuntime;
use crate::server::publish::Sites;

/// Copies `root` of `runtime` into a new version; the version's files.
async fn published(runtime: &FakeRuntime, root: &str) -> Vec<String> {
    let data = tempfile::tempdir().unwrap();
    let sites = Sites::new(data.path());
    let project = ProjectId::parse("site").unwrap();
    let limits = WriteLimits {
        max_bytes: 1 << 20,
        max_files: 100,
    };
    let (version, mut writer) = sites.next_version(&project, limits).unwrap();
    copy(runtime, root, &mut writer).await.unwrap();
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
