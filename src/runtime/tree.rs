//! Which folders of a project the IDE never looks into: dependencies,
//! version control, build output and caches. One rule for every listing
//! (the sandbox helper's, the session's file list, the file watcher) and for
//! the files the system prompt shows the model.
//!
//! Such a folder is still listed itself (the model may need to know that
//! `node_modules` exists), but nothing inside it is: a skipped folder holds
//! thousands of files nobody edits by hand, and walking it would make every
//! listing slow and large.

/// Names of the folders skipped, at any depth.
pub const SKIPPED_DIRS: &[&str] = &[
    // Dependencies.
    "node_modules",
    "bower_components",
    // Version control.
    ".git",
    ".hg",
    ".svn",
    // Build output.
    "dist",
    "build",
    ".next",
    ".nuxt",
    ".output",
    ".svelte-kit",
    ".vercel",
    // Caches and reports.
    ".cache",
    ".vite",
    ".parcel-cache",
    ".turbo",
    "coverage",
];

/// Whether a folder with this name is skipped (listed, never entered).
pub fn is_skipped_dir(name: &str) -> bool {
    SKIPPED_DIRS.contains(&name)
}

/// Whether a project-relative path lies inside a skipped folder: some folder
/// above it is skipped. A skipped folder itself is not inside one.
pub fn is_inside_skipped_dir(path: &str) -> bool {
    let mut parts: Vec<&str> = path.split('/').filter(|p| !p.is_empty()).collect();
    parts.pop();
    parts.into_iter().any(is_skipped_dir)
}

/// Whether a project-relative path is a skipped folder or lies inside one.
pub fn is_skipped_path(path: &str) -> bool {
    path.split('/').any(is_skipped_dir)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dependencies_build_output_and_caches_are_skipped_at_any_depth() {
        for name in ["node_modules", ".git", "dist", "build", ".next", ".cache"] {
            assert!(is_skipped_dir(name), "{name}");
        }
        for name in ["src", "public", "builds", "node_modules2", "Dist", ""] {
            assert!(!is_skipped_dir(name), "{name}");
        }
        for (path, inside) in [
            ("node_modules/react/index.js", true),
            ("packages/web/node_modules/x/y.js", true),
            ("web/dist/a.js", true),
            (".next/cache/x", true),
            ("node_modules", false),
            ("web/dist", false),
            ("src/App.jsx", false),
            // A file may bear a skipped folder's name.
            ("scripts/build", false),
            ("src/build.js", false),
        ] {
            assert_eq!(is_inside_skipped_dir(path), inside, "{path}");
        }
        assert!(is_skipped_path("web/dist"));
        assert!(is_skipped_path("node_modules/x"));
        assert!(!is_skipped_path("src/distance.js"));
    }
}
