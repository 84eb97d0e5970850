//! The server sandbox, with real processes: files, commands, limits,
//! terminals, previews, isolation (the escape battery) and shutdown.

use std::net::{IpAddr, SocketAddr};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use futures::StreamExt;
use rivet::runtime::host::{CommandSpec, ExitStatus, Limit, PortEvent, Runtime, RuntimeError};
use rivet::runtime::project::ProjectId;
use rivet::server::config::{Config, NetworkMode, SandboxConfig};
use rivet::server::sandbox::{Isolation, SandboxManager, SandboxSettings};
use rivet::server::state::AppState;
use tempfile::TempDir;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// An IDE serving HTTP on a free loopback port, with its own data directory.
struct Ide {
    dir: TempDir,
    manager: Arc<SandboxManager>,
    addr: SocketAddr,
    state: AppState,
}

fn settings(data_dir: &Path, tweak: impl FnOnce(&mut SandboxConfig)) -> SandboxSettings {
    let mut config = Config::defaults().sandbox;
    config.network = NetworkMode::None;
    tweak(&mut config);
    SandboxSettings {
        data_dir: data_dir.to_owned(),
        config,
        helper_exe: PathBuf::from(env!("CARGO_BIN_EXE_rivet")),
        isolation: Isolation::Bubblewrap,
        database_socket: None,
    }
}

impl Ide {
    async fn start(tweak: impl FnOnce(&mut SandboxConfig)) -> Ide {
        let dir = tempfile::tempdir().unwrap();
        let manager = SandboxManager::new(settings(dir.path(), tweak));
        manager.check().unwrap();
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let mut config = super::support::config(dir.path());
        config.server.addr = addr.to_string();
        let options = leptos::config::LeptosOptions::builder()
            .output_name("rivet")
            .site_root("target/site")
            .build();
        let state = AppState::with_sandbox(options, config, manager.clone());
        let app = rivet::server::http::app(state.clone());
        tokio::spawn(async move {
            axum::serve(listener, app).await.unwrap();
        });
        Ide {
            dir,
            manager,
            addr,
            state,
        }
    }

    fn runtime(&self, project: &str) -> Arc<dyn Runtime> {
        self.manager.runtime(&id(project))
    }

    fn data_dir(&self) -> &Path {
        self.dir.path()
    }
}

fn id(project: &str) -> ProjectId {
    ProjectId::parse(project).unwrap()
}

/// Makes `project` a project of the IDE whose data directory is `data_dir`
/// (terminals are only opened for projects that exist): a `project.json`
/// as versions before the store wrote, which the IDE imports; owned by `owner`
/// when given.
fn register(data_dir: &Path, project: &str, owner: Option<u32>) {
    let projects = data_dir.join("projects");
    let dir = projects.join(project);
    std::fs::create_dir_all(&dir).unwrap();
    let meta = rivet::server::projects::ProjectMeta {
        id: id(project),
        name: project.to_owned(),
        created: 0,
    };
    let json = dir.join("project.json");
    std::fs::write(&json, serde_json::to_vec(&meta).unwrap()).unwrap();
    if let Some(uid) = owner {
        for path in [&projects, &dir, &json] {
            std::os::unix::fs::chown(path, Some(uid), Some(uid)).unwrap();
        }
    }
}

/// Runs a command to its end; returns its status and output.
async fn run(runtime: &dyn Runtime, spec: CommandSpec) -> (ExitStatus, String) {
    let process = runtime.spawn(spec).await.unwrap();
    let mut output = process.take_output().unwrap();
    let collect = async {
        let mut all = Vec::new();
        while let Some(chunk) = output.next().await {
            all.extend_from_slice(&chunk);
        }
        all
    };
    let (status, all) = tokio::join!(process.wait(), collect);
    (status, String::from_utf8_lossy(&all).into_owned())
}

async fn sh(runtime: &dyn Runtime, command: &str) -> (ExitStatus, String) {
    run(runtime, CommandSpec::command(command)).await
}

/// Runs a command that must succeed; returns its output.
/// The paths of the project's whole tree, as the runtime lists them.
async fn tree_paths(runtime: &dyn Runtime) -> Vec<String> {
    let tree = runtime.list_tree("").await.unwrap();
    tree.into_iter().map(|e| e.path).collect()
}

async fn ok(runtime: &dyn Runtime, command: &str) -> String {
    let (status, output) = sh(runtime, command).await;
    assert!(status.success(), "{command}: {status:?}\n{output}");
    output
}

/// Polls until the project has a server on `port` (or no longer has one).
async fn wait_port(runtime: &dyn Runtime, port: u16, open: bool) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while runtime.open_ports().await.contains(&port) != open {
        assert!(
            Instant::now() < deadline,
            "port {port} never became open={open}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Host processes whose command line contains one of `markers`.
fn survivors(markers: &[&str]) -> Vec<String> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().filter_map(Result::ok) {
        let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) else {
            continue;
        };
        let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
        if markers.iter().any(|m| cmdline.contains(m)) {
            found.push(format!(
                "{}: {cmdline}",
                entry.file_name().to_string_lossy()
            ));
        }
    }
    found
}

/// What `/proc` says of a survivor ("pid: command line"): its state,
/// parent and namespaces.
fn described(survivor: &str) -> String {
    let pid = survivor.split(':').next().unwrap_or_default();
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let fields: Vec<&str> = status
        .lines()
        .filter(|l| {
            ["State", "PPid", "NSpid", "Uid"]
                .iter()
                .any(|f| l.starts_with(f))
        })
        .collect();
    let ns = std::fs::read_link(format!("/proc/{pid}/ns/pid")).unwrap_or_default();
    format!("{pid}: {} {}", fields.join(", "), ns.display())
}

/// Waits until no host process matches `markers`.
async fn assert_gone(markers: &[&str]) {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let left = survivors(markers);
        if left.is_empty() {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "still running: {left:?}\n{}",
            left.iter()
                .map(|p| described(p))
                .collect::<Vec<_>>()
                .join("\n")
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// A small HTTP server for inside a sandbox.
fn http_server(port: u16, body: &str) -> CommandSpec {
    CommandSpec::server(format!(
        "exec node -e \"require('http').createServer((q, s) => s.end('{body}')).listen({port}, '127.0.0.1')\""
    ))
}

// ---------------------------------------------------------------- files and commands

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn files_written_by_the_ide_are_seen_by_commands_and_back() {
    let ide = Ide::start(|_| {}).await;
    let rt = ide.runtime("files");
    rt.write_file("src/deep/hello.txt", b"from the IDE")
        .await
        .unwrap();
    let out = ok(
        &*rt,
        "cat src/deep/hello.txt && printf made > made.txt && pwd",
    )
    .await;
    assert_eq!(out, "from the IDE/home/project\n");
    assert_eq!(rt.read_file("made.txt").await.unwrap(), b"made");
    rt.mkdir("a/b/c").await.unwrap();
    rt.rename("made.txt", "a/b/c/moved.txt").await.unwrap();
    let tree = tree_paths(&*rt).await;
    assert_eq!(
        tree,
        [
            "a",
            "a/b",
            "a/b/c",
            "a/b/c/moved.txt",
            "src",
            "src/deep",
            "src/deep/hello.txt"
        ]
    );
    let top: Vec<String> = rt
        .list("")
        .await
        .unwrap()
        .into_iter()
        .map(|e| e.path)
        .collect();
    assert_eq!(top, ["a", "src"]);
    rt.remove("a").await.unwrap();
    assert!(rt.read_file("a/b/c/moved.txt").await.is_err());
    assert!(rt.write_file("../escape.txt", b"x").await.is_err());
    assert!(rt.write_file(".git/hooks/pre-commit", b"x").await.is_err());
    // The project's files live in its workspace on the host.
    let on_host = ide
        .manager
        .workspace_dir(&id("files"))
        .join("src/deep/hello.txt");
    assert_eq!(std::fs::read(on_host).unwrap(), b"from the IDE");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn file_changes_are_reported_whoever_makes_them() {
    let ide = Ide::start(|_| {}).await;
    let rt = ide.runtime("watch");
    rt.mkdir("src").await.unwrap();
    let mut events = rt.fs_events();
    // Gives the watcher a moment to see the new directory.
    tokio::time::sleep(Duration::from_millis(200)).await;
    ok(&*rt, "echo hi > src/made-by-a-command.txt && rm -f nothing").await;
    rt.write_file("src/made-by-the-ide.txt", b"x")
        .await
        .unwrap();
    let mut seen = std::collections::BTreeSet::new();
    let deadline = Instant::now() + Duration::from_secs(10);
    while !(seen.contains("src/made-by-a-command.txt") && seen.contains("src/made-by-the-ide.txt"))
    {
        let event = tokio::time::timeout_at(deadline.into(), events.next())
            .await
            .unwrap()
            .unwrap();
        assert!(!event.removed, "{event:?}");
        seen.insert(event.path);
    }
    rt.remove("src/made-by-the-ide.txt").await.unwrap();
    loop {
        let event = tokio::time::timeout_at(deadline.into(), events.next())
            .await
            .unwrap()
            .unwrap();
        if event.path == "src/made-by-the-ide.txt" && event.removed {
            break;
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn node_runs_as_a_non_root_user_in_the_project() {
    let ide = Ide::start(|_| {}).await;
    let rt = ide.runtime("node");
    let out = ok(
        &*rt,
        "node -e 'console.log(6 * 7, process.getuid(), process.cwd(), process.env.HOME)'",
    )
    .await;
    assert_eq!(out, "42 1000 /home/project /home/user\n");
    let (status, out) = sh(&*rt, "echo to-stderr >&2; exit 3").await;
    assert_eq!(status.code, Some(3));
    assert_eq!(status.message, None);
    assert_eq!(out, "to-stderr\n");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn commands_of_a_project_share_one_machine() {
    let ide = Ide::start(|_| {}).await;
    let rt = ide.runtime("machine");
    let mut ports = rt.port_events();
    let server = rt
        .spawn(http_server(4321, "hello from a server"))
        .await
        .unwrap();
    wait_port(&*rt, 4321, true).await;
    assert_eq!(ports.next().await, Some(PortEvent::Opened { port: 4321 }));
    // Another command reaches the server started by the first.
    let out = ok(&*rt, "curl -s http://localhost:4321/").await;
    assert_eq!(out, "hello from a server");
    server.kill().await.unwrap();
    let status = server.wait().await;
    assert_eq!(status.signal, Some(9));
    wait_port(&*rt, 4321, false).await;
    assert_eq!(ports.next().await, Some(PortEvent::Closed { port: 4321 }));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stdin_reaches_a_command_and_closing_it_ends_the_input() {
    let ide = Ide::start(|_| {}).await;
    let rt = ide.runtime("stdin");
    let process = rt.spawn(CommandSpec::command("tr a-z A-Z")).await.unwrap();
    let mut output = process.take_output().unwrap();
    process.write_stdin(b"shout\n").await.unwrap();
    process.close_stdin().await;
    let mut all = Vec::new();
    while let Some(chunk) = output.next().await {
        all.extend(chunk);
    }
    assert_eq!(all, b"SHOUT\n");
    assert!(process.wait().await.success());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_ends_a_command_and_everything_it_started() {
    let ide = Ide::start(|_| {}).await;
    let rt = ide.runtime("kill");
    let process = rt
        .spawn(CommandSpec::server(
            "sleep 1001.25 & (sleep 1002.25 &); sleep 1003.25",
        ))
        .await
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    while survivors(&["1001.25", "1002.25", "1003.25"]).len() < 3 {
        assert!(Instant::now() < deadline);
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    process.kill().await.unwrap();
    let status = process.wait().await;
    assert_eq!(status.signal, Some(9));
    assert_gone(&["1001.25", "1002.25", "1003.25"]).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_command_past_its_wall_clock_limit_is_stopped_with_a_message() {
    let ide = Ide::start(|c| c.timeout_secs = 1).await;
    let rt = ide.runtime("timeout");
    let started = Instant::now();
    let (status, _) = sh(&*rt, "sleep 30").await;
    assert!(started.elapsed() < Duration::from_secs(20));
    assert!(status.timed_out, "{status:?}");
    assert_eq!(status.limit_hit, Some(Limit::WallClock));
    assert_eq!(
        status.message.as_deref(),
        Some("stopped: wall-clock limit of 1 s reached (sandbox.timeout_secs)")
    );
    // A dev server has no wall-clock limit.
    let server = rt
        .spawn(CommandSpec::server("sleep 2.5; echo done"))
        .await
        .unwrap();
    let status = server.wait().await;
    assert!(status.success(), "{status:?}");
}

// ---------------------------------------------------------------- limits

async fn limited(tweak: impl FnOnce(&mut SandboxConfig), command: &str) -> (ExitStatus, String) {
    let ide = Ide::start(tweak).await;
    let rt = ide.runtime("limits");
    let result = sh(&*rt, command).await;
    assert!(!result.0.success(), "{command} succeeded: {}", result.1);
    result
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_cpu_time_limit_stops_an_endless_loop() {
    let (status, _) = limited(|c| c.cpu_secs = 1, "while :; do :; done").await;
    assert_eq!(status.limit_hit, Some(Limit::CpuTime), "{status:?}");
    assert_eq!(
        status.message.as_deref(),
        Some("stopped: CPU time limit of 1 s reached (sandbox.cpu_secs)")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_memory_limit_stops_a_memory_hog() {
    let (status, out) = limited(
        |c| c.memory_mb = 1024,
        "node -e 'const a = []; for (;;) a.push(Buffer.alloc(64 << 20, 1))'",
    )
    .await;
    assert_eq!(status.limit_hit, Some(Limit::Memory), "{status:?}\n{out}");
    assert!(
        status
            .message
            .unwrap()
            .contains("memory limit of 1024 MiB per process reached (sandbox.memory_mb)")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_file_size_limit_stops_a_big_write() {
    let ide = Ide::start(|c| c.file_size_mb = 8).await;
    let rt = ide.runtime("fsize");
    let (status, _) = sh(&*rt, "head -c 100M /dev/zero > big.bin").await;
    assert_eq!(status.limit_hit, Some(Limit::FileSize), "{status:?}");
    assert!(status.message.unwrap().contains("(sandbox.file_size_mb)"));
    let size = std::fs::metadata(ide.manager.workspace_dir(&id("fsize")).join("big.bin"))
        .unwrap()
        .len();
    assert!(size <= 8 << 20, "{size}");
    // Node ignores SIGXFSZ and reports EFBIG instead.
    let (status, out) = sh(
        &*rt,
        "node -e 'require(\"fs\").writeFileSync(\"big2.bin\", Buffer.alloc(16 << 20))'",
    )
    .await;
    assert_eq!(status.limit_hit, Some(Limit::FileSize), "{status:?}\n{out}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_open_files_limit_stops_a_descriptor_leak() {
    let (status, out) = limited(
        |c| c.open_files = 64,
        "node -e 'const fs = require(\"fs\"); for (let i = 0; i < 500; i++) fs.openSync(\"/dev/null\")'",
    )
    .await;
    assert_eq!(
        status.limit_hit,
        Some(Limit::OpenFiles),
        "{status:?}\n{out}"
    );
    assert!(
        status
            .message
            .unwrap()
            .contains("open files limit of 64 reached (sandbox.open_files)")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_process_limit_stops_a_spawning_loop() {
    let (status, out) = limited(
        |c| c.max_processes = 48,
        "node -e 'const { spawn } = require(\"child_process\"); \
         const go = (n) => { const c = spawn(\"sleep\", [\"5\"]); \
         c.on(\"error\", (e) => { console.error(e.message); process.exit(1); }); \
         c.on(\"spawn\", () => n < 500 && go(n + 1)); }; go(0)'",
    )
    .await;
    assert_eq!(
        status.limit_hit,
        Some(Limit::Processes),
        "{status:?}\n{out}"
    );
    assert!(
        status
            .message
            .unwrap()
            .contains("process limit of 48 reached (sandbox.max_processes)")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_network_a_download_fails_and_says_why() {
    let ide = Ide::start(|c| c.network = NetworkMode::None).await;
    let rt = ide.runtime("offline");
    let (status, out) = sh(&*rt, "curl -sS -m 5 https://registry.npmjs.org/react").await;
    assert!(!status.success(), "{out}");
    let message = status.message.unwrap_or_default();
    assert!(
        message.contains("no network access: sandbox.network is \"none\""),
        "{message}\n{out}"
    );
}

// ---------------------------------------------------------------- terminals

type Socket = tokio_tungstenite::WebSocketStream<tokio::net::TcpStream>;

/// Opens a WebSocket to `url` on `addr`, whatever host the URL names.
async fn websocket(addr: SocketAddr, url: &str, headers: &[(&str, &str)]) -> Socket {
    use tokio_tungstenite::tungstenite::client::IntoClientRequest;
    let mut request = url.into_client_request().unwrap();
    let bearer = super::support::bearer();
    for (name, value) in [("authorization", bearer.as_str())].iter().chain(headers) {
        request.headers_mut().insert(
            axum::http::HeaderName::from_bytes(name.as_bytes()).unwrap(),
            value.parse().unwrap(),
        );
    }
    let stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    tokio_tungstenite::client_async(request, stream)
        .await
        .unwrap()
        .0
}

async fn terminal(ide: &Ide, project: &str, name: &str) -> Socket {
    register(ide.data_dir(), project, None);
    let state = &ide.state;
    state.store.import_projects(&state.projects).await.unwrap();
    let url = format!(
        "ws://{}/api/projects/{project}/terminals/{name}/ws?cols=80&rows=24",
        ide.addr
    );
    websocket(ide.addr, &url, &[]).await
}

async fn type_in(socket: &mut Socket, text: &str) {
    use futures::SinkExt;
    use tokio_tungstenite::tungstenite::Message;
    socket
        .send(Message::Binary(text.as_bytes().to_vec().into()))
        .await
        .unwrap();
}

/// Reads the terminal until its output (since `seen`) matches `done`.
async fn read_until(socket: &mut Socket, seen: &mut String, done: impl Fn(&str) -> bool) {
    use tokio_tungstenite::tungstenite::Message;
    let deadline = Instant::now() + Duration::from_secs(20);
    while !done(seen) {
        let message = tokio::time::timeout_at(deadline.into(), socket.next())
            .await
            .unwrap_or_else(|_| panic!("terminal output so far: {seen:?}"))
            .unwrap_or_else(|| panic!("terminal closed after: {seen:?}"))
            .unwrap();
        match message {
            Message::Binary(bytes) => seen.push_str(&String::from_utf8_lossy(&bytes)),
            Message::Text(text) => seen.push_str(&text),
            _ => {}
        }
    }
}

/// The shell's answer to `command`: what it prints between two markers.
async fn ask(socket: &mut Socket, command: &str) -> String {
    let tag = format!("{:x}", rand_tag());
    // The empty echo ends output that has no newline of its own.
    type_in(
        socket,
        &format!("echo B{tag}; {command}; echo; echo E{tag}\r"),
    )
    .await;
    let mut seen = String::new();
    // The typed line is echoed too; only the output has these line ends.
    let (begin, end) = (format!("B{tag}\r\n"), format!("\nE{tag}\r\n"));
    read_until(socket, &mut seen, |s| s.contains(&end)).await;
    let start = seen.find(&begin).unwrap_or_else(|| panic!("{seen:?}")) + begin.len();
    let after = &seen[start - 1..];
    let stop = after.find(&end).unwrap();
    after[..stop].trim().to_owned()
}

fn rand_tag() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0x5eed);
    NEXT.fetch_add(0x9e37, Ordering::Relaxed)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn closing_a_shell_tab_ends_its_shell_and_a_new_tab_of_that_name_starts_afresh() {
    use futures::SinkExt;
    let ide = Ide::start(|_| {}).await;
    let mut socket = terminal(&ide, "term", "closed").await;
    assert_eq!(
        ask(&mut socket, "export MARK=kept; echo $MARK").await,
        "kept"
    );
    let close = r#"{"type":"close"}"#;
    socket
        .send(tokio_tungstenite::tungstenite::Message::Text(close.into()))
        .await
        .unwrap();
    let mut seen = String::new();
    read_until(&mut socket, &mut seen, |s| s.contains(r#""type":"exit""#)).await;
    let mut again = terminal(&ide, "term", "closed").await;
    assert_eq!(ask(&mut again, "echo ${MARK:-fresh}").await, "fresh");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_terminal_is_an_interactive_shell_with_job_control() {
    let ide = Ide::start(|_| {}).await;
    let mut socket = terminal(&ide, "term", "main").await;
    assert_eq!(ask(&mut socket, "echo $((6 * 7))").await, "42");
    assert_eq!(
        ask(&mut socket, "echo $- | grep -o m; tty").await,
        "m\r\n/dev/pts/0"
    );
    // Job control: a foreground job is stopped with Ctrl-Z and listed.
    type_in(&mut socket, "sleep 77\r").await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    type_in(&mut socket, "\x1a").await;
    let mut seen = String::new();
    read_until(&mut socket, &mut seen, |s| s.contains("Stopped")).await;
    assert!(ask(&mut socket, "jobs").await.contains("Stopped"));
    assert!(!seen.contains("no job control"), "{seen}");
    // Resizing reaches the shell's terminal.
    {
        use futures::SinkExt;
        let resize = r#"{"type":"resize","cols":100,"rows":30}"#;
        socket
            .send(tokio_tungstenite::tungstenite::Message::Text(resize.into()))
            .await
            .unwrap();
    }
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert_eq!(ask(&mut socket, "stty size").await, "30 100");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reconnecting_tab_gets_its_shell_back_with_the_scrollback() {
    let ide = Ide::start(|_| {}).await;
    let mut first = terminal(&ide, "reattach", "main").await;
    let shell = ask(&mut first, "echo $$; echo remembered-line").await;
    drop(first);
    tokio::time::sleep(Duration::from_millis(100)).await;
    let mut again = terminal(&ide, "reattach", "main").await;
    let mut seen = String::new();
    read_until(&mut again, &mut seen, |s| s.contains("remembered-line")).await;
    let pid = shell.lines().next().unwrap().trim().to_owned();
    assert_eq!(ask(&mut again, "echo $$").await, pid);
    // Another terminal of the same project is another shell.
    let mut other = terminal(&ide, "reattach", "second").await;
    let other_pid = ask(&mut other, "echo $$").await;
    assert_ne!(other_pid, pid);
    // Exiting the shell ends the terminal; the next connection starts anew.
    type_in(&mut other, "exit 3\r").await;
    let mut seen = String::new();
    read_until(&mut other, &mut seen, |s| s.contains(r#""type":"exit""#)).await;
    assert!(seen.contains(r#""code":3"#), "{seen}");
    let mut fresh = terminal(&ide, "reattach", "second").await;
    assert_ne!(ask(&mut fresh, "echo $$").await, other_pid);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_terminal_refuses_other_origins() {
    let ide = Ide::start(|_| {}).await;
    let url = format!("ws://{}/api/projects/term/terminals/main/ws", ide.addr);
    let request = {
        use tokio_tungstenite::tungstenite::client::IntoClientRequest;
        let mut request = url.as_str().into_client_request().unwrap();
        let origin = format!("http://term-5173.preview.localhost:{}", ide.addr.port());
        request
            .headers_mut()
            .insert("origin", origin.parse().unwrap());
        request
            .headers_mut()
            .insert("authorization", super::support::bearer().parse().unwrap());
        request
    };
    let stream = tokio::net::TcpStream::connect(ide.addr).await.unwrap();
    let refused = tokio_tungstenite::client_async(request, stream).await;
    assert!(refused.is_err(), "a preview could open a shell");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_terminal_for_a_project_that_does_not_exist_starts_no_sandbox() {
    let ide = Ide::start(|_| {}).await;
    let url = format!("ws://{}/api/projects/ghost/terminals/main/ws", ide.addr);
    let request = {
        use tokio_tungstenite::tungstenite::client::IntoClientRequest;
        let mut request = url.as_str().into_client_request().unwrap();
        request
            .headers_mut()
            .insert("authorization", super::support::bearer().parse().unwrap());
        request
    };
    let stream = tokio::net::TcpStream::connect(ide.addr).await.unwrap();
    let refused = tokio_tungstenite::client_async(request, stream).await;
    match refused {
        Err(tokio_tungstenite::tungstenite::Error::Http(response)) => {
            assert_eq!(response.status(), 404);
        }
        other => panic!("a shell opened for a project nobody has: {other:?}"),
    }
    assert_eq!(ide.manager.sandbox_pid(&id("ghost")).await, None);
    assert!(!ide.data_dir().join("projects/ghost").exists());
}

// ---------------------------------------------------------------- previews

/// The files of a bolt transcript: the bodies of its `<boltAction
/// type="file">` tags (the real parser lives elsewhere).
fn transcript_files(text: &str) -> Vec<(String, String)> {
    let mut files = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find("<boltAction type=\"file\" filePath=\"") {
        rest = &rest[start + "<boltAction type=\"file\" filePath=\"".len()..];
        let (path, after) = rest.split_once("\">").unwrap();
        let (body, after) = after.split_once("</boltAction>").unwrap();
        files.push((path.to_owned(), body.trim_start_matches('\n').to_owned()));
        rest = after;
    }
    files
}

async fn next_text(socket: &mut Socket) -> String {
    let message = tokio::time::timeout(Duration::from_secs(20), socket.next());
    message
        .await
        .unwrap()
        .unwrap()
        .unwrap()
        .into_text()
        .unwrap()
        .to_string()
}

fn http_client(ide: &Ide, hosts: &[&str]) -> reqwest::Client {
    let mut builder = super::support::client().no_proxy();
    for host in hosts {
        builder = builder.resolve(host, ide.addr);
    }
    builder.build().unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_vite_project_installs_runs_and_hot_reloads_through_the_preview() {
    // The default network: npm installs through the registry proxy.
    let ide = Ide::start(|c| c.network = NetworkMode::Registry).await;
    let rt = ide.runtime("todo");
    let transcript = include_str!("../fixtures/transcripts/todo-react.txt");
    let files = transcript_files(transcript);
    assert!(files.len() >= 5, "{files:?}");
    for (path, body) in &files {
        rt.write_file(path, body.as_bytes()).await.unwrap();
    }
    let install = CommandSpec::command("npm install").with_timeout(Duration::from_secs(240));
    let (status, out) = run(&*rt, install).await;
    assert!(status.success(), "{status:?}\n{out}");

    let server = rt
        .spawn(CommandSpec::server(
            "npm run dev -- --port 5173 --strictPort",
        ))
        .await
        .unwrap();
    let mut log = server.take_output().unwrap();
    let ready = async {
        let mut all = String::new();
        while !all.contains("ready in") {
            let chunk = log
                .next()
                .await
                .unwrap_or_else(|| panic!("the dev server ended: {all}"));
            all.push_str(&String::from_utf8_lossy(&chunk));
        }
        all
    };
    let banner = tokio::time::timeout(Duration::from_secs(60), ready)
        .await
        .unwrap();
    assert!(banner.contains("5173"), "{banner}");
    wait_port(&*rt, 5173, true).await;

    let port = ide.addr.port();
    let host = "todo-5173.preview.localhost";
    let origin = format!("http://{host}:{port}");
    let client = http_client(&ide, &[host, "other-5173.preview.localhost"]);
    let redirect = client
        .get(format!("http://{}/preview/todo/5173/", ide.addr))
        .send()
        .await
        .unwrap();
    assert_eq!(redirect.status(), 307);
    let location = redirect.headers()["location"].to_str().unwrap().to_owned();
    assert_eq!(location, format!("{origin}/"));

    let page = client.get(&location).send().await.unwrap();
    assert_eq!(page.status(), 200);
    assert_eq!(
        page.headers()["cross-origin-resource-policy"],
        "cross-origin"
    );
    assert_eq!(
        page.headers()["cross-origin-embedder-policy"],
        "credentialless"
    );
    let html = page.text().await.unwrap();
    assert!(
        html.contains("<div id=\"root\"></div>") && html.contains("/@vite/client"),
        "{html}"
    );
    // With the error reporter, which posts to the IDE's origin.
    assert!(
        html.contains(&format!(
            "<script data-rivet-ide=\"http://localhost:{port}\">"
        )),
        "{html}"
    );
    let app = client
        .get(format!("{origin}/src/App.jsx"))
        .send()
        .await
        .unwrap();
    assert!(app.text().await.unwrap().contains("What needs doing?"));

    // Vite's hot reload: the client's WebSocket, through the proxy.
    let client_js = client
        .get(format!("{origin}/@vite/client"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let token = client_js
        .split("const wsToken = \"")
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .unwrap_or_else(|| panic!("no token in the Vite client"));
    let url = format!("ws://{host}:{port}/?token={token}");
    let mut hmr = websocket(
        ide.addr,
        &url,
        &[("sec-websocket-protocol", "vite-hmr"), ("origin", &origin)],
    )
    .await;
    assert!(next_text(&mut hmr).await.contains("\"connected\""));
    let app = rt.read_file("src/App.jsx").await.unwrap();
    let edited = String::from_utf8(app)
        .unwrap()
        .replace("<h1>Todos</h1>", "<h1>My todos</h1>");
    rt.write_file("src/App.jsx", edited.as_bytes())
        .await
        .unwrap();
    let mut update = String::new();
    while !update.contains("\"update\"") {
        update = next_text(&mut hmr).await;
    }
    assert!(update.contains("/src/App.jsx"), "{update}");

    // Another project's preview host does not reach this project's server.
    let other = client
        .get("http://other-5173.preview.localhost:".to_owned() + &port.to_string() + "/")
        .send()
        .await
        .unwrap();
    assert_eq!(other.status(), 502);

    server.kill().await.unwrap();
    wait_port(&*rt, 5173, false).await;
    let gone = client.get(&location).send().await.unwrap();
    assert_eq!(gone.status(), 502);
    assert!(
        gone.text()
            .await
            .unwrap()
            .contains("Nothing is listening on port 5173 in project todo")
    );
}

/// A WebSocket server for inside a sandbox, without packages: it answers
/// every upgrade with `101`, the `Origin` it saw (`x-seen-origin`) and a
/// cookie named like the IDE's (`process.argv[2]`), then echoes.
const WEBSOCKET_SERVER: &str = r#"
const crypto = require('crypto');
const server = require('http').createServer((q, s) => s.end('page'));
server.on('upgrade', (q, socket) => {
  const accept = crypto.createHash('sha1')
    .update(q.headers['sec-websocket-key'] + '258EAFA5-E914-47DA-95CA-C5AB0DC11B65')
    .digest('base64');
  socket.write('HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n' +
    'Connection: Upgrade\r\nSec-WebSocket-Accept: ' + accept + '\r\n' +
    'X-Seen-Origin: ' + (q.headers.origin || '-') + '\r\n' +
    'Set-Cookie: ' + process.argv[2] + '=stolen; Path=/\r\n' +
    'Set-Cookie: app=1; Path=/\r\n\r\n');
  socket.pipe(socket);
});
server.listen(Number(process.argv[3]), '127.0.0.1');
"#;

/// Asks the IDE at `ide` for a WebSocket of the preview `host` from
/// `origin`; returns the answer's head and the connection.
async fn preview_upgrade(ide: &Ide, host: &str, origin: &str) -> (String, tokio::net::TcpStream) {
    let mut stream = tokio::net::TcpStream::connect(ide.addr).await.unwrap();
    let request = format!(
        "GET /hmr HTTP/1.1\r\nHost: {host}:{}\r\nAuthorization: {}\r\nOrigin: {origin}\r\n\
         Connection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\n\
         Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n",
        ide.addr.port(),
        super::support::bearer()
    );
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        let n = tokio::time::timeout(Duration::from_secs(20), stream.read(&mut byte))
            .await
            .unwrap()
            .unwrap();
        assert_eq!(n, 1, "closed after {}", String::from_utf8_lossy(&head));
        head.push(byte[0]);
    }
    (String::from_utf8_lossy(&head).to_ascii_lowercase(), stream)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_preview_websocket_opens_only_from_its_own_origin_and_cannot_set_the_ide_cookie() {
    let ide = Ide::start(|_| {}).await;
    let rt = ide.runtime("ws");
    rt.write_file("ws.js", WEBSOCKET_SERVER.as_bytes())
        .await
        .unwrap();
    let cookie = format!("rivet-{}", ide.addr.port());
    let server = rt
        .spawn(CommandSpec::server(format!(
            "exec node ws.js {cookie} 4600"
        )))
        .await
        .unwrap();
    wait_port(&*rt, 4600, true).await;
    let port = ide.addr.port();
    let host = "ws-4600.preview.localhost";

    // Another site, and another project's preview, are refused.
    for origin in [
        "http://evil.example".to_owned(),
        format!("http://other-4600.preview.localhost:{port}"),
        format!("http://127.0.0.1:{}", port + 1),
    ] {
        let (head, _) = preview_upgrade(&ide, host, &origin).await;
        assert!(head.starts_with("http/1.1 403"), "{origin}: {head}");
        assert!(!head.contains("stolen"), "{head}");
    }

    // The preview's own page: the server sees a local origin, and its
    // switch reaches the browser without the cookie that would log the
    // owner out.
    let (head, mut socket) = preview_upgrade(&ide, host, &format!("http://{host}:{port}")).await;
    assert!(head.starts_with("http/1.1 101"), "{head}");
    assert!(
        head.contains("x-seen-origin: http://localhost:4600\r\n"),
        "{head}"
    );
    assert!(head.contains("set-cookie: app=1; path=/\r\n"), "{head}");
    assert!(!head.contains(&cookie), "{head}");
    assert!(head.contains("upgrade: websocket\r\n"), "{head}");
    socket.write_all(b"ping").await.unwrap();
    let mut echo = [0u8; 4];
    tokio::time::timeout(Duration::from_secs(20), socket.read_exact(&mut echo))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(&echo, b"ping");
    server.kill().await.unwrap();
}

// ---------------------------------------------------------------- escape battery
//
// Each case is code in a project trying to get out. Every command must fail
// to reach what it is after.

/// The output of a command that is expected to fail, with its status.
async fn attempt(runtime: &dyn Runtime, command: &str) -> (ExitStatus, String) {
    let (status, out) = sh(runtime, command).await;
    assert!(!status.success(), "escaped with `{command}`: {out}");
    (status, out)
}

const CANARY: &str = "canary-7f3a9c1e";

/// Plants secrets where a project must never see them: the data directory,
/// the database, another project's files.
async fn plant_secrets(ide: &Ide) {
    std::fs::write(ide.data_dir().join("rivet.sqlite"), CANARY).unwrap();
    std::fs::write(
        ide.data_dir().join("settings.json"),
        format!("{{\"api_key\":\"{CANARY}\"}}"),
    )
    .unwrap();
    ide.runtime("victim")
        .write_file("secret.txt", CANARY.as_bytes())
        .await
        .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn escape_read_etc_shadow() {
    let ide = Ide::start(|_| {}).await;
    let rt = ide.runtime("attacker");
    attempt(&*rt, "cat /etc/shadow").await;
    attempt(&*rt, "cat /proc/1/root/etc/shadow").await;
    let listing = ok(&*rt, "ls /etc").await;
    assert!(
        !listing.contains("shadow") && !listing.contains("sudoers"),
        "{listing}"
    );
    // Nobody but the sandbox user exists inside.
    let passwd = ok(&*rt, "cat /etc/passwd").await;
    let users: Vec<&str> = passwd.lines().filter_map(|l| l.split(':').next()).collect();
    assert_eq!(users, ["root", "user", "nobody"], "{passwd}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn escape_read_the_data_directory() {
    let ide = Ide::start(|_| {}).await;
    plant_secrets(&ide).await;
    let rt = ide.runtime("attacker");
    let data = ide.data_dir().display().to_string();
    attempt(&*rt, &format!("ls {data}")).await;
    attempt(&*rt, &format!("cat {data}/settings.json")).await;
    attempt(
        &*rt,
        "ls /home/project/../../../tmp/* 2>/dev/null | grep -q .",
    )
    .await;
    // Nowhere in the sandbox's file system is the secret.
    let (_, out) = sh(
        &*rt,
        &format!(
            "grep -rl {CANARY} / --exclude-dir=proc --exclude-dir=sys --exclude-dir=usr 2>/dev/null"
        ),
    )
    .await;
    assert_eq!(out.trim(), "", "found the secret in: {out}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn escape_read_the_database() {
    let ide = Ide::start(|_| {}).await;
    plant_secrets(&ide).await;
    let rt = ide.runtime("attacker");
    let data = ide.data_dir().display().to_string();
    attempt(&*rt, &format!("cat {data}/rivet.sqlite")).await;
    let (_, out) = sh(
        &*rt,
        "find / -name 'rivet.sqlite' -not -path '/proc/*' 2>/dev/null",
    )
    .await;
    assert_eq!(out.trim(), "");
    // A symlink planted for the IDE to follow leads nowhere either: the IDE
    // reads files through the sandbox, which cannot see the host.
    ok(
        &*rt,
        &format!("ln -s {data}/rivet.sqlite db-link && ln -s /etc/shadow shadow-link"),
    )
    .await;
    assert!(rt.read_file("db-link").await.is_err());
    assert!(rt.read_file("shadow-link").await.is_err());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn escape_read_another_projects_files() {
    let ide = Ide::start(|_| {}).await;
    plant_secrets(&ide).await;
    let rt = ide.runtime("attacker");
    let victim = ide
        .manager
        .workspace_dir(&id("victim"))
        .display()
        .to_string();
    attempt(&*rt, &format!("cat {victim}/secret.txt")).await;
    attempt(&*rt, "cat ../victim/workspace/secret.txt").await;
    attempt(
        &*rt,
        "cat /home/project/../../projects/victim/workspace/secret.txt",
    )
    .await;
    let home = ok(&*rt, "ls /home").await;
    assert_eq!(
        home.split_whitespace().collect::<Vec<_>>(),
        ["project", "user"]
    );
    assert!(
        rt.read_file("../victim/workspace/secret.txt")
            .await
            .is_err()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn escape_list_host_processes() {
    let ide = Ide::start(|_| {}).await;
    let rt = ide.runtime("attacker");
    let me = std::process::id();
    attempt(&*rt, &format!("test -e /proc/{me}/cmdline")).await;
    attempt(&*rt, &format!("kill -0 {me}")).await;
    let pids = ok(&*rt, "ls /proc | grep -E '^[0-9]+$'").await;
    // The helper (pid 1), the shell and ls/grep: nothing of the host.
    assert!(pids.lines().count() <= 5, "{pids}");
    let cmdlines = ok(&*rt, "cat /proc/[0-9]*/cmdline | tr '\\0' ' '").await;
    assert!(
        !cmdlines.contains("/work/") && !cmdlines.contains("it-"),
        "{cmdlines}"
    );
    // The helper cannot be inspected or hijacked: it is not dumpable.
    attempt(&*rt, "ls /proc/1/fd").await;
    attempt(&*rt, "cat /proc/1/environ").await;
    attempt(&*rt, "kill -9 1 && sleep 0.2 && kill -0 1 && false").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn escape_read_the_ides_environment() {
    let ide = Ide::start(|_| {}).await;
    let rt = ide.runtime("attacker");
    let env = ok(&*rt, "env").await;
    let allowed = [
        "PATH",
        "HOME",
        "USER",
        "LOGNAME",
        "SHELL",
        "TERM",
        "LANG",
        "TMPDIR",
        "NODE_OPTIONS",
        "PWD",
        "SHLVL",
        "_",
        "NPM_CONFIG_UPDATE_NOTIFIER",
        "NPM_CONFIG_FUND",
    ];
    for line in env.lines() {
        let name = line.split('=').next().unwrap();
        assert!(
            allowed.contains(&name),
            "unexpected variable inside: {line}"
        );
    }
    // The IDE's own variables (cargo sets these for the test process).
    let manifest = std::env::var("CARGO_MANIFEST_DIR").unwrap();
    let (_, all) = sh(&*rt, "cat /proc/*/environ 2>/dev/null | tr '\\0' '\\n'").await;
    assert!(!all.contains(&manifest) && !all.contains("CARGO_"), "{all}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn escape_call_the_ides_api() {
    let ide = Ide::start(|c| c.network = NetworkMode::Full).await;
    let rt = ide.runtime("attacker");
    // The sandbox has a network (egress works) ...
    let code = ok(
        &*rt,
        "curl -s -m 10 -o /dev/null -w '%{http_code}' https://registry.npmjs.org/react",
    )
    .await;
    assert_eq!(code, "200");
    // ... but not the host's loopback, where the IDE listens.
    let port = ide.addr.port();
    for url in [
        format!("http://127.0.0.1:{port}/healthz"),
        format!("http://localhost:{port}/healthz"),
        format!("http://10.0.2.2:{port}/healthz"),
        format!("http://[::1]:{port}/healthz"),
    ] {
        attempt(&*rt, &format!("curl -sS -m 3 {url}")).await;
    }
    // The IDE answers from outside all along.
    let health = http_client(&ide, &[])
        .get(format!("http://{}/healthz", ide.addr))
        .send()
        .await
        .unwrap();
    assert_eq!(health.text().await.unwrap(), "ok");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn escape_reach_another_projects_preview() {
    let ide = Ide::start(|c| c.network = NetworkMode::Full).await;
    let victim = ide.runtime("victim");
    let server = victim
        .spawn(http_server(4555, "victim data"))
        .await
        .unwrap();
    wait_port(&*victim, 4555, true).await;
    let rt = ide.runtime("attacker");
    let port = ide.addr.port();
    attempt(&*rt, "curl -sS -m 3 http://127.0.0.1:4555/").await;
    attempt(
        &*rt,
        &format!("curl -sS -m 3 -H 'Host: victim-4555.preview.localhost' http://127.0.0.1:{port}/"),
    )
    .await;
    attempt(
        &*rt,
        &format!("curl -sS -m 3 -H 'Host: victim-4555.preview.localhost' http://10.0.2.2:{port}/"),
    )
    .await;
    // Through the IDE, the attacker's preview host reaches only its own ports.
    let client = http_client(
        &ide,
        &[
            "victim-4555.preview.localhost",
            "attacker-4555.preview.localhost",
        ],
    );
    let own = client
        .get(format!("http://victim-4555.preview.localhost:{port}/"))
        .send()
        .await
        .unwrap();
    assert_eq!(own.text().await.unwrap(), "victim data");
    let other = client
        .get(format!("http://attacker-4555.preview.localhost:{port}/"))
        .send()
        .await
        .unwrap();
    assert_eq!(other.status(), 502);
    server.kill().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn escape_gain_privileges() {
    let ide = Ide::start(|_| {}).await;
    let rt = ide.runtime("attacker");
    assert_eq!(ok(&*rt, "id -u; id -g").await, "1000\n1000\n");
    attempt(&*rt, "unshare --user --map-root-user true").await;
    attempt(&*rt, "touch /usr/bin/planted").await;
    attempt(&*rt, "touch /etc/planted").await;
    attempt(&*rt, "mount -t tmpfs none /tmp").await;
    // What a project may write: itself, its home, /tmp and /dev/shm.
    ok(&*rt, "touch ok ~/ok /tmp/ok /dev/shm/ok").await;
}

/// Runs `abuse` in one project while another project keeps working and the
/// IDE keeps answering; returns how the abuse ended.
async fn while_abused(ide: &Ide, abuse: CommandSpec) -> (ExitStatus, String) {
    let attacker = ide.runtime("attacker");
    let neighbour = ide.runtime("neighbour");
    ok(&*neighbour, "true").await;
    let abuse = tokio::spawn(async move { run(&*attacker, abuse).await });
    let client = http_client(ide, &[]);
    tokio::time::sleep(Duration::from_millis(500)).await;
    for round in 0..3 {
        let out = ok(&*neighbour, &format!("echo still-working-{round}")).await;
        assert_eq!(out, format!("still-working-{round}\n"));
        let health = client
            .get(format!("http://{}/healthz", ide.addr))
            .send()
            .await
            .unwrap();
        assert_eq!(health.status(), 200);
    }
    abuse.await.unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn escape_fork_bomb() {
    let ide = Ide::start(|c| c.max_processes = 64).await;
    // A bomb that keeps its shell busy runs into the process limit.
    let bomb =
        CommandSpec::command("bomb() { bomb | bomb; }; bomb").with_timeout(Duration::from_secs(5));
    let (status, out) = while_abused(&ide, bomb).await;
    assert!(!status.success());
    assert_eq!(
        status.limit_hit,
        Some(Limit::Processes),
        "{status:?}\n{out:.2000}"
    );
    assert!(status.message.unwrap().contains("sandbox.max_processes"));
    // The classic one returns at once and leaves its children forking: they
    // go when the command ends.
    let rt = ide.runtime("attacker");
    let (status, out) = sh(&*rt, ":(){ :|:& };:").await;
    assert!(
        status
            .message
            .as_deref()
            .unwrap_or_default()
            .contains("left running were stopped"),
        "{status:?}\n{out:.2000}"
    );
    // Nothing of either bomb is left in the project.
    let left = ok(&*rt, "ls /proc | grep -cE '^[0-9]+$'").await;
    assert!(left.trim().parse::<u32>().unwrap() <= 4, "{left}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn escape_memory_hog() {
    let ide = Ide::start(|c| c.memory_mb = 1024).await;
    let hog =
        CommandSpec::command("node -e 'const a = []; for (;;) a.push(Buffer.alloc(32 << 20, 1))'");
    let (status, out) = while_abused(&ide, hog).await;
    assert_eq!(status.limit_hit, Some(Limit::Memory), "{status:?}\n{out}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn escape_endless_loop() {
    let ide = Ide::start(|c| c.cpu_secs = 3).await;
    let spin = CommandSpec::command("while :; do :; done");
    let (status, _) = while_abused(&ide, spin).await;
    assert_eq!(status.limit_hit, Some(Limit::CpuTime), "{status:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn escape_fill_the_disk() {
    let ide = Ide::start(|c| {
        c.file_size_mb = 16;
        c.tmp_mb = 32;
    })
    .await;
    let fill = CommandSpec::command("head -c 4G /dev/zero > fill.bin");
    let (status, _) = while_abused(&ide, fill).await;
    assert_eq!(status.limit_hit, Some(Limit::FileSize), "{status:?}");
    let size = std::fs::metadata(ide.manager.workspace_dir(&id("attacker")).join("fill.bin"))
        .unwrap()
        .len();
    assert!(size <= 16 << 20);
    // The private /tmp is small and separate from the host's.
    let rt = ide.runtime("attacker");
    let (_, out) = sh(
        &*rt,
        "for i in 1 2 3 4; do head -c 15M /dev/zero > /tmp/f$i || exit 1; done",
    )
    .await;
    assert!(out.contains("No space left on device"), "{out}");
}

// ---------------------------------------------------------------- disk quota

/// Twelve files of 1 MiB, each far below an 8 MiB quota, then a wait that
/// only something from outside ends.
const FILL_PAST_8_MIB: &str =
    "for i in $(seq 1 12); do head -c 1M /dev/urandom > f$i.bin || exit 1; done; sleep 120";

fn quota_files(ide: &Ide, project: &str) -> Vec<u64> {
    let workspace = ide.manager.workspace_dir(&id(project));
    (1..=12)
        .filter_map(|i| std::fs::metadata(workspace.join(format!("f{i}.bin"))).ok())
        .map(|m| m.len())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_project_writing_past_its_quota_is_stopped_with_an_alert_naming_it() {
    let ide = Ide::start(|c| c.disk_mb = 8).await;
    let handle = ide
        .state
        .open_projects
        .open(&ide.state, &id("filler"))
        .await;
    let rt = ide.runtime("filler");
    let started = Instant::now();
    let (status, out) = sh(&*rt, FILL_PAST_8_MIB).await;
    assert!(
        started.elapsed() < Duration::from_secs(60),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(status.limit_hit, Some(Limit::Disk), "{status:?}\n{out}");
    let message = status.message.unwrap();
    assert!(
        message.contains("disk quota of 8 MiB per project reached (sandbox.disk_mb)"),
        "{message}"
    );
    assert!(
        message.contains("the project uses more than 8."),
        "{message}"
    );
    let alerts = handle.session.read(|s| s.alerts.clone());
    let alert = alerts
        .iter()
        .find(|a| a.title == "Disk quota reached")
        .unwrap_or_else(|| panic!("no quota alert in {alerts:?}"));
    assert!(
        alert
            .detail
            .contains("disk quota of 8 MiB per project reached (sandbox.disk_mb)")
            && alert.detail.contains("the project uses more than 8."),
        "{}",
        alert.detail
    );
    // Nothing new starts until space is freed: a command, or a terminal.
    for refused in [
        rt.spawn(CommandSpec::command("true")).await.err(),
        rt.spawn(CommandSpec::server("sleep 5")).await.err(),
    ] {
        let refused = refused.expect("started over the quota").to_string();
        assert!(
            refused.contains("not started: disk quota of 8 MiB per project reached"),
            "{refused}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_project_over_its_quota_keeps_its_files_and_other_projects_keep_working() {
    let ide = Ide::start(|c| c.disk_mb = 8).await;
    let (status, out) = while_abused(&ide, CommandSpec::command(FILL_PAST_8_MIB)).await;
    assert_eq!(status.limit_hit, Some(Limit::Disk), "{status:?}\n{out}");
    let neighbour = ide.runtime("neighbour");
    assert_eq!(ok(&*neighbour, "echo fine").await, "fine\n");
    // Every byte written is still there.
    assert_eq!(quota_files(&ide, "attacker"), vec![1 << 20; 12]);
    // Deleting files is enough to run commands again.
    let rt = ide.runtime("attacker");
    assert!(rt.spawn(CommandSpec::command("true")).await.is_err());
    for i in 1..=6 {
        rt.remove(&format!("f{i}.bin")).await.unwrap();
    }
    assert_eq!(ok(&*rt, "echo again").await, "again\n");
    assert_eq!(quota_files(&ide, "attacker").len(), 6);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_file_larger_than_the_quota_cannot_be_written() {
    let ide = Ide::start(|c| c.disk_mb = 8).await;
    let rt = ide.runtime("bigfile");
    let (status, _) = sh(&*rt, "head -c 100M /dev/zero > big.bin").await;
    assert_eq!(status.limit_hit, Some(Limit::Disk), "{status:?}");
    assert!(status.message.unwrap().contains("(sandbox.disk_mb)"));
    let size = std::fs::metadata(ide.manager.workspace_dir(&id("bigfile")).join("big.bin"))
        .unwrap()
        .len();
    assert!(size <= 8 << 20, "{size}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn escape_fill_memory_through_dev_shm() {
    let ide = Ide::start(|c| c.tmp_mb = 8).await;
    let rt = ide.runtime("attacker");
    // /dev/shm works, as far as sandbox.tmp_mb.
    ok(&*rt, "head -c 1M /dev/zero > /dev/shm/small").await;
    let (status, out) = sh(
        &*rt,
        "for i in 1 2 3 4 5 6 7 8; do head -c 4M /dev/zero > /dev/shm/f$i || exit 1; done",
    )
    .await;
    assert!(!status.success(), "{out}");
    assert!(out.contains("No space left on device"), "{out}");
    let used = ok(&*rt, "du -sk /dev/shm | cut -f1").await;
    let used: u64 = used.trim().parse().unwrap();
    assert!(used <= 8 * 1024, "{used} KiB in /dev/shm");
}

// ---------------------------------------------------------------- file operations that hold

/// A new project has nothing to list or read: neither starts its sandbox
/// (an answer in prose runs nothing), and the first file written starts one
/// and is listed through it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn listing_an_empty_project_starts_no_sandbox() {
    let ide = Ide::start(|_| {}).await;
    let rt = ide.runtime("fresh");
    assert_eq!(rt.list_tree("").await.unwrap(), []);
    let missing = rt.read_file("AGENTS.md").await;
    assert!(
        matches!(missing, Err(RuntimeError::NotFound { .. })),
        "{missing:?}"
    );
    assert_eq!(ide.manager.sandbox_pid(&id("fresh")).await, None);
    rt.write_file("index.html", b"<p>hi</p>").await.unwrap();
    assert!(ide.manager.sandbox_pid(&id("fresh")).await.is_some());
    assert_eq!(tree_paths(&*rt).await, ["index.html"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_listing_larger_than_the_protocol_header_keeps_the_sandbox_alive() {
    let ide = Ide::start(|_| {}).await;
    let rt = ide.runtime("huge");
    // 6000 names of 230 bytes: well past the helper's 1 MiB header.
    ok(
        &*rt,
        "mkdir -p big && cd big && for i in $(seq 6000); do : > $(printf 'f%0229d' $i); done",
    )
    .await;
    let pid = ide.manager.sandbox_pid(&id("huge")).await.unwrap();
    for _ in 0..3 {
        let tree = rt.list_tree("").await.unwrap();
        assert!(tree.len() > 100 && tree.len() < 6001, "{}", tree.len());
        assert_eq!(tree[0].path, "big");
        let one = rt.list("big").await.unwrap();
        assert!(one.len() > 100 && one.len() < 6000, "{}", one.len());
    }
    // The same sandbox still answers everything else.
    rt.write_file("after.txt", b"still here").await.unwrap();
    assert_eq!(rt.read_file("after.txt").await.unwrap(), b"still here");
    assert_eq!(ok(&*rt, "cat after.txt").await, "still here");
    assert_eq!(ide.manager.sandbox_pid(&id("huge")).await, Some(pid));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fifo_where_the_ide_reads_or_writes_is_refused_and_the_sandbox_keeps_answering() {
    let ide = Ide::start(|_| {}).await;
    let rt = ide.runtime("fifo");
    ok(&*rt, "mkdir src && mkfifo src/App.jsx").await;
    let pid = ide.manager.sandbox_pid(&id("fifo")).await.unwrap();
    let limit = Duration::from_secs(60);
    let read = tokio::time::timeout(limit, rt.read_file("src/App.jsx"))
        .await
        .expect("reading a FIFO blocked");
    let message = read.unwrap_err().to_string();
    assert!(message.contains("is a FIFO"), "{message}");
    let write = tokio::time::timeout(limit, rt.write_file("src/App.jsx", b"x"))
        .await
        .expect("writing a FIFO blocked");
    let message = write.unwrap_err().to_string();
    assert!(message.contains("is a FIFO"), "{message}");
    // Nothing was held up: files, commands and the same sandbox.
    rt.write_file("src/main.jsx", b"ok").await.unwrap();
    assert_eq!(
        ok(&*rt, "cat src/main.jsx; test -p src/App.jsx && echo .").await,
        "ok.\n"
    );
    assert_eq!(ide.manager.sandbox_pid(&id("fifo")).await, Some(pid));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn files_the_ide_writes_are_replaced_whole_and_keep_their_mode() {
    let ide = Ide::start(|_| {}).await;
    let rt = ide.runtime("atomic");
    rt.write_file("run.sh", b"#!/bin/sh\necho one\n")
        .await
        .unwrap();
    ok(&*rt, "chmod 755 run.sh").await;
    // A reader holding the old file keeps reading the old contents.
    let old_inode = ok(&*rt, "stat -c %i run.sh").await;
    rt.write_file("run.sh", b"#!/bin/sh\necho two\n")
        .await
        .unwrap();
    assert_ne!(ok(&*rt, "stat -c %i run.sh").await, old_inode);
    assert_eq!(ok(&*rt, "./run.sh").await, "two\n");
    assert_eq!(
        ok(&*rt, "ls -A").await,
        "run.sh\n",
        "no temporary file is left"
    );
}

// ---------------------------------------------------------------- egress
//
// With sandbox.network = "registry" (the default), code in a sandbox has no
// route out; the IDE's proxy on 127.0.0.1:3128 inside reaches only the hosts
// of sandbox.registry_hosts. Every server these tests talk to runs in the
// test process, on this machine.

/// This machine's first non-loopback IPv4 address (`hostname -I`): where
/// its LAN-facing services listen.
fn lan_address() -> Option<IpAddr> {
    let out = std::process::Command::new("hostname")
        .arg("-I")
        .output()
        .ok()?;
    String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .filter_map(|a| a.parse::<IpAddr>().ok())
        .find(|ip| ip.is_ipv4() && !ip.is_loopback())
}

/// An HTTP server on `ip` that answers `body` to every request and counts
/// the connections it accepts.
async fn host_server(ip: IpAddr, body: &'static str) -> (SocketAddr, Arc<AtomicUsize>) {
    let listener = tokio::net::TcpListener::bind((ip, 0)).await.unwrap();
    let addr = listener.local_addr().unwrap();
    let hits = Arc::new(AtomicUsize::new(0));
    let counter = hits.clone();
    tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            counter.fetch_add(1, Ordering::SeqCst);
            tokio::spawn(async move {
                let mut head = Vec::new();
                let mut buf = [0u8; 1024];
                while !head.windows(4).any(|w| w == b"\r\n\r\n") && head.len() < 8192 {
                    match stream.read(&mut buf).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => head.extend_from_slice(&buf[..n]),
                    }
                }
                let response = format!(
                    "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                );
                let _ = stream.write_all(response.as_bytes()).await;
            });
        }
    });
    (addr, hits)
}

async fn registry_ide(hosts: Vec<String>) -> Ide {
    Ide::start(move |c| {
        c.network = NetworkMode::Registry;
        c.registry_hosts = hosts;
    })
    .await
}

/// Asks for `url` through the sandbox's proxy (curl takes it from
/// `http_proxy`); returns what came back and the status code last.
async fn through_proxy(runtime: &dyn Runtime, url: &str) -> String {
    ok(
        runtime,
        &format!("curl -sS -m 20 -w '\\n%{{http_code}}' {url}"),
    )
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sandboxed_code_cannot_reach_the_hosts_lan_address() {
    let Some(ip) = lan_address() else {
        eprintln!("skipped: this machine has no non-loopback IPv4 address to listen on");
        return;
    };
    let (addr, hits) = host_server(ip, "lan secret").await;
    let ide = registry_ide(vec!["registry.npmjs.org".to_owned()]).await;
    let rt = ide.runtime("lan");
    // No route: the sandbox has no interface but its loopback.
    let (status, out) = attempt(
        &*rt,
        &format!("curl -sS -m 20 --noproxy '*' http://{addr}/"),
    )
    .await;
    assert_eq!(status.code, Some(7), "not refused at once: {out}");
    let (status, out) = attempt(
        &*rt,
        &format!("node -e \"require('http').get('http://{addr}/', r => process.exit(0)).on('error', e => {{ console.error(e.code); process.exit(1) }})\""),
    )
    .await;
    assert!(out.contains("ENETUNREACH"), "{status:?} {out}");
    // The proxy refuses the address by name, and says where to change it.
    let out = through_proxy(&*rt, &format!("http://{addr}/")).await;
    assert!(out.ends_with("\n403"), "{out}");
    assert!(out.contains(&format!("refused {addr}")), "{out}");
    assert!(out.contains("sandbox.registry_hosts"), "{out}");
    let (status, out) = attempt(&*rt, &format!("curl -sS -m 20 -p http://{addr}/")).await;
    assert!(out.contains("CONNECT tunnel failed, response 403"), "{out}");
    let message = status.message.unwrap_or_default();
    assert!(
        message.contains("reaches only the package registries"),
        "{message}"
    );
    assert_eq!(hits.load(Ordering::SeqCst), 0, "the LAN server was reached");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sandboxed_code_cannot_reach_cloud_metadata() {
    let ide = registry_ide(vec!["registry.npmjs.org".to_owned()]).await;
    let rt = ide.runtime("metadata");
    // No route: it fails at once instead of waiting for an answer.
    let (status, out) = attempt(
        &*rt,
        "curl -sS -m 20 --noproxy '*' http://169.254.169.254/latest/meta-data/",
    )
    .await;
    assert_eq!(status.code, Some(7), "not refused at once: {out}");
    let out = through_proxy(&*rt, "http://169.254.169.254/latest/meta-data/").await;
    assert!(out.ends_with("\n403"), "{out}");
    assert!(out.contains("refused 169.254.169.254:80"), "{out}");
    let (_, out) = attempt(
        &*rt,
        "curl -sS -m 20 https://metadata.google.internal/computeMetadata/v1/",
    )
    .await;
    assert!(out.contains("CONNECT tunnel failed, response 403"), "{out}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_listed_registry_is_reached_through_the_proxy_and_nothing_else() {
    let (upstream, hits) = host_server(IpAddr::from([127, 0, 0, 1]), "registry data").await;
    let port = upstream.port();
    let ide = registry_ide(vec![format!("localhost:{port}")]).await;
    let rt = ide.runtime("registry");
    let env = ok(
        &*rt,
        "echo \"$HTTPS_PROXY $npm_config_https_proxy $NO_PROXY\"",
    )
    .await;
    assert_eq!(
        env.trim(),
        "http://127.0.0.1:3128 http://127.0.0.1:3128 localhost,127.0.0.1,::1"
    );
    // A listed name is forwarded, as a request and through a tunnel (curl
    // goes around the proxy for localhost unless told otherwise).
    let proxy = "--noproxy '' -x \"$http_proxy\"";
    let url = format!("http://localhost:{port}/react");
    let out = ok(&*rt, &format!("curl -sS -m 20 {proxy} {url}")).await;
    assert_eq!(out, "registry data");
    assert_eq!(hits.load(Ordering::SeqCst), 1);
    // A tunnel carries TLS for that name only: the ClientHello goes through
    // (the server here speaks no TLS, so curl gives up), plain text does not.
    let tls = format!("curl -sS -m 5 -k {proxy} https://localhost:{port}/react");
    attempt(&*rt, &tls).await;
    assert_eq!(hits.load(Ordering::SeqCst), 2);
    let (_, out) = attempt(&*rt, &format!("curl -sS -m 20 {proxy} -p {url}")).await;
    assert!(!out.contains("registry data"), "{out}");
    // (The proxy connects before the tunnel's first bytes, which it then
    // keeps from the server: a connection, not a request.)
    assert_eq!(hits.load(Ordering::SeqCst), 3);
    // Its address, another port of it, and any other host are refused.
    for url in [
        format!("http://127.0.0.1:{port}/react"),
        "http://localhost:22/".to_owned(),
        "http://example.com/".to_owned(),
    ] {
        let out = ok(
            &*rt,
            &format!("curl -sS -m 20 {proxy} -w '\\n%{{http_code}}' {url}"),
        )
        .await;
        assert!(out.ends_with("\n403"), "{url}: {out}");
    }
    assert_eq!(hits.load(Ordering::SeqCst), 3);
    // The proxy's port is not a server of the project: not reported, and
    // not served as a preview.
    assert!(!rt.open_ports().await.contains(&3128));
    let preview = "registry-3128.preview.localhost";
    let answer = http_client(&ide, &[preview])
        .get(format!("http://{preview}:{}/", ide.addr.port()))
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status(), 502);
    let page = answer.text().await.unwrap();
    assert!(page.contains("the sandbox's registry proxy"), "{page}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn escape_call_the_ides_api_through_the_registry_proxy() {
    let ide = registry_ide(vec!["registry.npmjs.org".to_owned()]).await;
    let rt = ide.runtime("attacker");
    let port = ide.addr.port();
    for host in ["127.0.0.1", "localhost", "[::1]", "10.0.2.2"] {
        let url = format!("http://{host}:{port}/healthz");
        let out = ok(
            &*rt,
            &format!("curl -sS -m 20 --noproxy '' -w '\\n%{{http_code}}' {url}"),
        )
        .await;
        assert!(out.ends_with("\n403"), "{url}: {out}");
        attempt(&*rt, &format!("curl -sS -m 20 --noproxy '*' {url}")).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sandboxed_code_without_network_reaches_nothing() {
    let ip = lan_address().unwrap_or(IpAddr::from([127, 0, 0, 1]));
    let (addr, hits) = host_server(ip, "host secret").await;
    let ide = Ide::start(|c| c.network = NetworkMode::None).await;
    let rt = ide.runtime("offline");
    let env = ok(&*rt, "env | grep -ci proxy || true").await;
    assert_eq!(env.trim(), "0", "proxy variables without a proxy");
    for command in [
        format!("curl -sS -m 20 http://{addr}/"),
        "curl -sS -m 20 -x http://127.0.0.1:3128 http://registry.npmjs.org/".to_owned(),
        "curl -sS -m 20 --noproxy '*' http://169.254.169.254/".to_owned(),
    ] {
        let (status, out) = attempt(&*rt, &command).await;
        assert_eq!(status.code, Some(7), "{command}: {out}");
    }
    assert_eq!(hits.load(Ordering::SeqCst), 0);
}

// ---------------------------------------------------------------- lifecycle

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn closing_a_project_kills_everything_it_runs() {
    let ide = Ide::start(|_| {}).await;
    let rt = ide.runtime("closing");
    let server = rt
        .spawn(CommandSpec::server("setsid sleep 2001.25 & sleep 2002.25"))
        .await
        .unwrap();
    let mut socket = terminal(&ide, "closing", "main").await;
    type_in(&mut socket, "sleep 2003.25 &\r").await;
    // Each marker on its own: the server's `sh -c` line holds the first two,
    // so a count of matching processes could reach three before the
    // terminal's shell had even started. A shell started after the close
    // would be the next use's, in a fresh sandbox (below).
    let markers = ["2001.25", "2002.25", "2003.25"];
    let deadline = Instant::now() + Duration::from_secs(10);
    while markers.iter().any(|m| survivors(&[m]).is_empty()) {
        assert!(Instant::now() < deadline, "{:?}", survivors(&["200"]));
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let bwrap = ide.manager.sandbox_pid(&id("closing")).await.unwrap();
    ide.manager.close_project(&id("closing")).await;
    assert_gone(&markers).await;
    assert!(
        !Path::new(&format!("/proc/{bwrap}")).exists()
            || survivors(&["sandbox-agent --fd"]).is_empty()
    );
    let status = server.wait().await;
    assert!(!status.success());
    // The next use starts a fresh sandbox.
    assert_eq!(ok(&*rt, "echo back").await, "back\n");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_isolation_commands_run_and_each_logs_a_warning() {
    use std::sync::Mutex;
    #[derive(Clone, Default)]
    struct Log(Arc<Mutex<Vec<u8>>>);
    impl std::io::Write for Log {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let log = Log::default();
    let subscriber = tracing_subscriber::fmt()
        .with_writer({
            let log = log.clone();
            move || log.clone()
        })
        .with_ansi(false)
        .finish();
    let dir = tempfile::tempdir().unwrap();
    let mut unsafe_settings = settings(dir.path(), |_| {});
    unsafe_settings.isolation = Isolation::Unsafe;
    let manager = SandboxManager::new(unsafe_settings);
    manager.check().unwrap();
    let rt = manager.runtime(&id("bare"));
    let _guard = tracing::subscriber::set_default(subscriber);
    let workspace = manager.workspace_dir(&id("bare"));
    let out = ok(&*rt, "pwd; echo second").await;
    assert_eq!(out, format!("{}\nsecond\n", workspace.display()));
    ok(&*rt, "true").await;
    let text = String::from_utf8(log.0.lock().unwrap().clone()).unwrap();
    assert_eq!(text.matches("WITHOUT isolation").count(), 2, "{text}");
    // Closing still kills what the project started, orphans included.
    rt.spawn(CommandSpec::server("(sleep 3001.25 &); sleep 3002.25"))
        .await
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    while survivors(&["3001.25", "3002.25"]).len() < 2 {
        assert!(Instant::now() < deadline);
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    manager.shutdown().await;
    assert_gone(&["3001.25", "3002.25"]).await;
}

/// `rivet serve` as a real process.
struct Served {
    child: tokio::process::Child,
    addr: SocketAddr,
}

async fn serve(data_dir: &Path, binary: &Path, as_user: Option<u32>) -> Served {
    let mut command = match as_user {
        Some(uid) => {
            let mut c = tokio::process::Command::new("setpriv");
            c.arg(format!("--reuid={uid}"))
                .arg(format!("--regid={uid}"))
                .arg("--clear-groups")
                .arg(binary);
            c
        }
        None => tokio::process::Command::new(binary),
    };
    super::support::serve_in(&mut command, data_dir);
    command
        .env("RIVET_SANDBOX_NETWORK", "full")
        .env("OPENAI_API_KEY", CANARY);
    let (child, addr) = super::support::spawn_serve(command).await;
    Served { child, addr }
}

/// Starts background work in a project through a terminal of a served IDE,
/// checks the IDE's secrets are not in it, then stops the IDE with SIGTERM
/// and checks nothing of the project survives.
async fn serve_then_shut_down(data_dir: &Path, binary: &Path, as_user: Option<u32>, tag: &str) {
    register(data_dir, "shutdown", as_user);
    let mut served = serve(data_dir, binary, as_user).await;
    let url = format!(
        "ws://{}/api/projects/shutdown/terminals/main/ws",
        served.addr
    );
    let mut socket = websocket(served.addr, &url, &[]).await;
    let markers = [
        format!("{tag}1.25"),
        format!("{tag}2.25"),
        format!("{tag}3.25"),
    ];
    let env = ask(
        &mut socket,
        "env; cat /proc/[0-9]*/environ 2>/dev/null | tr '\\0' '\\n'",
    )
    .await;
    assert!(!env.contains(CANARY) && !env.contains("OPENAI"), "{env}");
    let code = ask(
        &mut socket,
        "curl -s -m 10 -o /dev/null -w '%{http_code}' https://registry.npmjs.org/react",
    )
    .await;
    assert_eq!(code, "200");
    type_in(
        &mut socket,
        &format!(
            "sleep {} & (sleep {} &); setsid sleep {} &\r",
            markers[0], markers[1], markers[2]
        ),
    )
    .await;
    let markers: Vec<&str> = markers.iter().map(String::as_str).collect();
    let deadline = Instant::now() + Duration::from_secs(10);
    while survivors(&markers).len() < 3 {
        assert!(Instant::now() < deadline, "{:?}", survivors(&markers));
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let pid = served.child.id().unwrap() as i32;
    let tree = descendants(pid);
    assert!(
        tree.len() >= 4,
        "bwrap, the helper, bash and the sleeps: {tree:?}"
    );
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(pid),
        nix::sys::signal::Signal::SIGTERM,
    )
    .unwrap();
    let status = tokio::time::timeout(Duration::from_secs(20), served.child.wait())
        .await
        .unwrap()
        .unwrap();
    assert!(status.success(), "{status:?}");
    assert_gone(&markers).await;
    assert_gone(&[&data_dir.display().to_string()]).await;
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let alive: Vec<&i32> = tree.iter().filter(|p| alive(**p)).collect();
        if alive.is_empty() {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "still running after shutdown: {alive:?}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Every process below `root` now (a sandbox's orphans stay below it: its
/// init adopts them).
fn descendants(root: i32) -> Vec<i32> {
    let parents: Vec<(i32, i32)> = std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(Result::ok)
        .filter_map(|e| std::fs::read_to_string(e.path().join("stat")).ok())
        .filter_map(|stat| {
            let (head, tail) = stat.rsplit_once(')')?;
            let pid = head.split_whitespace().next()?.parse().ok()?;
            let ppid = tail.split_whitespace().nth(1)?.parse().ok()?;
            Some((pid, ppid))
        })
        .collect();
    let mut found = vec![root];
    let mut i = 0;
    while i < found.len() {
        let parent = found[i];
        found.extend(
            parents
                .iter()
                .filter(|(_, pp)| *pp == parent)
                .map(|(p, _)| *p),
        );
        i += 1;
    }
    found.remove(0);
    found
}

/// Whether a process exists and is not a zombie.
fn alive(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|stat| {
            stat.rsplit_once(')')
                .map(|(_, tail)| tail.trim_start().starts_with('Z'))
        })
        .is_some_and(|zombie| !zombie)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_shutdown_leaves_nothing_running() {
    let dir = tempfile::tempdir().unwrap();
    serve_then_shut_down(
        dir.path(),
        Path::new(env!("CARGO_BIN_EXE_rivet")),
        None,
        "41",
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_as_an_unprivileged_user_runs_and_shuts_down_cleanly() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    // Run as root, the test drops to an ordinary user; run as one, it is one.
    let as_user = nix::unistd::geteuid().is_root().then_some(4242);
    let bin = dir.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    let binary = bin.join("rivet");
    // Copied by `cp`, not by this process: a child another test forks
    // while this process holds the copy open for writing would hold it too,
    // and running the copy would then fail with "Text file busy".
    let copied = std::process::Command::new("cp")
        .arg(env!("CARGO_BIN_EXE_rivet"))
        .arg(&binary)
        .status()
        .unwrap();
    assert!(copied.success());
    std::fs::set_permissions(&binary, std::fs::Permissions::from_mode(0o755)).unwrap();
    let data = dir.path().join("data");
    std::fs::create_dir(&data).unwrap();
    if let Some(uid) = as_user {
        for path in [dir.path(), &bin, &binary, &data] {
            std::os::unix::fs::chown(path, Some(uid), Some(uid)).unwrap();
        }
    }
    serve_then_shut_down(&data, &binary, as_user, "42").await;
}
