//! The wire format between the IDE and a sandbox's helper: what they say to
//! each other, and how: frames of JSON with an optional binary payload and
//! file descriptors (SCM_RIGHTS), over the unix socket pair the IDE creates
//! when it starts the sandbox. (Not the bolt protocol of answers, which is
//! `runtime::protocol`.)
//!
//! Process output never crosses this socket: the IDE creates the pipes (the
//! helper creates a terminal inside the sandbox and sends its master back) and
//! reads them itself.

use std::collections::VecDeque;
use std::io::{self, IoSlice, IoSliceMut};
use std::os::fd::{AsRawFd, BorrowedFd, FromRawFd, OwnedFd, RawFd};

use nix::sys::socket::{ControlMessage, ControlMessageOwned, MsgFlags, recvmsg, sendmsg};
use serde::{Deserialize, Serialize};
use tokio::io::unix::AsyncFd;
use tokio::sync::Mutex;

use crate::runtime::host::{DirEntry, FsEvent, PtySize};

/// Largest JSON header accepted.
pub const MAX_HEADER: usize = 1 << 20;
/// Largest payload (a file's contents) accepted.
pub const MAX_PAYLOAD: usize = 64 << 20;
/// Most descriptors one frame may carry.
pub const MAX_FDS: usize = 4;
/// header length, payload length, descriptor count: three little-endian u32.
const PREFIX: usize = 12;

/// A request from the IDE, answered by one [`HelperMessage::Reply`] with the
/// same id.
#[derive(Debug, Serialize, Deserialize)]
pub struct Request {
    pub id: u64,
    #[serde(flatten)]
    pub op: Op,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum Op {
    /// Runs a program. Without a terminal, the frame carries two
    /// descriptors: stdin and the output (stdout and stderr). With one, none:
    /// the reply carries the terminal's master.
    Spawn(SpawnRequest),
    /// SIGKILLs the session the process leads: everything it started.
    /// Replies `Killed`.
    KillTree {
        pid: i32,
    },
    ReadFile {
        path: String,
    },
    /// The payload is the file's contents.
    WriteFile {
        path: String,
    },
    Mkdir {
        path: String,
    },
    Remove {
        path: String,
    },
    Rename {
        from: String,
        to: String,
    },
    List {
        path: String,
        recursive: bool,
    },
    /// Connects to a server inside; the reply carries the socket.
    Connect {
        port: u16,
    },
    /// Listens on `127.0.0.1:port` inside (the registry proxy, served by
    /// the IDE); the reply carries the listening socket. The port is then
    /// neither reported nor connected to.
    Listen {
        port: u16,
    },
    /// Kills every process of the sandbox, replies, and exits.
    Shutdown,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SpawnRequest {
    pub argv: Vec<String>,
    /// The whole environment of the process.
    pub env: Vec<(String, String)>,
    pub pty: Option<PtySize>,
    pub rlimits: Rlimits,
}

/// Resource limits applied to a process before it starts; `None` leaves the
/// limit as it is.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Rlimits {
    pub address_space: Option<u64>,
    pub processes: Option<u64>,
    pub file_size: Option<u64>,
    pub open_files: Option<u64>,
    pub cpu_secs: Option<u64>,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum HelperMessage {
    /// Sent once, when the helper is ready for requests.
    Ready { pid: i32 },
    Reply {
        id: u64,
        result: Result<Reply, HelperError>,
    },
    /// A process the IDE started has ended.
    Exited {
        pid: i32,
        code: Option<i32>,
        signal: Option<i32>,
    },
    /// The ports listening now (sent when the set changes).
    Ports { ports: Vec<u16> },
    /// Paths changed in the workspace.
    Changed { changes: Vec<FsEvent> },
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "reply", rename_all = "snake_case")]
pub enum Reply {
    Spawned {
        pid: i32,
    },
    Done,
    /// How many processes a `KillTree` found alive.
    Killed {
        processes: usize,
    },
    /// The payload is the file's contents.
    File,
    /// A listing; `truncated` when the helper cut it short (see
    /// `fsops::MAX_ENTRIES`), so the reply always fits [`MAX_HEADER`].
    Entries {
        entries: Vec<DirEntry>,
        #[serde(default)]
        truncated: bool,
    },
    /// The frame carries the connected socket.
    Connected,
    /// The frame carries the listening socket.
    Listening,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorKind {
    NotFound,
    Invalid,
    Io,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HelperError {
    pub kind: ErrorKind,
    pub message: String,
}

impl HelperError {
    pub fn io(message: impl Into<String>) -> HelperError {
        HelperError {
            kind: ErrorKind::Io,
            message: message.into(),
        }
    }

    pub fn invalid(message: impl Into<String>) -> HelperError {
        HelperError {
            kind: ErrorKind::Invalid,
            message: message.into(),
        }
    }
}

/// One received frame.
#[derive(Debug)]
pub struct Frame {
    pub header: Vec<u8>,
    pub payload: Vec<u8>,
    pub fds: Vec<OwnedFd>,
}

fn protocol_error(message: impl Into<String>) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, message.into())
}

/// The bytes of a frame carrying `fds` descriptors.
pub fn encode(header: &[u8], payload: &[u8], fds: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(PREFIX + header.len() + payload.len());
    for n in [header.len(), payload.len(), fds] {
        out.extend_from_slice(&u32::try_from(n).unwrap_or(u32::MAX).to_le_bytes());
    }
    out.extend_from_slice(header);
    out.extend_from_slice(payload);
    out
}

/// Cuts frames out of the received bytes. Descriptors arrive with the first
/// byte of the frame that sent them, so a queue keeps them in order.
#[derive(Debug, Default)]
pub struct Decoder {
    buf: Vec<u8>,
    fds: VecDeque<OwnedFd>,
}

impl Decoder {
    pub fn push_bytes(&mut self, bytes: &[u8]) {
        self.buf.extend_from_slice(bytes);
    }

    pub fn push_fd(&mut self, fd: OwnedFd) {
        self.fds.push_back(fd);
    }

    pub fn is_empty(&self) -> bool {
        self.buf.is_empty()
    }

    pub fn next_frame(&mut self) -> io::Result<Option<Frame>> {
        if self.buf.len() < PREFIX {
            return Ok(None);
        }
        let word = |i: usize| {
            let mut bytes = [0u8; 4];
            bytes.copy_from_slice(&self.buf[i * 4..i * 4 + 4]);
            u32::from_le_bytes(bytes) as usize
        };
        let (header_len, payload_len, fd_count) = (word(0), word(1), word(2));
        if header_len > MAX_HEADER || payload_len > MAX_PAYLOAD || fd_count > MAX_FDS {
            return Err(protocol_error(format!(
                "frame too large ({header_len} + {payload_len} bytes, {fd_count} descriptors)"
            )));
        }
        let total = PREFIX + header_len + payload_len;
        if self.buf.len() < total {
            return Ok(None);
        }
        if self.fds.len() < fd_count {
            return Err(protocol_error("a frame's descriptors are missing"));
        }
        let header = self.buf[PREFIX..PREFIX + header_len].to_vec();
        let payload = self.buf[PREFIX + header_len..total].to_vec();
        self.buf.drain(..total);
        let fds = self.fds.drain(..fd_count).collect();
        Ok(Some(Frame {
            header,
            payload,
            fds,
        }))
    }
}

/// A unix stream socket that carries frames, usable from many tasks.
pub struct FdChannel {
    io: AsyncFd<OwnedFd>,
    decoder: Mutex<Decoder>,
    writer: Mutex<()>,
}

impl FdChannel {
    pub fn new(fd: OwnedFd) -> io::Result<FdChannel> {
        set_nonblocking(&fd)?;
        Ok(FdChannel {
            io: register(fd)?,
            decoder: Mutex::new(Decoder::default()),
            writer: Mutex::new(()),
        })
    }

    /// Sends one frame; frames from concurrent senders never interleave.
    pub async fn send(
        &self,
        header: &[u8],
        payload: &[u8],
        fds: &[BorrowedFd<'_>],
    ) -> io::Result<()> {
        if fds.len() > MAX_FDS {
            return Err(protocol_error("too many descriptors for one frame"));
        }
        let bytes = encode(header, payload, fds.len());
        let raw: Vec<RawFd> = fds.iter().map(|fd| fd.as_raw_fd()).collect();
        let _turn = self.writer.lock().await;
        let mut sent = 0;
        while sent < bytes.len() {
            let mut guard = self.io.writable().await?;
            let result = guard.try_io(|inner| {
                let iov = [IoSlice::new(&bytes[sent..])];
                // The descriptors travel with the frame's first byte.
                let rights = [ControlMessage::ScmRights(&raw)];
                let cmsgs: &[ControlMessage] = if sent == 0 && !raw.is_empty() {
                    &rights
                } else {
                    &[]
                };
                sendmsg::<()>(inner.as_raw_fd(), &iov, cmsgs, MsgFlags::MSG_NOSIGNAL, None)
                    .map_err(io::Error::from)
            });
            match result {
                Ok(Ok(n)) => sent += n,
                Ok(Err(e)) => return Err(e),
                Err(_would_block) => continue,
            }
        }
        Ok(())
    }

    /// The next frame, or `None` when the other side has closed the socket.
    pub async fn recv(&self) -> io::Result<Option<Frame>> {
        let mut decoder = self.decoder.lock().await;
        let mut buf = vec![0u8; 64 * 1024];
        loop {
            if let Some(frame) = decoder.next_frame()? {
                return Ok(Some(frame));
            }
            let mut guard = self.io.readable().await?;
            let result = guard.try_io(|inner| receive(inner.as_raw_fd(), &mut buf));
            match result {
                Ok(Ok((0, _))) => {
                    return if decoder.is_empty() {
                        Ok(None)
                    } else {
                        Err(io::Error::from(io::ErrorKind::UnexpectedEof))
                    };
                }
                Ok(Ok((n, fds))) => {
                    decoder.push_bytes(&buf[..n]);
                    for fd in fds {
                        decoder.push_fd(fd);
                    }
                }
                Ok(Err(e)) => return Err(e),
                Err(_would_block) => continue,
            }
        }
    }
}

/// One `recvmsg`: the bytes read and the descriptors that came with them.
fn receive(fd: RawFd, buf: &mut [u8]) -> io::Result<(usize, Vec<OwnedFd>)> {
    let mut cmsg = nix::cmsg_space!([RawFd; MAX_FDS]);
    let mut iov = [IoSliceMut::new(buf)];
    let msg = recvmsg::<()>(fd, &mut iov, Some(&mut cmsg), MsgFlags::MSG_CMSG_CLOEXEC)?;
    let mut fds = Vec::new();
    for message in msg.cmsgs()? {
        if let ControlMessageOwned::ScmRights(raw) = message {
            // SAFETY: the kernel has just installed these descriptors in this
            // process for us; nothing else owns them.
            fds.extend(raw.into_iter().map(|r| unsafe { OwnedFd::from_raw_fd(r) }));
        }
    }
    if msg.flags.contains(MsgFlags::MSG_CTRUNC) {
        return Err(protocol_error("descriptors were cut off"));
    }
    Ok((msg.bytes, fds))
}

/// Hands a descriptor to tokio's reactor.
pub fn register(fd: OwnedFd) -> io::Result<AsyncFd<OwnedFd>> {
    // SAFETY: an OwnedFd keeps its descriptor open, and the same, until dropped.
    Ok(unsafe { AsyncFd::register(fd) }?)
}

pub fn set_nonblocking(fd: &OwnedFd) -> io::Result<()> {
    use nix::fcntl::{FcntlArg, OFlag, fcntl};
    let flags = OFlag::from_bits_truncate(fcntl(fd, FcntlArg::F_GETFL)?);
    fcntl(fd, FcntlArg::F_SETFL(flags | OFlag::O_NONBLOCK))?;
    Ok(())
}

/// Serialises a message for [`FdChannel::send`].
pub fn to_header<T: Serialize>(message: &T) -> io::Result<Vec<u8>> {
    serde_json::to_vec(message).map_err(|e| protocol_error(e.to_string()))
}

pub fn from_header<T: for<'de> Deserialize<'de>>(header: &[u8]) -> io::Result<T> {
    serde_json::from_slice(header).map_err(|e| protocol_error(format!("bad message: {e}")))
}

#[cfg(test)]
mod tests {
    use std::os::fd::AsFd;

    use nix::sys::socket::{AddressFamily, SockFlag, SockType, socketpair};

    use super::*;

    fn pipe_fd() -> OwnedFd {
        nix::unistd::pipe().unwrap().0
    }

    #[test]
    fn frames_split_across_reads_keep_their_descriptors() {
        let mut decoder = Decoder::default();
        let one = encode(b"{\"a\":1}", b"", 1);
        let two = encode(b"{}", b"payload", 0);
        let mut all = one.clone();
        all.extend_from_slice(&two);
        decoder.push_fd(pipe_fd());
        for chunk in all.chunks(5) {
            decoder.push_bytes(chunk);
        }
        let first = decoder.next_frame().unwrap().unwrap();
        assert_eq!(first.header, b"{\"a\":1}");
        assert_eq!(first.fds.len(), 1);
        let second = decoder.next_frame().unwrap().unwrap();
        assert_eq!(second.payload, b"payload");
        assert!(second.fds.is_empty());
        assert!(decoder.next_frame().unwrap().is_none());
    }

    #[test]
    fn oversized_or_fdless_frames_are_refused() {
        let mut decoder = Decoder::default();
        let mut bytes = encode(b"{}", b"", 0);
        bytes[0..4].copy_from_slice(&u32::MAX.to_le_bytes());
        decoder.push_bytes(&bytes);
        assert!(decoder.next_frame().is_err());

        let mut decoder = Decoder::default();
        decoder.push_bytes(&encode(b"{}", b"", 2));
        assert!(decoder.next_frame().is_err());
    }

    #[tokio::test]
    async fn a_socket_pair_carries_frames_and_descriptors() {
        let (a, b) = socketpair(
            AddressFamily::Unix,
            SockType::Stream,
            None,
            SockFlag::SOCK_CLOEXEC,
        )
        .unwrap();
        let (a, b) = (FdChannel::new(a).unwrap(), FdChannel::new(b).unwrap());
        let (read_end, write_end) = nix::unistd::pipe().unwrap();
        let big = vec![7u8; 3 * 1024 * 1024];
        let send = async {
            a.send(b"{\"n\":1}", &big, &[write_end.as_fd()])
                .await
                .unwrap();
            a.send(b"{\"n\":2}", b"", &[]).await.unwrap();
        };
        let receive = async {
            let first = b.recv().await.unwrap().unwrap();
            let second = b.recv().await.unwrap().unwrap();
            (first, second)
        };
        let ((), (first, second)) = tokio::join!(send, receive);
        assert_eq!(first.payload.len(), big.len());
        assert_eq!(second.header, b"{\"n\":2}");
        // The received descriptor is the pipe's write end.
        let fd = first.fds.into_iter().next().unwrap();
        nix::unistd::write(&fd, b"hi").unwrap();
        let mut out = [0u8; 2];
        nix::unistd::read(&read_end, &mut out).unwrap();
        assert_eq!(&out, b"hi");
        drop(a);
        assert!(b.recv().await.unwrap().is_none());
    }
}
