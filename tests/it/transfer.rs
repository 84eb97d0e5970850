//! Import and export through the HTTP API of a real `rivet serve`: round
//! trips of a project as a zip and as a conversation JSON, the refused
//! imports (zip-slip, absolute paths, links, zip bombs, hostile git URLs),
//! and a git import from a local bare repository served over git's "dumb
//! HTTP" and reached through the sandbox's registry proxy.
#![cfg(feature = "ssr")]

use std::io::{Cursor, Read, Write};
use std::path::Path;
use std::time::Duration;

use reqwest::StatusCode;
use serde_json::{Value, json};
use zip::write::SimpleFileOptions;
use zip::{ZipArchive, ZipWriter};

use super::llm::Mock;
use super::support::Ide;

/// The one harness ([`Ide`]), with this module's calls; `url` is under `/api/v1`.
struct Server(Ide);

impl std::ops::Deref for Server {
    type Target = Ide;

    fn deref(&self) -> &Ide {
        &self.0
    }
}

impl Server {
    /// A server with small import limits (5 entries, 1 MiB a file, 2 MiB
    /// in all) and `env` on top.
    async fn start(mock: &Mock, env: &[(&str, String)]) -> Server {
        let ide = Ide::fresh()
            .provider(&mock.base_url())
            .env("RIVET_IMPORT_MAX_ENTRIES", "5")
            .env("RIVET_IMPORT_MAX_FILE_MB", "1")
            .env("RIVET_IMPORT_MAX_TOTAL_MB", "2");
        Server(ide.envs(env.iter().map(|(k, v)| (*k, v))).start().await)
    }

    fn url(&self, path: &str) -> String {
        self.0.api(path)
    }

    /// The project's conversation export, parsed.
    async fn conversation(&self, project: &str) -> Value {
        let url = format!("/projects/{project}/conversation.json");
        self.get(&url).await.json().await.unwrap()
    }

    async fn put(&self, project: &str, path: &str, bytes: &[u8]) {
        let url = self.url(&format!("/projects/{project}/files/{path}"));
        let response = self
            .http
            .put(url)
            .body(bytes.to_vec())
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), StatusCode::NO_CONTENT, "{path}");
    }

    async fn get(&self, path: &str) -> reqwest::Response {
        let response = self.http.get(self.url(path)).send().await.unwrap();
        assert_eq!(response.status(), StatusCode::OK, "{path}");
        response
    }

    async fn export_zip(&self, project: &str) -> Vec<(String, Vec<u8>)> {
        let response = self.get(&format!("/projects/{project}/export.zip")).await;
        assert_eq!(response.headers()["content-type"], "application/zip");
        unzip(&response.bytes().await.unwrap())
    }

    async fn import_zip(&self, name: &str, zip: Vec<u8>) -> (StatusCode, Value) {
        let request = self
            .http
            .post(self.url(&format!("/import/zip?name={name}")))
            .header("content-type", "application/zip")
            .body(zip);
        self.json(request).await
    }

    async fn project_count(&self) -> usize {
        let (_, list) = self.json(self.http.get(self.url("/projects"))).await;
        list.as_array().unwrap().len()
    }

    /// Nothing of a refused import is left in the data directory.
    fn assert_no_staging_left(&self) {
        let imports = self.data_dir().join("imports");
        let left: Vec<_> = std::fs::read_dir(&imports)
            .map(|entries| entries.map(|e| e.unwrap().path()).collect())
            .unwrap_or_default();
        assert!(left.is_empty(), "{left:?}");
    }

    /// Imports `zip`, which must be refused with `code`, naming `entry`,
    /// leaving no project and no staged file behind.
    async fn assert_refused(&self, zip: Vec<u8>, code: &str, entry: &str) -> Value {
        let before = self.project_count().await;
        let (status, error) = self.import_zip("refused", zip).await;
        assert!(status.is_client_error(), "{status} {error}");
        assert_eq!(error["code"], code, "{error}");
        let message = error["message"].as_str().unwrap();
        assert!(message.contains(entry), "{message}");
        assert_eq!(self.project_count().await, before);
        self.assert_no_staging_left();
        error
    }
}

pub(crate) fn unzip(bytes: &[u8]) -> Vec<(String, Vec<u8>)> {
    let mut archive = ZipArchive::new(Cursor::new(bytes)).unwrap();
    let mut files = Vec::new();
    for index in 0..archive.len() {
        let mut file = archive.by_index(index).unwrap();
        let mut body = Vec::new();
        file.read_to_end(&mut body).unwrap();
        files.push((file.name().to_owned(), body));
    }
    files.sort();
    files
}

fn zip_of(entries: &[(&str, &[u8])]) -> Vec<u8> {
    let mut writer = ZipWriter::new(Cursor::new(Vec::new()));
    for (name, body) in entries {
        writer
            .start_file(*name, SimpleFileOptions::default())
            .unwrap();
        writer.write_all(body).unwrap();
    }
    writer.finish().unwrap().into_inner()
}

async fn server() -> (Mock, Server) {
    let mock = Mock::start(&[]);
    let server = Server::start(&mock, &[]).await;
    (mock, server)
}

const BINARY: &[u8] = &[0, 159, 146, 150, b'\n', 255];

#[tokio::test(flavor = "multi_thread")]
async fn zip_round_trip_gives_identical_files_without_node_modules() {
    let (_mock, server) = server().await;
    let project = server.create("original").await;
    server.put(&project, "index.html", b"<h1>hi</h1>\n").await;
    server.put(&project, "src/deep/data.bin", BINARY).await;
    server
        .put(&project, "node_modules/react/index.js", b"skipped")
        .await;
    let exported = server.export_zip(&project).await;
    let names: Vec<&str> = exported.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["index.html", "src/deep/data.bin"]);

    let zip = zip_of(&[
        ("index.html", b"<h1>hi</h1>\n"),
        ("src/deep/data.bin", BINARY),
    ]);
    let (status, created) = server.import_zip("copy", zip).await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    assert_eq!(created["name"], "copy");
    let copy = created["id"].as_str().unwrap();
    assert_ne!(copy, project);
    let body = server
        .get(&format!("/projects/{copy}/files/src/deep/data.bin"))
        .await;
    assert_eq!(body.bytes().await.unwrap().as_ref(), BINARY);
    assert_eq!(server.export_zip(copy).await, exported);
    server.assert_no_staging_left();
}

#[tokio::test(flavor = "multi_thread")]
async fn export_streams_the_workspace_and_never_follows_its_links() {
    let (_mock, server) = server().await;
    let project = server.create("links").await;
    server.put(&project, "src/App.jsx", b"app").await;
    let workspace = server
        .data_dir()
        .join(format!("projects/{project}/workspace"));
    std::os::unix::fs::symlink(server.data_dir().join("rivet.db"), workspace.join("db")).unwrap();
    std::os::unix::fs::symlink("/etc", workspace.join("src/etc")).unwrap();
    let response = server.get(&format!("/projects/{project}/export.zip")).await;
    let length: usize = response.headers()["content-length"]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    let zip = response.bytes().await.unwrap();
    assert_eq!(zip.len(), length);
    assert_eq!(unzip(&zip), [("src/App.jsx".to_owned(), b"app".to_vec())]);
    let exports = server.data_dir().join("exports");
    let left: Vec<_> = std::fs::read_dir(&exports).unwrap().collect();
    assert!(left.is_empty(), "{left:?}");
}

/// A listing through the runtime stops at 10,000 entries; the conversation
/// export walks the workspace, as the zip does, and holds every file.
#[tokio::test(flavor = "multi_thread")]
async fn a_project_with_more_files_than_a_listing_holds_exports_every_file_in_its_conversation() {
    const FILES: usize = 10_050;
    let (_mock, server) = server().await;
    let project = server.create("many").await;
    server.put(&project, "index.html", b"<h1>hi</h1>\n").await;
    let workspace = server.project_dir(&project).join("workspace");
    std::fs::create_dir_all(workspace.join("many")).unwrap();
    for i in 0..FILES {
        std::fs::write(workspace.join(format!("many/{i}.txt")), i.to_string()).unwrap();
    }
    let exported = server.conversation(&project).await;
    let files = exported["files"].as_array().unwrap();
    assert_eq!(files.len(), FILES + 1);
    let last = files
        .iter()
        .find(|f| f["path"] == format!("many/{}.txt", FILES - 1))
        .unwrap();
    assert_eq!(last["content"], (FILES - 1).to_string());
}

#[tokio::test(flavor = "multi_thread")]
async fn conversation_round_trip_restores_messages_events_and_files() {
    let (_mock, server) = server().await;
    let project = server.create("talk").await;
    let messages = server.url(&format!("/projects/{project}/messages"));
    let request = server
        .http
        .post(&messages)
        .json(&json!({"text": "show me a snippet sample"}));
    let (status, sent) = server.json(request).await;
    assert_eq!(status, StatusCode::ACCEPTED, "{sent}");
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    let original = loop {
        let (_, list) = server.json(server.http.get(&messages)).await;
        if list[1]["status"] == "complete" {
            break list;
        }
        assert!(tokio::time::Instant::now() < deadline, "{list}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    server.put(&project, "notes/a.bin", BINARY).await;

    let exported = server.conversation(&project).await;
    assert_eq!(exported["format"], "rivet.conversation");
    assert_eq!(exported["version"], 1);
    assert!(!exported["events"].as_array().unwrap().is_empty());

    let request = server
        .http
        .post(server.url("/import/conversation"))
        .json(&exported);
    let (status, created) = server.json(request).await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    assert_eq!(created["name"], "talk");
    let copy = created["id"].as_str().unwrap();

    let (_, restored) = server
        .json(
            server
                .http
                .get(server.url(&format!("/projects/{copy}/messages"))),
        )
        .await;
    assert_eq!(restored, original);
    let body = server
        .get(&format!("/projects/{copy}/files/notes/a.bin"))
        .await;
    assert_eq!(body.bytes().await.unwrap().as_ref(), BINARY);
    let again = server.conversation(copy).await;
    assert_eq!(again["messages"], exported["messages"]);
    assert_eq!(again["files"], exported["files"]);
    // The events come back as they were (reopening may add its own after).
    let events = exported["events"].as_array().unwrap();
    assert_eq!(
        again["events"].as_array().unwrap()[..events.len()],
        events[..]
    );
    assert_eq!(
        server.export_zip(copy).await,
        server.export_zip(&project).await
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn the_import_page_and_the_export_menu_are_served() {
    let (_mock, server) = server().await;
    let page = |path: String| {
        let request = server.http.get(format!("http://{}{path}", server.addr));
        async move {
            let response = request.send().await.unwrap();
            assert_eq!(response.status(), StatusCode::OK);
            response.text().await.unwrap()
        }
    };
    let html = page("/import".to_owned()).await;
    for id in [
        "import-zip",
        "import-folder",
        "import-git-url",
        "import-submit",
    ] {
        assert!(html.contains(&format!("data-testid=\"{id}\"")), "{id}");
    }
    // The export menu is a lazy part the browser builds (end2end's transfer
    // tests use it); the downloads it links answer here.
    let project = server.create("menu").await;
    for export in ["export.zip", "conversation.json"] {
        let url = format!("http://{}/api/v1/projects/{project}/{export}", server.addr);
        let response = server.http.get(url).send().await.unwrap();
        assert_eq!(response.status(), StatusCode::OK, "{export}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn zip_slip_is_refused() {
    let (_mock, server) = server().await;
    let zip = zip_of(&[("ok.txt", b"fine"), ("src/../../evil.txt", b"evil")]);
    server
        .assert_refused(zip, "unsafe_path", "src/../../evil.txt")
        .await;
    assert!(!server.data_dir().join("evil.txt").exists());
    assert!(!server.data_dir().join("projects/evil.txt").exists());
}

#[tokio::test(flavor = "multi_thread")]
async fn zip_absolute_path_is_refused() {
    let (_mock, server) = server().await;
    let target = server.data_dir().join("absolute.txt");
    let name = target.to_string_lossy().into_owned();
    let zip = zip_of(&[(name.as_str(), b"evil")]);
    server.assert_refused(zip, "unsafe_path", &name).await;
    assert!(!target.exists());
}

#[tokio::test(flavor = "multi_thread")]
async fn zip_symlink_is_refused() {
    let (_mock, server) = server().await;
    let mut writer = ZipWriter::new(Cursor::new(Vec::new()));
    writer
        .start_file("a.txt", SimpleFileOptions::default())
        .unwrap();
    writer.write_all(b"a").unwrap();
    writer
        .add_symlink("passwd", "/etc/passwd", SimpleFileOptions::default())
        .unwrap();
    let zip = writer.finish().unwrap().into_inner();
    server.assert_refused(zip, "symlink", "passwd").await;
}

#[tokio::test(flavor = "multi_thread")]
async fn zip_bomb_over_the_file_size_limit_is_refused() {
    let (_mock, server) = server().await;
    // 64 MiB of zeros: a few hundred kilobytes compressed.
    let zip = zip_of(&[("bomb.bin", &vec![0u8; 64 << 20])]);
    assert!(zip.len() < 1 << 20, "{}", zip.len());
    let error = server
        .assert_refused(zip, "entry_too_large", "bomb.bin")
        .await;
    assert!(
        error["message"].as_str().unwrap().contains("1048576"),
        "{error}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn zip_bomb_over_the_total_size_limit_is_refused() {
    let (_mock, server) = server().await;
    let part = vec![0u8; 900 << 10];
    let zip = zip_of(&[("a", &part), ("b", &part), ("c", &part)]);
    server.assert_refused(zip, "import_too_large", "c").await;
}

#[tokio::test(flavor = "multi_thread")]
async fn zip_bomb_over_the_entry_count_is_refused() {
    let (_mock, server) = server().await;
    let zip = zip_of(&[
        ("1", b""),
        ("2", b""),
        ("3", b""),
        ("4", b""),
        ("5", b""),
        ("6", b""),
    ]);
    server.assert_refused(zip, "too_many_entries", "6").await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_folder_is_uploaded_as_multipart_files() {
    let (_mock, server) = server().await;
    let form = reqwest::multipart::Form::new()
        .part(
            "file",
            reqwest::multipart::Part::bytes(b"<p>x</p>".to_vec()).file_name("index.html"),
        )
        .part(
            "file",
            reqwest::multipart::Part::bytes(BINARY.to_vec()).file_name("src/a.bin"),
        );
    let request = server
        .http
        .post(server.url("/import/files?name=folder"))
        .multipart(form);
    let (status, created) = server.json(request).await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    let id = created["id"].as_str().unwrap();
    let files = server.export_zip(id).await;
    assert_eq!(
        files,
        [
            ("index.html".to_owned(), b"<p>x</p>".to_vec()),
            ("src/a.bin".to_owned(), BINARY.to_vec())
        ]
    );
    // The same rules as a zip.
    let form = reqwest::multipart::Form::new().part(
        "file",
        reqwest::multipart::Part::bytes(b"x".to_vec()).file_name("../escape.txt"),
    );
    let request = server
        .http
        .post(server.url("/import/files"))
        .multipart(form);
    let (status, error) = server.json(request).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{error}");
    assert_eq!(error["code"], "unsafe_path");
}

#[tokio::test(flavor = "multi_thread")]
async fn an_oversized_body_is_refused_with_a_code() {
    let (_mock, server) = server().await;
    let request = server
        .http
        .post(server.url("/import/git"))
        .json(&json!({"git_url": format!("https://example.com/{}", "a".repeat(20_000))}));
    let (status, error) = server.json(request).await;
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE, "{error}");
    assert_eq!(error["code"], "body_too_large", "{error}");
}

#[tokio::test(flavor = "multi_thread")]
async fn hostile_git_urls_are_refused() {
    let (_mock, server) = server().await;
    let secret = server.data_dir().join("rivet.db");
    for url in [
        format!("file://{}", server.data_dir().display()),
        server.data_dir().display().to_string(),
        "ext::sh -c touch% /tmp/rivet-pwned".to_owned(),
        "--upload-pack=touch /tmp/rivet-pwned".to_owned(),
        "ssh://example.com/repo.git".to_owned(),
    ] {
        let request = server
            .http
            .post(server.url("/import/git"))
            .json(&json!({"git_url": url}));
        let (status, error) = server.json(request).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{url}: {error}");
        assert_eq!(error["code"], "git_url_refused", "{url}: {error}");
    }
    assert!(secret.exists());
    assert!(!Path::new("/tmp/rivet-pwned").exists());
    assert_eq!(server.project_count().await, 0);
}

fn git(dir: &Path, args: &[&str]) {
    let status = std::process::Command::new("git")
        .args(["-c", "user.name=Test", "-c", "user.email=test@example.com"])
        .args(["-c", "init.defaultBranch=main"])
        .args(args)
        .current_dir(dir)
        .stdout(std::process::Stdio::null())
        .status()
        .unwrap();
    assert!(status.success(), "git {args:?}");
}

/// A bare repository with one commit (a file and a link out of the
/// project), served as static files: git's "dumb HTTP".
async fn dumb_http_repository(root: &Path) -> std::net::SocketAddr {
    let work = root.join("work");
    std::fs::create_dir_all(work.join("src")).unwrap();
    std::fs::write(work.join("README.md"), "# served\n").unwrap();
    std::fs::write(work.join("src/main.js"), "console.log(1)\n").unwrap();
    std::os::unix::fs::symlink("/etc/passwd", work.join("passwd")).unwrap();
    git(&work, &["init", "-q"]);
    git(&work, &["add", "."]);
    git(&work, &["commit", "-q", "-m", "first"]);
    git(root, &["clone", "-q", "--bare", "work", "repo.git"]);
    git(&root.join("repo.git"), &["update-server-info"]);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let files = tower_http::services::ServeDir::new(root);
    let app = axum::Router::new().fallback_service(files);
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    addr
}

#[tokio::test(flavor = "multi_thread")]
async fn git_import_clones_a_local_bare_repository_inside_the_sandbox() {
    let served = tempfile::tempdir().unwrap();
    let addr = dumb_http_repository(served.path()).await;
    let mock = Mock::start(&[]);
    // The repository's host is listed, as github.com would be.
    let host = format!("localhost:{}", addr.port());
    let server = Server::start(
        &mock,
        &[
            ("RIVET_SANDBOX_NETWORK", "registry".to_owned()),
            ("RIVET_SANDBOX_REGISTRY_HOSTS", host.clone()),
            ("RIVET_IMPORT_MAX_ENTRIES", "1000".to_owned()),
        ],
    )
    .await;
    let request = server
        .http
        .post(server.url("/import/git"))
        .json(&json!({"git_url": format!("http://{host}/repo.git")}));
    let (status, created) = server.json(request).await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    assert_eq!(created["name"], "repo");
    let id = created["id"].as_str().unwrap();
    let files = server.export_zip(id).await;
    let names: Vec<&str> = files.iter().map(|(n, _)| n.as_str()).collect();
    // The link arrives as a plain file holding its target, never as a link.
    assert_eq!(names, ["README.md", "passwd", "src/main.js"]);
    assert_eq!(files[1].1, b"/etc/passwd");
    let workspace = server.data_dir().join(format!("projects/{id}/workspace"));
    assert!(workspace.join(".git").is_dir());
    assert!(!workspace.join(".rivet-clone").exists());
    // Cloned by the sandbox's user: a root IDE runs sandboxes as
    // `sandbox.host_uid`.
    use std::os::unix::fs::MetadataExt;
    if std::fs::metadata("/proc/self").unwrap().uid() == 0 {
        let owner = std::fs::metadata(workspace.join("README.md"))
            .unwrap()
            .uid();
        assert_eq!(owner, 65534);
    }

    // A repository that does not exist fails and leaves no project.
    let before = server.project_count().await;
    let request = server
        .http
        .post(server.url("/import/git"))
        .json(&json!({"git_url": format!("http://{host}/missing.git")}));
    let (status, error) = server.json(request).await;
    assert_eq!(status, StatusCode::BAD_GATEWAY, "{error}");
    assert_eq!(error["code"], "git_clone_failed");
    assert_eq!(server.project_count().await, before);
}
