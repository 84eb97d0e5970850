use std::path::Path;

use super::*;

fn repo(dir: &Path) -> Repo {
    std::fs::create_dir_all(dir.join("work")).unwrap();
    Repo::new(dir.join("checkpoints.git"), dir.join("work"))
}

fn write(dir: &Path, path: &str, content: &str) {
    let full = dir.join("work").join(path);
    std::fs::create_dir_all(full.parent().unwrap()).unwrap();
    std::fs::write(full, content).unwrap();
}

#[tokio::test]
async fn a_snapshot_commits_the_files_and_skips_dependencies_and_build_output() {
    let dir = tempfile::tempdir().unwrap();
    let repo = repo(dir.path());
    write(dir.path(), "index.html", "v1");
    write(dir.path(), "src/App.jsx", "app");
    write(dir.path(), "node_modules/react/index.js", "dep");
    write(dir.path(), "web/dist/bundle.js", "out");
    let commit = repo.snapshot("first").await.unwrap();
    assert_eq!(commit.len(), 40, "{commit}");
    let mut files = repo.files(&commit).await.unwrap();
    files.sort();
    assert_eq!(files, ["index.html", "src/App.jsx"]);
    assert_eq!(repo.read(&commit, "index.html").await.unwrap(), b"v1");
}

#[tokio::test]
async fn an_unchanged_work_tree_reuses_the_latest_commit() {
    let dir = tempfile::tempdir().unwrap();
    let repo = repo(dir.path());
    write(dir.path(), "a.txt", "a");
    let first = repo.snapshot("one").await.unwrap();
    assert!(!repo.changed().await.unwrap());
    assert_eq!(repo.snapshot("two").await.unwrap(), first);
    write(dir.path(), "a.txt", "b");
    assert!(repo.changed().await.unwrap());
    let second = repo.snapshot("three").await.unwrap();
    assert_ne!(second, first);
    assert_eq!(repo.head().await.unwrap(), Some(second));
}

#[tokio::test]
async fn changes_name_what_to_write_and_what_to_remove() {
    let dir = tempfile::tempdir().unwrap();
    let repo = repo(dir.path());
    write(dir.path(), "kept.txt", "same");
    write(dir.path(), "edited.txt", "old");
    let first = repo.snapshot("one").await.unwrap();
    write(dir.path(), "edited.txt", "new");
    write(dir.path(), "added later.txt", "x");
    let second = repo.snapshot("two").await.unwrap();
    let mut back = repo.changes(&second, &first).await.unwrap();
    back.sort_by_key(|c| format!("{c:?}"));
    assert_eq!(
        back,
        [
            Change::Remove("added later.txt".into()),
            Change::Write("edited.txt".into())
        ]
    );
}

#[tokio::test]
async fn the_host_users_git_configuration_and_hooks_do_not_apply() {
    let dir = tempfile::tempdir().unwrap();
    let repo = repo(dir.path());
    write(dir.path(), "a.txt", "a");
    repo.ensure().await.unwrap();
    // A hook that would fail every commit, and a signing setting, in the
    // repository's own configuration: neither is used.
    let hooks = dir.path().join("checkpoints.git/hooks");
    std::fs::create_dir_all(&hooks).unwrap();
    std::fs::write(hooks.join("pre-commit"), "#!/bin/sh\nexit 1\n").unwrap();
    let commit = repo.snapshot("one").await.unwrap();
    let author = repo
        .run_line(&["log", "-1", "--format=%an <%ae>", &commit])
        .await
        .unwrap();
    assert_eq!(author, "Rivet <rivet@localhost>");
}

#[tokio::test]
async fn a_missing_repository_or_commit_fails_verification() {
    let dir = tempfile::tempdir().unwrap();
    let repo = repo(dir.path());
    let missing = repo
        .verify("0123456789012345678901234567890123456789")
        .await;
    assert!(
        matches!(missing, Err(GitError::Failed { .. })),
        "{missing:?}"
    );
    write(dir.path(), "a.txt", "a");
    let commit = repo.snapshot("one").await.unwrap();
    repo.verify(&commit).await.unwrap();
    std::fs::remove_dir_all(dir.path().join("checkpoints.git/objects")).unwrap();
    std::fs::create_dir_all(dir.path().join("checkpoints.git/objects")).unwrap();
    let err = repo.verify(&commit).await.unwrap_err();
    assert!(err.to_string().contains("checkpoints.git"), "{err}");
}

#[tokio::test]
async fn a_clone_holds_every_checkpoint() {
    let dir = tempfile::tempdir().unwrap();
    let repo = repo(dir.path());
    write(dir.path(), "a.txt", "a");
    let commit = repo.snapshot("one").await.unwrap();
    std::fs::create_dir_all(dir.path().join("fork")).unwrap();
    let fork = repo
        .clone_to(&dir.path().join("fork.git"), &dir.path().join("fork"))
        .await
        .unwrap();
    assert_eq!(fork.read(&commit, "a.txt").await.unwrap(), b"a");
    assert_eq!(fork.head().await.unwrap(), Some(commit));
}

#[test]
fn name_status_output_that_is_not_understood_is_an_error() {
    assert_eq!(
        parse_name_status(b"M\0a b\0D\0c\0").unwrap(),
        [Change::Write("a b".into()), Change::Remove("c".into())]
    );
    assert!(parse_name_status(b"M\0").is_err());
    assert!(parse_name_status(b"X\0a\0").is_err());
}
