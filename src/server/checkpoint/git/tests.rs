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

/// A published site's pages branch: its `build/` and `dist/` folders are
/// the site's own files.
#[tokio::test]
async fn a_repo_with_every_folder_commits_build_output_too() {
    let dir = tempfile::tempdir().unwrap();
    let repo = repo(dir.path()).with_every_folder();
    write(dir.path(), "index.html", "site");
    write(dir.path(), "build/app.js", "app");
    write(dir.path(), "assets/dist/style.css", "css");
    let commit = repo.snapshot("pages").await.unwrap();
    let mut files = repo.files(&commit).await.unwrap();
    files.sort();
    assert_eq!(
        files,
        ["assets/dist/style.css", "build/app.js", "index.html"]
    );
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
async fn checkpoints_are_written_by_the_configured_author() {
    let dir = tempfile::tempdir().unwrap();
    let repo = repo(dir.path()).with_author(Author::new("Ada <L>", "ada@example.org\n"));
    write(dir.path(), "a.txt", "a");
    let commit = repo.snapshot("Build a clock\n\nbody").await.unwrap();
    let said = repo
        .run_line(&["log", "-1", "--format=%an <%ae> %cn|%s", &commit])
        .await
        .unwrap();
    assert_eq!(said, "Ada L <ada@example.org> Ada L|Build a clock");
    let fork = repo
        .clone_to(&dir.path().join("fork.git"), dir.path())
        .await
        .unwrap();
    write(dir.path(), "b.txt", "b");
    let next = fork.snapshot("two").await.unwrap();
    let author = fork
        .run_line(&["log", "-1", "--format=%an", &next])
        .await
        .unwrap();
    assert_eq!(author, "Ada L");
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

/// Runs the real git in `dir` as a person would (their own repositories,
/// not Rivet's).
fn git_in(dir: &Path, args: &[&str]) -> String {
    let output = std::process::Command::new("git")
        .args(["-c", "user.name=Person", "-c", "user.email=p@example.com"])
        .args([
            "-c",
            "init.defaultBranch=main",
            "-c",
            "protocol.file.allow=always",
        ])
        .args(args)
        .current_dir(dir)
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE")
        .env_remove("GIT_INDEX_FILE")
        .output()
        .unwrap();
    assert!(output.status.success(), "git {args:?}: {output:?}");
    String::from_utf8_lossy(&output.stdout).trim().to_owned()
}

/// A nested repository `sub` of the work tree with one committed and one
/// uncommitted file; `git init` gets `extra` (e.g. `--separate-git-dir`).
fn nested_repository(work: &Path, sub: &str, extra: &[&str]) {
    let mut init = vec!["init", "-q"];
    init.extend(extra);
    init.push(sub);
    git_in(work, &init);
    let dir = work.join(sub);
    std::fs::write(dir.join("committed.txt"), "committed v1").unwrap();
    git_in(&dir, &["add", "committed.txt"]);
    git_in(&dir, &["commit", "-q", "-m", "nested"]);
    std::fs::write(dir.join("uncommitted.txt"), "uncommitted").unwrap();
}

/// Puts checkpoint `to` back on disk, as a restore does through the
/// runtime: only the paths the checkpoints differ in are touched.
async fn restore_on_disk(repo: &Repo, work: &Path, from: &str, to: &str) -> Vec<Change> {
    let changes = repo.changes(from, to).await.unwrap();
    for change in &changes {
        match change {
            Change::Write(path) => {
                let full = work.join(path);
                std::fs::create_dir_all(full.parent().unwrap()).unwrap();
                std::fs::write(full, repo.read(to, path).await.unwrap()).unwrap();
            }
            Change::Remove(path) => std::fs::remove_file(work.join(path)).unwrap(),
        }
    }
    changes
}

fn tree_of(dir: &Path, commit: &str) -> String {
    git_in(
        dir,
        &[
            "--git-dir",
            "checkpoints.git",
            "rev-parse",
            &format!("{commit}^{{tree}}"),
        ],
    )
}

/// Checkpoints, a change and a restore with the nested repository `sub`;
/// `git_entry` is what its `.git` holds (a directory or a file), compared
/// before and after.
async fn nested_files_survive_a_restore(dir: &Path, sub: &str, git_entry: impl Fn() -> String) {
    let repo = repo(dir);
    let work = dir.join("work");
    write(dir, "index.html", "root");
    let nested_head = git_in(&work.join(sub), &["rev-parse", "HEAD"]);
    let before = git_entry();

    let first = repo.snapshot("one").await.unwrap();
    let files = repo.files(&first).await.unwrap();
    for wanted in ["committed.txt", "uncommitted.txt"] {
        assert!(files.contains(&format!("{sub}/{wanted}")), "{files:?}");
    }
    assert!(
        files
            .iter()
            .all(|f| f.split('/').all(|part| part != ".git")),
        "{files:?}"
    );
    assert_eq!(
        repo.read(&first, &format!("{sub}/committed.txt"))
            .await
            .unwrap(),
        b"committed v1"
    );

    write(dir, &format!("{sub}/committed.txt"), "committed v2");
    write(dir, &format!("{sub}/later.txt"), "later");
    std::fs::remove_file(work.join(sub).join("uncommitted.txt")).unwrap();
    let second = repo.snapshot("two").await.unwrap();
    assert_ne!(second, first);
    let files = repo.files(&second).await.unwrap();
    assert!(files.contains(&format!("{sub}/later.txt")), "{files:?}");
    assert!(
        !files.contains(&format!("{sub}/uncommitted.txt")),
        "{files:?}"
    );

    let changes = restore_on_disk(&repo, &work, &second, &first).await;
    assert!(
        changes.iter().all(|c| !format!("{c:?}").contains(".git\"")),
        "{changes:?}"
    );
    let read = |name: &str| std::fs::read_to_string(work.join(sub).join(name)).ok();
    assert_eq!(read("committed.txt").as_deref(), Some("committed v1"));
    assert_eq!(read("uncommitted.txt").as_deref(), Some("uncommitted"));
    assert_eq!(read("later.txt"), None);
    assert_eq!(git_entry(), before, "the nested .git is untouched");
    assert_eq!(git_in(&work.join(sub), &["rev-parse", "HEAD"]), nested_head);

    let third = repo.snapshot("after the restore").await.unwrap();
    assert_eq!(tree_of(dir, &third), tree_of(dir, &first));
}

/// What a `.git` directory holds that a restore could damage.
fn git_dir_state(dir: &Path) -> String {
    let head = std::fs::read_to_string(dir.join("HEAD")).unwrap();
    let index = std::fs::metadata(dir.join("index")).unwrap().len();
    format!("{head} {index}")
}

#[tokio::test]
async fn a_subfolder_where_git_init_ran_is_checkpointed_as_plain_files() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("work")).unwrap();
    nested_repository(&dir.path().join("work"), "sub", &[]);
    let nested_git = dir.path().join("work/sub/.git");
    nested_files_survive_a_restore(dir.path(), "sub", || git_dir_state(&nested_git)).await;
}

#[tokio::test]
async fn a_subfolder_with_a_git_file_pointing_elsewhere_is_checkpointed_as_plain_files() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("work")).unwrap();
    let elsewhere = dir.path().join("elsewhere.git");
    let separate = elsewhere.display().to_string();
    nested_repository(
        &dir.path().join("work"),
        "sub",
        &["--separate-git-dir", &separate],
    );
    let git_file = dir.path().join("work/sub/.git");
    assert!(git_file.is_file());
    nested_files_survive_a_restore(dir.path(), "sub", || {
        let pointer = std::fs::read_to_string(&git_file).unwrap();
        format!("{pointer} {}", git_dir_state(&elsewhere))
    })
    .await;
}

#[tokio::test]
async fn a_submodule_layout_is_checkpointed_as_plain_files() {
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path().join("work");
    std::fs::create_dir_all(&work).unwrap();
    // The project is a repository of its own, with `lib` checked out as a
    // submodule whose git directory is absorbed into `.git/modules/lib`.
    git_in(&work, &["init", "-q"]);
    let modules = work.join(".git/modules/lib");
    std::fs::create_dir_all(modules.parent().unwrap()).unwrap();
    nested_repository(
        &work,
        "lib",
        &["--separate-git-dir", &modules.display().to_string()],
    );
    std::fs::write(
        work.join(".gitmodules"),
        "[submodule \"lib\"]\n\tpath = lib\n\turl = ./lib\n",
    )
    .unwrap();
    let head = work.join(".git/HEAD");
    nested_files_survive_a_restore(dir.path(), "lib", || {
        let pointer = std::fs::read_to_string(work.join("lib/.git")).unwrap();
        let outer = std::fs::read_to_string(&head).unwrap();
        format!("{pointer} {} {outer}", git_dir_state(&modules))
    })
    .await;
    let repo = repo(dir.path());
    let head = repo.head().await.unwrap().unwrap();
    let files = repo.files(&head).await.unwrap();
    assert!(files.contains(&".gitmodules".to_owned()), "{files:?}");
}

#[tokio::test]
async fn files_a_projects_gitignore_leaves_out_stay_out_of_a_nested_repository() {
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path().join("work");
    std::fs::create_dir_all(&work).unwrap();
    nested_repository(&work, "sub", &[]);
    write(dir.path(), ".gitignore", "*.log\n");
    write(dir.path(), "sub/.gitignore", "secret.txt\n");
    write(dir.path(), "sub/debug.log", "log");
    write(dir.path(), "sub/secret.txt", "secret");
    write(dir.path(), "sub/node_modules/dep/index.js", "dep");
    write(dir.path(), "sub/deeper/inner.txt", "placeholder");
    nested_repository(&work.join("sub"), "deeper", &[]);
    let repo = repo(dir.path());
    let commit = repo.snapshot("one").await.unwrap();
    let mut files = repo.files(&commit).await.unwrap();
    files.sort();
    assert_eq!(
        files,
        [
            ".gitignore",
            "sub/.gitignore",
            "sub/committed.txt",
            "sub/deeper/committed.txt",
            "sub/deeper/inner.txt",
            "sub/deeper/uncommitted.txt",
            "sub/uncommitted.txt",
        ]
    );
}

#[tokio::test]
async fn a_gitlink_an_older_checkpoint_recorded_gives_way_to_the_files() {
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path().join("work");
    let repo = repo(dir.path());
    write(dir.path(), "a.txt", "a");
    nested_repository(&work, "sub", &[]);
    repo.ensure().await.unwrap();
    let nested_head = git_in(&work.join("sub"), &["rev-parse", "HEAD"]);
    // What `git add -A` did before nested repositories were handled.
    repo.run(&[
        "update-index",
        "--add",
        "--cacheinfo",
        &format!("160000,{nested_head},sub"),
    ])
    .await
    .unwrap();
    let tree = repo.run_line(&["write-tree"]).await.unwrap();
    let old = repo
        .run_line(&["commit-tree", &tree, "-m", "old"])
        .await
        .unwrap();
    let commit = repo.snapshot("one").await.unwrap();
    let mut files = repo.files(&commit).await.unwrap();
    files.sort();
    assert_eq!(files, ["a.txt", "sub/committed.txt", "sub/uncommitted.txt"]);
    // The older checkpoint's gitlink is neither a file nor a change to write.
    assert!(repo.files(&old).await.unwrap().is_empty());
    let back = repo.changes(&commit, &old).await.unwrap();
    assert!(
        back.iter().all(|c| matches!(c, Change::Remove(_))),
        "{back:?}"
    );
}
