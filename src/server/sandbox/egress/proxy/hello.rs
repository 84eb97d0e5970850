//! The first bytes of a `CONNECT` tunnel: a TLS ClientHello, read only far
//! enough to learn the name the client asks for (its SNI, RFC 6066 §3).
//!
//! A CDN serves many sites on one address and picks the site by that name,
//! so a tunnel to an allowed registry could otherwise reach any other site
//! of the same CDN. The parser reads the handshake records (a ClientHello
//! may be split over several), walks the ClientHello's fields with a bound
//! on every length, and never allocates more than [`MAX_HELLO`] bytes.

use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt};

/// Largest ClientHello accepted, records and all.
pub const MAX_HELLO: usize = 32 * 1024;
/// How long a client has to send its ClientHello once the tunnel is open.
pub const HELLO_TIMEOUT: Duration = Duration::from_secs(30);

/// TLS record type of handshake messages.
const HANDSHAKE: u8 = 22;
/// Handshake message type of a ClientHello.
const CLIENT_HELLO: u8 = 1;
/// Extension type of `server_name`.
const SERVER_NAME: u16 = 0;
/// `NameType` of a host name in `server_name`.
const HOST_NAME: u8 = 0;
/// Largest record a client may send (2^14 plus room for expansion).
const MAX_RECORD: usize = 16384 + 2048;

/// Why the start of a tunnel is not an acceptable ClientHello.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BadHello {
    #[error("the tunnel does not start with a TLS handshake")]
    NotTls,
    #[error("the TLS handshake does not start with a ClientHello")]
    NotClientHello,
    #[error("the ClientHello is larger than {MAX_HELLO} bytes")]
    TooLarge,
    #[error("the ClientHello is malformed: {0}")]
    Malformed(&'static str),
    #[error("the ClientHello names more than one server")]
    SeveralNames,
    #[error("the ClientHello's server name is not text")]
    Unreadable,
    #[error("the client closed the tunnel before its ClientHello")]
    Closed,
    #[error("no ClientHello within {} seconds", HELLO_TIMEOUT.as_secs())]
    TimedOut,
    #[error("reading the ClientHello failed: {0}")]
    Io(String),
}

/// What a ClientHello asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hello {
    /// The server name it asks for, as sent.
    pub server_name: Option<String>,
}

/// Reads from `client`, after the bytes already in `bytes`, until they hold
/// a whole ClientHello; returns it. `bytes` keeps every byte read, to be
/// sent upstream unchanged.
pub async fn read<S: AsyncRead + Unpin>(
    client: &mut S,
    bytes: &mut Vec<u8>,
) -> Result<Hello, BadHello> {
    tokio::time::timeout(HELLO_TIMEOUT, read_whole(client, bytes))
        .await
        .map_err(|_| BadHello::TimedOut)?
}

async fn read_whole<S: AsyncRead + Unpin>(
    client: &mut S,
    bytes: &mut Vec<u8>,
) -> Result<Hello, BadHello> {
    let mut chunk = [0u8; 4096];
    loop {
        if let Some(hello) = parse(bytes)? {
            return Ok(hello);
        }
        let n = client
            .read(&mut chunk)
            .await
            .map_err(|e| BadHello::Io(e.to_string()))?;
        if n == 0 {
            return Err(BadHello::Closed);
        }
        bytes.extend_from_slice(&chunk[..n]);
    }
}

/// Parses the ClientHello at the start of `bytes`: `None` while more bytes
/// are needed.
pub fn parse(bytes: &[u8]) -> Result<Option<Hello>, BadHello> {
    let Some(message) = handshake_message(bytes)? else {
        return Ok(None);
    };
    client_hello(&message).map(Some)
}

/// The first handshake message, joined from its records; `None` while
/// incomplete.
fn handshake_message(bytes: &[u8]) -> Result<Option<Vec<u8>>, BadHello> {
    let mut message = Vec::new();
    let mut at = 0;
    loop {
        let Some(header) = bytes.get(at..at + 5) else {
            return incomplete(bytes.len());
        };
        if header[0] != HANDSHAKE || header[1] != 3 {
            return Err(BadHello::NotTls);
        }
        let length = usize::from(u16::from_be_bytes([header[3], header[4]]));
        if length == 0 || length > MAX_RECORD {
            return Err(BadHello::Malformed("bad record length"));
        }
        let Some(fragment) = bytes.get(at + 5..at + 5 + length) else {
            return incomplete(bytes.len());
        };
        message.extend_from_slice(fragment);
        at += 5 + length;
        if message.first().is_some_and(|t| *t != CLIENT_HELLO) {
            return Err(BadHello::NotClientHello);
        }
        if let Some(size) = message.get(1..4) {
            let size =
                usize::from(size[0]) << 16 | usize::from(size[1]) << 8 | usize::from(size[2]);
            if size + 4 > MAX_HELLO {
                return Err(BadHello::TooLarge);
            }
            if message.len() >= size + 4 {
                message.truncate(size + 4);
                return Ok(Some(message));
            }
        }
    }
}

fn incomplete(read: usize) -> Result<Option<Vec<u8>>, BadHello> {
    if read >= MAX_HELLO {
        Err(BadHello::TooLarge)
    } else {
        Ok(None)
    }
}

/// A cursor over a message that fails, never panics, past its end.
struct Reader<'a> {
    bytes: &'a [u8],
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize, what: &'static str) -> Result<&'a [u8], BadHello> {
        if n > self.bytes.len() {
            return Err(BadHello::Malformed(what));
        }
        let (head, rest) = self.bytes.split_at(n);
        self.bytes = rest;
        Ok(head)
    }

    fn u8(&mut self, what: &'static str) -> Result<u8, BadHello> {
        Ok(self.take(1, what)?[0])
    }

    fn u16(&mut self, what: &'static str) -> Result<u16, BadHello> {
        let b = self.take(2, what)?;
        Ok(u16::from_be_bytes([b[0], b[1]]))
    }

    /// A field preceded by its one-byte length.
    fn short(&mut self, what: &'static str) -> Result<&'a [u8], BadHello> {
        let n = self.u8(what)?;
        self.take(usize::from(n), what)
    }

    /// A field preceded by its two-byte length.
    fn long(&mut self, what: &'static str) -> Result<&'a [u8], BadHello> {
        let n = self.u16(what)?;
        self.take(usize::from(n), what)
    }
}

/// Reads a whole handshake message (type and length included).
fn client_hello(message: &[u8]) -> Result<Hello, BadHello> {
    let mut r = Reader {
        bytes: message.get(4..).unwrap_or_default(),
    };
    r.take(2 + 32, "no version and random")?;
    r.short("bad session id")?;
    r.long("bad cipher suites")?;
    r.short("bad compression methods")?;
    if r.bytes.is_empty() {
        return Ok(Hello { server_name: None });
    }
    let mut extensions = Reader {
        bytes: r.long("bad extensions")?,
    };
    let mut server_name = None;
    while !extensions.bytes.is_empty() {
        let kind = extensions.u16("bad extension")?;
        let data = extensions.long("bad extension")?;
        if kind == SERVER_NAME {
            if server_name.is_some() {
                return Err(BadHello::SeveralNames);
            }
            server_name = Some(host_name(data)?);
        }
    }
    Ok(Hello { server_name })
}

/// The one host name of a `server_name` extension.
fn host_name(data: &[u8]) -> Result<String, BadHello> {
    let mut list = Reader {
        bytes: Reader { bytes: data }.long("bad server name list")?,
    };
    let mut name = None;
    while !list.bytes.is_empty() {
        let kind = list.u8("bad server name")?;
        let value = list.long("bad server name")?;
        if kind == HOST_NAME {
            if name.is_some() {
                return Err(BadHello::SeveralNames);
            }
            let text = std::str::from_utf8(value).map_err(|_| BadHello::Unreadable)?;
            name = Some(text.to_owned());
        }
    }
    name.ok_or(BadHello::Malformed("no host name in server_name"))
}

/// Whether a ClientHello asking for `server_name` may go to `host` (the
/// CONNECT target, canonical: see `allow::Authority`). A name must be asked
/// for by that very name (case aside, with no trailing dot); an IP address
/// is never a server name (RFC 6066 §3), so a tunnel to one must name none.
pub fn matches(server_name: Option<&str>, host: &str) -> bool {
    let is_ip = host.parse::<std::net::IpAddr>().is_ok();
    match server_name {
        None => is_ip,
        Some(name) => !is_ip && name.eq_ignore_ascii_case(host),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A ClientHello with the given extensions, in one record.
    fn hello(extensions: &[(u16, Vec<u8>)]) -> Vec<u8> {
        let mut body = vec![3, 3];
        body.extend_from_slice(&[7; 32]);
        body.extend_from_slice(&[0, 0, 2, 0x13, 0x01, 1, 0]);
        let mut ext = Vec::new();
        for (kind, data) in extensions {
            ext.extend_from_slice(&kind.to_be_bytes());
            ext.extend_from_slice(&(data.len() as u16).to_be_bytes());
            ext.extend_from_slice(data);
        }
        body.extend_from_slice(&(ext.len() as u16).to_be_bytes());
        body.extend_from_slice(&ext);
        let mut message = vec![CLIENT_HELLO, 0];
        message.extend_from_slice(&(body.len() as u16).to_be_bytes());
        message.extend_from_slice(&body);
        records(&message, message.len())
    }

    /// `message` in handshake records of at most `size` bytes.
    fn records(message: &[u8], size: usize) -> Vec<u8> {
        let mut out = Vec::new();
        for piece in message.chunks(size) {
            out.extend_from_slice(&[HANDSHAKE, 3, 1]);
            out.extend_from_slice(&(piece.len() as u16).to_be_bytes());
            out.extend_from_slice(piece);
        }
        out
    }

    fn sni(names: &[&str]) -> Vec<u8> {
        let mut list = Vec::new();
        for name in names {
            list.push(HOST_NAME);
            list.extend_from_slice(&(name.len() as u16).to_be_bytes());
            list.extend_from_slice(name.as_bytes());
        }
        let mut data = (list.len() as u16).to_be_bytes().to_vec();
        data.extend_from_slice(&list);
        data
    }

    fn name_of(bytes: &[u8]) -> Result<Option<Option<String>>, BadHello> {
        parse(bytes).map(|h| h.map(|h| h.server_name))
    }

    #[test]
    fn the_server_name_is_read_whole_or_in_pieces() {
        let bytes = hello(&[
            (10, vec![0, 2, 0, 29]),
            (SERVER_NAME, sni(&["Registry.NPMjs.org"])),
        ]);
        assert_eq!(name_of(&bytes), Ok(Some(Some("Registry.NPMjs.org".into()))));
        for cut in 0..bytes.len() {
            assert_eq!(name_of(&bytes[..cut]), Ok(None), "cut at {cut}");
        }
        // One message over several records.
        let message = &bytes[5..];
        assert_eq!(
            name_of(&records(message, 7)),
            Ok(Some(Some("Registry.NPMjs.org".into())))
        );
        assert_eq!(name_of(&hello(&[])), Ok(Some(None)));
    }

    #[test]
    fn what_is_not_a_client_hello_is_refused() {
        assert_eq!(name_of(b"GET / HTTP/1.1\r\n\r\n"), Err(BadHello::NotTls));
        assert_eq!(
            name_of(&records(&[2, 0, 0, 1, 0], 5)),
            Err(BadHello::NotClientHello)
        );
        let two = hello(&[(SERVER_NAME, sni(&["a.example", "b.example"]))]);
        assert_eq!(name_of(&two), Err(BadHello::SeveralNames));
        let twice = hello(&[
            (SERVER_NAME, sni(&["a.example"])),
            (SERVER_NAME, sni(&["b.example"])),
        ]);
        assert_eq!(name_of(&twice), Err(BadHello::SeveralNames));
        let mut lying = hello(&[(SERVER_NAME, sni(&["a.example"]))]);
        // The name's length says more than the extension holds.
        let length = lying.len() - "a.example".len() - 2;
        lying[length] = 0xff;
        assert!(matches!(name_of(&lying), Err(BadHello::Malformed(_))));
        let huge = records(&[CLIENT_HELLO, 1, 0, 0], 4);
        assert_eq!(name_of(&huge), Err(BadHello::TooLarge));
    }

    #[test]
    fn endless_small_records_stop_at_the_limit() {
        // A message small enough, sent a byte a record.
        let mut bytes = records(&[CLIENT_HELLO, 0, 0x70, 0], 4);
        while bytes.len() < MAX_HELLO + 16 {
            bytes.extend_from_slice(&records(&[0], 1));
        }
        assert_eq!(name_of(&bytes), Err(BadHello::TooLarge));
    }

    #[test]
    fn a_server_name_matches_only_its_own_host() {
        assert!(matches(Some("Registry.npmjs.org"), "registry.npmjs.org"));
        assert!(!matches(Some("registry.npmjs.org."), "registry.npmjs.org"));
        assert!(!matches(Some("example.com"), "registry.npmjs.org"));
        assert!(!matches(None, "registry.npmjs.org"));
        assert!(matches(None, "127.0.0.1"));
        assert!(!matches(Some("127.0.0.1"), "127.0.0.1"));
        assert!(!matches(Some("example.com"), "::1"));
    }
}
