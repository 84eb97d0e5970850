//! Faults the scripted provider can play, and the one syntax they share:
//! `key: value` lines in a transcript's front matter (`#! status: 401`),
//! `key=value` pairs in an `X-Mock-Fault` header (`status=429, retry-after=7`),
//! and JSON objects with the same keys for `POST /mock/faults`.

use serde::{Deserialize, Serialize};

/// Every field is optional; an empty fault is a normal answer. Byte counts
/// are bytes of answer text (not of the HTTP stream), rounded down to a
/// character boundary.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct Fault {
    /// Answer with this HTTP status and an OpenAI-style error body.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<u16>,
    /// With `status`: the error body's message (e.g. a provider's "does
    /// not support tools").
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// With `status`: the `Retry-After` header, in seconds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub retry_after: Option<u64>,
    /// Wait this long before the first byte (the response headers).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub delay_ms: Option<u64>,
    /// Close the connection after this many bytes, without `[DONE]`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cut_after: Option<usize>,
    /// Send a chunk that is not JSON after this many bytes, then go on.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub malformed_after: Option<usize>,
    /// End with `finish_reason = "length"` after this many bytes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub length_after: Option<usize>,
    /// When continuing an answer, repeat its last bytes first, as models do.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub repeat_on_continue: Option<usize>,
    /// Characters per chunk.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub chunk_size: Option<usize>,
    /// Pause between chunks.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub chunk_delay_ms: Option<u64>,
    /// A queued fault waits for a request whose last user message contains
    /// this text, so a request still running for an earlier test (a fix
    /// attempt, an agent step) does not take a fault meant for a later one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub when: Option<String>,
}

impl Fault {
    /// Sets one field from its textual form.
    pub fn set(&mut self, key: &str, value: &str) -> Result<(), String> {
        let value = value.trim();
        let number = || -> Result<u64, String> {
            value
                .parse::<u64>()
                .map_err(|_| format!("{key}: {value:?} is not a whole number"))
        };
        let size = || number().map(|n| usize::try_from(n).unwrap_or(usize::MAX));
        match key.trim() {
            "status" => {
                let status = number()?;
                if !(100..=599).contains(&status) {
                    return Err(format!("status: {status} is not an HTTP status"));
                }
                self.status = Some(status as u16);
            }
            "retry-after" => self.retry_after = Some(number()?),
            "message" => self.message = Some(value.to_owned()),
            "delay-ms" => self.delay_ms = Some(number()?),
            "cut-after" => self.cut_after = Some(size()?),
            "malformed-after" => self.malformed_after = Some(size()?),
            "length-after" => self.length_after = Some(size()?),
            "repeat-on-continue" => self.repeat_on_continue = Some(size()?),
            "chunk-size" => self.chunk_size = Some(size()?.max(1)),
            "chunk-delay-ms" => self.chunk_delay_ms = Some(number()?),
            "when" => self.when = Some(value.to_owned()),
            other => return Err(format!("unknown fault key {other:?}")),
        }
        Ok(())
    }

    /// Parses an `X-Mock-Fault` header: `key=value` pairs separated by
    /// commas or semicolons.
    pub fn parse_header(text: &str) -> Result<Fault, String> {
        let mut fault = Fault::default();
        for pair in text.split([',', ';']).filter(|p| !p.trim().is_empty()) {
            let (key, value) = pair
                .split_once('=')
                .ok_or_else(|| format!("{pair:?} is not key=value"))?;
            fault.set(key, value)?;
        }
        Ok(fault)
    }

    /// Field by field, `self` wins over `lower`.
    pub fn over(self, lower: &Fault) -> Fault {
        Fault {
            status: self.status.or(lower.status),
            message: self.message.or_else(|| lower.message.clone()),
            retry_after: self.retry_after.or(lower.retry_after),
            delay_ms: self.delay_ms.or(lower.delay_ms),
            cut_after: self.cut_after.or(lower.cut_after),
            malformed_after: self.malformed_after.or(lower.malformed_after),
            length_after: self.length_after.or(lower.length_after),
            repeat_on_continue: self.repeat_on_continue.or(lower.repeat_on_continue),
            chunk_size: self.chunk_size.or(lower.chunk_size),
            chunk_delay_ms: self.chunk_delay_ms.or(lower.chunk_delay_ms),
            when: self.when.or_else(|| lower.when.clone()),
        }
    }

    /// Whether this queued fault is for a request whose last user message
    /// is `last_user`.
    pub fn applies_to(&self, last_user: &str) -> bool {
        self.when
            .as_deref()
            .is_none_or(|text| last_user.contains(text))
    }

    /// What still applies when a transcript's own fault meets a request that
    /// continues an answer: the length limit, the repetition and the pace,
    /// so a continuation is not refused or cut again by the same fault.
    pub fn for_continuation(&self) -> Fault {
        Fault {
            length_after: self.length_after,
            repeat_on_continue: self.repeat_on_continue,
            chunk_size: self.chunk_size,
            chunk_delay_ms: self.chunk_delay_ms,
            ..Fault::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_parse_into_faults() {
        let check = |header: &str, expect: Result<Fault, &str>| {
            let got = Fault::parse_header(header);
            match (&got, &expect) {
                (Ok(g), Ok(e)) => assert_eq!(g, e, "{header}"),
                (Err(g), Err(e)) => assert!(g.contains(e), "{header}: {g}"),
                _ => panic!("{header}: got {got:?}, expected {expect:?}"),
            }
        };
        check(
            "status=429, retry-after=7",
            Ok(Fault {
                status: Some(429),
                retry_after: Some(7),
                ..Fault::default()
            }),
        );
        check(
            "cut-after=100;delay-ms=5",
            Ok(Fault {
                cut_after: Some(100),
                delay_ms: Some(5),
                ..Fault::default()
            }),
        );
        check("", Ok(Fault::default()));
        check("status=42", Err("not an HTTP status"));
        check("status", Err("not key=value"));
        check("speed=3", Err("unknown fault key"));
        check("cut-after=lots", Err("not a whole number"));
    }

    #[test]
    fn json_uses_the_same_keys() {
        let fault: Fault =
            serde_json::from_str(r#"{"status":503,"retry-after":1,"length-after":10}"#).unwrap();
        assert_eq!(fault.status, Some(503));
        assert_eq!(fault.length_after, Some(10));
        assert!(serde_json::from_str::<Fault>(r#"{"stauts":1}"#).is_err());
    }

    #[test]
    fn higher_faults_win_field_by_field() {
        let high = Fault {
            status: Some(500),
            ..Fault::default()
        };
        let low = Fault {
            status: Some(401),
            cut_after: Some(3),
            ..Fault::default()
        };
        let merged = high.over(&low);
        assert_eq!((merged.status, merged.cut_after), (Some(500), Some(3)));
        let cont = low.for_continuation();
        assert_eq!(cont, Fault::default());
    }
}
