//! The runtime of each project through the real `rivet serve` and its server
//! functions: chosen from `RIVET_RUNTIME_DEFAULT` at creation, switched, and
//! still switched after a restart.
#![cfg(feature = "ssr")]

use std::net::SocketAddr;

struct Serve {
    child: tokio::process::Child,
    addr: SocketAddr,
    http: reqwest::Client,
}

impl Serve {
    async fn start(data: &std::path::Path, default: &str) -> Serve {
        let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_rivet"));
        super::support::serve_in(&mut command, data);
        command.env("RIVET_RUNTIME_DEFAULT", default);
        let (child, addr) = super::support::spawn_serve(command).await;
        Serve {
            child,
            addr,
            http: super::support::client().build().unwrap(),
        }
    }

    async fn stop(mut self) {
        self.child.start_kill().unwrap();
        self.child.wait().await.unwrap();
    }

    fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    async fn new_project(&self) -> String {
        let response = self.http.get(self.url("/new")).send().await.unwrap();
        let location = response.headers()["location"].to_str().unwrap();
        location.trim_start_matches("/p/").to_owned()
    }

    async fn call(&self, function: &str, fields: &[(&str, &str)]) -> (u16, String) {
        let response = self
            .http
            .post(self.url(&format!("/api/{function}")))
            .form(fields)
            .send()
            .await
            .unwrap();
        (response.status().as_u16(), response.text().await.unwrap())
    }

    async fn runtime(&self, project: &str) -> String {
        let (status, body) = self.call("project_runtime", &[("project", project)]).await;
        assert_eq!(status, 200, "{body}");
        serde_json::from_str(&body).unwrap()
    }
}

#[tokio::test]
async fn runtime_switch_to_sandbox_survives_a_restart() {
    let data = tempfile::tempdir().unwrap();
    let project = {
        let serve = Serve::start(data.path(), "webcontainer").await;
        let project = serve.new_project().await;
        assert_eq!(serve.runtime(&project).await, "webcontainer");
        let (status, body) = serve
            .call(
                "set_project_runtime",
                &[("project", &project), ("runtime", "sandbox")],
            )
            .await;
        assert_eq!(status, 200, "{body}");
        assert_eq!(serve.runtime(&project).await, "sandbox");
        // The HTTP API reports the same runtime.
        let row: serde_json::Value = serve
            .http
            .get(serve.url(&format!("/api/v1/projects/{project}")))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        assert_eq!(row["runtime"], "sandbox");
        serve.stop().await;
        project
    };
    let serve = Serve::start(data.path(), "webcontainer").await;
    assert_eq!(serve.runtime(&project).await, "sandbox");
    // A project made after the restart still follows the default.
    let fresh = serve.new_project().await;
    assert_eq!(serve.runtime(&fresh).await, "webcontainer");
}

#[tokio::test]
async fn runtime_switch_to_unknown_runtime_is_refused() {
    let data = tempfile::tempdir().unwrap();
    let serve = Serve::start(data.path(), "sandbox").await;
    let project = serve.new_project().await;
    let (status, _) = serve
        .call(
            "set_project_runtime",
            &[("project", &project), ("runtime", "docker")],
        )
        .await;
    assert_ne!(status, 200);
    assert_eq!(serve.runtime(&project).await, "sandbox");
}
