//! The proxy without a sandbox: a client and an upstream on 127.0.0.1 (no
//! traffic leaves loopback; refused hosts are never resolved or contacted).

use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;

use super::*;

fn policy(entries: &[&str]) -> Arc<Policy> {
    Arc::new(Policy {
        allow: Arc::new(AllowList::parse(entries).unwrap()),
        project: "test".to_owned(),
    })
}

/// Sends `request` to [`handle`] over an in-memory pipe; returns the whole
/// answer.
async fn ask(policy: &Arc<Policy>, request: &[u8]) -> String {
    let (mut client, server) = tokio::io::duplex(64 * 1024);
    let policy = policy.clone();
    let served = tokio::spawn(async move { handle(server, &policy).await });
    client.write_all(request).await.unwrap();
    let mut answer = Vec::new();
    tokio::time::timeout(Duration::from_secs(30), client.read_to_end(&mut answer))
        .await
        .unwrap()
        .unwrap();
    served.await.unwrap();
    String::from_utf8_lossy(&answer).into_owned()
}

/// A proxy listening on 127.0.0.1; returns its address.
async fn start_proxy(policy: Arc<Policy>) -> std::net::SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(serve(listener, policy));
    addr
}

/// An HTTP server on 127.0.0.1 that answers `hello` and reports each
/// request head it receives.
async fn http_upstream() -> (u16, mpsc::UnboundedReceiver<String>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let (tx, rx) = mpsc::unbounded_channel();
    tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            let mut head = Vec::new();
            let mut byte = [0u8; 1];
            while !head.ends_with(b"\r\n\r\n") && stream.read(&mut byte).await.unwrap() == 1 {
                head.push(byte[0]);
            }
            tx.send(String::from_utf8_lossy(&head).into_owned())
                .unwrap();
            let response =
                b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhello";
            stream.write_all(response).await.unwrap();
        }
    });
    (port, rx)
}

/// A real TLS ClientHello, made by rustls, asking for `name` (as its
/// server name when `sni`).
fn client_hello(name: &str, sni: bool) -> Vec<u8> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(rustls::RootCertStore::empty())
        .with_no_client_auth();
    config.enable_sni = sni;
    let name = rustls::pki_types::ServerName::try_from(name.to_owned()).unwrap();
    let mut connection = rustls::ClientConnection::new(Arc::new(config), name).unwrap();
    let mut bytes = Vec::new();
    connection.write_tls(&mut bytes).unwrap();
    bytes
}

/// A TCP server on 127.0.0.1 that reports every connection's bytes once
/// the connection ends.
async fn recording_upstream() -> (u16, mpsc::UnboundedReceiver<Vec<u8>>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let (tx, rx) = mpsc::unbounded_channel();
    tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            let tx = tx.clone();
            tokio::spawn(async move {
                let mut bytes = Vec::new();
                let _ = stream.read_to_end(&mut bytes).await;
                let _ = tx.send(bytes);
            });
        }
    });
    (port, rx)
}

/// Opens a tunnel to `target` through the proxy at `addr` and sends
/// `first` once it is established; returns what comes back until the
/// proxy closes, after the `200`.
async fn through_tunnel(addr: std::net::SocketAddr, target: &str, first: &[u8]) -> Vec<u8> {
    let mut client = TcpStream::connect(addr).await.unwrap();
    let request = format!("CONNECT {target} HTTP/1.1\r\nHost: {target}\r\n\r\n");
    client.write_all(request.as_bytes()).await.unwrap();
    let established = b"HTTP/1.1 200 Connection established\r\n\r\n";
    let mut reply = vec![0u8; established.len()];
    client.read_exact(&mut reply).await.unwrap();
    assert_eq!(reply, established);
    // In two pieces: the proxy reads on until the ClientHello is whole.
    let (start, end) = first.split_at(first.len() / 2);
    client.write_all(start).await.unwrap();
    tokio::time::sleep(Duration::from_millis(50)).await;
    client.write_all(end).await.unwrap();
    client.shutdown().await.unwrap();
    let mut rest = Vec::new();
    tokio::time::timeout(Duration::from_secs(30), client.read_to_end(&mut rest))
        .await
        .unwrap()
        .unwrap();
    rest
}

/// The TLS alert the proxy ends a refused tunnel with.
const REFUSED: &[u8] = &[21, 3, 3, 0, 2, 2, 112];

#[tokio::test]
async fn a_tunnel_whose_sni_is_the_connect_host_passes_unchanged() {
    let (port, mut received) = recording_upstream().await;
    let addr = start_proxy(policy(&[&format!("localhost:{port}")])).await;
    let hello = client_hello("localhost", true);
    let back = through_tunnel(addr, &format!("LocalHost:{port}"), &hello).await;
    assert!(back.is_empty(), "{back:?}");
    let upstream = received.recv().await.unwrap();
    assert!(upstream == hello, "the ClientHello changed on its way");
}

#[tokio::test]
async fn a_tunnel_whose_sni_is_not_the_connect_host_is_refused() {
    let (port, mut received) = recording_upstream().await;
    let addr = start_proxy(policy(&[&format!("localhost:{port}")])).await;
    // (A trailing dot is refused too, see `hello::tests`; rustls drops it.)
    for name in ["other-site.example", "localhost.example"] {
        let hello = client_hello(name, true);
        let back = through_tunnel(addr, &format!("localhost:{port}"), &hello).await;
        assert_eq!(back, REFUSED, "{name}");
        assert_eq!(received.recv().await.unwrap(), b"", "{name} went upstream");
    }
}

#[tokio::test]
async fn a_tunnel_without_sni_is_refused() {
    let (port, mut received) = recording_upstream().await;
    let addr = start_proxy(policy(&[&format!("localhost:{port}")])).await;
    let hello = client_hello("localhost", false);
    let back = through_tunnel(addr, &format!("localhost:{port}"), &hello).await;
    assert_eq!(back, REFUSED);
    assert_eq!(received.recv().await.unwrap(), b"");
}

#[tokio::test]
async fn a_tunnel_that_does_not_start_with_tls_is_refused() {
    let (port, mut received) = recording_upstream().await;
    let addr = start_proxy(policy(&[&format!("localhost:{port}")])).await;
    let plain = b"GET / HTTP/1.1\r\nHost: other-site.example\r\n\r\n";
    let back = through_tunnel(addr, &format!("localhost:{port}"), plain).await;
    assert_eq!(back, REFUSED);
    assert_eq!(received.recv().await.unwrap(), b"");
}

#[tokio::test]
async fn a_tunnel_to_a_listed_address_must_name_no_server() {
    let (port, mut received) = recording_upstream().await;
    let addr = start_proxy(policy(&[&format!("127.0.0.1:{port}")])).await;
    let target = format!("127.0.0.1:{port}");
    // rustls, like every TLS client, sends no server name for an address.
    let hello = client_hello("127.0.0.1", true);
    assert!(through_tunnel(addr, &target, &hello).await.is_empty());
    assert!(received.recv().await.unwrap() == hello);
    let named = client_hello("other-site.example", true);
    assert_eq!(through_tunnel(addr, &target, &named).await, REFUSED);
    assert_eq!(received.recv().await.unwrap(), b"");
}

#[tokio::test]
async fn a_request_whose_host_header_differs_from_its_url_is_refused() {
    let policy = policy(&["registry.npmjs.org"]);
    for host in [
        "other-site.example",
        "registry.npmjs.org:8080",
        "registry.npmjs.org.",
        "registry.npmjs.org\r\nHost: other-site.example",
    ] {
        let request =
            format!("GET http://registry.npmjs.org/react HTTP/1.1\r\nHost: {host}\r\n\r\n");
        let answer = ask(&policy, request.as_bytes()).await;
        assert!(
            answer.starts_with("HTTP/1.1 400 Bad Request\r\n"),
            "{host:?}: {answer}"
        );
        assert!(
            answer.contains("is not the URL's host registry.npmjs.org:80"),
            "{host:?}: {answer}"
        );
    }
}

#[tokio::test]
async fn a_request_whose_host_header_matches_its_url_goes_with_the_urls_host() {
    let (port, mut heads) = http_upstream().await;
    let addr = start_proxy(policy(&[&format!("localhost:{port}")])).await;
    for given in [format!("\r\nHost: LOCALHOST:{port}"), String::new()] {
        let mut client = TcpStream::connect(addr).await.unwrap();
        let request =
            format!("GET http://localhost:{port}/react HTTP/1.1{given}\r\nAccept: */*\r\n\r\n");
        client.write_all(request.as_bytes()).await.unwrap();
        let mut answer = String::new();
        client.read_to_string(&mut answer).await.unwrap();
        assert!(answer.ends_with("\r\n\r\nhello"), "{answer}");
        let head = heads.recv().await.unwrap();
        let expected = format!("GET /react HTTP/1.1\r\nHost: localhost:{port}\r\nAccept: */*\r\n");
        assert!(head.starts_with(&expected), "{head}");
        assert_eq!(head.matches("Host:").count(), 1, "{head}");
    }
}

/// A TCP server on 127.0.0.1 that sends back every byte it receives.
async fn echo_upstream() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            tokio::spawn(async move {
                let (mut read, mut write) = stream.into_split();
                let _ = tokio::io::copy(&mut read, &mut write).await;
            });
        }
    });
    port
}

#[tokio::test]
async fn a_listed_host_gets_the_request_without_the_proxy_headers() {
    let (port, mut heads) = http_upstream().await;
    let addr = start_proxy(policy(&[&format!("127.0.0.1:{port}")])).await;
    let mut client = TcpStream::connect(addr).await.unwrap();
    let request = format!(
        "GET http://127.0.0.1:{port}/react?x=1 HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\
         Proxy-Connection: keep-alive\r\nProxy-Authorization: Basic c2VjcmV0\r\nAccept: */*\r\n\r\n"
    );
    client.write_all(request.as_bytes()).await.unwrap();
    let mut answer = String::new();
    client.read_to_string(&mut answer).await.unwrap();
    assert!(answer.starts_with("HTTP/1.1 200 OK\r\n"), "{answer}");
    assert!(answer.ends_with("\r\n\r\nhello"), "{answer}");
    let head = heads.recv().await.unwrap();
    assert!(head.starts_with("GET /react?x=1 HTTP/1.1\r\n"), "{head}");
    assert!(head.contains("Accept: */*\r\n"), "{head}");
    assert!(head.contains("Connection: close\r\n"), "{head}");
    assert!(!head.to_ascii_lowercase().contains("proxy-"), "{head}");
}

#[tokio::test]
async fn a_connect_tunnel_carries_bytes_unchanged_both_ways() {
    let port = echo_upstream().await;
    let addr = start_proxy(policy(&[&format!("localhost:{port}")])).await;
    let mut client = TcpStream::connect(addr).await.unwrap();
    // A ClientHello sent right behind the head goes through too.
    let hello = client_hello("localhost", true);
    let mut request =
        format!("CONNECT localhost:{port} HTTP/1.1\r\nHost: localhost:{port}\r\n\r\n").into_bytes();
    request.extend_from_slice(&hello);
    client.write_all(&request).await.unwrap();
    let established = b"HTTP/1.1 200 Connection established\r\n\r\n";
    let mut reply = vec![0u8; established.len() + hello.len()];
    client.read_exact(&mut reply).await.unwrap();
    assert_eq!(&reply[..established.len()], established);
    assert!(reply[established.len()..] == hello[..]);

    // Every byte value, in a stream larger than any buffer on the way.
    let sent: Vec<u8> = (0..3 * 1024 * 1024u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    let (mut read, mut write) = client.into_split();
    let writer = {
        let sent = sent.clone();
        tokio::spawn(async move {
            write.write_all(&sent).await.unwrap();
            write.shutdown().await.unwrap();
        })
    };
    let mut received = Vec::new();
    tokio::time::timeout(Duration::from_secs(60), read.read_to_end(&mut received))
        .await
        .unwrap()
        .unwrap();
    writer.await.unwrap();
    assert_eq!(received.len(), sent.len());
    assert!(received == sent, "the tunnel changed the bytes");
}

#[tokio::test]
async fn an_unlisted_host_is_refused_with_403_naming_the_setting() {
    let policy = policy(&["registry.npmjs.org"]);
    for request in [
        "CONNECT github.com:443 HTTP/1.1\r\nHost: github.com:443\r\n\r\n",
        "GET http://169.254.169.254/latest/meta-data/ HTTP/1.1\r\nHost: 169.254.169.254\r\n\r\n",
        "GET http://metadata.google.internal/ HTTP/1.1\r\n\r\n",
        "CONNECT evil.registry.npmjs.org:443 HTTP/1.1\r\n\r\n",
    ] {
        let answer = ask(&policy, request.as_bytes()).await;
        assert!(answer.starts_with("HTTP/1.1 403 Forbidden\r\n"), "{answer}");
        for needle in [
            "sandbox.registry_hosts (registry.npmjs.org)",
            "sandbox.network = \"full\"",
        ] {
            assert!(answer.contains(needle), "{needle} missing in {answer}");
        }
    }
    let answer = ask(&policy, b"CONNECT github.com:443 HTTP/1.1\r\n\r\n").await;
    assert!(answer.contains("refused github.com:443"), "{answer}");
}

#[tokio::test]
async fn an_ip_literal_is_refused_unless_that_address_is_listed() {
    let port = echo_upstream().await;
    // The name that resolves to the upstream is listed; its addresses are not.
    let policy = policy(&[&format!("localhost:{port}")]);
    for target in [
        format!("127.0.0.1:{port}"),
        format!("[::1]:{port}"),
        format!("2130706433:{port}"),
        format!("0x7f.1:{port}"),
        format!("127.1:{port}"),
    ] {
        let answer = ask(
            &policy,
            format!("CONNECT {target} HTTP/1.1\r\n\r\n").as_bytes(),
        )
        .await;
        assert!(answer.starts_with("HTTP/1.1 403 "), "{target}: {answer}");
    }
    // The name itself goes through, whatever its case.
    let (mut client, server) = tokio::io::duplex(64 * 1024);
    tokio::spawn(async move { handle(server, &policy).await });
    let hello = client_hello("localhost", true);
    let mut request = format!("CONNECT LOCALHOST:{port} HTTP/1.1\r\n\r\n").into_bytes();
    request.extend_from_slice(&hello);
    client.write_all(&request).await.unwrap();
    let mut answer = vec![0u8; 39 + hello.len()];
    client.read_exact(&mut answer).await.unwrap();
    assert_eq!(
        &answer[..39],
        b"HTTP/1.1 200 Connection established\r\n\r\n"
    );
    assert!(answer[39..] == hello[..]);
}

#[tokio::test]
async fn a_listed_host_on_another_port_is_refused() {
    let port = echo_upstream().await;
    let policy = policy(&[&format!("127.0.0.1:{port}"), "localhost"]);
    for target in [
        "127.0.0.1:22",
        "127.0.0.1:443",
        "localhost:22",
        "localhost:8080",
    ] {
        let answer = ask(
            &policy,
            format!("CONNECT {target} HTTP/1.1\r\n\r\n").as_bytes(),
        )
        .await;
        assert!(answer.starts_with("HTTP/1.1 403 "), "{target}: {answer}");
    }
}

#[tokio::test]
async fn malformed_requests_are_refused_with_400_saying_why() {
    let policy = policy(&["registry.npmjs.org"]);
    let huge = format!(
        "GET http://registry.npmjs.org/ HTTP/1.1\r\nX: {}\r\n",
        "a".repeat(20_000)
    );
    for (request, why) in [
        ("hello there\r\n\r\n", "not HTTP/1"),
        (
            "GET / HTTP/1.1\r\nHost: registry.npmjs.org\r\n\r\n",
            "this is an HTTP proxy",
        ),
        (
            "GET https://registry.npmjs.org/ HTTP/1.1\r\n\r\n",
            "go through CONNECT",
        ),
        (
            "GET ftp://registry.npmjs.org/ HTTP/1.1\r\n\r\n",
            "this is an HTTP proxy",
        ),
        (
            "CONNECT registry.npmjs.org HTTP/1.1\r\n\r\n",
            "CONNECT needs host:port",
        ),
        (
            "CONNECT registry.npmjs.org:99999 HTTP/1.1\r\n\r\n",
            "bad host",
        ),
        ("CONNECT *.npmjs.org:443 HTTP/1.1\r\n\r\n", "bad host"),
        (
            "GET http://user@registry.npmjs.org@x/ HTTP/1.1\r\n\r\n",
            "bad host",
        ),
        (huge.as_str(), "larger than"),
    ] {
        let answer = ask(&policy, request.as_bytes()).await;
        assert!(
            answer.starts_with("HTTP/1.1 400 Bad Request\r\n"),
            "{request:.60}: {answer}"
        );
        assert!(
            answer.contains(why),
            "{why} missing for {request:.60}: {answer}"
        );
    }
}

#[tokio::test]
async fn a_listed_host_that_does_not_answer_gets_502() {
    let closed = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let policy = policy(&[&format!("127.0.0.1:{closed}")]);
    let request = format!("CONNECT 127.0.0.1:{closed} HTTP/1.1\r\n\r\n");
    let answer = ask(&policy, request.as_bytes()).await;
    assert!(
        answer.starts_with("HTTP/1.1 502 Bad Gateway\r\n"),
        "{answer}"
    );
    assert!(
        answer.contains(&format!("could not reach 127.0.0.1:{closed}")),
        "{answer}"
    );
}

#[test]
fn an_absolute_url_becomes_an_origin_form_request() {
    let raw = b"POST http://Mirror.LAN:4873?q HTTP/1.0\r\nContent-Length: 2\r\n\r\nhi";
    let request = parse_request(raw).unwrap();
    assert_eq!((request.host.as_str(), request.port), ("mirror.lan", 4873));
    assert_eq!(request.head_len, raw.len() - 2);
    let Kind::Forward { head } = request.kind else {
        panic!("not forwarded")
    };
    assert_eq!(
        String::from_utf8(head).unwrap(),
        "POST /?q HTTP/1.0\r\nHost: mirror.lan:4873\r\nContent-Length: 2\r\nConnection: close\r\n\r\n"
    );
}
