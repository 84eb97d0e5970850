use std::path::{Component, Path, PathBuf};

use super::*;

/// An executable script at `dir/name` that creates `marker` when run.
fn planted(dir: &Path, name: &str, marker: &Path) {
    let script = dir.join(name);
    std::fs::write(
        &script,
        format!("#!/bin/sh\ntouch '{}'\necho planted\n", marker.display()),
    )
    .unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// `dir` as a path relative to the current directory, as a relative `PATH`
/// entry would name it.
fn relative_to_cwd(dir: &Path) -> PathBuf {
    let cwd = std::env::current_dir().unwrap();
    let mut relative = PathBuf::new();
    for component in cwd.components() {
        if matches!(component, Component::Normal(_)) {
            relative.push("..");
        }
    }
    relative.join(dir.strip_prefix("/").unwrap())
}

fn search(path: &str) -> SearchPath {
    SearchPath::new(Some(OsStr::new(path)))
}

#[test]
fn a_project_file_named_git_is_never_run_from_a_relative_path_entry() {
    let project = tempfile::tempdir().unwrap();
    let marker = project.path().join("marker");
    planted(project.path(), "git", &marker);
    let relative = relative_to_cwd(project.path());
    assert!(
        relative.join("git").is_file(),
        "the relative entry must reach the planted file: {relative:?}"
    );
    // The planted directory as an empty entry, `.`, `./` and a relative
    // path, all before the system's directories.
    let path = format!(
        ":.:./:{}:{}",
        relative.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let search = search(&path);
    let git = search.find("git").unwrap();
    assert!(git.is_absolute(), "{git:?}");
    assert!(!git.starts_with(project.path()), "{git:?}");
    // Run as checkpoints run it: in the project, with the sanitised PATH.
    let output = std::process::Command::new(&git)
        .arg("--version")
        .current_dir(project.path())
        .env_clear()
        .env("PATH", search.to_env())
        .output()
        .unwrap();
    let printed = String::from_utf8_lossy(&output.stdout);
    assert!(printed.starts_with("git version"), "{printed}");
    assert!(!marker.exists(), "the project's `git` ran");
}

#[test]
fn empty_dot_and_relative_path_entries_are_ignored() {
    let search = search(":.:bin:./node_modules/.bin:../x:/opt/tools/bin::/usr/bin:");
    let dirs: Vec<&Path> = search.dirs().iter().map(PathBuf::as_path).collect();
    assert!(dirs.iter().all(|dir| dir.is_absolute()), "{dirs:?}");
    assert_eq!(dirs[0], Path::new("/opt/tools/bin"));
    assert_eq!(dirs[1], Path::new("/usr/bin"));
    assert_eq!(
        dirs.iter().filter(|d| **d == Path::new("/usr/bin")).count(),
        1,
        "each directory once: {dirs:?}"
    );
    let env = search.to_env().into_string().unwrap();
    assert!(env.starts_with("/opt/tools/bin:/usr/bin:"), "{env}");
    assert!(env.split(':').all(|entry| entry.starts_with('/')), "{env}");
}

#[test]
fn no_path_at_all_searches_the_system_directories() {
    let search = SearchPath::new(None);
    assert_eq!(
        search.dirs(),
        SYSTEM_DIRS.map(PathBuf::from).as_slice(),
        "{search:?}"
    );
    assert!(search.find("sh").unwrap().is_absolute());
}

#[test]
fn a_missing_program_is_an_error_naming_it() {
    let err = search("/nonexistent")
        .find("rivet-no-such-tool")
        .unwrap_err();
    assert!(
        matches!(&err, HostToolError::Missing { name, .. } if name == "rivet-no-such-tool"),
        "{err:?}"
    );
    let message = err.to_string();
    assert!(message.contains("`rivet-no-such-tool`"), "{message}");
    assert!(message.contains("/usr/bin"), "{message}");
}

#[test]
fn a_program_name_with_a_path_is_refused() {
    for name in ["", ".", "..", "./git", "../git", "bin/git", "/usr/bin/git"] {
        assert_eq!(
            search("/usr/bin").find(name),
            Err(HostToolError::NotAName(name.to_owned())),
            "{name}"
        );
    }
}

#[test]
fn a_file_that_is_not_executable_or_a_directory_is_skipped() {
    let dir = tempfile::tempdir().unwrap();
    let (plain, folder, good) = (
        dir.path().join("plain"),
        dir.path().join("folder"),
        dir.path().join("good"),
    );
    for d in [&plain, &folder, &good] {
        std::fs::create_dir(d).unwrap();
    }
    std::fs::write(plain.join("tool"), "#!/bin/sh\n").unwrap();
    std::fs::create_dir(folder.join("tool")).unwrap();
    planted(&good, "tool", &dir.path().join("unused"));
    let path = format!(
        "{}:{}:{}",
        plain.display(),
        folder.display(),
        good.display()
    );
    assert_eq!(search(&path).find("tool").unwrap(), good.join("tool"));
}

#[test]
fn the_ides_own_search_path_finds_git_by_an_absolute_path() {
    let git = find("git").unwrap();
    assert!(git.is_absolute(), "{git:?}");
    assert_eq!(find("git").unwrap(), git, "remembered");
    assert!(
        path_env()
            .to_string_lossy()
            .split(':')
            .all(|entry| entry.starts_with('/')),
        "{:?}",
        path_env()
    );
}
