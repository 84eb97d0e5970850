//! Small Linux utilities shared by the IDE side and the sandbox's helper: descriptor
//! flags, terminal sizes and `/proc`.

use std::io;
use std::os::fd::{AsRawFd, BorrowedFd};
use std::path::Path;

use crate::runtime::host::PtySize;

/// Sets a terminal's size (on its master or its slave).
pub fn set_winsize(fd: BorrowedFd<'_>, size: PtySize) -> io::Result<()> {
    let winsize = libc::winsize {
        ws_row: size.rows,
        ws_col: size.cols,
        ws_xpixel: 0,
        ws_ypixel: 0,
    };
    // SAFETY: TIOCSWINSZ reads one `winsize` from the pointer, which is valid
    // for the duration of the call.
    let result = unsafe { libc::ioctl(fd.as_raw_fd(), libc::TIOCSWINSZ, &winsize) };
    if result < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Lets a descriptor survive `exec` (for the ones a child must inherit).
/// Only async-signal-safe calls, so it can run between fork and exec.
pub fn clear_cloexec(fd: i32) -> io::Result<()> {
    // SAFETY: fcntl on an integer descriptor has no memory effects.
    let flags = unsafe { libc::fcntl(fd, libc::F_GETFD) };
    if flags < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: as above.
    if unsafe { libc::fcntl(fd, libc::F_SETFD, flags & !libc::FD_CLOEXEC) } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// The fields of `/proc/<pid>/stat` the sandbox needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProcStat {
    pub pid: i32,
    pub state: char,
    pub ppid: i32,
    pub pgrp: i32,
    pub session: i32,
}

/// Parses a `/proc/<pid>/stat` line. The command name is in parentheses and
/// may itself contain spaces and parentheses, so fields are read after the
/// last `)`.
pub fn parse_stat(line: &str) -> Option<ProcStat> {
    let (head, tail) = line.rsplit_once(')')?;
    let pid = head.split_once(' ')?.0.trim().parse().ok()?;
    let mut fields = tail.split_whitespace();
    let state = fields.next()?.chars().next()?;
    let ppid = fields.next()?.parse().ok()?;
    let pgrp = fields.next()?.parse().ok()?;
    let session = fields.next()?.parse().ok()?;
    Some(ProcStat {
        pid,
        state,
        ppid,
        pgrp,
        session,
    })
}

/// Every process visible in `proc` (usually `/proc`).
pub fn processes(proc: &Path) -> Vec<ProcStat> {
    let Ok(dir) = std::fs::read_dir(proc) else {
        return Vec::new();
    };
    dir.filter_map(Result::ok)
        .filter(|e| {
            e.file_name()
                .to_str()
                .is_some_and(|n| n.bytes().all(|b| b.is_ascii_digit()))
        })
        .filter_map(|e| std::fs::read_to_string(e.path().join("stat")).ok())
        .filter_map(|line| parse_stat(&line))
        .collect()
}

/// The live (not zombie) processes of the session or process group `leader`.
pub fn session_members(leader: i32) -> Vec<ProcStat> {
    processes(Path::new("/proc"))
        .into_iter()
        .filter(|p| (p.session == leader || p.pgrp == leader) && p.state != 'Z')
        .collect()
}

/// `root` and every process below it.
pub fn descendants(root: i32, all: &[ProcStat]) -> Vec<i32> {
    let mut found = vec![root];
    let mut i = 0;
    while i < found.len() {
        let parent = found[i];
        found.extend(all.iter().filter(|p| p.ppid == parent).map(|p| p.pid));
        i += 1;
    }
    found
}

/// A hold on a sandbox's pid namespace, taken from the host when the sandbox
/// starts. While the hold lasts, the namespace's identity (the device and
/// inode of `/proc/<pid>/ns/pid`) cannot pass to a new namespace, so its
/// members can be told apart from every other process even after its init
/// is gone.
pub struct PidNamespace {
    _hold: std::fs::File,
    dev: u64,
    ino: u64,
}

impl PidNamespace {
    /// The pid namespace that host process `pid` lives in.
    pub fn of(pid: i32) -> io::Result<PidNamespace> {
        use std::os::unix::fs::MetadataExt;
        let hold = std::fs::File::open(format!("/proc/{pid}/ns/pid"))?;
        let meta = hold.metadata()?;
        Ok(PidNamespace {
            _hold: hold,
            dev: meta.dev(),
            ino: meta.ino(),
        })
    }

    /// The live processes of the namespace, by their pids in `proc`.
    pub fn members(&self, proc: &Path) -> Vec<i32> {
        use std::os::unix::fs::MetadataExt;
        processes(proc)
            .into_iter()
            .filter(|p| p.state != 'Z')
            .filter(|p| {
                std::fs::metadata(proc.join(p.pid.to_string()).join("ns/pid"))
                    .is_ok_and(|m| m.dev() == self.dev && m.ino() == self.ino)
            })
            .map(|p| p.pid)
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(line: &str, expect: Option<(i32, char, i32, i32, i32)>) {
        let got = parse_stat(line).map(|s| (s.pid, s.state, s.ppid, s.pgrp, s.session));
        assert_eq!(got, expect, "{line:?}");
    }

    #[test]
    fn stat_lines_parse_even_with_odd_names() {
        check(
            "42 (bash) S 1 42 42 34816 42 4194560",
            Some((42, 'S', 1, 42, 42)),
        );
        check("7 (a b) c) R 3 7 5 0 -1", Some((7, 'R', 3, 7, 5)));
        check("9 ((sd-pam)) Z 1 9 9 0", Some((9, 'Z', 1, 9, 9)));
        check("garbage", None);
        check("", None);
    }

    #[test]
    fn descendants_follow_parents() {
        let stat = |pid, ppid| ProcStat {
            pid,
            state: 'S',
            ppid,
            pgrp: pid,
            session: pid,
        };
        let all = [
            stat(1, 0),
            stat(10, 1),
            stat(11, 10),
            stat(12, 11),
            stat(20, 1),
        ];
        assert_eq!(descendants(10, &all), vec![10, 11, 12]);
        assert_eq!(descendants(20, &all), vec![20]);
    }

    #[test]
    fn this_process_is_listed() {
        let me = std::process::id() as i32;
        let all = processes(Path::new("/proc"));
        assert!(all.iter().any(|p| p.pid == me));
    }

    #[test]
    fn a_pid_namespace_lists_its_members_and_no_other_process() {
        let me = std::process::id() as i32;
        let ours = PidNamespace::of(me).unwrap();
        let members = ours.members(Path::new("/proc"));
        assert!(members.contains(&me), "{members:?}");
        // A child in a pid namespace of its own is not a member of ours, and
        // is the only member of its own.
        let Ok(mut child) = std::process::Command::new("unshare")
            .args([
                "--pid",
                "--fork",
                "--kill-child",
                "--map-root-user",
                "sleep",
                "30",
            ])
            .spawn()
        else {
            return;
        };
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        let inner = loop {
            let all = processes(Path::new("/proc"));
            let found = descendants(child.id() as i32, &all)
                .into_iter()
                .skip(1)
                .find(|pid| PidNamespace::of(*pid).is_ok_and(|ns| ns.ino != ours.ino));
            if let Some(pid) = found {
                break Some(pid);
            }
            if std::time::Instant::now() > deadline || child.try_wait().ok().flatten().is_some() {
                break None;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        };
        let inner = inner.expect("unshare started no process in a namespace of its own");
        let theirs = PidNamespace::of(inner).unwrap();
        assert_eq!(theirs.members(Path::new("/proc")), vec![inner]);
        assert!(!ours.members(Path::new("/proc")).contains(&inner));
        let _ = child.kill();
        let _ = child.wait();
    }
}
