//! Repositories nested in the project: a folder where `git init` ran, one
//! whose `.git` is a file (`gitdir: …`, as a worktree or an absorbed
//! submodule has), a submodule's checkout. `git add` does not look inside
//! them: it records a gitlink (a commit id, not the files) or fails when the
//! nested repository has no commit yet. So staging is done in two parts:
//!
//! 1. git's own walk (`add -A`) for everything except the nested
//!    repositories it reports (`ls-files --others` names them `dir/`);
//! 2. the files inside each nested repository, listed by git with that
//!    folder as the work tree and an empty index (its own `.gitignore` and
//!    the checkpoint repository's `info/exclude` apply, and git never lists
//!    a `.git`), less those the project's outer `.gitignore` rules ignore
//!    (`check-ignore`), added one by one with `update-index`, which does not
//!    stop at nested repositories.
//!
//! Once its files are in the index, git walks into the folder like any
//! other on the next snapshot. A `.git` is never recorded (git refuses the
//! name, and the lists below leave it out), so a restore never writes or
//! removes one.

use std::path::Path;

use super::{GitError, Repo};

/// The mode git gives a gitlink in the index.
const GITLINK_MODE: &[u8] = b"160000";

impl Repo {
    /// Stages the work tree as it is now, nested repositories' files included.
    pub(super) async fn stage(&self) -> Result<(), GitError> {
        self.drop_gitlinks().await?;
        let nested = self.nested_repositories().await?;
        let excluded: Vec<String> = nested
            .iter()
            .map(|dir| format!(":(exclude,literal){dir}"))
            .collect();
        let mut add = vec!["add", "-A", "--", "."];
        add.extend(excluded.iter().map(String::as_str));
        self.run(&add).await?;
        let mut files = Vec::new();
        for dir in nested {
            files.extend(self.nested_files(dir).await?);
        }
        let files = self.not_ignored(files).await?;
        self.update_index(&["--add", "--replace"], &files).await
    }

    /// Gitlinks an older checkpoint recorded leave the index, so the folder
    /// is staged as files.
    async fn drop_gitlinks(&self) -> Result<(), GitError> {
        let out = self.run(&["ls-files", "-z", "--stage"]).await?;
        let gitlinks: Vec<String> = entries(&out)
            .filter(|entry| entry.as_bytes().starts_with(GITLINK_MODE))
            .filter_map(|entry| entry.split_once('\t').map(|(_, path)| path.to_owned()))
            .collect();
        self.update_index(&["--force-remove"], &gitlinks).await
    }

    /// The nested repositories git's walk of the work tree stops at.
    async fn nested_repositories(&self) -> Result<Vec<String>, GitError> {
        let out = self
            .run(&["ls-files", "-z", "--others", "--exclude-standard"])
            .await?;
        Ok(entries(&out)
            .filter_map(|entry| entry.strip_suffix('/').map(str::to_owned))
            .collect())
    }

    /// Every file under the nested repository `dir`, and under the
    /// repositories nested in it.
    async fn nested_files(&self, dir: String) -> Result<Vec<String>, GitError> {
        let mut files = Vec::new();
        let mut pending = vec![dir];
        while let Some(dir) = pending.pop() {
            for entry in self.untracked_in(&dir).await? {
                let path = format!("{dir}/{entry}");
                match path.strip_suffix('/') {
                    Some(deeper) => pending.push(deeper.to_owned()),
                    None if !names_a_git_dir(&path) => files.push(path),
                    None => {}
                }
            }
        }
        Ok(files)
    }

    /// What git lists in `dir` with `dir` as the work tree and an empty
    /// index (a path that never exists): every file not ignored.
    async fn untracked_in(&self, dir: &str) -> Result<Vec<String>, GitError> {
        let work_tree = self.work_tree.join(dir);
        let args = ["ls-files", "-z", "--others", "--exclude-standard"];
        let mut command = self.command(&args)?;
        command
            .env("GIT_WORK_TREE", &work_tree)
            .env("GIT_INDEX_FILE", self.git_dir.join("rivet-no-index"))
            .current_dir(&work_tree);
        let out = self.finish(command, &args, &[]).await?;
        Ok(entries(&out.stdout).map(str::to_owned).collect())
    }

    /// `files` less those the project's ignore rules (every `.gitignore`
    /// from the root down) leave out.
    async fn not_ignored(&self, files: Vec<String>) -> Result<Vec<String>, GitError> {
        if files.is_empty() {
            return Ok(files);
        }
        let args = ["check-ignore", "-z", "--stdin", "--no-index"];
        let command = self.command(&args)?;
        let out = self.finish(command, &args, &nul_list(&files)).await?;
        let ignored: Vec<&str> = entries(&out.stdout).collect();
        Ok(files
            .into_iter()
            .filter(|file| !ignored.contains(&file.as_str()))
            .collect())
    }

    /// `update-index <options> -z --stdin` over `paths` (nothing when empty).
    async fn update_index(&self, options: &[&str], paths: &[String]) -> Result<(), GitError> {
        if paths.is_empty() {
            return Ok(());
        }
        let mut args = vec!["update-index"];
        args.extend(options);
        args.extend(["-z", "--stdin"]);
        let command = self.command(&args)?;
        self.finish(command, &args, &nul_list(paths))
            .await
            .map(drop)
    }
}

/// Whether a path has a `.git` component, which is never recorded.
fn names_a_git_dir(path: &str) -> bool {
    Path::new(path)
        .components()
        .any(|part| part.as_os_str().eq_ignore_ascii_case(".git"))
}

/// The NUL-separated entries of git's `-z` output.
fn entries(out: &[u8]) -> impl Iterator<Item = &str> {
    out.split(|b| *b == 0)
        .filter(|entry| !entry.is_empty())
        .filter_map(|entry| std::str::from_utf8(entry).ok())
}

fn nul_list(paths: &[String]) -> Vec<u8> {
    let mut list = Vec::new();
    for path in paths {
        list.extend_from_slice(path.as_bytes());
        list.push(0);
    }
    list
}
