use std::convert::Infallible;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use bytes::Bytes;
use http_body_util::Full;
use hyper::Response;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

use super::*;

/// Out of file descriptors, accepting fails at once every time: the loop waits between tries
/// instead of spinning (before, `continue` tried again at once, thousands of times a second).
#[tokio::test]
async fn a_failing_accept_waits_before_trying_again() {
    let calls = AtomicUsize::new(0);
    let slots = Arc::new(Semaphore::new(1));
    let accept = || {
        calls.fetch_add(1, Ordering::SeqCst);
        async {
            // Lets the timeout below run even if the loop did not wait.
            tokio::task::yield_now().await;
            Err::<((), SocketAddr), _>(io::Error::from_raw_os_error(24))
        }
    };
    let waited = tokio::time::timeout(
        Duration::from_millis(350),
        accept_within(accept, &slots, ACCEPT_BACK_OFF, |()| {}),
    )
    .await;
    assert!(waited.is_err(), "nothing was accepted");
    let calls = calls.load(Ordering::SeqCst);
    assert!((2..=5).contains(&calls), "{calls} tries in 350 ms");
}

fn loopback() -> SocketAddr {
    SocketAddr::from(([127, 0, 0, 1], 0))
}

/// Everything the server sends until it closes the connection.
async fn read_to_close(stream: &mut TcpStream) -> String {
    let mut answer = Vec::new();
    let _ = stream.read_to_end(&mut answer).await;
    String::from_utf8_lossy(&answer).into_owned()
}

/// QA r102: `serve --listen` answered an assistant's `message.append` (an event frame, then the
/// result) in two writes on a socket with Nagle's algorithm on, so the result waited for the
/// client's delayed ACK: 40 ms per append. Accepted connections send at once.
#[tokio::test]
async fn an_accepted_connection_sends_without_delay() {
    let listener = TcpListener::bind(loopback()).await.unwrap();
    let acceptor = Acceptor::new(listener, ConnectionLimits::new(1));
    let _client = TcpStream::connect(acceptor.local_addr().unwrap())
        .await
        .unwrap();
    let accepted = acceptor.accept().await;
    assert!(accepted.stream.nodelay().unwrap());
}

/// QA: a client whose network vanished (no FIN, no RST) kept its connection, and with it its
/// session's lease, until the server stopped. Accepted connections ask after a silent peer.
#[tokio::test]
async fn an_accepted_connection_asks_after_a_silent_peer() {
    let listener = TcpListener::bind(loopback()).await.unwrap();
    let acceptor = Acceptor::new(listener, ConnectionLimits::new(1));
    let _client = TcpStream::connect(acceptor.local_addr().unwrap())
        .await
        .unwrap();
    let accepted = acceptor.accept().await;
    let socket = socket2::SockRef::from(&accepted.stream);
    assert!(socket.keepalive().unwrap());
    assert_eq!(socket.tcp_keepalive_time().unwrap(), KEEPALIVE_IDLE);
    assert_eq!(socket.tcp_keepalive_interval().unwrap(), KEEPALIVE_INTERVAL);
    assert_eq!(socket.tcp_keepalive_retries().unwrap(), KEEPALIVE_PROBES);
    assert_eq!(socket.tcp_user_timeout().unwrap(), Some(USER_TIMEOUT));
}

#[tokio::test]
async fn a_connection_over_the_cap_is_answered_503_and_closed() {
    let listener = TcpListener::bind(loopback()).await.unwrap();
    let acceptor = Arc::new(Acceptor::new(listener, ConnectionLimits::new(1)));
    let address = acceptor.local_addr().unwrap();
    let _first_client = TcpStream::connect(address).await.unwrap();
    let first = acceptor.accept().await;
    assert_eq!(acceptor.open_connections(), 1);
    let waiting = tokio::spawn({
        let acceptor = Arc::clone(&acceptor);
        async move { acceptor.accept().await }
    });
    let mut second = TcpStream::connect(address).await.unwrap();
    let answer = tokio::time::timeout(Duration::from_secs(5), read_to_close(&mut second))
        .await
        .unwrap();
    assert!(answer.starts_with("HTTP/1.1 503 "), "{answer}");
    let (head, body) = answer.split_once("\r\n\r\n").unwrap();
    assert_eq!(body, r#"{"error":"too many connections; try again later"}"#);
    assert!(
        head.contains(&format!("content-length: {}\r\n", body.len())),
        "{head}"
    );
    // A slot let go is taken by the next connection.
    drop(first);
    assert_eq!(acceptor.open_connections(), 0);
    let third = TcpStream::connect(address).await.unwrap();
    let accepted = tokio::time::timeout(Duration::from_secs(5), waiting)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(accepted.peer, third.local_addr().unwrap());
    // Clones of a slot hold it until the last is dropped (a WebSocket's task keeps one).
    let kept = accepted.slot.clone();
    drop(accepted);
    assert_eq!(acceptor.open_connections(), 1);
    drop(kept);
    assert_eq!(acceptor.open_connections(), 0);
}

#[tokio::test]
async fn a_request_whose_headers_never_end_is_closed_after_the_timeout() {
    let limits = ConnectionLimits {
        header_read_timeout: Duration::from_millis(300),
        ..ConnectionLimits::new(4)
    };
    let listener = TcpListener::bind(loopback()).await.unwrap();
    let acceptor = Acceptor::new(listener, limits);
    let address = acceptor.local_addr().unwrap();
    tokio::spawn(async move {
        let accepted = acceptor.accept().await;
        let service = service_fn(|_| async {
            Ok::<_, Infallible>(Response::new(Full::new(Bytes::from_static(b"ok"))))
        });
        let _ = limits
            .http1()
            .serve_connection(TokioIo::new(accepted.stream), service)
            .await;
    });
    let mut client = TcpStream::connect(address).await.unwrap();
    client
        .write_all(b"GET /rpc HTTP/1.1\r\nHost: x\r\n")
        .await
        .unwrap();
    let started = Instant::now();
    let answer = tokio::time::timeout(Duration::from_secs(5), read_to_close(&mut client))
        .await
        .expect("the server closed the connection");
    assert!(started.elapsed() >= Duration::from_millis(250), "{answer}");
    assert!(!answer.contains("ok"), "{answer}");
}
