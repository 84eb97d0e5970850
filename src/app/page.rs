//! Which page the path asks for: the projects at `/`, the IDE at
//! `/p/{project}`, the import page at `/import`; anything else is "not found".

use crate::runtime::project::ProjectId;

/// What the path names: a project's IDE, or nothing the app knows.
#[derive(Clone, Debug, PartialEq)]
pub enum Page {
    /// `/p/{project}` with a well-formed project id.
    Project(ProjectId),
    /// `/p/{something}` that is no project id.
    BadProject,
    /// `/`: the projects.
    Projects,
    /// `/import`: bring a project in.
    Import,
    /// Any other path.
    NotFound,
}

/// The page `path` (without query or fragment) asks for.
pub fn page_for(path: &str) -> Page {
    if path == "/" {
        return Page::Projects;
    }
    if matches!(path, "/import" | "/import/") {
        return Page::Import;
    }
    let rest = path
        .strip_prefix("/p/")
        .map(|r| r.strip_suffix('/').unwrap_or(r));
    match rest {
        Some(segment) if !segment.is_empty() && !segment.contains('/') => {
            match ProjectId::parse(segment) {
                Ok(project) => Page::Project(project),
                Err(_) => Page::BadProject,
            }
        }
        _ => Page::NotFound,
    }
}

/// The path of the page being rendered: the request's on the server, the
/// location's in the browser.
pub fn current_path() -> String {
    #[cfg(feature = "ssr")]
    {
        crate::server::http::request_path()
    }
    #[cfg(not(feature = "ssr"))]
    {
        leptos::prelude::window()
            .location()
            .pathname()
            .unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_project_path_names_its_project() {
        let Page::Project(project) = page_for("/p/demo") else {
            panic!("not a project page");
        };
        assert_eq!(project.to_string(), "demo");
        assert!(matches!(page_for("/p/demo/"), Page::Project(_)));
    }

    #[test]
    fn a_project_path_with_a_bad_id_is_a_bad_project() {
        assert_eq!(page_for("/p/..%2F"), Page::BadProject);
    }

    #[test]
    fn the_import_path_is_the_import_page() {
        assert_eq!(page_for("/import"), Page::Import);
        assert_eq!(page_for("/import/x"), Page::NotFound);
    }

    #[test]
    fn other_paths_are_not_found() {
        assert_eq!(page_for("/"), Page::Projects);
        for path in ["/p/", "/p", "/p/a/b", "/q/demo", ""] {
            assert_eq!(page_for(path), Page::NotFound, "{path}");
        }
    }
}
