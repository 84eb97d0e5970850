//! Which TCP ports servers listen on, from `/proc/net/tcp{,6}`.
//!
//! In a sandbox the helper has its own network namespace, so every listening
//! socket there belongs to the project. Without isolation the table is the
//! host's, and only sockets held by the helper's descendants count.

use std::collections::{BTreeSet, HashSet};
use std::path::Path;

use super::sys;

/// TCP state `LISTEN` in `/proc/net/tcp`.
const LISTEN: &str = "0A";

/// One listening socket: its port and its inode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Listener {
    pub port: u16,
    pub inode: u64,
}

/// Parses the text of `/proc/net/tcp` or `/proc/net/tcp6`.
pub fn parse_listeners(table: &str) -> Vec<Listener> {
    table
        .lines()
        .skip(1)
        .filter_map(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            if fields.get(3) != Some(&LISTEN) {
                return None;
            }
            let port = fields.get(1)?.rsplit_once(':')?.1;
            let port = u16::from_str_radix(port, 16).ok()?;
            let inode = fields.get(9)?.parse().ok()?;
            Some(Listener { port, inode })
        })
        .collect()
}

fn listeners() -> Vec<Listener> {
    ["/proc/net/tcp", "/proc/net/tcp6"]
        .iter()
        .filter_map(|path| std::fs::read_to_string(path).ok())
        .flat_map(|table| parse_listeners(&table))
        .collect()
}

/// The socket inodes held open by `root` and its descendants.
fn socket_inodes(root: i32) -> HashSet<u64> {
    let all = sys::processes(Path::new("/proc"));
    let mut inodes = HashSet::new();
    for pid in sys::descendants(root, &all) {
        let Ok(fds) = std::fs::read_dir(format!("/proc/{pid}/fd")) else {
            continue;
        };
        for fd in fds.filter_map(Result::ok) {
            let Ok(target) = std::fs::read_link(fd.path()) else {
                continue;
            };
            let inode = target
                .to_str()
                .and_then(|t| t.strip_prefix("socket:["))
                .and_then(|t| t.strip_suffix(']'))
                .and_then(|t| t.parse::<u64>().ok());
            inodes.extend(inode);
        }
    }
    inodes
}

/// The ports listening now: all of them in a sandbox, or those of the
/// processes under `owner` when the helper shares the host's network.
pub fn listening(isolated: bool, owner: i32) -> BTreeSet<u16> {
    let all = listeners();
    if isolated {
        return all.into_iter().map(|l| l.port).collect();
    }
    let mine = socket_inodes(owner);
    all.into_iter()
        .filter(|l| mine.contains(&l.inode))
        .map(|l| l.port)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const TABLE: &str = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 0100007F:1435 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 4242 1 0000000000000000 100 0 0 10 0
   1: 0100007F:1435 0100007F:D2A4 01 00000000:00000000 00:00000000 00000000  1000        0 4243 1 0000000000000000 20 4 30 10 -1
   2: 00000000000000000000000001000000:0BB8 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 77 1 0000000000000000 100 0 0 10 0
";

    #[test]
    fn only_listening_sockets_count() {
        assert_eq!(
            parse_listeners(TABLE),
            vec![
                Listener {
                    port: 5173,
                    inode: 4242
                },
                Listener {
                    port: 3000,
                    inode: 77
                },
            ]
        );
        assert!(parse_listeners("header only\n").is_empty());
    }

    #[test]
    fn a_listener_of_this_process_is_found() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let ports = listening(false, std::process::id() as i32);
        assert!(ports.contains(&port), "{port} not in {ports:?}");
    }
}
