//! Project identity, shared by every layer.

use std::fmt;

use serde::{Deserialize, Serialize};

/// A project's id: 1 to 32 lowercase ASCII letters and digits. The alphabet is
/// that narrow because the id is part of file paths and of preview host names
/// (`{project}-{port}.preview.localhost`), where a dash separates it from the
/// port.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct ProjectId(String);

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid project id {0:?}: use 1 to 32 lowercase letters and digits")]
pub struct InvalidProjectId(pub String);

impl ProjectId {
    pub const MAX_LEN: usize = 32;

    pub fn parse(s: &str) -> Result<ProjectId, InvalidProjectId> {
        let valid = !s.is_empty()
            && s.len() <= Self::MAX_LEN
            && s.bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit());
        if valid {
            Ok(ProjectId(s.to_owned()))
        } else {
            Err(InvalidProjectId(s.to_owned()))
        }
    }

    /// A fresh random id of 12 characters, from the given random bytes (the
    /// caller owns the source of randomness, so this stays pure).
    pub fn from_random(bytes: [u8; 12]) -> ProjectId {
        const ALPHABET: &[u8; 36] = b"abcdefghijklmnopqrstuvwxyz0123456789";
        ProjectId(
            bytes
                .iter()
                .map(|b| char::from(ALPHABET[usize::from(*b) % ALPHABET.len()]))
                .collect(),
        )
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for ProjectId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl TryFrom<String> for ProjectId {
    type Error = InvalidProjectId;
    fn try_from(s: String) -> Result<Self, Self::Error> {
        ProjectId::parse(&s)
    }
}

impl From<ProjectId> for String {
    fn from(id: ProjectId) -> String {
        id.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(input: &str, valid: bool) {
        assert_eq!(ProjectId::parse(input).is_ok(), valid, "{input:?}");
    }

    #[test]
    fn ids_are_lowercase_alphanumerics() {
        check("demo", true);
        check("a1b2c3", true);
        check(&"x".repeat(32), true);
        check("", false);
        check(&"x".repeat(33), false);
        check("Demo", false);
        check("my-app", false);
        check("../etc", false);
        check("a.b", false);
        check("é", false);
    }

    #[test]
    fn random_ids_are_valid() {
        for seed in 0..=255u8 {
            let id = ProjectId::from_random([seed; 12]);
            assert!(ProjectId::parse(id.as_str()).is_ok(), "{id}");
            assert_eq!(id.as_str().len(), 12);
        }
    }

    #[test]
    fn serde_refuses_invalid_ids() {
        assert!(serde_json::from_str::<ProjectId>("\"ok1\"").is_ok());
        assert!(serde_json::from_str::<ProjectId>("\"NO\"").is_err());
    }
}
