//! The `Host` allow-list, against DNS rebinding: a page of `evil.test`
//! whose name later resolves to 127.0.0.1 reaches the IDE's address with
//! `Host: evil.test:3000` and is same-origin with itself. The IDE answers
//! only to names it knows.

use std::net::IpAddr;

/// The names the IDE answers to.
#[derive(Debug, Clone)]
pub struct HostPolicy {
    /// Lower-case names: the configured address's host and `allowed_hosts`.
    names: Vec<String>,
}

impl HostPolicy {
    /// `addr` is the configured `[server] addr`; `allowed` is
    /// `[server] allowed_hosts`.
    pub fn new(addr: &str, allowed: &[String]) -> HostPolicy {
        let own = host_name(addr);
        let names = std::iter::once(own)
            .chain(allowed.iter().map(|h| host_name(h.trim())))
            .filter(|h| !h.is_empty())
            .collect();
        HostPolicy { names }
    }

    /// Whether a request for `host` (a `Host` header: name or address, and
    /// maybe a port) may reach the IDE. IP literals always may (a rebinding
    /// page has a name, never an address, as its origin); so may `localhost`
    /// and its subdomains, which browsers resolve to loopback themselves.
    pub fn allows(&self, host: &str) -> bool {
        let name = host_name(host);
        if name.is_empty() {
            return false;
        }
        name.parse::<IpAddr>().is_ok()
            || name == "localhost"
            || name.ends_with(".localhost")
            || self.names.contains(&name)
    }
}

/// The lower-case host of `host[:port]`, without brackets around an IPv6
/// address; empty when it is not a plausible host.
pub fn host_name(host: &str) -> String {
    let host = host.trim();
    let name = if let Some(rest) = host.strip_prefix('[') {
        rest.split_once(']').map_or("", |(inside, _)| inside)
    } else if host.matches(':').count() > 1 {
        // A bare IPv6 address has no port.
        host
    } else {
        match host.rsplit_once(':') {
            Some((name, port)) if port.bytes().all(|b| b.is_ascii_digit()) => name,
            _ => host,
        }
    };
    let plausible = !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-._:".contains(&b));
    if plausible {
        name.trim_end_matches('.').to_ascii_lowercase()
    } else {
        String::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rebinding_host_name_is_refused() {
        let policy = HostPolicy::new("127.0.0.1:3000", &[]);
        for host in [
            "evil.test:3000",
            "evil.test",
            "127.0.0.1.evil.test:3000",
            "",
            "a b",
        ] {
            assert!(!policy.allows(host), "{host:?}");
        }
    }

    #[test]
    fn the_ides_own_names_are_allowed() {
        let policy = HostPolicy::new("ide.lan:3000", &["Rivet.Example.com".to_owned()]);
        for host in [
            "127.0.0.1:3000",
            "localhost:3000",
            "LOCALHOST",
            "[::1]:3000",
            "192.168.1.20:3000",
            "ide.lan:3000",
            "rivet.example.com",
            "rivet.example.com.:443",
            "demo-5173.preview.localhost:3000",
        ] {
            assert!(policy.allows(host), "{host:?}");
        }
        assert!(!policy.allows("example.com"));
    }

    #[test]
    fn host_names_drop_ports_and_brackets() {
        assert_eq!(host_name("LocalHost:3000"), "localhost");
        assert_eq!(host_name("[::1]:3000"), "::1");
        assert_eq!(host_name("::1"), "::1");
        assert_eq!(host_name("[::1"), "");
        assert_eq!(host_name("evil/path"), "");
    }
}
