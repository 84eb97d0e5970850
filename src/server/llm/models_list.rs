//! A provider's `GET {base_url}/models`: the one request and the one reader
//! of its answer, for the settings panel's model list and the search for
//! local servers. The OpenAI-compatible answer is `{"data": [{"id": …}]}`;
//! Ollama's own list, `{"models": [{"name": …}]}`, is read too.

use std::time::Duration;

use serde_json::Value;

use super::secret::Secret;
use crate::runtime::llm::NoAnswer;

/// The model ids `base_url`'s `/models` lists, asked with `key` when given.
pub async fn fetch(
    http: &reqwest::Client,
    base_url: &str,
    key: Option<&Secret>,
    timeout: Duration,
) -> Result<Vec<String>, NoAnswer> {
    let mut request = http.get(format!("{base_url}/models")).timeout(timeout);
    if let Some(key) = key {
        request = request.bearer_auth(key.expose());
    }
    let response = request.send().await.map_err(|e| why(&e, timeout))?;
    let status = response.status();
    if status.is_redirection() {
        let to = response
            .headers()
            .get(reqwest::header::LOCATION)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("an unnamed address")
            .to_owned();
        return Err(NoAnswer::Redirected { to });
    }
    if !status.is_success() {
        return Err(NoAnswer::Status {
            status: status.as_u16(),
        });
    }
    let body = response.bytes().await.map_err(|e| why(&e, timeout))?;
    parse(&body).map_err(|detail| NoAnswer::NotAModelsList { detail })
}

/// The model ids of a `/models` answer, or what is wrong with it.
pub fn parse(body: &[u8]) -> Result<Vec<String>, String> {
    let answer: Value = serde_json::from_slice(body).map_err(|_| "not JSON".to_owned())?;
    let ids = |list: &Vec<Value>, fields: &[&str]| -> Vec<String> {
        list.iter()
            .filter_map(|m| fields.iter().find_map(|f| m.get(*f)?.as_str()))
            .map(str::to_owned)
            .collect()
    };
    if let Some(list) = answer.get("data").and_then(Value::as_array) {
        return Ok(ids(list, &["id"]));
    }
    if let Some(list) = answer.get("models").and_then(Value::as_array) {
        return Ok(ids(list, &["name", "model", "id"]));
    }
    Err("no `data` list".to_owned())
}

/// Why a request failed, in the terms the settings panel shows.
fn why(error: &reqwest::Error, timeout: Duration) -> NoAnswer {
    if error.is_timeout() {
        return NoAnswer::Timeout {
            ms: u64::try_from(timeout.as_millis()).unwrap_or(u64::MAX),
        };
    }
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(error);
    while let Some(e) = source {
        if let Some(io) = e.downcast_ref::<std::io::Error>()
            && io.kind() == std::io::ErrorKind::ConnectionRefused
        {
            return NoAnswer::Refused;
        }
        source = e.source();
    }
    NoAnswer::Failed {
        message: error.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_openai_list_gives_its_ids_in_order() {
        let body = br#"{"object":"list","data":[{"id":"b","object":"model"},{"id":"a"}]}"#;
        assert_eq!(parse(body).unwrap(), ["b", "a"]);
        assert_eq!(parse(br#"{"data":[]}"#).unwrap(), Vec::<String>::new());
    }

    #[test]
    fn ollamas_own_list_is_read_too() {
        let body = br#"{"models":[{"name":"llama3.2:latest","model":"llama3.2:latest"},{"model":"qwen"}]}"#;
        assert_eq!(parse(body).unwrap(), ["llama3.2:latest", "qwen"]);
    }

    #[test]
    fn entries_without_an_id_are_left_out() {
        assert_eq!(
            parse(br#"{"data":[{"id":7},{"x":1},{"id":"m"}]}"#).unwrap(),
            ["m"]
        );
    }

    #[test]
    fn anything_else_is_not_a_models_list() {
        assert_eq!(parse(b"<html>hello</html>").unwrap_err(), "not JSON");
        assert_eq!(parse(br#"{"error":"no"}"#).unwrap_err(), "no `data` list");
        assert_eq!(parse(br#"{"data":"x"}"#).unwrap_err(), "no `data` list");
        assert_eq!(parse(b"[]").unwrap_err(), "no `data` list");
    }

    #[tokio::test]
    async fn a_closed_port_is_refused_and_a_silent_one_times_out() {
        // Bound and never listening: refused, and no other test can take it.
        let closed = tokio::net::TcpSocket::new_v4().unwrap();
        closed.bind("127.0.0.1:0".parse().unwrap()).unwrap();
        let addr = closed.local_addr().unwrap();
        let http = reqwest::Client::new();
        let short = Duration::from_millis(300);
        let got = fetch(&http, &format!("http://{addr}/v1"), None, short).await;
        assert_eq!(got, Err(NoAnswer::Refused));

        // Accepts connections and never answers.
        let silent = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = silent.local_addr().unwrap();
        let held = tokio::spawn(async move {
            let mut open = Vec::new();
            while let Ok((socket, _)) = silent.accept().await {
                open.push(socket);
            }
        });
        let got = fetch(&http, &format!("http://{addr}/v1"), None, short).await;
        assert_eq!(got, Err(NoAnswer::Timeout { ms: 300 }));
        held.abort();
    }
}
