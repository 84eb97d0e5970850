//! Where keys may go: each key comes paired with the base URL set together
//! with it, and [`key_may_go_to`] is the one rule every request follows.

use super::{Layer, Sourced};
use crate::server::llm::provider::{self, Preset};
use crate::server::llm::secret::Secret;

/// A key and the base URL set together with it (empty: none), the only
/// URL besides its provider's preset URL that it may be sent to.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PairedKey {
    pub key: Sourced,
    pub url: String,
}

impl PairedKey {
    pub fn new(key: Sourced, url: &str) -> PairedKey {
        PairedKey {
            key,
            url: provider::normalize_base_url(url),
        }
    }
}

/// The base URLs a key may be sent to (an empty string stands for none).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct KeyHome {
    /// The preset URL of the provider the key is for.
    pub preset_url: String,
    /// The base URL saved or configured together with the key.
    pub paired_url: String,
}

/// Whether a key that came with `home` may be sent with a request to
/// `target`: the one rule for where keys go, applied when a configuration
/// is resolved and again by every request (`ResolvedLlm::key`). A key goes
/// to its provider's preset URL or to the URL set together with it (or
/// below either, see [`url_within`]), never to a URL chosen elsewhere.
pub fn key_may_go_to(home: &KeyHome, target: &str) -> bool {
    [&home.preset_url, &home.paired_url]
        .into_iter()
        .any(|url| url_within(url, target))
}

/// Whether `target` is `base` or below it: the same scheme, host and port
/// (default ports filled in, host case ignored), and `base`'s path segments
/// begin `target`'s, trailing slashes aside (`/v1` covers `/v1/` and
/// `/v1/x`, not `/v10` or `/`). Anything but an http(s) URL with a host,
/// the empty string included, covers nothing.
fn url_within(base: &str, target: &str) -> bool {
    let parse = |s: &str| {
        url::Url::parse(s.trim())
            .ok()
            .filter(|u| matches!(u.scheme(), "http" | "https") && u.host().is_some())
    };
    let (Some(base), Some(target)) = (parse(base), parse(target)) else {
        return false;
    };
    let segments = |u: &url::Url| {
        u.path()
            .split('/')
            .filter(|s| !s.is_empty())
            .map(str::to_owned)
            .collect::<Vec<_>>()
    };
    base.scheme() == target.scheme()
        && base.host() == target.host()
        && base.port_or_known_default() == target.port_or_known_default()
        && segments(&target).starts_with(&segments(&base))
}

/// Every key for `preset`, highest layer first, with where it may go: the
/// provider's own keys from any layer, a generic key only from layers at
/// or above the provider's.
pub fn key_candidates(
    layers: &[Layer],
    provider_layer: usize,
    preset: &Preset,
) -> Vec<(Sourced, KeyHome)> {
    let home = |paired: &PairedKey| KeyHome {
        preset_url: preset.base_url.to_owned(),
        paired_url: paired.url.clone(),
    };
    let mut keys = Vec::new();
    for (i, layer) in layers.iter().enumerate() {
        let own = layer
            .provider_keys
            .iter()
            .filter(|(p, key)| p == preset.id && key.key.is_set());
        keys.extend(own.map(|(_, key)| (key.key.clone(), home(key))));
        if i <= provider_layer && layer.generic_key.key.is_set() {
            keys.push((layer.generic_key.key.clone(), home(&layer.generic_key)));
        }
    }
    keys
}

/// The key for requests to `target`, and what to say about it.
#[derive(Debug)]
pub struct ResolvedKey {
    pub secret: Option<Secret>,
    pub home: KeyHome,
    /// Where it came from, for the settings panel.
    pub origin: String,
    /// The key is malformed.
    pub problem: Option<String>,
    /// A key is set but held back from `target`.
    pub notice: Option<String>,
}

impl Default for ResolvedKey {
    fn default() -> ResolvedKey {
        ResolvedKey {
            secret: None,
            home: KeyHome::default(),
            origin: "not set".to_owned(),
            problem: None,
            notice: None,
        }
    }
}

/// The first key for `preset` that may go to `target`. When there are
/// keys but none may go there, the notice says so, naming the first.
pub fn resolve_key(
    layers: &[Layer],
    provider_layer: usize,
    preset: &Preset,
    target: &str,
) -> ResolvedKey {
    let keys = key_candidates(layers, provider_layer, preset);
    if let Some((key, home)) = keys.iter().find(|(_, home)| key_may_go_to(home, target)) {
        return match Secret::new(&key.value) {
            Ok(secret) => ResolvedKey {
                secret: Some(secret),
                home: home.clone(),
                origin: key.origin.clone(),
                ..ResolvedKey::default()
            },
            Err(e) => ResolvedKey {
                origin: key.origin.clone(),
                problem: Some(format!("The key from {}: {e}.", key.origin)),
                ..ResolvedKey::default()
            },
        };
    }
    match keys.first() {
        // With no URL yet, the missing URL is what to explain.
        Some((key, _)) if !target.is_empty() => ResolvedKey {
            origin: format!("{} (not sent to this URL)", key.origin),
            notice: Some(format!(
                "No key is sent to {target}: the key from {} was not saved with this URL. \
                 To use a key here, save it in Settings together with this URL.",
                key.origin
            )),
            ..ResolvedKey::default()
        },
        _ => ResolvedKey::default(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_are_compared_by_origin_and_path() {
        let home = KeyHome {
            preset_url: "https://api.openai.com/v1".into(),
            paired_url: "http://gpu-box:8000/llm/v1".into(),
        };
        for yes in [
            "https://api.openai.com/v1",
            "https://api.openai.com/v1/",
            "HTTPS://Api.OpenAI.com:443/v1",
            "https://api.openai.com/v1/extra",
            "http://gpu-box:8000/llm/v1/",
            "http://gpu-box:8000/llm/v2/../v1",
        ] {
            assert!(key_may_go_to(&home, yes), "{yes}");
        }
        for no in [
            "http://any-host/v1",
            "http://api.openai.com/v1",
            "https://api.openai.com:8443/v1",
            "https://api.openai.com/",
            "https://api.openai.com/v10",
            "https://api.openai.com.evil.example/v1",
            "https://api.openai.com@evil.example/v1",
            "https://api.openai.com/v1/../v2",
            "http://gpu-box:8001/llm/v1",
            "http://gpu-box/llm/v1",
            "http://gpu-box:8000/llm",
            "",
            "not a url",
            "file:///v1",
        ] {
            assert!(!key_may_go_to(&home, no), "{no}");
        }
        // No URL saved with a key and no preset: it goes nowhere.
        assert!(!key_may_go_to(&KeyHome::default(), "http://any-host/v1"));
    }
}
