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
    let addr = start_proxy(policy(&[&format!("127.0.0.1:{port}")])).await;
    let mut client = TcpStream::connect(addr).await.unwrap();
    // Bytes sent right behind the head go through too.
    let request =
        format!("CONNECT 127.0.0.1:{port} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\nearly");
    client.write_all(request.as_bytes()).await.unwrap();
    let established = b"HTTP/1.1 200 Connection established\r\n\r\n";
    let mut reply = vec![0u8; established.len() + 5];
    client.read_exact(&mut reply).await.unwrap();
    assert_eq!(&reply[..established.len()], established);
    assert_eq!(&reply[established.len()..], b"early");

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
    let request = format!("CONNECT LOCALHOST:{port} HTTP/1.1\r\n\r\nping");
    client.write_all(request.as_bytes()).await.unwrap();
    let mut answer = vec![0u8; 43];
    client.read_exact(&mut answer).await.unwrap();
    assert_eq!(answer, b"HTTP/1.1 200 Connection established\r\n\r\nping");
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
        "POST /?q HTTP/1.0\r\nContent-Length: 2\r\nHost: Mirror.LAN:4873\r\nConnection: close\r\n\r\n"
    );
}
