//! Paths inside a project: the one type every part uses, from the
//! parser's actions and the server functions to every runtime. This is
//! where a path is accepted or refused.

use std::fmt;

use serde::{Deserialize, Serialize};

/// A relative path that stays inside the project: `/`-separated, with no
/// empty, `.` or `..` components left, nothing under `.git` (in any case:
/// the history is the IDE's to write), no backslash, no NUL, at most
/// [`ProjectPath::MAX_LEN`] bytes with names of at most
/// [`ProjectPath::MAX_NAME`]. Safe to join onto the project's directory.
/// [`ProjectPath::parse`] names a file or folder; [`ProjectPath::parse_any`]
/// also takes the project's root (`""`, `"."`), which is then empty.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct ProjectPath(String);

#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PathError {
    #[error("the path is empty")]
    Empty,
    #[error("the path contains a NUL byte")]
    Nul,
    #[error("the path contains a backslash; use `/`")]
    Backslash,
    #[error("the path is absolute; use a path relative to the project")]
    Absolute,
    #[error("the path leaves the project")]
    OutsideProject,
    #[error("the path is inside .git, which belongs to the IDE")]
    GitDirectory,
    #[error("the path names a directory, not a file")]
    Directory,
    #[error("the path is too long")]
    TooLong,
    #[error("a name in the path is too long")]
    NameTooLong,
}

impl ProjectPath {
    /// Longest accepted path, in bytes, and longest name in it.
    pub const MAX_LEN: usize = 4096;
    pub const MAX_NAME: usize = 255;

    /// Accepts `path` if it names a file or folder inside the project,
    /// resolving `.` and inner `..` components (`src/../a.js` is `a.js`).
    /// The root and paths ending in `/` are refused.
    pub fn parse(path: &str) -> Result<ProjectPath, PathError> {
        if path.is_empty() {
            return Err(PathError::Empty);
        }
        if path.ends_with('/') || path.ends_with("/.") || path.ends_with("/..") {
            check(path)?;
            return Err(PathError::Directory);
        }
        let parsed = ProjectPath::parse_any(path)?;
        if parsed.is_root() {
            return Err(if path.split('/').any(|p| p == "..") {
                PathError::OutsideProject
            } else {
                PathError::Directory
            });
        }
        Ok(parsed)
    }

    /// Like [`ProjectPath::parse`], but any place in the project: the root
    /// (`""`, `"."`, `"./"`) and a trailing `/` are accepted.
    pub fn parse_any(path: &str) -> Result<ProjectPath, PathError> {
        check(path)?;
        let mut parts: Vec<&str> = Vec::new();
        for part in path.split('/') {
            match part {
                "" | "." => {}
                ".." => {
                    if parts.pop().is_none() {
                        return Err(PathError::OutsideProject);
                    }
                }
                _ if part.eq_ignore_ascii_case(".git") => return Err(PathError::GitDirectory),
                _ if part.len() > Self::MAX_NAME => return Err(PathError::NameTooLong),
                _ => parts.push(part),
            }
        }
        Ok(ProjectPath(parts.join("/")))
    }

    /// The project's root.
    pub fn root() -> ProjectPath {
        ProjectPath(String::new())
    }

    /// The normalised path; empty for the root.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    pub fn is_root(&self) -> bool {
        self.0.is_empty()
    }
}

/// What is refused whatever the components are.
fn check(path: &str) -> Result<(), PathError> {
    if path.len() > ProjectPath::MAX_LEN {
        return Err(PathError::TooLong);
    }
    if path.contains('\0') {
        return Err(PathError::Nul);
    }
    if path.contains('\\') {
        return Err(PathError::Backslash);
    }
    if path.starts_with('/') {
        return Err(PathError::Absolute);
    }
    Ok(())
}

impl fmt::Display for ProjectPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(if self.0.is_empty() { "." } else { &self.0 })
    }
}

impl TryFrom<String> for ProjectPath {
    type Error = PathError;
    fn try_from(s: String) -> Result<ProjectPath, PathError> {
        ProjectPath::parse(&s)
    }
}

impl From<ProjectPath> for String {
    fn from(path: ProjectPath) -> String {
        path.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(path: &str, expect: Result<&str, PathError>) {
        assert_eq!(
            ProjectPath::parse(path).as_ref().map(ProjectPath::as_str),
            expect.as_ref().map(|s| *s),
            "{path:?}"
        );
    }

    #[test]
    fn paths_inside_the_project_are_accepted_and_normalised() {
        check("src/App.jsx", Ok("src/App.jsx"));
        check("package.json", Ok("package.json"));
        check("./src//a/./b.js", Ok("src/a/b.js"));
        check("src/../index.html", Ok("index.html"));
        check("a/b/../../c", Ok("c"));
        check(".gitignore", Ok(".gitignore"));
        check(".github/workflows/ci.yml", Ok(".github/workflows/ci.yml"));
        check("ünï cödé/日本.txt", Ok("ünï cödé/日本.txt"));
        check("..foo/bar", Ok("..foo/bar"));
    }

    #[test]
    fn unsafe_paths_are_refused() {
        check("", Err(PathError::Empty));
        check("a\0b", Err(PathError::Nul));
        check("src\\App.jsx", Err(PathError::Backslash));
        check("/etc/passwd", Err(PathError::Absolute));
        check("../outside", Err(PathError::OutsideProject));
        check("a/../../outside", Err(PathError::OutsideProject));
        check("a/..", Err(PathError::Directory));
        check("..", Err(PathError::OutsideProject));
        check(".git/config", Err(PathError::GitDirectory));
        check(".git", Err(PathError::GitDirectory));
        check("sub/.GIT/hooks/pre-commit", Err(PathError::GitDirectory));
        check("src/", Err(PathError::Directory));
        check(".", Err(PathError::Directory));
        check("./", Err(PathError::Directory));
        check("\\\\server\\share", Err(PathError::Backslash));
        check(&"x".repeat(256), Err(PathError::NameTooLong));
        check(&"a/".repeat(2100), Err(PathError::TooLong));
    }

    fn check_any(path: &str, expect: Result<&str, PathError>) {
        assert_eq!(
            ProjectPath::parse_any(path)
                .as_ref()
                .map(ProjectPath::as_str),
            expect.as_ref().map(|s| *s),
            "{path:?}"
        );
    }

    #[test]
    fn any_place_includes_the_root_and_folders_ending_in_a_slash() {
        check_any("", Ok(""));
        check_any(".", Ok(""));
        check_any("./", Ok(""));
        check_any("src/./a/", Ok("src/a"));
        check_any("a/..", Ok(""));
        check_any("src/App.jsx", Ok("src/App.jsx"));
        assert!(ProjectPath::parse_any(".").unwrap().is_root());
        assert_eq!(ProjectPath::root().to_string(), ".");
    }

    #[test]
    fn any_place_refuses_what_a_file_path_refuses() {
        check_any("..", Err(PathError::OutsideProject));
        check_any("src/../../etc/passwd", Err(PathError::OutsideProject));
        check_any("/etc/passwd", Err(PathError::Absolute));
        check_any("a\0b", Err(PathError::Nul));
        check_any("sub/.git/config", Err(PathError::GitDirectory));
        check_any(".Git", Err(PathError::GitDirectory));
        check_any("a\\b", Err(PathError::Backslash));
    }

    #[test]
    fn a_path_read_from_json_is_checked() {
        let ok: ProjectPath = serde_json::from_str("\"src/./a.js\"").unwrap();
        assert_eq!(ok.as_str(), "src/a.js");
        assert!(serde_json::from_str::<ProjectPath>("\"../a.js\"").is_err());
    }
}
