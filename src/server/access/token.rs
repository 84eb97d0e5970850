//! The access token: configured, or made at first start and kept in
//! `<data_dir>/token`, readable only by Rivet's user.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use crate::server::llm::secret::Secret;

/// Shortest token Rivet accepts from the configuration.
pub const MIN_TOKEN_LEN: usize = 16;

#[derive(Debug, thiserror::Error)]
pub enum TokenError {
    #[error("cannot read or create the access token file {path}: {source}")]
    File {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(
        "the access token in {0} must have at least {MIN_TOKEN_LEN} characters, each a letter, \
         a digit or one of - . _ ~ (it travels in URLs and cookies); delete the file to have a \
         random one made"
    )]
    Unusable(String),
}

/// The token from the configuration, or from `<data_dir>/token` (made with
/// 256 random bits when missing).
pub fn load(configured: &str, data_dir: &Path) -> Result<Secret, TokenError> {
    let configured = configured.trim();
    if !configured.is_empty() {
        return checked(configured, "[server] token / RIVET_SERVER_TOKEN");
    }
    let path = data_dir.join("token");
    let io = |source| TokenError::File {
        path: path.clone(),
        source,
    };
    match std::fs::read_to_string(&path) {
        Ok(text) => {
            // Whoever made the file, only Rivet's user may read it.
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).map_err(io)?;
            checked(text.trim(), &path.display().to_string())
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => create(&path).map_err(io),
        Err(e) => Err(io(e)),
    }
}

fn checked(token: &str, origin: &str) -> Result<Secret, TokenError> {
    let safe = |c: char| c.is_ascii_alphanumeric() || "-._~".contains(c);
    if token.len() < MIN_TOKEN_LEN || !token.chars().all(safe) {
        return Err(TokenError::Unusable(origin.to_owned()));
    }
    Secret::new(token).map_err(|_| TokenError::Unusable(origin.to_owned()))
}

fn create(path: &Path) -> std::io::Result<Secret> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)?;
    }
    let bytes: [u8; 32] = rand::random();
    let token: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    crate::server::atomic::write_private(path, format!("{token}\n").as_bytes())?;
    Secret::new(&token).map_err(std::io::Error::other)
}

/// Compares in time that depends only on the lengths, never on where the
/// first difference is.
pub fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_is_made_once_with_owner_only_permissions() {
        let dir = tempfile::tempdir().unwrap();
        let first = load("", dir.path()).unwrap();
        assert_eq!(first.expose().len(), 64, "256 bits in hex");
        assert!(first.expose().chars().all(|c| c.is_ascii_hexdigit()));
        let mode = std::fs::metadata(dir.path().join("token"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
        let again = load("", dir.path()).unwrap();
        assert_eq!(again.expose(), first.expose());
        let other = tempfile::tempdir().unwrap();
        assert_ne!(load("", other.path()).unwrap().expose(), first.expose());
    }

    #[test]
    fn a_readable_token_file_is_made_private_again() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("token");
        std::fs::write(&path, "0123456789abcdef0123\n").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        assert_eq!(
            load("", dir.path()).unwrap().expose(),
            "0123456789abcdef0123"
        );
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }

    #[test]
    fn a_configured_token_wins_and_must_not_be_short() {
        let dir = tempfile::tempdir().unwrap();
        let token = load("  a-long-enough-token  ", dir.path()).unwrap();
        assert_eq!(token.expose(), "a-long-enough-token");
        assert!(!dir.path().join("token").exists());
        for bad in ["short", "a-long-enough-token;x=1", "a long enough token"] {
            let err = load(bad, dir.path()).unwrap_err();
            assert!(err.to_string().contains("RIVET_SERVER_TOKEN"), "{err}");
        }
    }

    #[test]
    fn comparison_needs_every_byte() {
        assert!(constant_time_eq(b"abcdef", b"abcdef"));
        assert!(!constant_time_eq(b"abcdef", b"abcdeg"));
        assert!(!constant_time_eq(b"abcdef", b"bbcdef"));
        assert!(!constant_time_eq(b"abcdef", b"abcde"));
        assert!(!constant_time_eq(b"", b"a"));
    }
}
