//! The `Origin` rule of a loopback server without a token: a web page (which always sends `Origin`)
//! is refused, but a program that names the server's own address and port as its origin is
//! taken. Python's websocket-client sends `Origin: http://127.0.0.1:PORT` by default and was
//! refused (401) until it passed `suppress_origin=True`. No page can come from that origin: the
//! server holds that address and port, and serves no pages.

use crate::websocket::{call, config, connect, listen};

#[tokio::test]
async fn a_program_naming_the_servers_own_address_as_origin_is_taken() {
    let dir = tempfile::tempdir().unwrap();
    let (address, _stop, _running) = listen(config(dir.path(), None), None).await;
    let port = address.port();
    for origin in [
        format!("http://127.0.0.1:{port}"),
        format!("https://127.0.0.1:{port}"),
    ] {
        let mut socket = connect(address, &[("origin", &origin)])
            .await
            .unwrap_or_else(|error| panic!("{origin}: {error}"));
        let init = call(&mut socket, 1, "initialize", serde_json::Value::Null).await;
        assert_eq!(init["result"]["server"], "ctxkit", "{origin}: {init}");
    }
}

#[tokio::test]
async fn every_other_origin_is_refused_without_the_token() {
    let dir = tempfile::tempdir().unwrap();
    let (address, _stop, _running) = listen(config(dir.path(), None), None).await;
    let port = address.port();
    let other_port = port.wrapping_add(1).max(1);
    for origin in [
        "https://evil.example".to_owned(),
        format!("http://evil.example:{port}"),
        // A DNS-rebinding page: its origin names the attacker's host, whatever it resolves to.
        format!("http://127.0.0.1.evil.example:{port}"),
        format!("http://127.0.0.1:{other_port}"),
        "http://127.0.0.1".to_owned(),
        // Another loopback address or name: another local account may serve a page there on the
        // same port (this server holds 127.0.0.1 only), and a browser of this user show it.
        format!("http://localhost:{port}"),
        format!("http://[::1]:{port}"),
        format!("http://127.0.0.2:{port}"),
        format!("http://127.0.0.1:{port}/"),
        format!("http://user@127.0.0.1:{port}"),
        format!("ftp://127.0.0.1:{port}"),
        "null".to_owned(),
        String::new(),
    ] {
        let refused = connect(address, &[("origin", &origin)]).await;
        let error = refused.map(|_| ()).expect_err(&origin);
        assert!(error.contains("401"), "{origin}: {error}");
    }
}

#[tokio::test]
async fn any_origin_is_taken_with_the_token() {
    let dir = tempfile::tempdir().unwrap();
    let (address, _stop, _running) = listen(config(dir.path(), None), Some("s3cret")).await;
    let mut socket = connect(
        address,
        &[
            ("origin", "https://app.example"),
            ("authorization", "Bearer s3cret"),
        ],
    )
    .await
    .unwrap();
    let init = call(&mut socket, 1, "initialize", serde_json::Value::Null).await;
    assert_eq!(init["result"]["server"], "ctxkit", "{init}");
}

/// QA 2026-12-07: with two `Authorization` headers only the first was read: the right token then
/// a wrong one passed, the other order did not. Two credentials are refused either way.
#[tokio::test]
async fn two_authorization_headers_are_refused_in_either_order() {
    let dir = tempfile::tempdir().unwrap();
    let (address, _stop, _running) = listen(config(dir.path(), None), Some("s3cret")).await;
    for pair in [
        ["Bearer s3cret", "Bearer wrong"],
        ["Bearer wrong", "Bearer s3cret"],
    ] {
        let headers = [("authorization", pair[0]), ("authorization", pair[1])];
        let error = connect(address, &headers).await.unwrap_err().to_string();
        assert!(error.contains("401"), "{pair:?}: {error}");
    }
    let headers = [("authorization", "Bearer s3cret")];
    assert!(connect(address, &headers).await.is_ok());
}

/// A tester's client connected to `ws://localhost:PORT` (`--listen`'s own hint names
/// `localhost:8477`) and was refused with "the Origin must be this server's own address … as the
/// client connected to it", which it was. The refusal names the address to connect to.
#[tokio::test]
async fn a_client_that_connected_by_name_is_told_the_address() {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    let dir = tempfile::tempdir().unwrap();
    let (address, _stop, _running) = listen(config(dir.path(), None), None).await;
    let port = address.port();
    let mut stream = tokio::net::TcpStream::connect(address).await.unwrap();
    let request = format!(
        "GET /rpc HTTP/1.1\r\nHost: localhost:{port}\r\nOrigin: http://localhost:{port}\r\n\
         Connection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\n\
         Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nConnection: close\r\n\r\n"
    );
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut answer = String::new();
    tokio::time::timeout(
        std::time::Duration::from_secs(10),
        stream.read_to_string(&mut answer),
    )
    .await
    .unwrap()
    .unwrap();
    assert!(answer.starts_with("HTTP/1.1 401"), "{answer}");
    assert!(
        answer.contains(&format!(
            "this server's own address, `http://127.0.0.1:{port}`"
        )) && answer.contains("connect to the address instead"),
        "{answer}"
    );
}
