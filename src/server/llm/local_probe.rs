//! Finding a model server on this machine: every address of
//! `[llm] local_servers` (by default Ollama, LM Studio, llama.cpp and vLLM
//! on their usual ports of 127.0.0.1) is asked for its `/v1/models` at
//! once, with a short timeout, and each is reported with its models or why
//! it did not answer.
//!
//! Loopback only: an address that is not `http://` on 127.0.0.0/8, `[::1]`
//! or `localhost` (no user name, no query) is not tried and is reported as
//! such; `localhost` is resolved to loopback by the probe itself, no proxy
//! is used and a redirect off loopback is not followed.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::time::Duration;

use url::{Host, Url};

use super::models_list;
use super::provider::CUSTOM;
use crate::runtime::llm::{LocalOutcome, LocalServer, NoAnswer};

/// How long each address may take to answer; all are asked together.
pub const TIMEOUT: Duration = Duration::from_millis(1500);
/// Redirects followed (on loopback only) before giving up.
const MAX_REDIRECTS: usize = 3;

/// The usual local servers, by port: their name and the preset that fits.
const KNOWN: &[(u16, &str, Option<&str>)] = &[
    (11434, "Ollama", Some("ollama")),
    (1234, "LM Studio", Some("lmstudio")),
    (8080, "llama.cpp", None),
    (8000, "vLLM", None),
];

/// The name of a server on an address that is none of [`KNOWN`].
const UNKNOWN_LABEL: &str = "Local server";

#[derive(Debug, thiserror::Error)]
pub enum ProbeError {
    #[error("the client for the local-model search could not be made: {0}")]
    Client(#[from] reqwest::Error),
}

/// A configured address that passed the loopback check.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Target {
    pub label: &'static str,
    /// The OpenAI-compatible base URL: the address with `/v1`.
    pub base_url: String,
    pub preset: &'static str,
}

/// Asks every address of `entries` at once; one report per entry, in order.
pub async fn probe(entries: &[String]) -> Result<Vec<LocalServer>, ProbeError> {
    let http = client()?;
    let asks = entries.iter().map(|entry| ask(&http, entry));
    Ok(futures::future::join_all(asks).await)
}

async fn ask(http: &reqwest::Client, entry: &str) -> LocalServer {
    let address = entry.trim().to_owned();
    match target(&address) {
        Ok(target) => {
            let outcome = match models_list::fetch(http, &target.base_url, None, TIMEOUT).await {
                Ok(models) => LocalOutcome::Answered { models },
                Err(reason) => LocalOutcome::NoAnswer { reason },
            };
            LocalServer {
                label: target.label.to_owned(),
                address,
                base_url: target.base_url,
                preset: target.preset.to_owned(),
                outcome,
            }
        }
        Err(detail) => LocalServer {
            label: UNKNOWN_LABEL.to_owned(),
            address,
            base_url: String::new(),
            preset: CUSTOM.to_owned(),
            outcome: LocalOutcome::NoAnswer {
                reason: NoAnswer::NotLoopback { detail },
            },
        },
    }
}

/// The client of the search: no proxy, `localhost` always loopback, and
/// redirects followed only while they stay on loopback.
fn client() -> Result<reqwest::Client, ProbeError> {
    let policy = reqwest::redirect::Policy::custom(|attempt| {
        if attempt.previous().len() <= MAX_REDIRECTS && loopback(attempt.url()).is_ok() {
            attempt.follow()
        } else {
            attempt.stop()
        }
    });
    // The port of an address given here is ignored: the URL's is used.
    let localhost = [
        SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), 0),
        SocketAddr::new(IpAddr::V6(Ipv6Addr::LOCALHOST), 0),
    ];
    Ok(reqwest::Client::builder()
        .no_proxy()
        .redirect(policy)
        .resolve_to_addrs("localhost", &localhost)
        .build()?)
}

/// `entry` as an address to ask, or why it is not one.
pub fn target(entry: &str) -> Result<Target, String> {
    let url = Url::parse(entry.trim()).map_err(|e| format!("not a URL ({e})"))?;
    loopback(&url)?;
    if url.query().is_some() || url.fragment().is_some() {
        return Err("an address with a query or fragment".to_owned());
    }
    let text = url.as_str().trim_end_matches('/');
    let base = text.strip_suffix("/v1").unwrap_or(text);
    let port = url.port_or_known_default().unwrap_or(80);
    let known = KNOWN.iter().find(|(p, _, _)| *p == port);
    Ok(Target {
        label: known.map_or(UNKNOWN_LABEL, |(_, label, _)| label),
        base_url: format!("{base}/v1"),
        preset: known.and_then(|(_, _, preset)| *preset).unwrap_or(CUSTOM),
    })
}

/// Whether `url` is plain `http://` to this machine's loopback, and if not,
/// why.
fn loopback(url: &Url) -> Result<(), String> {
    if url.scheme() != "http" {
        return Err(format!("{}:// is not http://", url.scheme()));
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err("an address with a user name or password".to_owned());
    }
    let on_loopback = match url.host() {
        Some(Host::Ipv4(ip)) => ip.is_loopback(),
        Some(Host::Ipv6(ip)) => ip.is_loopback(),
        Some(Host::Domain(name)) => name.eq_ignore_ascii_case("localhost"),
        None => false,
    };
    if on_loopback {
        Ok(())
    } else {
        Err("not a loopback address (127.0.0.0/8, [::1] or localhost)".to_owned())
    }
}

#[cfg(test)]
mod tests;
