//! Which runtime a project's actions run on, and why the browser one could
//! not start. Shared by the server (which stores the choice) and the page
//! (which shows it and boots the WebContainer).

use std::fmt;

use serde::{Deserialize, Serialize};

/// Where a project's actions run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RuntimeKind {
    /// Processes on the IDE's server, isolated with bubblewrap.
    #[default]
    Sandbox,
    /// A WebContainer in the person's browser tab.
    Webcontainer,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown runtime {0:?}: use \"sandbox\" or \"webcontainer\"")]
pub struct UnknownRuntime(pub String);

impl RuntimeKind {
    pub const ALL: [RuntimeKind; 2] = [RuntimeKind::Sandbox, RuntimeKind::Webcontainer];

    /// The name the configuration and the store use.
    pub fn as_str(self) -> &'static str {
        match self {
            RuntimeKind::Sandbox => "sandbox",
            RuntimeKind::Webcontainer => "webcontainer",
        }
    }

    pub fn parse(name: &str) -> Result<RuntimeKind, UnknownRuntime> {
        RuntimeKind::ALL
            .into_iter()
            .find(|kind| kind.as_str() == name.trim())
            .ok_or_else(|| UnknownRuntime(name.to_owned()))
    }

    /// What the page shows.
    pub fn label(self) -> &'static str {
        match self {
            RuntimeKind::Sandbox => "Sandbox (server)",
            RuntimeKind::Webcontainer => "WebContainer (browser)",
        }
    }
}

impl fmt::Display for RuntimeKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Why a WebContainer could not start in this tab.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum BootFailure {
    /// The page is not cross-origin isolated (`crossOriginIsolated` is
    /// false), so the browser withholds `SharedArrayBuffer`.
    NotIsolated,
    /// The browser has no `SharedArrayBuffer` at all.
    Unsupported,
    /// The runtime's code, served by StackBlitz, could not be loaded: the
    /// browser is offline or StackBlitz's hosts are unreachable.
    Unreachable { detail: String },
    /// Anything else the boot reported.
    Failed { detail: String },
}

impl BootFailure {
    /// What the tab itself rules out before trying to boot; `None` when a
    /// boot may be attempted. `cross_origin_isolated` is `None` in a browser
    /// that does not know the property at all.
    pub fn diagnose(
        cross_origin_isolated: Option<bool>,
        shared_array_buffer: bool,
    ) -> Option<BootFailure> {
        match (cross_origin_isolated, shared_array_buffer) {
            (None, _) | (Some(true), false) => Some(BootFailure::Unsupported),
            (Some(false), _) => Some(BootFailure::NotIsolated),
            (Some(true), true) => None,
        }
    }

    /// Classifies the error a boot (or loading the package) ended with.
    pub fn from_boot_error(message: &str) -> BootFailure {
        const NETWORK: [&str; 7] = [
            "failed to fetch",
            "networkerror",
            "network error",
            "load failed",
            "timed out",
            "err_internet_disconnected",
            "unable to connect",
        ];
        let lower = message.to_lowercase();
        let detail = message.trim().to_owned();
        if NETWORK.iter().any(|word| lower.contains(word)) {
            BootFailure::Unreachable { detail }
        } else if lower.contains("sharedarraybuffer") || lower.contains("crossoriginisolated") {
            BootFailure::NotIsolated
        } else {
            BootFailure::Failed { detail }
        }
    }

    /// One paragraph for the person, naming the cause.
    pub fn message(&self) -> String {
        match self {
            BootFailure::NotIsolated => "The WebContainer cannot start: this page is not \
                 cross-origin isolated (crossOriginIsolated is false), so the browser \
                 withholds SharedArrayBuffer. Open the IDE at its own address, not inside \
                 another page, or behind a proxy that keeps the \
                 Cross-Origin-Opener-Policy and Cross-Origin-Embedder-Policy headers."
                .to_owned(),
            BootFailure::Unsupported => "The WebContainer cannot start: this browser has no \
                 SharedArrayBuffer. Use a recent Chromium, Firefox or Safari."
                .to_owned(),
            BootFailure::Unreachable { detail } => format!(
                "The WebContainer cannot start: its runtime is loaded from StackBlitz's \
                 servers, which this browser cannot reach (offline, or blocked by the \
                 network). {detail}"
            ),
            BootFailure::Failed { detail } => {
                format!("The WebContainer could not start: {detail}")
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runtime_names_round_trip() {
        for kind in RuntimeKind::ALL {
            assert_eq!(RuntimeKind::parse(kind.as_str()), Ok(kind));
            let json = serde_json::to_string(&kind).unwrap();
            assert_eq!(json, format!("\"{kind}\""));
            assert_eq!(serde_json::from_str::<RuntimeKind>(&json).unwrap(), kind);
        }
        assert_eq!(RuntimeKind::default(), RuntimeKind::Sandbox);
    }

    #[test]
    fn unknown_runtime_name_is_refused_by_name() {
        let err = RuntimeKind::parse("docker").unwrap_err();
        assert!(err.to_string().contains("docker"), "{err}");
        assert!(RuntimeKind::parse("").is_err());
        assert!(RuntimeKind::parse("Sandbox").is_err());
    }

    #[test]
    fn boot_without_cross_origin_isolation_names_it() {
        let failure = BootFailure::diagnose(Some(false), false).unwrap();
        assert_eq!(failure, BootFailure::NotIsolated);
        assert!(failure.message().contains("crossOriginIsolated is false"));
        assert_eq!(
            BootFailure::diagnose(Some(false), true),
            Some(BootFailure::NotIsolated)
        );
    }

    #[test]
    fn boot_in_browser_without_shared_array_buffer_names_it() {
        let failure = BootFailure::diagnose(Some(true), false).unwrap();
        assert_eq!(failure, BootFailure::Unsupported);
        assert!(failure.message().contains("no SharedArrayBuffer"));
        // A browser that predates cross-origin isolation has neither.
        assert_eq!(
            BootFailure::diagnose(None, false),
            Some(BootFailure::Unsupported)
        );
    }

    #[test]
    fn isolated_browser_with_shared_array_buffer_may_boot() {
        assert_eq!(BootFailure::diagnose(Some(true), true), None);
    }

    #[test]
    fn boot_offline_names_stackblitz() {
        for error in [
            "TypeError: Failed to fetch",
            "NetworkError when attempting to fetch resource.",
            "the WebContainer did not boot: timed out after 30 s",
        ] {
            let failure = BootFailure::from_boot_error(error);
            assert!(
                matches!(failure, BootFailure::Unreachable { .. }),
                "{error}: {failure:?}"
            );
            assert!(failure.message().contains("StackBlitz"), "{error}");
            assert!(failure.message().contains(error.trim()), "{error}");
        }
    }

    #[test]
    fn boot_error_about_shared_memory_is_isolation() {
        assert_eq!(
            BootFailure::from_boot_error("SharedArrayBuffer is not defined"),
            BootFailure::NotIsolated
        );
    }

    #[test]
    fn other_boot_error_is_reported_as_is() {
        let failure =
            BootFailure::from_boot_error("Only a single WebContainer instance can be booted");
        assert!(matches!(failure, BootFailure::Failed { .. }));
        assert!(failure.message().contains("single WebContainer instance"));
    }
}
