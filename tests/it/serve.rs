//! `rivet serve` as a process: who it lets in, and how it stops.

use std::time::Duration;

use tokio::io::{AsyncBufReadExt, BufReader};

use super::support::{TOKEN, client, serve_in, spawn_serve, spawn_serve_with_log};

/// A new user's first start: a token is made, and the URL printed on
/// standard output opens the IDE in one click.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_prints_a_login_url_that_opens_the_ide() {
    use std::os::unix::fs::PermissionsExt;
    let data = tempfile::tempdir().unwrap();
    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_rivet"));
    serve_in(&mut command, data.path());
    command
        .env_remove("RIVET_SERVER_TOKEN")
        .env("RUST_LOG", "warn")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true);
    let mut child = command.spawn().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let url = tokio::time::timeout(Duration::from_secs(30), async {
        loop {
            let line = lines.next_line().await.unwrap().expect("serve exited");
            if let Some(url) = line.split("open ").nth(1) {
                return url.trim().to_owned();
            }
        }
    })
    .await
    .unwrap();
    let token = std::fs::read_to_string(data.path().join("token")).unwrap();
    let mode = std::fs::metadata(data.path().join("token"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600);
    assert!(url.ends_with(&format!("/?token={}", token.trim())), "{url}");
    assert!(token.trim().len() >= 32, "at least 128 bits");

    let browser = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let login = browser.get(&url).send().await.unwrap();
    assert_eq!(login.status(), 303);
    assert_eq!(login.headers()["location"], "/");
    let cookie = login.headers()["set-cookie"].to_str().unwrap();
    let session = cookie.split(';').next().unwrap().to_owned();
    let origin = url.split("/?").next().unwrap();
    let projects = browser
        .get(format!("{origin}/"))
        .header("cookie", &session)
        .send()
        .await
        .unwrap();
    assert_eq!(projects.status(), 200, "the projects page");
    // The projects page's button posts from the IDE's own page.
    let opened = browser
        .post(format!("{origin}/new"))
        .header("cookie", &session)
        .header("origin", origin)
        .send()
        .await
        .unwrap();
    assert_eq!(opened.status(), 303, "New project opens one");
    let project = opened.headers()["location"].to_str().unwrap().to_owned();
    assert!(project.starts_with("/p/"), "{project}");
    let page = browser
        .get(format!("{origin}{project}"))
        .header("cookie", &session)
        .send()
        .await
        .unwrap();
    assert_eq!(page.status(), 200);
    let stranger = browser
        .get(format!("{origin}{project}"))
        .send()
        .await
        .unwrap();
    assert_eq!(stranger.status(), 401);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_refuses_to_run_without_authentication_on_a_public_address() {
    let data = tempfile::tempdir().unwrap();
    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_rivet"));
    serve_in(&mut command, data.path());
    let output = command
        .env("RIVET_SERVER_AUTH", "none")
        .env("RIVET_SERVER_ADDR", "0.0.0.0:0")
        .stdin(std::process::Stdio::null())
        .kill_on_drop(true)
        .output();
    let output = tokio::time::timeout(Duration::from_secs(30), output)
        .await
        .expect("serve should stop at once")
        .unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("loopback"), "{stderr}");
}

/// A preview shares the IDE's host, so the cookies its code sets are sent
/// to the IDE as well: a browser sends up to 180 cookies of 4 KB to a host.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cookie_flood_from_a_preview_cannot_lock_the_owner_out() {
    let data = tempfile::tempdir().unwrap();
    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_rivet"));
    serve_in(&mut command, data.path());
    let (_child, addr) = spawn_serve(command).await;
    let value = "x".repeat(4000);
    let mut cookies: Vec<String> = (0..180).map(|i| format!("flood{i}={value}")).collect();
    cookies.push(format!("rivet-{}={TOKEN}", addr.port()));
    let cookie = cookies.join("; ");
    assert!(cookie.len() > 700_000);
    let response = reqwest::Client::new()
        .get(format!("http://{addr}/p/someproject"))
        .header("cookie", cookie)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
}

/// What a DNS-rebinding page sends: its own name as `Host` and `Origin`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rebinding_page_cannot_write_a_file_through_serve() {
    let data = tempfile::tempdir().unwrap();
    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_rivet"));
    serve_in(&mut command, data.path());
    let (_child, addr) = spawn_serve(command).await;
    let owner = client().build().unwrap();
    let created = owner
        .post(format!("http://{addr}/new"))
        .send()
        .await
        .unwrap();
    let project = created.headers()["location"].to_str().unwrap()[3..].to_owned();
    let response = reqwest::Client::new()
        .post(format!("http://{addr}/api/write_file"))
        .header("host", format!("evil.test:{}", addr.port()))
        .header("origin", format!("http://evil.test:{}", addr.port()))
        .header("sec-fetch-site", "same-origin")
        .form(&[
            ("project", project.as_str()),
            ("path", "pwned.txt"),
            ("content", "x"),
        ])
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 421);
    let pwned = data
        .path()
        .join("projects")
        .join(&project)
        .join("workspace/pwned.txt");
    assert!(!pwned.exists());
}

/// Once whoever read its log has gone, every log line fails to write; the
/// server must still stop on SIGTERM rather than keep serving.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_stops_the_server_after_its_log_reader_has_gone() {
    let data = tempfile::tempdir().unwrap();
    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_rivet"));
    serve_in(&mut command, data.path());
    let (mut child, addr, log) = spawn_serve_with_log(command).await;
    drop(log);

    let pid = nix::unistd::Pid::from_raw(child.id().unwrap() as i32);
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM).unwrap();
    let status = tokio::time::timeout(Duration::from_secs(10), child.wait())
        .await
        .expect("rivet serve still runs 10 s after SIGTERM")
        .unwrap();
    assert!(status.success(), "{status:?}");
    assert!(
        tokio::net::TcpStream::connect(addr).await.is_err(),
        "{addr} still accepts connections"
    );
}

/// `cargo bench --bench protocol` builds without `ssr`: it must not replace
/// `target/release/rivet` with a binary that does nothing.
#[test]
fn the_binary_exists_only_with_the_server_feature() {
    let manifest: toml::Table = include_str!("../../Cargo.toml").parse().unwrap();
    let bins = manifest["bin"].as_array().unwrap();
    let rivet = bins
        .iter()
        .find(|b| b["name"].as_str() == Some("rivet"))
        .unwrap();
    let required = rivet["required-features"].as_array().unwrap();
    assert_eq!(required, &[toml::Value::from("ssr")]);
}
