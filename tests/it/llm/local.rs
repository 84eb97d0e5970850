//! "Find local models" through the server function the settings panel
//! calls, against `rivet mock-llm` on loopback and a port nothing listens on.

use rivet::server::llm::{LocalOutcome, LocalServer, NoAnswer};
use tower::ServiceExt;

use super::*;

/// The IDE with `local_servers` configured, asked to search as the panel asks.
async fn find_local_models(local_servers: Vec<String>) -> (u16, Vec<LocalServer>) {
    use rivet::server::state::AppState;
    let data = tempfile::tempdir().unwrap();
    let mut config = crate::support::config(data.path());
    config.llm.local_servers = local_servers;
    let options = leptos::config::LeptosOptions::builder()
        .output_name("rivet")
        .site_root("target/site")
        .build();
    let state = AppState::new(options, config);
    let response = rivet::server::http::app(state)
        .oneshot(
            axum::http::Request::post("/api/find_local_models")
                .header("host", "127.0.0.1:3000")
                .header("authorization", crate::support::bearer())
                .header("content-type", "application/x-www-form-urlencoded")
                .body(axum::body::Body::empty())
                .unwrap(),
        )
        .await
        .unwrap();
    let status = response.status().as_u16();
    let body = axum::body::to_bytes(response.into_body(), usize::MAX)
        .await
        .unwrap();
    let servers = serde_json::from_slice(&body)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&body)));
    (status, servers)
}

#[tokio::test]
async fn a_local_server_is_offered_with_its_models() {
    let mock = Mock::start(&[]);
    let address = mock.base_url().trim_end_matches("/v1").to_owned();
    let (status, found) = find_local_models(vec![address.clone()]).await;
    assert_eq!(status, 200);
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].address, address);
    assert_eq!(found[0].base_url, mock.base_url());
    assert_eq!(found[0].preset, "custom");
    assert_eq!(
        found[0].outcome,
        LocalOutcome::Answered {
            models: vec![MODEL.to_owned()]
        }
    );
}

#[tokio::test]
async fn a_closed_port_is_named_with_why_it_did_not_answer() {
    let mock = Mock::start(&[]);
    let port = crate::support::ClosedPort::new();
    let closed = format!("http://{}", port.addr());
    let (status, found) = find_local_models(vec![mock.base_url(), closed.clone()]).await;
    assert_eq!(status, 200);
    let addresses: Vec<&str> = found.iter().map(|s| s.address.as_str()).collect();
    assert_eq!(addresses, [mock.base_url().as_str(), closed.as_str()]);
    assert_eq!(
        found[0].outcome,
        LocalOutcome::Answered {
            models: vec![MODEL.to_owned()]
        }
    );
    assert_eq!(
        found[1].outcome,
        LocalOutcome::NoAnswer {
            reason: NoAnswer::Refused
        }
    );
    let LocalOutcome::NoAnswer { reason } = &found[1].outcome else {
        unreachable!()
    };
    assert!(reason.to_string().contains("no answer"), "{reason}");
}

#[tokio::test]
async fn an_address_off_loopback_is_listed_but_not_asked() {
    let (status, found) = find_local_models(vec!["http://10.0.0.1:11434".to_owned()]).await;
    assert_eq!(status, 200);
    assert_eq!(found[0].address, "http://10.0.0.1:11434");
    assert!(
        matches!(
            &found[0].outcome,
            LocalOutcome::NoAnswer {
                reason: NoAnswer::NotLoopback { .. }
            }
        ),
        "{:?}",
        found[0].outcome
    );
}
