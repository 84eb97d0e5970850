//! How much disk a project's folders take: allocated blocks (`st_blocks *
//! 512`), every entry at least one block, hard links once, symlinks never
//! followed (the walk of `dirs.rs`). The walk stops as soon as the count
//! passes the quota, so its cost is bounded by the quota, not by the tree.

use std::collections::HashSet;
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use nix::sys::stat::SFlag;

use super::super::dirs::{Walked, walk_no_follow};

/// What an entry costs at least: an inode, and on most file systems a
/// block. Without this, a flood of empty files or symlinks (no blocks)
/// would cost nothing and could make the walk as long as the project likes.
pub const MIN_ENTRY_BYTES: u64 = 4096;
/// Deepest folder the walk enters. It holds a descriptor per level, so a
/// deeper tree would cost the IDE descriptors the project chooses; such a
/// tree cannot be measured, and counts as over the quota.
pub const MAX_DEPTH: usize = 128;

/// One walk at a time in the whole IDE: each holds descriptors and a core.
static WALKS: Mutex<()> = Mutex::new(());

/// The bytes counted, and whether the count stopped early because it had
/// passed the limit (so the real usage is larger still).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Usage {
    pub bytes: u64,
    pub over: bool,
}

#[derive(Debug, thiserror::Error)]
pub enum UsageError {
    #[error("{path} is nested deeper than {} folders", MAX_DEPTH)]
    TooDeep { path: String },
    #[error("{root}: {source}")]
    Unreadable {
        root: String,
        source: std::io::Error,
    },
}

/// Counts what `roots` (and everything below them) take, up to just past
/// `limit` bytes. A root that does not exist counts nothing.
pub fn measure(roots: &[PathBuf], limit: u64) -> Result<Usage, UsageError> {
    let _one_at_a_time = WALKS.lock().unwrap_or_else(|e| e.into_inner());
    let mut count = Count {
        limit,
        bytes: 0,
        linked: HashSet::new(),
        too_deep: None,
    };
    for root in roots {
        measure_root(root, &mut count)?;
        if count.bytes > limit {
            break;
        }
    }
    if let Some(path) = count.too_deep {
        return Err(UsageError::TooDeep { path });
    }
    Ok(Usage {
        bytes: count.bytes,
        over: count.bytes > limit,
    })
}

struct Count {
    limit: u64,
    bytes: u64,
    /// Files with several names, counted under the first.
    linked: HashSet<(u64, u64)>,
    too_deep: Option<String>,
}

fn measure_root(root: &Path, count: &mut Count) -> Result<(), UsageError> {
    let walked = walk_no_follow(root, &mut |entry| Ok(count.add(entry)));
    match walked {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound && !root.exists() => Ok(()),
        Err(source) => Err(UsageError::Unreadable {
            root: root.display().to_string(),
            source,
        }),
        Ok(()) => Ok(()),
    }
}

impl Count {
    fn add(&mut self, entry: &Walked<'_>) -> ControlFlow<()> {
        let stat = &entry.stat;
        let kind = SFlag::from_bits_truncate(stat.st_mode & SFlag::S_IFMT.bits());
        if kind == SFlag::S_IFDIR && entry.path.components().count() >= MAX_DEPTH {
            self.too_deep = Some(entry.path.display().to_string());
            return ControlFlow::Break(());
        }
        let once = kind == SFlag::S_IFDIR
            || stat.st_nlink <= 1
            || self.linked.insert((stat.st_dev, stat.st_ino));
        if once {
            let allocated = u64::try_from(stat.st_blocks)
                .unwrap_or(0)
                .saturating_mul(512);
            self.bytes = self.bytes.saturating_add(allocated.max(MIN_ENTRY_BYTES));
        }
        if self.bytes > self.limit {
            ControlFlow::Break(())
        } else {
            ControlFlow::Continue(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    const MIB: u64 = 1024 * 1024;

    fn write(path: &Path, bytes: usize) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, vec![7u8; bytes]).unwrap();
    }

    fn roots(dir: &tempfile::TempDir) -> Vec<PathBuf> {
        vec![dir.path().join("workspace"), dir.path().join("home")]
    }

    #[test]
    fn allocated_blocks_of_every_folder_are_counted_node_modules_included() {
        let dir = tempfile::tempdir().unwrap();
        write(&dir.path().join("workspace/src/App.jsx"), 100_000);
        write(
            &dir.path().join("workspace/node_modules/a/big.js"),
            2_000_000,
        );
        write(&dir.path().join("home/.cache/x"), 1_000_000);
        let usage = measure(&roots(&dir), u64::MAX).unwrap();
        assert!(!usage.over);
        assert!(usage.bytes >= 3_100_000, "{usage:?}");
        assert!(usage.bytes < 3_100_000 + 64 * 4096, "{usage:?}");
    }

    #[test]
    fn a_sparse_file_counts_what_it_allocates_not_its_length() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("workspace")).unwrap();
        let file = std::fs::File::create(dir.path().join("workspace/sparse")).unwrap();
        file.set_len(1 << 40).unwrap();
        let usage = measure(&roots(&dir), 16 * MIB).unwrap();
        assert!(!usage.over, "{usage:?}");
    }

    #[test]
    fn the_quota_is_measured_without_following_symlinks() {
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        write(&outside.path().join("huge"), 4 * MIB as usize);
        std::fs::create_dir_all(dir.path().join("workspace")).unwrap();
        std::os::unix::fs::symlink(outside.path(), dir.path().join("workspace/out")).unwrap();
        std::os::unix::fs::symlink(
            outside.path().join("huge"),
            dir.path().join("workspace/huge"),
        )
        .unwrap();
        let usage = measure(&roots(&dir), 2 * MIB).unwrap();
        assert!(!usage.over, "{usage:?}");
        assert!(usage.bytes < 64 * 1024, "{usage:?}");
    }

    #[test]
    fn a_symlink_loop_is_counted_once_and_ends() {
        let dir = tempfile::tempdir().unwrap();
        let workspace = dir.path().join("workspace");
        std::fs::create_dir_all(workspace.join("a")).unwrap();
        std::os::unix::fs::symlink("..", workspace.join("a/up")).unwrap();
        std::os::unix::fs::symlink("loop", workspace.join("loop")).unwrap();
        let usage = measure(&roots(&dir), u64::MAX).unwrap();
        assert!(usage.bytes <= 8 * MIN_ENTRY_BYTES, "{usage:?}");
    }

    #[test]
    fn hard_links_to_one_file_count_once() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("workspace/one");
        write(&file, 2 * MIB as usize);
        for i in 0..10 {
            std::fs::hard_link(&file, dir.path().join(format!("workspace/link{i}"))).unwrap();
        }
        let usage = measure(&roots(&dir), 3 * MIB).unwrap();
        assert!(!usage.over, "{usage:?}");
    }

    #[test]
    fn a_huge_tree_stops_being_counted_once_over_the_quota() {
        let dir = tempfile::tempdir().unwrap();
        let workspace = dir.path().join("workspace");
        for d in 0..20 {
            let sub = workspace.join(format!("d{d}"));
            std::fs::create_dir_all(&sub).unwrap();
            for f in 0..500 {
                // Empty files: no blocks, yet each one counts.
                std::fs::File::create(sub.join(format!("f{f}"))).unwrap();
            }
        }
        let limit = 100 * MIN_ENTRY_BYTES;
        let started = Instant::now();
        let usage = measure(&roots(&dir), limit).unwrap();
        assert!(usage.over, "{usage:?}");
        assert!(usage.bytes <= limit + MIN_ENTRY_BYTES, "{usage:?}");
        assert!(started.elapsed() < Duration::from_secs(1));
    }

    #[test]
    fn a_tree_deeper_than_the_walk_enters_cannot_be_measured() {
        let dir = tempfile::tempdir().unwrap();
        let mut deep = dir.path().join("workspace");
        for _ in 0..MAX_DEPTH + 2 {
            deep.push("d");
        }
        std::fs::create_dir_all(&deep).unwrap();
        let error = measure(&roots(&dir), u64::MAX).unwrap_err();
        assert!(matches!(error, UsageError::TooDeep { .. }), "{error}");
        assert!(error.to_string().contains("deeper than 128"), "{error}");
    }

    #[test]
    fn missing_folders_count_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let usage = measure(&roots(&dir), 0).unwrap();
        assert_eq!(
            usage,
            Usage {
                bytes: 0,
                over: false
            }
        );
    }

    #[test]
    fn a_folder_the_ide_cannot_read_is_an_error_naming_it() {
        if nix::unistd::geteuid().is_root() {
            return; // root reads every folder
        }
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let closed = dir.path().join("workspace/closed");
        write(&closed.join("x"), 10);
        std::fs::set_permissions(&closed, std::fs::Permissions::from_mode(0o000)).unwrap();
        let error = measure(&roots(&dir), u64::MAX).unwrap_err();
        std::fs::set_permissions(&closed, std::fs::Permissions::from_mode(0o700)).unwrap();
        assert!(error.to_string().contains("closed"), "{error}");
    }
}
