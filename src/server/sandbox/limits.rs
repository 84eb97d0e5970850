//! The sandbox's resource limits: what the configuration asks for, the
//! rlimits that enforce it, and, when a command fails, which limit it ran
//! into, in words that name the setting to change.

use std::time::Duration;

use super::wire::Rlimits;
use crate::runtime::host::{ExitStatus, Limit};
use crate::server::config::SandboxConfig;

const MIB: u64 = 1024 * 1024;
const SIGXCPU: i32 = libc::SIGXCPU;
const SIGXFSZ: i32 = libc::SIGXFSZ;

/// The limits of one sandbox, as `[sandbox]` sets them; 0 means none.
#[derive(Debug, Clone, PartialEq)]
pub struct Limits(SandboxConfig);

impl From<&SandboxConfig> for Limits {
    fn from(config: &SandboxConfig) -> Limits {
        Limits(config.clone())
    }
}

fn some(n: u64) -> Option<u64> {
    (n > 0).then_some(n)
}

/// Lower-case fragments of output that mean a limit was hit, checked only
/// when a command failed. Order matters: the first match wins.
const MARKERS: &[(Limit, &str)] = &[
    (Limit::Memory, "javascript heap out of memory"),
    (Limit::Memory, "fatal process out of memory"),
    (Limit::Memory, "array buffer allocation failed"),
    (Limit::Memory, "failed to reserve virtual memory"),
    (Limit::Memory, "cannot allocate memory"),
    (Limit::Memory, "std::bad_alloc"),
    (Limit::Memory, "memoryerror"),
    (Limit::Memory, "out of memory"),
    (Limit::Memory, "memory allocation of"),
    (Limit::Processes, "fork: retry"),
    (Limit::Processes, "fork: resource temporarily unavailable"),
    (Limit::Processes, "spawn eagain"),
    (Limit::Processes, " eagain"),
    (Limit::Processes, "pthread_create"),
    (Limit::Processes, "uv_thread_create"),
    (Limit::CpuTime, "cpu time limit exceeded"),
    (Limit::FileSize, "file size limit exceeded"),
    (Limit::FileSize, "file too large"),
    (Limit::FileSize, "efbig"),
    (Limit::OpenFiles, "too many open files"),
    (Limit::OpenFiles, "emfile"),
];

/// Fragments of output that look like a failed network access.
const NETWORK_MARKERS: &[&str] = &[
    "enotfound",
    "eai_again",
    "getaddrinfo",
    "could not resolve",
    "temporary failure in name resolution",
    "enetunreach",
    "network is unreachable",
    // A host the registry proxy refused (curl, git), or its answer.
    "tunnel failed",
    "rivet's sandbox refused",
];

impl Limits {
    pub fn rlimits(&self) -> Rlimits {
        Rlimits {
            address_space: some(self.0.memory_mb).map(|mb| mb * MIB),
            processes: some(self.0.max_processes),
            file_size: self.file_size_cap().map(|(mb, _)| mb * MIB),
            open_files: some(self.0.open_files),
            cpu_secs: some(self.0.cpu_secs),
        }
    }

    /// The largest file a process may write, in MiB, and the limit that
    /// sets it: `file_size_mb`, or the disk quota when that is smaller (no
    /// single file may be larger than the whole project may be).
    fn file_size_cap(&self) -> Option<(u64, Limit)> {
        let file = some(self.0.file_size_mb).map(|mb| (mb, Limit::FileSize));
        let disk = some(self.0.disk_mb).map(|mb| (mb, Limit::Disk));
        match (file, disk) {
            (Some(file), Some(disk)) => Some(if disk.0 < file.0 { disk } else { file }),
            (file, disk) => file.or(disk),
        }
    }

    /// The project's disk quota in bytes, if it has one.
    pub fn disk_quota(&self) -> Option<u64> {
        some(self.0.disk_mb).map(|mb| mb * MIB)
    }

    /// The limit to name for a process that ran into the file size cap.
    fn named(&self, limit: Limit) -> Limit {
        match (limit, self.file_size_cap()) {
            (Limit::FileSize, Some((_, cap))) => cap,
            _ => limit,
        }
    }

    /// The wall-clock limit of a command.
    pub fn timeout(&self) -> Option<Duration> {
        some(self.0.timeout_secs).map(Duration::from_secs)
    }

    /// "stopped: CPU time limit of 600 s reached (sandbox.cpu_secs)".
    pub fn describe(&self, limit: Limit, timeout: Option<Duration>) -> String {
        format!("stopped: {}", self.reached(limit, timeout))
    }

    /// "CPU time limit of 600 s reached (sandbox.cpu_secs)".
    pub fn reached(&self, limit: Limit, timeout: Option<Duration>) -> String {
        let what = match limit {
            Limit::Memory => format!("memory limit of {} MiB per process", self.0.memory_mb),
            Limit::Processes => format!("process limit of {}", self.0.max_processes),
            Limit::FileSize => format!("file size limit of {} MiB", self.0.file_size_mb),
            Limit::Disk => format!("disk quota of {} MiB per project", self.0.disk_mb),
            Limit::OpenFiles => format!("open files limit of {}", self.0.open_files),
            Limit::CpuTime => format!("CPU time limit of {} s", self.0.cpu_secs),
            Limit::WallClock => {
                let secs = timeout.map_or(self.0.timeout_secs, |t| t.as_secs());
                format!("wall-clock limit of {secs} s")
            }
        };
        format!("{what} reached ({})", limit.config_key())
    }
}

/// How a process ended, as far as judging limits goes.
#[derive(Debug, Clone, Copy, Default)]
pub struct Ending {
    pub code: Option<i32>,
    pub signal: Option<i32>,
    pub timed_out: bool,
    /// It left processes running that had to be killed.
    pub left_behind: bool,
}

/// Which limit, if any, explains how a process ended. `tail` is the end of
/// its output.
pub fn classify(ending: Ending, tail: &[u8]) -> Option<Limit> {
    let Ending {
        code,
        signal,
        timed_out,
        left_behind,
    } = ending;
    // A shell reports a child killed by signal N as exit code 128 + N.
    let by_shell = code.filter(|c| *c > 128).map(|c| c - 128);
    match signal.or(by_shell) {
        Some(SIGXCPU) => return Some(Limit::CpuTime),
        Some(SIGXFSZ) => return Some(Limit::FileSize),
        _ => {}
    }
    let failed = code != Some(0) || signal.is_some() || timed_out || left_behind;
    if failed {
        let text = String::from_utf8_lossy(tail).to_lowercase();
        if let Some((limit, _)) = MARKERS.iter().find(|(_, marker)| text.contains(marker)) {
            return Some(*limit);
        }
    }
    timed_out.then_some(Limit::WallClock)
}

/// Whether a failed command's output looks like it wanted the network.
pub fn looks_like_network_error(tail: &[u8]) -> bool {
    let text = String::from_utf8_lossy(tail).to_lowercase();
    NETWORK_MARKERS.iter().any(|m| text.contains(m))
}

/// Builds the status of an ended process. `network_note` says why a network
/// access may fail, when the sandbox's network is limited.
pub fn exit_status(
    limits: &Limits,
    ending: Ending,
    timeout: Option<Duration>,
    tail: &[u8],
    network_note: Option<&str>,
) -> ExitStatus {
    let Ending {
        code,
        signal,
        timed_out,
        ..
    } = ending;
    let limit_hit = classify(ending, tail).map(|limit| limits.named(limit));
    let mut parts = Vec::new();
    if let Some(limit) = limit_hit {
        parts.push(limits.describe(limit, timeout));
    }
    if timed_out && limit_hit != Some(Limit::WallClock) {
        parts.push(limits.describe(Limit::WallClock, timeout));
    }
    let failed = code != Some(0) || signal.is_some();
    if let Some(note) = network_note.filter(|_| failed && looks_like_network_error(tail)) {
        parts.push(note.to_owned());
    }
    ExitStatus {
        code,
        signal,
        limit_hit,
        timed_out,
        message: (!parts.is_empty()).then(|| parts.join("; ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits() -> Limits {
        Limits::from(&crate::server::config::Config::defaults().sandbox)
    }

    fn check(
        code: Option<i32>,
        signal: Option<i32>,
        timed_out: bool,
        tail: &str,
        expect: Option<Limit>,
    ) {
        let ending = Ending {
            code,
            signal,
            timed_out,
            left_behind: false,
        };
        assert_eq!(
            classify(ending, tail.as_bytes()),
            expect,
            "{code:?} {signal:?} {timed_out} {tail:?}"
        );
    }

    #[test]
    fn limits_are_recognised() {
        check(None, Some(SIGXCPU), false, "", Some(Limit::CpuTime));
        check(None, Some(SIGXFSZ), false, "", Some(Limit::FileSize));
        check(Some(128 + SIGXFSZ), None, false, "", Some(Limit::FileSize));
        check(Some(128 + SIGXCPU), None, false, "", Some(Limit::CpuTime));
        check(Some(137), None, false, "", None);
        check(
            Some(134),
            None,
            false,
            "FATAL ERROR: Reached heap limit Allocation failed - JavaScript heap out of memory",
            Some(Limit::Memory),
        );
        check(
            Some(1),
            None,
            false,
            "RangeError: Array buffer allocation failed",
            Some(Limit::Memory),
        );
        check(
            Some(254),
            None,
            false,
            "bash: fork: retry: Resource temporarily unavailable",
            Some(Limit::Processes),
        );
        check(
            Some(1),
            None,
            false,
            "Error: EMFILE: too many open files, open 'x'",
            Some(Limit::OpenFiles),
        );
        check(
            Some(1),
            None,
            false,
            "Error: EFBIG: file too large, write",
            Some(Limit::FileSize),
        );
        check(None, Some(9), true, "", Some(Limit::WallClock));
        check(
            None,
            Some(9),
            true,
            "bash: fork: retry: Resource temporarily unavailable",
            Some(Limit::Processes),
        );
        check(
            Some(0),
            None,
            false,
            "warning: out of memory earlier, recovered",
            None,
        );
        check(Some(1), None, false, "SyntaxError: Unexpected token", None);
        let bomb = Ending {
            code: Some(0),
            left_behind: true,
            ..Ending::default()
        };
        assert_eq!(
            classify(bomb, b"fork: retry: Resource temporarily unavailable"),
            Some(Limit::Processes)
        );
    }

    #[test]
    fn messages_name_the_setting() {
        let limits = limits();
        assert_eq!(
            limits.describe(Limit::CpuTime, None),
            "stopped: CPU time limit of 600 s reached (sandbox.cpu_secs)"
        );
        assert_eq!(
            limits.describe(Limit::WallClock, Some(Duration::from_secs(5))),
            "stopped: wall-clock limit of 5 s reached (sandbox.timeout_secs)"
        );
        let failed = Ending {
            code: Some(1),
            ..Ending::default()
        };
        let status = exit_status(
            &limits,
            failed,
            None,
            b"npm error code EAI_AGAIN",
            Some("slirp4netns is not installed"),
        );
        assert!(
            status
                .message
                .unwrap()
                .contains("slirp4netns is not installed")
        );
        let killed = Ending {
            signal: Some(9),
            timed_out: true,
            ..Ending::default()
        };
        let status = exit_status(&limits, killed, None, b"", None);
        assert_eq!(status.limit_hit, Some(Limit::WallClock));
        assert!(!status.success());
    }

    #[test]
    fn a_disk_quota_smaller_than_the_file_size_limit_caps_each_file_and_is_named() {
        let mut limits = limits();
        limits.0.disk_mb = 8;
        assert_eq!(limits.rlimits().file_size, Some(8 * MIB));
        let killed = Ending {
            signal: Some(SIGXFSZ),
            ..Ending::default()
        };
        let status = exit_status(&limits, killed, None, b"", None);
        assert_eq!(status.limit_hit, Some(Limit::Disk));
        assert_eq!(
            status.message.as_deref(),
            Some("stopped: disk quota of 8 MiB per project reached (sandbox.disk_mb)")
        );
        let efbig = Ending {
            code: Some(1),
            ..Ending::default()
        };
        let status = exit_status(&limits, efbig, None, b"Error: EFBIG: file too large", None);
        assert_eq!(status.limit_hit, Some(Limit::Disk));
    }

    #[test]
    fn a_disk_quota_larger_than_the_file_size_limit_leaves_it_in_charge() {
        let mut limits = limits();
        limits.0.file_size_mb = 16;
        assert_eq!(limits.rlimits().file_size, Some(16 * MIB));
        let killed = Ending {
            signal: Some(SIGXFSZ),
            ..Ending::default()
        };
        let status = exit_status(&limits, killed, None, b"", None);
        assert_eq!(status.limit_hit, Some(Limit::FileSize));
        limits.0.file_size_mb = 0;
        assert_eq!(limits.rlimits().file_size, Some(4096 * MIB));
        assert_eq!(limits.disk_quota(), Some(4096 * MIB));
        limits.0.disk_mb = 0;
        assert_eq!(limits.rlimits().file_size, None);
        assert_eq!(limits.disk_quota(), None);
    }

    #[test]
    fn zero_means_no_limit() {
        let mut limits = limits();
        limits.0.open_files = 0;
        limits.0.timeout_secs = 0;
        assert_eq!(limits.rlimits().open_files, None);
        assert_eq!(limits.timeout(), None);
        assert_eq!(limits.rlimits().address_space, Some(4096 * MIB));
    }
}
