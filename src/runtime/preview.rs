//! Preview origins: every dev server of every project is shown from its own
//! origin, `http://{project}-{port}.preview.localhost:{ide-port}/`, never the
//! IDE's. Browsers resolve `*.localhost` to loopback, and the IDE's proxy
//! routes on the host name, so the previewed app cannot read the IDE's page,
//! its storage or its API responses. The preview pane frames the same
//! servers from ports of the IDE's own host instead (see
//! `server::sandbox::preview_ports`): same site, so the app keeps its storage
//! inside a frame, and still a distinct origin.

use super::project::ProjectId;

/// The domain every preview host ends with.
pub const PREVIEW_DOMAIN: &str = "preview.localhost";

/// One project's port, as a host name.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct PreviewHost {
    pub project: ProjectId,
    pub port: u16,
}

/// What a request's host name asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HostKind {
    /// Anything that is not a preview host: the IDE itself.
    Ide,
    Preview(PreviewHost),
    /// Under the preview domain but not a valid `{project}-{port}` label.
    BadPreview,
}

impl PreviewHost {
    /// `abc-5173.preview.localhost` (no port).
    pub fn host_name(&self) -> String {
        format!("{}-{}.{PREVIEW_DOMAIN}", self.project, self.port)
    }

    /// The preview's origin when the IDE is served on `ide_port` (`None` for
    /// the scheme's default port).
    pub fn origin(&self, scheme: &str, ide_port: Option<u16>) -> String {
        match ide_port {
            Some(port) => format!("{scheme}://{}:{port}", self.host_name()),
            None => format!("{scheme}://{}", self.host_name()),
        }
    }
}

/// Classifies a `Host` header value (`name[:port]`), case-insensitively.
pub fn classify_host(host: &str) -> HostKind {
    let name = host_name(host).to_ascii_lowercase();
    let name = name.strip_suffix('.').unwrap_or(&name);
    if name == PREVIEW_DOMAIN {
        return HostKind::BadPreview;
    }
    let Some(label) = name.strip_suffix(PREVIEW_DOMAIN) else {
        return HostKind::Ide;
    };
    let Some(label) = label.strip_suffix('.') else {
        // e.g. `xpreview.localhost`: another host.
        return HostKind::Ide;
    };
    parse_label(label).map_or(HostKind::BadPreview, HostKind::Preview)
}

fn parse_label(label: &str) -> Option<PreviewHost> {
    let (project, port) = label.rsplit_once('-')?;
    if port.is_empty() || port.starts_with('0') || !port.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let port = port.parse::<u16>().ok()?;
    let project = ProjectId::parse(project).ok()?;
    Some(PreviewHost { project, port })
}

/// The host name without its port; IPv6 literals keep their brackets.
pub fn host_name(host: &str) -> &str {
    if host.starts_with('[') {
        return host.split_inclusive(']').next().unwrap_or(host);
    }
    host.rsplit_once(':').map_or(host, |(name, _)| name)
}

/// The port of a `Host` header value, if it names one.
pub fn host_port(host: &str) -> Option<u16> {
    let rest = if host.starts_with('[') {
        host.split_once(']').map(|(_, rest)| rest)?
    } else {
        host
    };
    rest.rsplit_once(':')?.1.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn preview(project: &str, port: u16) -> HostKind {
        HostKind::Preview(PreviewHost {
            project: ProjectId::parse(project).unwrap(),
            port,
        })
    }

    fn check(host: &str, expect: HostKind) {
        assert_eq!(classify_host(host), expect, "{host:?}");
    }

    #[test]
    fn hosts_are_classified() {
        check("abc-5173.preview.localhost:3000", preview("abc", 5173));
        check("ABC-5173.Preview.Localhost", preview("abc", 5173));
        check("abc-80.preview.localhost.:3000", preview("abc", 80));
        check("a1-65535.preview.localhost", preview("a1", 65535));
        check("127.0.0.1:3000", HostKind::Ide);
        check("localhost:3000", HostKind::Ide);
        check("[::1]:3000", HostKind::Ide);
        check("xpreview.localhost", HostKind::Ide);
        check("preview.localhost", HostKind::BadPreview);
        check("abc.preview.localhost", HostKind::BadPreview);
        check("abc-65536.preview.localhost", HostKind::BadPreview);
        check("abc-0.preview.localhost", HostKind::BadPreview);
        check("abc-05173.preview.localhost", HostKind::BadPreview);
        check("ab_c-5173.preview.localhost", HostKind::BadPreview);
        check("x.abc-5173.preview.localhost", HostKind::BadPreview);
        check("-5173.preview.localhost", HostKind::BadPreview);
    }

    #[test]
    fn ports_and_origins() {
        assert_eq!(host_port("127.0.0.1:3000"), Some(3000));
        assert_eq!(host_port("[::1]:8080"), Some(8080));
        assert_eq!(host_port("localhost"), None);
        assert_eq!(host_port("[::1]"), None);
        let host = PreviewHost {
            project: ProjectId::parse("demo").unwrap(),
            port: 5173,
        };
        assert_eq!(
            host.origin("http", Some(3000)),
            "http://demo-5173.preview.localhost:3000"
        );
        assert_eq!(
            host.origin("https", None),
            "https://demo-5173.preview.localhost"
        );
    }
}
