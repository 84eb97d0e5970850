//! The registry the host's own npm is configured with, read once, when the
//! first sandbox starts, so that a machine behind a registry mirror keeps
//! installing packages in a `registry` sandbox.

use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::server::host_tools;

/// npm's own default registry.
pub const NPM_DEFAULT: &str = "https://registry.npmjs.org/";

/// How long `npm config get registry` may take.
const NPM_TIMEOUT: Duration = Duration::from_secs(10);

/// The registry a host without npm is configured with:
/// `NPM_CONFIG_REGISTRY`, or the `registry=` line of `~/.npmrc`.
pub fn registry_without_npm() -> Option<String> {
    let env = ["NPM_CONFIG_REGISTRY", "npm_config_registry"]
        .iter()
        .find_map(|name| std::env::var(name).ok().filter(|v| !v.trim().is_empty()));
    if let Some(url) = env {
        return Some(url.trim().to_owned());
    }
    let home = std::env::var_os("HOME")?;
    let text = std::fs::read_to_string(Path::new(&home).join(".npmrc")).ok()?;
    registry_in_npmrc(&text)
}

/// The value of the unscoped `registry` key of an `.npmrc` file.
pub fn registry_in_npmrc(text: &str) -> Option<String> {
    text.lines()
        .map(str::trim)
        .filter(|line| !line.starts_with([';', '#']))
        .filter_map(|line| line.split_once('='))
        .filter(|(key, _)| key.trim() == "registry")
        .map(|(_, value)| value.trim().trim_matches('"').to_owned())
        .rfind(|value| !value.is_empty())
}

/// The registry URL of the host's npm configuration: what `npm config get
/// registry` says, run with the IDE's environment (but the `PATH` of
/// `host_tools`, for npm's own `node`), bounded in time.
pub fn ask_npm(npm: &Path) -> Option<String> {
    let mut child = Command::new(npm)
        .args(["config", "get", "registry"])
        .env("PATH", host_tools::path_env())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    let deadline = Instant::now() + NPM_TIMEOUT;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(20)),
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                tracing::warn!("`npm config get registry` did not answer; using the listed hosts");
                return None;
            }
        }
    };
    let mut out = String::new();
    child.stdout.take()?.read_to_string(&mut out).ok()?;
    let url = out.lines().map(str::trim).find(|l| !l.is_empty())?;
    (status.success() && url.contains("://")).then(|| url.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_registry_line_of_an_npmrc_is_found() {
        let text = "; comment\n@corp:registry=https://npm.corp.example/\nregistry = https://mirror.lan:4873/\n# registry=https://old/\n";
        assert_eq!(
            registry_in_npmrc(text).as_deref(),
            Some("https://mirror.lan:4873/")
        );
        assert_eq!(registry_in_npmrc("fund=false\n"), None);
    }
}
