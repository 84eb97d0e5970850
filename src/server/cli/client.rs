//! A client of a running `rivet serve`'s HTTP API (`docs/api.md`), with the
//! address and token that server uses: the same configuration and data
//! directory.

use std::time::Duration;

use futures::{Stream, StreamExt};
use serde::Deserialize;
use serde::de::DeserializeOwned;

use crate::runtime::session::{Envelope, LineDecoder};
use crate::server::config::Config;
use crate::server::store::ProjectListing;

#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    #[error(
        "no access token: set server.token / RIVET_SERVER_TOKEN, or run where `rivet serve` \
         keeps its data ({0}/token)"
    )]
    NoToken(String),
    #[error("cannot read the access token {path}: {source}")]
    TokenFile {
        path: String,
        source: std::io::Error,
    },
    #[error("the server address {0:?} is not a URL")]
    Address(String),
    #[error("cannot reach rivet serve at {url}: {source} (is it running?)")]
    Connect { url: String, source: reqwest::Error },
    #[error("rivet serve answered {status}: {message}")]
    Api {
        status: u16,
        code: String,
        message: String,
    },
    #[error("reading the answer failed: {0}")]
    Read(#[from] reqwest::Error),
}

/// What the server sent back when it refused a request.
#[derive(Deserialize)]
struct ErrorBody {
    code: String,
    message: String,
}

/// The answer a sent message started.
#[derive(Deserialize)]
pub struct Sent {
    pub assistant_message_id: String,
}

pub struct Client {
    base: url::Url,
    http: reqwest::Client,
}

impl Client {
    /// A client of the server `config` describes, or of `server` (a URL)
    /// when given.
    pub fn new(config: &Config, server: Option<&str>) -> Result<Client, ClientError> {
        let token = token(config)?;
        let address = match server {
            Some(url) => url.to_owned(),
            None => format!("http://{}/", reachable(&config.server.addr)),
        };
        let base = url::Url::parse(&address).map_err(|_| ClientError::Address(address.clone()))?;
        let mut headers = reqwest::header::HeaderMap::new();
        let bearer = reqwest::header::HeaderValue::from_str(&format!("Bearer {token}"))
            .map_err(|_| ClientError::NoToken(config.server.data_dir.display().to_string()))?;
        headers.insert(reqwest::header::AUTHORIZATION, bearer);
        let http = reqwest::Client::builder()
            .default_headers(headers)
            .connect_timeout(Duration::from_secs(10))
            .build()
            .map_err(|source| ClientError::Connect {
                url: address,
                source,
            })?;
        Ok(Client { base, http })
    }

    fn url(&self, path: &str) -> String {
        format!("{}api/v1{path}", self.base)
    }

    async fn send(
        &self,
        request: reqwest::RequestBuilder,
    ) -> Result<reqwest::Response, ClientError> {
        let url = self.base.to_string();
        let response = request
            .send()
            .await
            .map_err(|source| ClientError::Connect { url, source })?;
        if response.status().is_success() {
            return Ok(response);
        }
        let status = response.status().as_u16();
        let text = response.text().await.unwrap_or_default();
        let (code, message) = match serde_json::from_str::<ErrorBody>(&text) {
            Ok(body) => (body.code, body.message),
            Err(_) => (String::new(), text),
        };
        Err(ClientError::Api {
            status,
            code,
            message,
        })
    }

    async fn json<T: DeserializeOwned>(
        &self,
        request: reqwest::RequestBuilder,
    ) -> Result<T, ClientError> {
        Ok(self.send(request).await?.json().await?)
    }

    pub async fn projects(&self, search: &str) -> Result<Vec<ProjectListing>, ClientError> {
        let request = self.http.get(self.url("/projects")).query(&[("q", search)]);
        self.json(request).await
    }

    /// Creates a project; its id.
    pub async fn create(&self, name: &str) -> Result<String, ClientError> {
        #[derive(Deserialize)]
        struct Created {
            id: String,
        }
        let request = self
            .http
            .post(self.url("/projects"))
            .json(&serde_json::json!({ "name": name }));
        Ok(self.json::<Created>(request).await?.id)
    }

    /// Pushes the project's checkpoints to its git remote (`"push"`) or
    /// pulls from it (`"pull"`): the answer of `POST …/git/{operation}`.
    pub async fn git(&self, id: &str, operation: &str) -> Result<serde_json::Value, ClientError> {
        let request = self
            .http
            .post(self.url(&format!("/projects/{id}/git/{operation}")));
        self.json(request).await
    }

    /// Publishes the project: `{"version", "url"}` as `POST …/publish`
    /// answers them.
    pub async fn publish(
        &self,
        id: &str,
        body: serde_json::Value,
    ) -> Result<serde_json::Value, ClientError> {
        let request = self
            .http
            .post(self.url(&format!("/projects/{id}/publish")))
            .json(&body);
        self.json(request).await
    }

    pub async fn project(&self, id: &str) -> Result<ProjectListing, ClientError> {
        self.json(self.http.get(self.url(&format!("/projects/{id}"))))
            .await
    }

    pub async fn message(&self, id: &str, text: &str) -> Result<Sent, ClientError> {
        let request = self
            .http
            .post(self.url(&format!("/projects/{id}/messages")))
            .json(&serde_json::json!({ "text": text }));
        self.json(request).await
    }

    /// The project's events (a snapshot first, or those after `after`),
    /// until the connection ends.
    pub async fn events(
        &self,
        id: &str,
        after: Option<u64>,
    ) -> Result<impl Stream<Item = Result<Envelope, ClientError>> + use<>, ClientError> {
        let mut request = self.http.get(self.url(&format!("/projects/{id}/events")));
        if let Some(after) = after {
            request = request.query(&[("after", after)]);
        }
        let chunks = self.send(request).await?.bytes_stream();
        let mut lines = LineDecoder::default();
        Ok(chunks.flat_map(move |chunk| {
            let events: Vec<Result<Envelope, ClientError>> = match chunk {
                Ok(chunk) => lines
                    .push(&chunk)
                    .into_iter()
                    .filter_map(|line| serde_json::from_slice(&line).ok())
                    .map(Ok)
                    .collect(),
                Err(error) => vec![Err(ClientError::Read(error))],
            };
            futures::stream::iter(events)
        }))
    }
}

/// The server's own token: configured, or the file `rivet serve` made in
/// its data directory. Never creates one.
fn token(config: &Config) -> Result<String, ClientError> {
    let configured = config.server.token.trim();
    if !configured.is_empty() {
        return Ok(configured.to_owned());
    }
    let path = config.server.data_dir.join("token");
    match std::fs::read_to_string(&path) {
        Ok(text) if !text.trim().is_empty() => Ok(text.trim().to_owned()),
        Ok(_) => Err(ClientError::NoToken(
            config.server.data_dir.display().to_string(),
        )),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(ClientError::NoToken(
            config.server.data_dir.display().to_string(),
        )),
        Err(source) => Err(ClientError::TokenFile {
            path: path.display().to_string(),
            source,
        }),
    }
}

/// Where to connect for a server listening on `addr`: a wildcard address
/// is reached on loopback.
fn reachable(addr: &str) -> String {
    match addr.parse::<std::net::SocketAddr>() {
        Ok(addr) if addr.ip().is_unspecified() => {
            let loopback: std::net::IpAddr = if addr.is_ipv4() {
                std::net::Ipv4Addr::LOCALHOST.into()
            } else {
                std::net::Ipv6Addr::LOCALHOST.into()
            };
            std::net::SocketAddr::new(loopback, addr.port()).to_string()
        }
        _ => addr.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_wildcard_address_is_reached_on_loopback() {
        assert_eq!(reachable("0.0.0.0:3000"), "127.0.0.1:3000");
        assert_eq!(reachable("[::]:3000"), "[::1]:3000");
        assert_eq!(reachable("127.0.0.1:8080"), "127.0.0.1:8080");
        assert_eq!(reachable("ide.example:80"), "ide.example:80");
    }

    #[test]
    fn the_token_comes_from_the_configuration_or_the_data_directory() {
        let dir = tempfile::tempdir().unwrap();
        let mut config = Config::defaults();
        config.server.data_dir = dir.path().to_owned();
        assert!(matches!(token(&config), Err(ClientError::NoToken(_))));
        // Reading never makes a token.
        assert!(!dir.path().join("token").exists());
        std::fs::write(dir.path().join("token"), "from-the-file\n").unwrap();
        assert_eq!(token(&config).unwrap(), "from-the-file");
        config.server.token = " configured ".into();
        assert_eq!(token(&config).unwrap(), "configured");
    }
}
