//! App secrets: environment variables the person sets for one project's
//! processes (an API key the app calls with, a database password).
//!
//! They live in `<data_dir>/secrets/<project>.json`, a file only the IDE's
//! user can read (0600, in a 0700 directory, written atomically), never in
//! `rivet.db`, the project's files, its checkpoints or its export. The
//! sandbox gives them to every process it starts for the project (commands,
//! dev servers, terminals) and masks their values in what those processes
//! print ([`crate::runtime::mask::Masker`]), so the values reach neither the stored events,
//! the terminal as shown, nor the model. The model is told the names only.

use std::collections::BTreeMap;
use std::path::Path;

use crate::runtime::project::ProjectId;
use crate::server::private_files::PrivateFiles;

/// Most secrets one project may have.
pub const MAX_SECRETS: usize = 64;
/// Longest value, in bytes.
pub const MAX_VALUE_BYTES: usize = 16 * 1024;
/// Longest name, in bytes.
pub const MAX_NAME_BYTES: usize = 64;
/// Most bytes of names and values one project's secrets take in all: they
/// travel to the sandbox with every process it starts, in a message of
/// bounded size (`sandbox::wire::MAX_HEADER`, 1 MiB, which this stays far
/// below even escaped).
pub const MAX_TOTAL_BYTES: usize = 64 * 1024;

/// Variables the sandbox sets itself; a secret cannot replace them.
pub const RESERVED: [&str; 16] = [
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "SHELL",
    "TERM",
    "LANG",
    "TMPDIR",
    "PWD",
    "NODE_OPTIONS",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "NO_PROXY",
    "http_proxy",
    "https_proxy",
    "no_proxy",
];

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SecretError {
    #[error(
        "invalid secret name {0:?}: use letters, digits and _, not starting with a digit, at most 64"
    )]
    InvalidName(String),
    #[error("{0} is set by the sandbox itself and cannot be a secret")]
    Reserved(String),
    #[error("invalid value for {0}: it must be text without NUL bytes, at most 16 KiB")]
    InvalidValue(String),
    #[error("a project has at most {MAX_SECRETS} secrets")]
    TooMany,
    #[error("a project's secrets take at most 64 KiB in all")]
    TooLarge,
    #[error("no secret named {0}")]
    NotFound(String),
    #[error("the secrets cannot be read or written: {0}")]
    Io(String),
}

fn io(e: impl std::fmt::Display) -> SecretError {
    SecretError::Io(e.to_string())
}

/// Checks a secret's name: an environment variable's, not one of
/// [`RESERVED`].
pub fn check_name(name: &str) -> Result<(), SecretError> {
    let mut bytes = name.bytes();
    let valid = bytes
        .next()
        .is_some_and(|b| b.is_ascii_alphabetic() || b == b'_')
        && bytes.all(|b| b.is_ascii_alphanumeric() || b == b'_')
        && name.len() <= MAX_NAME_BYTES;
    if !valid {
        return Err(SecretError::InvalidName(name.to_owned()));
    }
    if RESERVED.contains(&name) || name.to_ascii_lowercase().starts_with("npm_config_") {
        return Err(SecretError::Reserved(name.to_owned()));
    }
    Ok(())
}

/// Every project's secrets, under one data directory.
#[derive(Debug, Clone)]
pub struct SecretStore {
    files: PrivateFiles,
}

impl SecretStore {
    pub fn new(data_dir: &Path) -> SecretStore {
        SecretStore {
            files: PrivateFiles::new(data_dir, "secrets"),
        }
    }

    /// A project's secrets, by name.
    pub fn values(&self, project: &ProjectId) -> Result<BTreeMap<String, String>, SecretError> {
        Ok(self.files.read(project).map_err(io)?.unwrap_or_default())
    }

    /// A project's secrets' names, sorted.
    pub fn names(&self, project: &ProjectId) -> Result<Vec<String>, SecretError> {
        Ok(self.values(project)?.into_keys().collect())
    }

    /// Sets (or replaces) one secret.
    pub fn set(&self, project: &ProjectId, name: &str, value: &str) -> Result<(), SecretError> {
        check_name(name)?;
        if value.contains('\0') || value.len() > MAX_VALUE_BYTES {
            return Err(SecretError::InvalidValue(name.to_owned()));
        }
        let mut values = self.values(project)?;
        if !values.contains_key(name) && values.len() >= MAX_SECRETS {
            return Err(SecretError::TooMany);
        }
        values.insert(name.to_owned(), value.to_owned());
        let total: usize = values.iter().map(|(k, v)| k.len() + v.len()).sum();
        if total > MAX_TOTAL_BYTES {
            return Err(SecretError::TooLarge);
        }
        self.files.write(project, &values).map_err(io)
    }

    /// Removes one secret.
    pub fn remove(&self, project: &ProjectId, name: &str) -> Result<(), SecretError> {
        let mut values = self.values(project)?;
        if values.remove(name).is_none() {
            return Err(SecretError::NotFound(name.to_owned()));
        }
        self.files.write(project, &values).map_err(io)
    }

    /// Forgets every secret of a project (it was deleted).
    pub fn remove_project(&self, project: &ProjectId) -> Result<(), SecretError> {
        self.files.remove(project).map_err(io)
    }
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use super::*;

    fn project() -> ProjectId {
        ProjectId::parse("p1").unwrap()
    }

    #[test]
    fn secrets_are_kept_in_a_file_only_the_owner_can_read() {
        let dir = tempfile::tempdir().unwrap();
        let store = SecretStore::new(dir.path());
        assert!(store.names(&project()).unwrap().is_empty());
        store.set(&project(), "STRIPE_KEY", "sk_test_123").unwrap();
        store.set(&project(), "A_TOKEN", "t").unwrap();
        store.set(&project(), "STRIPE_KEY", "sk_test_456").unwrap();
        assert_eq!(store.names(&project()).unwrap(), ["A_TOKEN", "STRIPE_KEY"]);
        assert_eq!(
            store.values(&project()).unwrap()["STRIPE_KEY"],
            "sk_test_456"
        );
        let file = dir.path().join("secrets/p1.json");
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&file), 0o600);
        assert_eq!(mode(&dir.path().join("secrets")), 0o700);
        store.remove(&project(), "A_TOKEN").unwrap();
        assert_eq!(
            store.remove(&project(), "A_TOKEN"),
            Err(SecretError::NotFound("A_TOKEN".into()))
        );
        assert_eq!(store.names(&project()).unwrap(), ["STRIPE_KEY"]);
        store.remove_project(&project()).unwrap();
        assert!(!file.exists());
        store.remove_project(&project()).unwrap();
    }

    #[test]
    fn bad_names_and_values_are_refused_and_change_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let store = SecretStore::new(dir.path());
        for name in ["", "1A", "A-B", "A B", "É", &"A".repeat(65)] {
            assert_eq!(
                store.set(&project(), name, "v"),
                Err(SecretError::InvalidName(name.to_owned())),
                "{name:?}"
            );
        }
        for name in ["PATH", "NODE_OPTIONS", "npm_config_registry", "HTTPS_PROXY"] {
            assert_eq!(
                store.set(&project(), name, "v"),
                Err(SecretError::Reserved(name.to_owned()))
            );
        }
        let huge = "x".repeat(MAX_VALUE_BYTES + 1);
        for value in ["a\0b", huge.as_str()] {
            assert_eq!(
                store.set(&project(), "KEY", value),
                Err(SecretError::InvalidValue("KEY".into()))
            );
        }
        assert!(store.names(&project()).unwrap().is_empty());
        for i in 0..MAX_SECRETS {
            store.set(&project(), &format!("K{i}"), "v").unwrap();
        }
        assert_eq!(
            store.set(&project(), "ONE_MORE", "v"),
            Err(SecretError::TooMany)
        );
        store.set(&project(), "K0", "replaced").unwrap();
        // Values of 16 KiB: the fourth passes the total, and is not kept.
        let big = "v".repeat(MAX_VALUE_BYTES);
        for name in ["K1", "K2", "K3"] {
            store.set(&project(), name, &big).unwrap();
        }
        assert_eq!(
            store.set(&project(), "K4", &big),
            Err(SecretError::TooLarge)
        );
        assert_eq!(store.values(&project()).unwrap()["K4"], "v");
    }

    #[test]
    fn a_corrupt_secrets_file_is_an_error_not_an_empty_list() {
        let dir = tempfile::tempdir().unwrap();
        let store = SecretStore::new(dir.path());
        store.set(&project(), "KEY", "v").unwrap();
        std::fs::write(dir.path().join("secrets/p1.json"), b"{not json").unwrap();
        assert!(matches!(store.names(&project()), Err(SecretError::Io(_))));
        assert!(matches!(
            store.set(&project(), "OTHER", "v"),
            Err(SecretError::Io(_))
        ));
        assert_eq!(
            std::fs::read(dir.path().join("secrets/p1.json")).unwrap(),
            b"{not json",
            "the file is left for the owner to repair"
        );
    }
}
