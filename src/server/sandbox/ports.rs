//! Which TCP ports servers listen on, asked of the kernel by state
//! (`sock_diag` over netlink), or read from `/proc/net/tcp{,6}` where the
//! kernel cannot answer that way.
//!
//! In a sandbox the helper has its own network namespace, so every listening
//! socket there belongs to the project. Without isolation the table is the
//! host's, and only sockets held by the helper's descendants count.
//!
//! The helper asks often (every 50 ms after a process starts, every second
//! when idle), so the cost of asking is what an idle sandbox costs: reading
//! `/proc/net/tcp` walks every bucket of the host's connection table, in
//! any namespace (9 ms of kernel time for both files on a machine with
//! 262,144 buckets), where a `sock_diag` dump of listening sockets walks
//! only the table of listeners.

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
    asked_by_state().unwrap_or_else(|_| read_from_proc())
}

pub use diag::asked_by_state;

/// The listening sockets of this network namespace, from
/// `/proc/net/tcp{,6}`.
pub fn read_from_proc() -> Vec<Listener> {
    ["/proc/net/tcp", "/proc/net/tcp6"]
        .iter()
        .filter_map(|path| std::fs::read_to_string(path).ok())
        .flat_map(|table| parse_listeners(&table))
        .collect()
}

/// The kernel's `sock_diag` dump of listening TCP sockets.
mod diag {
    use std::io;
    use std::os::fd::{AsRawFd, RawFd};

    use netlink_packet_core::{
        NLM_F_DUMP, NLM_F_REQUEST, NetlinkHeader, NetlinkMessage, NetlinkPayload,
    };
    use netlink_packet_sock_diag::SockDiagMessage;
    use netlink_packet_sock_diag::constants::{AF_INET, AF_INET6, IPPROTO_TCP};
    use netlink_packet_sock_diag::inet::{ExtensionFlags, InetRequest, SocketId, StateFlags};
    use nix::sys::socket::{
        AddressFamily, MsgFlags, SockFlag, SockProtocol, SockType, recv, send, socket,
    };

    use super::Listener;

    /// The listening sockets of this network namespace, both families
    /// asked over one netlink socket; an error when the kernel cannot be
    /// asked that way (no `sock_diag`).
    pub fn asked_by_state() -> io::Result<Vec<Listener>> {
        let fd = socket(
            AddressFamily::Netlink,
            SockType::Datagram,
            SockFlag::SOCK_CLOEXEC,
            SockProtocol::NetlinkSockDiag,
        )?;
        let mut all = dump(fd.as_raw_fd(), AF_INET, SocketId::new_v4())?;
        all.extend(dump(fd.as_raw_fd(), AF_INET6, SocketId::new_v6())?);
        Ok(all)
    }

    fn request(family: u8, socket_id: SocketId) -> Vec<u8> {
        let mut header = NetlinkHeader::default();
        header.flags = NLM_F_REQUEST | NLM_F_DUMP;
        let request = SockDiagMessage::InetRequest(InetRequest {
            family,
            protocol: IPPROTO_TCP,
            extensions: ExtensionFlags::empty(),
            states: StateFlags::LISTEN,
            socket_id,
        });
        let mut message = NetlinkMessage::new(header, NetlinkPayload::InnerMessage(request));
        message.finalize();
        let mut bytes = vec![0; message.buffer_len()];
        message.serialize(&mut bytes);
        bytes
    }

    /// One dump, of one family, on the netlink socket `raw`.
    fn dump(raw: RawFd, family: u8, socket_id: SocketId) -> io::Result<Vec<Listener>> {
        send(raw, &request(family, socket_id), MsgFlags::empty())?;
        let mut found = Vec::new();
        let mut buffer = vec![0u8; 32 * 1024];
        loop {
            let size = recv(raw, &mut buffer, MsgFlags::empty())?;
            if size == 0 {
                return Err(io::Error::other("sock_diag ended without its last message"));
            }
            if read_messages(&buffer[..size], &mut found)? {
                return Ok(found);
            }
        }
    }

    /// Adds the listeners of one datagram to `found`; true once the dump
    /// has ended.
    fn read_messages(mut bytes: &[u8], found: &mut Vec<Listener>) -> io::Result<bool> {
        while !bytes.is_empty() {
            let message = NetlinkMessage::<SockDiagMessage>::deserialize(bytes)
                .map_err(|e| io::Error::other(e.to_string()))?;
            let length = message.header.length as usize;
            match message.payload {
                NetlinkPayload::Done(_) => return Ok(true),
                NetlinkPayload::Error(error) => {
                    return Err(io::Error::from_raw_os_error(-error.raw_code()));
                }
                NetlinkPayload::InnerMessage(SockDiagMessage::InetResponse(response)) => {
                    found.push(Listener {
                        port: response.header.socket_id.source_port,
                        inode: u64::from(response.header.inode),
                    });
                }
                _ => {}
            }
            // Messages are aligned to 4 bytes.
            let step = length.div_ceil(4) * 4;
            if length == 0 || step > bytes.len() {
                break;
            }
            bytes = &bytes[step..];
        }
        Ok(false)
    }
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

    /// The kernel's answer and the table agree (a listener of each family,
    /// and one that only connects, which is not listed).
    #[test]
    fn the_kernel_is_asked_for_listeners_only() {
        let v4 = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let v6 = std::net::TcpListener::bind("[::1]:0").ok();
        let client = std::net::TcpStream::connect(v4.local_addr().unwrap()).unwrap();
        let mine = asked_by_state().expect("sock_diag answers");
        let asked: HashSet<u16> = mine.iter().map(|l| l.port).collect();
        assert!(asked.contains(&v4.local_addr().unwrap().port()));
        if let Some(v6) = &v6 {
            assert!(asked.contains(&v6.local_addr().unwrap().port()));
        }
        assert!(!asked.contains(&client.local_addr().unwrap().port()));
        let read: HashSet<u16> = read_from_proc().iter().map(|l| l.port).collect();
        assert!(read.contains(&v4.local_addr().unwrap().port()));
        let inodes = socket_inodes(std::process::id() as i32);
        let found = mine
            .iter()
            .find(|l| l.port == v4.local_addr().unwrap().port())
            .unwrap();
        assert!(inodes.contains(&found.inode), "the inode names the socket");
    }

    #[test]
    fn a_listener_of_this_process_is_found() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let ports = listening(false, std::process::id() as i32);
        assert!(ports.contains(&port), "{port} not in {ports:?}");
    }
}
