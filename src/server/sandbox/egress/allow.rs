//! The allow-list of a `registry` sandbox (`sandbox.registry_hosts`): exact
//! host names or IP literals, each with the ports it may be reached on.

use std::fmt;
use std::net::IpAddr;

/// The ports an entry without one allows: HTTP and HTTPS.
pub const DEFAULT_PORTS: [u16; 2] = [80, 443];

/// A host as written in an entry or a request: a lower-case name, or an IP
/// address in its canonical form (no brackets).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Authority {
    pub host: String,
    pub port: Option<u16>,
}

/// Why a host or an entry was not understood.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BadHost {
    #[error("no host")]
    Empty,
    #[error("wildcards are not supported: list each host")]
    Wildcard,
    #[error("{0:?} is not a host name")]
    Name(String),
    #[error("{0:?} is not a port")]
    Port(String),
    #[error("only http:// and https:// URLs can be listed")]
    Scheme,
}

/// An entry of `sandbox.registry_hosts` that is not understood.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("sandbox.registry_hosts: {entry:?} is not a host, host:port or URL: {why}")]
pub struct BadEntry {
    pub entry: String,
    pub why: BadHost,
}

/// Whether `name` is a DNS name (letters, digits, `-`, `_`, dots).
fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 253
        && !name.starts_with('.')
        && !name.contains("..")
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_'))
}

/// The canonical form of a host: an IP address as Rust prints it, a name in
/// lower case.
fn canonical_host(host: &str) -> Result<String, BadHost> {
    if host.is_empty() {
        return Err(BadHost::Empty);
    }
    if host.contains('*') {
        return Err(BadHost::Wildcard);
    }
    if let Ok(ip) = host.parse::<IpAddr>() {
        return Ok(ip.to_string());
    }
    if valid_name(host) {
        return Ok(host.to_ascii_lowercase());
    }
    Err(BadHost::Name(host.to_owned()))
}

fn parse_port(text: &str) -> Result<u16, BadHost> {
    match text.parse::<u16>() {
        Ok(port) if port != 0 && text.bytes().all(|b| b.is_ascii_digit()) => Ok(port),
        _ => Err(BadHost::Port(text.to_owned())),
    }
}

impl Authority {
    /// Parses `host`, `host:port`, `[v6]`, `[v6]:port` or a bare IPv6
    /// address.
    pub fn parse(text: &str) -> Result<Authority, BadHost> {
        if let Some(rest) = text.strip_prefix('[') {
            let (ip, after) = rest.split_once(']').ok_or(BadHost::Name(text.to_owned()))?;
            if ip.parse::<std::net::Ipv6Addr>().is_err() {
                return Err(BadHost::Name(text.to_owned()));
            }
            let port = match after {
                "" => None,
                _ => Some(parse_port(
                    after
                        .strip_prefix(':')
                        .ok_or(BadHost::Port(after.to_owned()))?,
                )?),
            };
            return Ok(Authority {
                host: canonical_host(ip)?,
                port,
            });
        }
        if text.parse::<std::net::Ipv6Addr>().is_ok() {
            return Ok(Authority {
                host: canonical_host(text)?,
                port: None,
            });
        }
        let (host, port) = match text.rsplit_once(':') {
            Some((host, port)) => (host, Some(parse_port(port)?)),
            None => (text, None),
        };
        Ok(Authority {
            host: canonical_host(host)?,
            port,
        })
    }

    /// Parses an `http://` or `https://` URL's authority (credentials are
    /// dropped; the port is the URL's own, if it names one).
    pub fn from_url(url: &str) -> Result<Authority, BadHost> {
        let (scheme, rest) = url.split_once("://").ok_or(BadHost::Scheme)?;
        if !scheme.eq_ignore_ascii_case("http") && !scheme.eq_ignore_ascii_case("https") {
            return Err(BadHost::Scheme);
        }
        let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
        let authority = &rest[..end];
        let authority = authority
            .rsplit_once('@')
            .map_or(authority, |(_, host)| host);
        Authority::parse(authority)
    }
}

impl fmt::Display for Authority {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.host.contains(':') {
            write!(f, "[{}]", self.host)?;
        } else {
            f.write_str(&self.host)?;
        }
        match self.port {
            Some(port) => write!(f, ":{port}"),
            None => Ok(()),
        }
    }
}

/// The hosts a `registry` sandbox may reach.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AllowList {
    entries: Vec<Authority>,
}

impl AllowList {
    /// Parses the entries of `sandbox.registry_hosts`: `host`, `host:port`
    /// or an `http(s)://` URL.
    pub fn parse<S: AsRef<str>>(entries: &[S]) -> Result<AllowList, BadEntry> {
        let mut list = AllowList::default();
        for entry in entries {
            let text = entry.as_ref().trim();
            let parsed = if text.contains("://") {
                Authority::from_url(text)
            } else {
                Authority::parse(text)
            };
            let authority = parsed.map_err(|why| BadEntry {
                entry: text.to_owned(),
                why,
            })?;
            list.add(authority);
        }
        Ok(list)
    }

    pub fn add(&mut self, authority: Authority) {
        if !self.entries.contains(&authority) {
            self.entries.push(authority);
        }
    }

    /// Whether `host` (in canonical form, see [`Authority`]) may be reached
    /// on `port`. Names match exactly: no subdomains, and an IP address only
    /// when that very address is listed.
    pub fn allows(&self, host: &str, port: u16) -> bool {
        self.entries.iter().any(|entry| {
            entry.host == host
                && match entry.port {
                    Some(listed) => listed == port,
                    None => DEFAULT_PORTS.contains(&port),
                }
        })
    }
}

impl fmt::Display for AllowList {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.entries.is_empty() {
            return f.write_str("nothing");
        }
        for (i, entry) in self.entries.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{entry}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(entries: &[&str]) -> AllowList {
        AllowList::parse(entries).unwrap()
    }

    #[test]
    fn a_listed_name_allows_http_and_https_only() {
        let allow = list(&["Registry.NPMjs.org"]);
        assert!(allow.allows("registry.npmjs.org", 443));
        assert!(allow.allows("registry.npmjs.org", 80));
        assert!(!allow.allows("registry.npmjs.org", 22));
        assert!(!allow.allows("registry.npmjs.org", 8080));
    }

    #[test]
    fn a_lookalike_or_subdomain_of_a_listed_name_is_refused() {
        let allow = list(&["registry.npmjs.org"]);
        for host in [
            "evil.registry.npmjs.org",
            "registry.npmjs.org.evil.example",
            "registry.npmjs.or",
            "npmjs.org",
        ] {
            assert!(!allow.allows(host, 443), "{host}");
        }
    }

    #[test]
    fn an_entry_with_a_port_allows_that_port_alone() {
        let allow = list(&["mirror.lan:4873", "http://user:secret@Verdaccio:8080/npm/"]);
        assert!(allow.allows("mirror.lan", 4873));
        assert!(!allow.allows("mirror.lan", 443));
        assert!(allow.allows("verdaccio", 8080));
        assert!(!allow.allows("verdaccio", 80));
        assert_eq!(allow.to_string(), "mirror.lan:4873, verdaccio:8080");
        let url = list(&["https://npm.corp.example/"]);
        assert!(url.allows("npm.corp.example", 443));
    }

    #[test]
    fn ip_literals_match_only_the_listed_address() {
        let allow = list(&["127.0.0.1:4873", "[0:0::1]:4873"]);
        assert!(allow.allows("127.0.0.1", 4873));
        assert!(allow.allows("::1", 4873));
        assert_eq!(allow.to_string(), "127.0.0.1:4873, [::1]:4873");
        assert!(!list(&["localhost"]).allows("127.0.0.1", 443));
    }

    #[test]
    fn entries_that_are_not_hosts_are_refused_by_name() {
        for (entry, why) in [
            ("*.npmjs.org", BadHost::Wildcard),
            ("", BadHost::Empty),
            (
                "registry npmjs org",
                BadHost::Name("registry npmjs org".into()),
            ),
            ("host:99999", BadHost::Port("99999".into())),
            ("host:0", BadHost::Port("0".into())),
            ("ftp://mirror/", BadHost::Scheme),
        ] {
            let err = AllowList::parse(&[entry]).unwrap_err();
            assert_eq!(err.why, why, "{entry}");
            assert!(err.to_string().contains("sandbox.registry_hosts"), "{err}");
        }
    }

    #[test]
    fn authorities_are_parsed_in_every_form() {
        let parse = |text| Authority::parse(text).map(|a| (a.host, a.port));
        assert_eq!(parse("a.b:443"), Ok(("a.b".into(), Some(443))));
        assert_eq!(parse("[::1]:80"), Ok(("::1".into(), Some(80))));
        assert_eq!(parse("::1"), Ok(("::1".into(), None)));
        assert!(parse("[::1").is_err());
        assert!(parse("[nope]:80").is_err());
        assert!(parse("a.b:+443").is_err());
        assert!(parse("a..b").is_err());
        assert!(parse("a/b:80").is_err());
    }
}
