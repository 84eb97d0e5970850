//! Planning and running a site's build against the in-memory runtime.

use std::sync::Mutex;

use super::*;
use crate::runtime::host::fake::{FakeRuntime, Script};

const MINUTE: Duration = Duration::from_secs(60);

/// A project's files, its build action, and its plan (or a part of the
/// reason it has nothing to publish).
type PlanCase<'a> = (
    &'a [(&'a str, &'a str)],
    Option<&'a str>,
    Result<BuildPlan, &'a str>,
);

#[tokio::test]
async fn a_plan_takes_the_build_action_then_the_build_script_then_the_files_as_they_are() {
    let package = r#"{"scripts":{"build":"vite build"}}"#;
    let cases: [PlanCase; 5] = [
        (
            &[("package.json", package)],
            Some("make site"),
            Ok(BuildPlan::Command("make site".into())),
        ),
        (
            &[("package.json", package), ("index.html", "<h1>")],
            None,
            Ok(BuildPlan::Command("npm run build".into())),
        ),
        (
            &[
                ("package.json", r#"{"scripts":{"dev":"vite"}}"#),
                ("index.html", "<h1>"),
            ],
            None,
            Ok(BuildPlan::AsIs),
        ),
        (
            &[("package.json", "not json")],
            None,
            Err("no build script"),
        ),
        (&[("src/main.js", "")], None, Err("no build script")),
    ];
    for (files, action, expected) in cases {
        let runtime = FakeRuntime::with_files(files.iter().copied());
        let got = plan(&runtime, action.map(str::to_owned)).await;
        match (got, expected) {
            (Ok(got), Ok(expected)) => assert_eq!(got, expected, "{files:?}"),
            (Err(BuildFailure::NothingToPublish(why)), Err(part)) => {
                assert!(why.contains(part), "{why}")
            }
            (got, expected) => panic!("{files:?}: {got:?} instead of {expected:?}"),
        }
    }
}

#[tokio::test]
async fn a_build_installs_first_when_nothing_is_installed_and_finds_its_output() {
    let runtime = FakeRuntime::with_files([("package.json", "{}")]);
    runtime.script("npm install", Script::exits(0, "added 1 package\n"));
    runtime.script(
        "npm run build",
        Script::exits(0, "built\n").writing("build/index.html", "<h1>hi</h1>"),
    );
    let said = Mutex::new(String::new());
    let output = |chunk: &[u8]| {
        said.lock()
            .unwrap()
            .push_str(&String::from_utf8_lossy(chunk))
    };
    let root = build(&runtime, "npm run build", MINUTE, &output)
        .await
        .unwrap();
    assert_eq!(root, "build");
    assert_eq!(runtime.commands(), ["npm install", "npm run build"]);
    assert_eq!(*said.lock().unwrap(), "added 1 package\nbuilt\n");
}

#[tokio::test]
async fn a_build_with_its_dependencies_installed_runs_alone_within_the_time_given() {
    let runtime = FakeRuntime::with_files([
        ("package.json", "{}"),
        ("node_modules/vite/package.json", "{}"),
    ]);
    runtime.script(
        "vite build",
        Script::exits(0, "").writing("dist/index.html", "<h1>hi</h1>"),
    );
    let timeout = Duration::from_secs(7);
    let root = build(&runtime, "vite build", timeout, &|_| {})
        .await
        .unwrap();
    assert_eq!(root, "dist");
    let spawned = runtime.spawned();
    assert_eq!(spawned.len(), 1);
    assert_eq!(spawned[0].timeout, Some(timeout));
}

#[tokio::test]
async fn a_failed_build_says_which_command_failed_and_how_its_output_ended() {
    let runtime = FakeRuntime::new();
    let noise = "x".repeat(3 * ERROR_TAIL);
    runtime.script(
        "npm run build",
        Script::exits(2, format!("{noise}\nerror: cannot find module 'reactt'\n")),
    );
    let Err(BuildFailure::Failed(why)) = build(&runtime, "npm run build", MINUTE, &|_| {}).await
    else {
        panic!("the build did not fail");
    };
    assert!(
        why.starts_with("`npm run build` failed (exit code Some(2)):"),
        "{why}"
    );
    assert!(why.ends_with("cannot find module 'reactt'"), "{why}");
    assert!(why.len() < ERROR_TAIL + 100, "{} characters", why.len());
}

#[tokio::test]
async fn a_build_that_writes_no_index_html_has_nothing_to_publish() {
    let runtime = FakeRuntime::new();
    runtime.script(
        "make",
        Script::exits(0, "").writing("public/index.html", "<h1>"),
    );
    let Err(BuildFailure::NothingToPublish(why)) = build(&runtime, "make", MINUTE, &|_| {}).await
    else {
        panic!("a site without index.html was found");
    };
    assert!(why.contains("dist/, build/, out/"), "{why}");
}

#[tokio::test]
async fn a_site_holds_the_output_folders_insides_but_not_hidden_files_links_or_dependencies() {
    let runtime = FakeRuntime::with_files([
        ("dist/index.html", "<h1>hi</h1>"),
        ("dist/build/app.js", "app"),
        ("dist/assets/dist/style.css", "css"),
        ("dist/.env", "SECRET=1"),
        ("dist/.git/HEAD", "ref"),
        ("dist/node_modules/dep/index.js", "dep"),
        ("src/main.js", "not in the site"),
    ]);
    runtime.symlink("dist/escape", "/etc/passwd");
    let mut files = site_files(&runtime, "dist").await.unwrap();
    files.sort_by(|a, b| a.relative.cmp(&b.relative));
    let pairs: Vec<(&str, &str)> = files
        .iter()
        .map(|f| (f.path.as_str(), f.relative.as_str()))
        .collect();
    assert_eq!(
        pairs,
        [
            ("dist/assets/dist/style.css", "assets/dist/style.css"),
            ("dist/build/app.js", "build/app.js"),
            ("dist/index.html", "index.html"),
        ]
    );
}

#[test]
fn the_last_characters_of_a_text_are_cut_on_a_character_boundary() {
    assert_eq!(last_chars("héllo", 4), "éllo");
    assert_eq!(last_chars("hi", 10), "hi");
}

/// The browser's way with output: a process's output ends only when the
/// process is dropped, not when it exits.
mod held {
    use std::sync::Mutex;

    use async_trait::async_trait;
    use futures::channel::oneshot;
    use futures::stream::{self, StreamExt};

    use crate::runtime::host::fake::FakeRuntime;
    use crate::runtime::host::{
        CommandSpec, DirEntry, EventStream, ExitStatus, FsEvent, PortEvent, Process, PtySize,
        Runtime, RuntimeError,
    };

    pub struct HeldOutput(pub FakeRuntime);

    struct HeldProcess {
        inner: Box<dyn Process>,
        _until_dropped: oneshot::Sender<()>,
        gone: Mutex<Option<oneshot::Receiver<()>>>,
    }

    #[async_trait]
    impl Process for HeldProcess {
        fn pid(&self) -> u32 {
            self.inner.pid()
        }
        fn take_output(&self) -> Option<EventStream<Vec<u8>>> {
            let gone = self.gone.lock().unwrap().take()?;
            let end = stream::once(gone).filter_map(|_| async { None });
            Some(self.inner.take_output()?.chain(end).boxed())
        }
        async fn wait(&self) -> ExitStatus {
            self.inner.wait().await
        }
        async fn kill(&self) -> Result<(), RuntimeError> {
            self.inner.kill().await
        }
        async fn write_stdin(&self, data: &[u8]) -> Result<(), RuntimeError> {
            self.inner.write_stdin(data).await
        }
        async fn close_stdin(&self) {
            self.inner.close_stdin().await
        }
        async fn resize(&self, size: PtySize) -> Result<(), RuntimeError> {
            self.inner.resize(size).await
        }
    }

    #[async_trait]
    impl Runtime for HeldOutput {
        async fn read_file(&self, path: &str) -> Result<Vec<u8>, RuntimeError> {
            self.0.read_file(path).await
        }
        async fn write_file(&self, path: &str, contents: &[u8]) -> Result<(), RuntimeError> {
            self.0.write_file(path, contents).await
        }
        async fn mkdir(&self, path: &str) -> Result<(), RuntimeError> {
            self.0.mkdir(path).await
        }
        async fn remove(&self, path: &str) -> Result<(), RuntimeError> {
            self.0.remove(path).await
        }
        async fn rename(&self, from: &str, to: &str) -> Result<(), RuntimeError> {
            self.0.rename(from, to).await
        }
        async fn list(&self, path: &str) -> Result<Vec<DirEntry>, RuntimeError> {
            self.0.list(path).await
        }
        async fn list_tree(&self, path: &str) -> Result<Vec<DirEntry>, RuntimeError> {
            self.0.list_tree(path).await
        }
        fn fs_events(&self) -> EventStream<FsEvent> {
            self.0.fs_events()
        }
        async fn spawn(&self, spec: CommandSpec) -> Result<Box<dyn Process>, RuntimeError> {
            let (until_dropped, gone) = oneshot::channel();
            Ok(Box::new(HeldProcess {
                inner: self.0.spawn(spec).await?,
                _until_dropped: until_dropped,
                gone: Mutex::new(Some(gone)),
            }))
        }
        fn port_events(&self) -> EventStream<PortEvent> {
            self.0.port_events()
        }
        async fn open_ports(&self) -> Vec<u16> {
            self.0.open_ports().await
        }
    }
}

#[tokio::test]
async fn a_build_ends_when_its_process_exits_though_the_runtime_holds_its_output_open() {
    let fake = FakeRuntime::new();
    fake.script(
        "npm run build",
        Script::exits(0, "built\n").writing("dist/index.html", "<h1>"),
    );
    fake.script("make", Script::exits(1, "make: no rule\n"));
    let runtime = held::HeldOutput(fake);
    let said = Mutex::new(String::new());
    let output = |chunk: &[u8]| {
        said.lock()
            .unwrap()
            .push_str(&String::from_utf8_lossy(chunk))
    };
    let root = build(&runtime, "npm run build", MINUTE, &output)
        .await
        .unwrap();
    assert_eq!(root, "dist");
    assert_eq!(*said.lock().unwrap(), "built\n");
    let Err(BuildFailure::Failed(why)) = build(&runtime, "make", MINUTE, &|_| {}).await else {
        panic!("the failed build was not reported");
    };
    assert!(why.ends_with("make: no rule"), "{why}");
}

#[tokio::test]
async fn a_site_file_removed_since_the_listing_is_not_part_of_the_site() {
    let runtime = FakeRuntime::with_files([("dist/index.html", "<h1>"), ("dist/gone.js", "x")]);
    let files = site_files(&runtime, "dist").await.unwrap();
    runtime.remove("dist/gone.js").await.unwrap();
    let mut read = Vec::new();
    for file in &files {
        read.push((
            file.relative.clone(),
            read_site_file(&runtime, file).await.unwrap(),
        ));
    }
    read.sort();
    assert_eq!(
        read,
        [
            ("gone.js".to_owned(), None),
            ("index.html".to_owned(), Some(b"<h1>".to_vec()))
        ]
    );
}
