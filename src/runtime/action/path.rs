//! Paths inside the project. The parser only strips the prefixes a model
//! uses for the project root; this is where a path is accepted or refused.

use std::fmt;

use serde::{Deserialize, Serialize};

/// A relative path that stays inside the project: `/`-separated, no empty,
/// `.` or `..` components, nothing under `.git`. Safe to join onto the
/// project's directory.
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
    #[error("the path is inside .git")]
    GitDirectory,
    #[error("the path names a directory, not a file")]
    Directory,
}

impl ProjectPath {
    /// Accepts `path` if it stays inside the project, resolving `.` and
    /// inner `..` components (`src/../a.js` is `a.js`).
    pub fn parse(path: &str) -> Result<ProjectPath, PathError> {
        if path.is_empty() {
            return Err(PathError::Empty);
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
        if path.ends_with('/') || path.ends_with("/.") || path.ends_with("/..") {
            return Err(PathError::Directory);
        }
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
                _ => parts.push(part),
            }
        }
        if parts.is_empty() {
            return Err(if path.split('/').any(|p| p == "..") {
                PathError::OutsideProject
            } else {
                PathError::Directory
            });
        }
        Ok(ProjectPath(parts.join("/")))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for ProjectPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
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
    }
}
