//! What a sandbox with `sandbox.network = "registry"` may reach: only the
//! package registries, through an HTTP(S) proxy the IDE serves.
//!
//! Such a sandbox has no network interface but its loopback: no route to the
//! LAN, to the host's addresses or to cloud metadata. The helper listens on
//! `127.0.0.1:3128` inside the sandbox's network namespace and hands the
//! listening socket to the IDE ([`Op::Listen`]); the IDE accepts on it and
//! connects upstream itself, only to the hosts of the allow-list
//! (`sandbox.registry_hosts` and the registry of the host's own npm
//! configuration). Sandboxed processes find the proxy in `HTTPS_PROXY` and
//! friends, which npm, pnpm and yarn honour.

mod allow;
mod proxy;
pub(super) mod registry;

use std::os::fd::OwnedFd;
use std::sync::Arc;

use tokio::net::TcpListener;

pub use self::allow::{AllowList, Authority};
use super::client::{Failure, HelperClient};
use super::wire::{Op, Reply};

/// The port the proxy listens on inside every `registry` sandbox.
pub const PROXY_PORT: u16 = 3128;

/// Hosts sandboxed processes reach directly, not through the proxy.
const NO_PROXY: &str = "localhost,127.0.0.1,::1";

/// What a `registry` sandbox may reach, found once at startup.
#[derive(Debug, Clone)]
pub struct EgressPolicy {
    pub allow: Arc<AllowList>,
    /// The registry of the host's npm configuration, when it is not npm's
    /// default: the sandbox's npm is pointed at it too.
    pub npm_registry: Option<String>,
}

impl EgressPolicy {
    /// The hosts of `allow`, plus the host of `npm_registry` (a URL).
    pub fn allowing(mut allow: AllowList, npm_registry: Option<String>) -> EgressPolicy {
        let mut npm_registry = npm_registry;
        if let Some(url) = npm_registry.clone() {
            match Authority::from_url(&url) {
                Ok(authority) => allow.add(authority),
                Err(e) => {
                    tracing::warn!("the registry of this machine's npm ({url}) is ignored: {e}");
                    npm_registry = None;
                }
            }
        }
        let npm_registry = npm_registry
            .filter(|url| url != registry::NPM_DEFAULT)
            // Credentials in the URL stay out of the sandbox.
            .filter(|url| !url.split("://").nth(1).unwrap_or_default().contains('@'));
        tracing::info!(
            "sandbox.network = \"registry\": sandboxed code reaches only {allow}, through the IDE's proxy"
        );
        EgressPolicy {
            allow: Arc::new(allow),
            npm_registry,
        }
    }

    /// Why a network access may have failed, for a failed command's status.
    pub fn note(&self) -> String {
        format!(
            "the sandbox reaches only the package registries of sandbox.registry_hosts ({}), \
             through Rivet's proxy; add the host there, or set sandbox.network = \"full\"",
            self.allow
        )
    }

    /// The environment that sends package managers (and curl, git, …)
    /// through the proxy on `port`.
    pub fn environment(&self, port: u16) -> Vec<(String, String)> {
        let url = format!("http://127.0.0.1:{port}");
        let mut env: Vec<(String, String)> = [
            "HTTP_PROXY",
            "HTTPS_PROXY",
            "http_proxy",
            "https_proxy",
            "npm_config_proxy",
            "npm_config_https_proxy",
            "YARN_HTTP_PROXY",
            "YARN_HTTPS_PROXY",
        ]
        .iter()
        .map(|name| ((*name).to_owned(), url.clone()))
        .collect();
        for name in ["NO_PROXY", "no_proxy"] {
            env.push((name.to_owned(), NO_PROXY.to_owned()));
        }
        if let Some(registry) = &self.npm_registry {
            for name in ["npm_config_registry", "YARN_NPM_REGISTRY_SERVER"] {
                env.push((name.to_owned(), registry.clone()));
            }
        }
        env
    }
}

/// A sandbox's running proxy; dropping it stops it and every connection.
pub struct Proxy {
    pub port: u16,
    task: tokio::task::AbortHandle,
}

impl Proxy {
    pub fn stop(&self) {
        self.task.abort();
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Has the sandbox's helper listen on [`PROXY_PORT`] inside, and serves the
/// proxy on that socket.
pub async fn start(
    client: &HelperClient,
    policy: &EgressPolicy,
    project: &str,
) -> Result<Proxy, String> {
    let incoming = client
        .request(Op::Listen { port: PROXY_PORT }, &[], &[])
        .await
        .map_err(|e| match e {
            Failure::Helper(e) => e.message,
            Failure::Closed(why) | Failure::TimedOut(why) => why,
        })?;
    if !matches!(incoming.reply, Reply::Listening) {
        return Err("the sandbox answered something else than a socket".to_owned());
    }
    let fd = incoming
        .fds
        .into_iter()
        .next()
        .ok_or_else(|| "the sandbox sent no socket".to_owned())?;
    let listener = listener(fd)?;
    let port = listener.local_addr().map_err(|e| e.to_string())?.port();
    let policy = Arc::new(proxy::Policy {
        allow: policy.allow.clone(),
        project: project.to_owned(),
    });
    let task = tokio::spawn(proxy::serve(listener, policy));
    Ok(Proxy {
        port,
        task: task.abort_handle(),
    })
}

/// The descriptor comes from the sandbox: it must be a listening TCP socket.
fn listener(fd: OwnedFd) -> Result<TcpListener, String> {
    use nix::sys::socket::{SockType, getsockopt, sockopt};
    let kind = getsockopt(&fd, sockopt::SockType)
        .map_err(|e| format!("the sandbox sent something else than a socket: {e}"))?;
    let listening = getsockopt(&fd, sockopt::AcceptConn).unwrap_or(false);
    if kind != SockType::Stream || !listening {
        return Err("the sandbox sent something else than a listening socket".to_owned());
    }
    let listener = std::net::TcpListener::from(fd);
    let addr = listener.local_addr().map_err(|e| e.to_string())?;
    if !addr.ip().is_loopback() {
        return Err(format!("the sandbox's proxy socket listens on {addr}"));
    }
    listener.set_nonblocking(true).map_err(|e| e.to_string())?;
    TcpListener::from_std(listener).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn package_managers_are_sent_through_the_proxy_and_local_servers_are_not() {
        let policy = EgressPolicy {
            allow: Arc::new(AllowList::parse(&["registry.npmjs.org"]).unwrap()),
            npm_registry: Some("https://mirror.lan:4873/".to_owned()),
        };
        let env = policy.environment(3128);
        let get = |name: &str| env.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str());
        for name in ["HTTPS_PROXY", "http_proxy", "npm_config_https_proxy"] {
            assert_eq!(get(name), Some("http://127.0.0.1:3128"), "{name}");
        }
        assert_eq!(get("NO_PROXY"), Some("localhost,127.0.0.1,::1"));
        assert_eq!(get("npm_config_registry"), Some("https://mirror.lan:4873/"));
        assert!(policy.note().contains("registry.npmjs.org"));
    }

    #[test]
    fn the_hosts_npm_registry_is_allowed_and_handed_to_the_sandbox() {
        let hosts = ["registry.npmjs.org".to_owned()];
        let mirror = Some("http://mirror.lan:4873/".to_owned());
        let policy = EgressPolicy::allowing(AllowList::parse(&hosts).unwrap(), mirror.clone());
        assert!(policy.allow.allows("mirror.lan", 4873));
        assert!(policy.allow.allows("registry.npmjs.org", 443));
        assert_eq!(policy.npm_registry, mirror);
        // npm's default needs no variable; credentials never enter.
        let default = Some("https://registry.npmjs.org/".to_owned());
        assert_eq!(
            EgressPolicy::allowing(AllowList::parse(&hosts).unwrap(), default).npm_registry,
            None
        );
        let secret = Some("https://user:token@npm.corp.example/".to_owned());
        let policy = EgressPolicy::allowing(AllowList::parse(&hosts).unwrap(), secret);
        assert!(policy.allow.allows("npm.corp.example", 443));
        assert_eq!(policy.npm_registry, None);
        let err = AllowList::parse(&["*.example".to_owned()]).unwrap_err();
        assert!(err.to_string().contains("wildcards"), "{err}");
    }
}
