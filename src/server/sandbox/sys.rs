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
}
