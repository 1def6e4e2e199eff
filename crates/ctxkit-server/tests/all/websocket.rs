//! `serve --listen` over a real socket on loopback: the protocol at `/rpc`, `/health`, the token,
//! a web page's `Origin` refused, the request limit, the drain, and (with PostgreSQL from
//! `CTXKIT_TEST_DATABASE_URL`) a session moving to another instance after its writer died.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use ctxkit_compaction::Prompts;
use ctxkit_server::{ListenError, Listener, ServerConfig, StoreBinding};
use futures::{SinkExt as _, StreamExt as _};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::client::IntoClientRequest as _;

use crate::support::{Fixed, settings};

pub(crate) type Socket =
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

pub(crate) fn config(dir: &std::path::Path, store: Option<StoreBinding>) -> ServerConfig {
    ServerConfig {
        settings: settings(2_000),
        summarizer: Arc::new(Fixed),
        prompts: Prompts::default(),
        model: None,
        sessions_root: dir.to_path_buf(),
        agent: None,
        max_request_bytes: 8 * 1024,
        max_queued_bytes: 64 * 1024,
        foreign_hint: None,
        store,
    }
}

pub(crate) type Running = (
    SocketAddr,
    tokio::sync::oneshot::Sender<()>,
    tokio::task::JoinHandle<()>,
);

/// A listener on a free loopback port, running until the returned sender is dropped or sent.
pub(crate) async fn listen(config: ServerConfig, token: Option<&str>) -> Running {
    listen_within(config, token, None).await
}

/// [`listen`] with its connections' limits.
pub(crate) async fn listen_within(
    config: ServerConfig,
    token: Option<&str>,
    limits: Option<ctxkit_http::ConnectionLimits>,
) -> Running {
    let mut listener = Listener::bind(
        "127.0.0.1:0".parse().unwrap(),
        token.map(str::to_owned),
        config,
    )
    .await
    .unwrap();
    if let Some(limits) = limits {
        listener.set_limits(limits);
    }
    let address = listener.local_addr();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let running = tokio::spawn(listener.run(async move {
        let _ = stopped.await;
    }));
    (address, stop, running)
}

pub(crate) async fn connect(
    address: SocketAddr,
    headers: &[(&str, &str)],
) -> Result<Socket, String> {
    let mut request = format!("ws://{address}/rpc").into_client_request().unwrap();
    // Appended: a name given twice is sent twice.
    for (name, value) in headers {
        request.headers_mut().append(
            hyper::header::HeaderName::from_bytes(name.as_bytes()).unwrap(),
            value.parse().unwrap(),
        );
    }
    tokio_tungstenite::connect_async(request)
        .await
        .map(|(socket, _)| socket)
        .map_err(|error| error.to_string())
}

/// Sends a request and returns its response (events are skipped).
pub(crate) async fn call(socket: &mut Socket, id: u64, method: &str, params: Value) -> Value {
    let request = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
    socket
        .send(Message::text(request.to_string()))
        .await
        .unwrap();
    response(socket, id).await
}

async fn response(socket: &mut Socket, id: u64) -> Value {
    loop {
        let message = tokio::time::timeout(Duration::from_secs(20), socket.next())
            .await
            .expect("a response within 20 s")
            .expect("the connection is open")
            .unwrap();
        if let Message::Text(text) = message {
            let value: Value = serde_json::from_str(&text).unwrap();
            if value["id"] == json!(id) {
                return value;
            }
        }
    }
}

pub(crate) fn user(text: &str) -> Value {
    json!({"message": {"role": "user", "content": text, "timestamp": 1_763_900_000_000_i64}})
}

/// A plain HTTP GET; returns the status line and the body.
pub(crate) async fn get(address: SocketAddr, path: &str) -> (String, String) {
    let mut stream = tokio::net::TcpStream::connect(address).await.unwrap();
    let request = format!("GET {path} HTTP/1.1\r\nHost: {address}\r\nConnection: close\r\n\r\n");
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut bytes = Vec::new();
    // A connection over the cap is answered and closed without its request being read: the close
    // may reach the client as a reset after the answer.
    let _ = stream.read_to_end(&mut bytes).await;
    let answer = String::from_utf8_lossy(&bytes).into_owned();
    let status = answer.lines().next().unwrap_or_default().to_owned();
    let body = answer
        .split_once("\r\n\r\n")
        .map(|(_, body)| body.to_owned())
        .unwrap_or_default();
    (status, body)
}

#[tokio::test]
async fn a_client_over_websocket_uses_the_stdio_protocol() {
    let dir = tempfile::tempdir().unwrap();
    let (address, _stop, _running) = listen(config(dir.path(), None), None).await;
    let (status, body) = get(address, "/health").await;
    assert!(status.contains("200"), "{status}");
    assert_eq!(
        serde_json::from_str::<Value>(&body).unwrap()["status"],
        "ok"
    );
    assert!(get(address, "/nothing").await.0.contains("404"));
    assert!(
        get(address, "/rpc").await.0.contains("426"),
        "a plain GET of /rpc"
    );

    let mut socket = connect(address, &[]).await.unwrap();
    let created = call(
        &mut socket,
        1,
        "session.create",
        json!({"cwd": "/home/me/p"}),
    )
    .await;
    assert_eq!(created["result"]["cwd"], "/home/me/p", "{created}");
    let appended = call(&mut socket, 2, "message.append", user("fix the parser")).await;
    assert!(appended["result"]["entry_id"].is_string(), "{appended}");
    // A pretty-printed request (line breaks between tokens) is one request.
    let pretty = "{\n \"jsonrpc\": \"2.0\",\n \"id\": 3,\n \"method\": \"view.get\"\n}";
    socket.send(Message::text(pretty)).await.unwrap();
    let view = response(&mut socket, 3).await;
    assert_eq!(
        view["result"]["messages"][0]["content"], "fix the parser",
        "{view}"
    );
    // A second connection is another client: no session open.
    let mut other = connect(address, &[]).await.unwrap();
    let info = call(&mut other, 1, "session.info", Value::Null).await;
    assert_eq!(info["error"]["code"], -32001, "{info}");
}

#[tokio::test]
async fn any_address_but_loopback_needs_a_token() {
    let dir = tempfile::tempdir().unwrap();
    let refused = Listener::bind("0.0.0.0:0".parse().unwrap(), None, config(dir.path(), None))
        .await
        .unwrap_err();
    assert!(
        matches!(refused, ListenError::TokenRequired { .. }),
        "{refused}"
    );
    assert!(
        refused.to_string().contains("CTXKIT_SERVER_TOKEN"),
        "{refused}"
    );
    let empty = Listener::bind(
        "0.0.0.0:0".parse().unwrap(),
        Some(String::new()),
        config(dir.path(), None),
    )
    .await;
    assert!(empty.is_err(), "an empty token is no token");
}

#[tokio::test]
async fn the_token_is_required_once_set() {
    let dir = tempfile::tempdir().unwrap();
    let (address, _stop, _running) = listen(config(dir.path(), None), Some("s3cret-token")).await;
    let missing = connect(address, &[]).await.unwrap_err();
    assert!(missing.contains("401"), "{missing}");
    let wrong = connect(address, &[("authorization", "Bearer s3cret-tokeN")])
        .await
        .unwrap_err();
    assert!(wrong.contains("401"), "{wrong}");
    // The refusals say which: a token missing, or a wrong one (QA r97: both read "required").
    assert!(
        refusal(address, None)
            .await
            .contains("a bearer token is required")
    );
    let wrong = refusal(address, Some("s3cret-tokeN")).await;
    assert!(wrong.contains("the bearer token is wrong"), "{wrong}");
    let mut socket = connect(address, &[("authorization", "Bearer s3cret-token")])
        .await
        .unwrap();
    let init = call(&mut socket, 1, "initialize", Value::Null).await;
    assert_eq!(init["result"]["server"], "ctxkit", "{init}");
    // The scheme's name is case-insensitive (RFC 7235); the token is not.
    for scheme in ["bearer", "BEARER", "bEaReR"] {
        let value = format!("{scheme} s3cret-token");
        let mut socket = connect(address, &[("authorization", &value)])
            .await
            .unwrap_or_else(|error| panic!("{scheme}: {error}"));
        let init = call(&mut socket, 1, "initialize", Value::Null).await;
        assert_eq!(init["result"]["server"], "ctxkit", "{init}");
    }
    for refused in [
        "Basic s3cret-token",
        "Bearers3cret-token",
        "bearer S3CRET-TOKEN",
    ] {
        let error = connect(address, &[("authorization", refused)])
            .await
            .unwrap_err();
        assert!(error.contains("401"), "{refused}: {error}");
    }
    // The health endpoint needs none (a load balancer probes it) and tells nothing secret.
    let (status, body) = get(address, "/health").await;
    assert!(status.contains("200") && !body.contains("s3cret"), "{body}");
}

#[tokio::test]
async fn a_web_page_cannot_drive_a_loopback_server() {
    // A page on any site may open a WebSocket to 127.0.0.1; the browser sends its Origin.
    let dir = tempfile::tempdir().unwrap();
    let (address, _stop, _running) = listen(config(dir.path(), None), None).await;
    let refused = connect(address, &[("origin", "https://evil.example")])
        .await
        .unwrap_err();
    assert!(refused.contains("401"), "{refused}");
}

#[tokio::test]
async fn a_too_long_message_is_answered_as_a_too_long_line_is() {
    let dir = tempfile::tempdir().unwrap();
    let (address, _stop, _running) = listen(config(dir.path(), None), None).await;
    let mut socket = connect(address, &[]).await.unwrap();
    let long = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"pad": "x".repeat(10_000)}});
    socket.send(Message::text(long.to_string())).await.unwrap();
    let answer = loop {
        if let Some(Ok(Message::Text(text))) = socket.next().await {
            break serde_json::from_str::<Value>(&text).unwrap();
        }
    };
    assert_eq!(answer["error"]["code"], -32600, "{answer}");
    assert!(
        answer["error"]["message"]
            .as_str()
            .unwrap()
            .contains("server.maxRequestBytes"),
        "{answer}"
    );
    // The connection still serves.
    let init = call(&mut socket, 2, "initialize", Value::Null).await;
    assert_eq!(init["result"]["server"], "ctxkit");
}

/// The close frame the server ends the connection with (after any answers).
async fn close_frame(socket: &mut Socket) -> (u16, String) {
    loop {
        let message = tokio::time::timeout(Duration::from_secs(10), socket.next())
            .await
            .expect("a close within 10 s");
        match message {
            Some(Ok(Message::Close(Some(frame)))) => {
                return (u16::from(frame.code), frame.reason.to_string());
            }
            Some(Ok(Message::Close(None)) | Err(_)) | None => panic!("closed without a frame"),
            Some(Ok(_)) => {}
        }
    }
}

#[tokio::test]
async fn a_text_message_that_is_not_utf8_closes_with_1007() {
    use tokio_tungstenite::tungstenite::protocol::frame::Frame;
    use tokio_tungstenite::tungstenite::protocol::frame::coding::{Data, OpCode};
    let dir = tempfile::tempdir().unwrap();
    let (address, _stop, _running) = listen(config(dir.path(), None), None).await;
    let mut socket = connect(address, &[]).await.unwrap();
    let bytes = b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"init\xff\"}".to_vec();
    socket
        .send(Message::Frame(Frame::message(
            bytes,
            OpCode::Data(Data::Text),
            true,
        )))
        .await
        .unwrap();
    let (code, reason) = close_frame(&mut socket).await;
    assert_eq!(code, 1007, "{reason}");
    assert!(reason.contains("not UTF-8"), "{reason}");
}

/// `docs/protocol.md`'s threshold is the server's: with a request limit of 8 KiB a message of
/// 2 × (8 + 64) KiB is answered, one byte more closes the connection.
#[tokio::test]
async fn a_message_over_twice_the_limit_closes_with_1009() {
    let documented = "one over 2 × (`server.maxRequestBytes` + 64 KiB) closes it, 1009";
    let doc = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../docs/protocol.md"
    ))
    .unwrap();
    let doc = doc.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        doc.contains(documented),
        "docs/protocol.md states the threshold"
    );
    let threshold = 2 * (8 + 64) * 1024;
    let dir = tempfile::tempdir().unwrap();
    let (address, _stop, _running) = listen(config(dir.path(), None), None).await;
    let mut socket = connect(address, &[]).await.unwrap();
    socket
        .send(Message::text("x".repeat(threshold)))
        .await
        .unwrap();
    let answer = call(&mut socket, 2, "initialize", Value::Null).await;
    assert_eq!(answer["result"]["server"], "ctxkit", "still open: {answer}");
    let _ = socket.send(Message::text("x".repeat(threshold + 1))).await;
    let (code, reason) = close_frame(&mut socket).await;
    assert_eq!(code, 1009, "{reason}");
    assert!(
        reason.contains("2 × (`server.maxRequestBytes` + 64 KiB)"),
        "{reason}"
    );
}

/// Sockets that open a request and never finish its headers (QA: thousands of them locked the
/// server up, `/health` included) are closed after the header-read timeout; meanwhile a connection
/// over `server.maxConnections` is answered 503 at once, and a WebSocket counts for as long as it
/// lasts.
#[tokio::test]
async fn sockets_that_never_finish_a_request_are_closed_and_capped() {
    let dir = tempfile::tempdir().unwrap();
    let limits = ctxkit_http::ConnectionLimits {
        // Long enough for a loaded machine to accept the three and ask `/health` meanwhile.
        header_read_timeout: Duration::from_secs(10),
        ..ctxkit_http::ConnectionLimits::new(3)
    };
    let (address, _stop, _running) =
        listen_within(config(dir.path(), None), None, Some(limits)).await;
    let mut partial = Vec::new();
    for _ in 0..3 {
        let mut stream = tokio::net::TcpStream::connect(address).await.unwrap();
        stream
            .write_all(b"GET /rpc HTTP/1.1\r\nHost: x\r\n")
            .await
            .unwrap();
        partial.push(stream);
    }
    // Once the server has accepted the three (at once on an idle machine), `/health` is refused
    // until their headers' 10 s run out: asked for 8 s at most, a loaded machine's margin.
    let (mut status, mut body) = get(address, "/health").await;
    let asked = std::time::Instant::now();
    while !status.contains("503") && asked.elapsed() < Duration::from_secs(8) {
        tokio::time::sleep(Duration::from_millis(20)).await;
        (status, body) = get(address, "/health").await;
    }
    assert!(status.contains("503"), "{status} {body}");
    assert!(body.contains("too many connections"), "{body}");
    for stream in &mut partial {
        let mut rest = Vec::new();
        let read =
            tokio::time::timeout(Duration::from_secs(30), stream.read_to_end(&mut rest)).await;
        assert!(read.is_ok(), "a partial request was not closed");
    }
    let (status, body) = get(address, "/health").await;
    assert!(status.contains("200"), "{status} {body}");
    // A WebSocket holds its place until it closes.
    let limits = ctxkit_http::ConnectionLimits::new(1);
    let (address, _stop, _running) =
        listen_within(config(dir.path(), None), None, Some(limits)).await;
    let socket = connect(address, &[]).await.unwrap();
    let (status, _) = get(address, "/health").await;
    assert!(status.contains("503"), "{status}");
    drop(socket);
    let mut answered = String::new();
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while std::time::Instant::now() < deadline {
        answered = get(address, "/health").await.0;
        if answered.contains("200") {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(answered.contains("200"), "{answered}");
}

fn assistant(text: &str) -> Value {
    json!({"message": {"role": "assistant", "content": [{"type": "text", "text": text}],
           "provider": "mock", "model": "m", "api": "mock", "stopReason": "stop",
           "timestamp": 1_763_900_000_001_i64,
           "usage": {"input": 1, "output": 1, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 2}}})
}

/// Waits until `/health` counts no client, failing after `limit`.
async fn no_client_within(address: SocketAddr, limit: Duration) {
    let started = std::time::Instant::now();
    loop {
        let (_, body) = get(address, "/health").await;
        if serde_json::from_str::<Value>(&body).unwrap()["clients"] == 0 {
            return;
        }
        assert!(
            started.elapsed() < limit,
            "the client is still counted: {body}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// A session created by `socket` and written (its file locked by this client); returns its file.
pub(crate) async fn written_session(socket: &mut Socket, dir: &std::path::Path) -> String {
    let created = call(socket, 1, "session.create", json!({"cwd": dir})).await;
    call(socket, 2, "message.append", user("one")).await;
    let written = call(socket, 3, "message.append", assistant("one done")).await;
    assert!(written["result"]["entry_id"].is_string(), "{written}");
    created["result"]["session_file"]
        .as_str()
        .unwrap()
        .to_owned()
}

/// Two clients of one server on one session: the second is told another client of this server
/// holds it (`session_in_use`). Before, the error was `session` and named the server's own PID.
#[tokio::test]
async fn a_second_client_is_told_another_client_of_this_server_holds_the_session() {
    let dir = tempfile::tempdir().unwrap();
    let (address, _stop, _running) = listen(config(dir.path(), None), None).await;
    let mut first = connect(address, &[]).await.unwrap();
    let file = written_session(&mut first, dir.path()).await;
    let mut second = connect(address, &[]).await.unwrap();
    let opened = call(&mut second, 1, "session.open", json!({"path": file})).await;
    assert_eq!(opened["result"]["entries"], 2, "{opened}");
    let refused = call(&mut second, 2, "message.append", user("two")).await;
    assert_eq!(
        refused["error"]["data"]["kind"], "session_in_use",
        "{refused}"
    );
    let message = refused["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("another client of this server") && !message.contains("PID"),
        "{message}"
    );
}

/// A client that disconnects during `agent.run` stops the run as `shutdown` would and releases
/// its session at once: `/health` counts it gone and another client writes the session. Before,
/// the run went on (two minutes here) holding the session, and the other client was refused.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_disconnects_stops_its_run_and_releases_its_session() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = config(dir.path(), None);
    let model = crate::attacks::slow(Duration::from_secs(120));
    let asked = std::sync::Arc::clone(&model.asked);
    config.agent = Some(crate::attacks::agent(model));
    let (address, _stop, _running) = listen(config, None).await;
    let mut first = connect(address, &[]).await.unwrap();
    let file = written_session(&mut first, dir.path()).await;
    let run = json!({"jsonrpc": "2.0", "id": 4, "method": "agent.run", "params": {"text": "long"}});
    first.send(Message::text(run.to_string())).await.unwrap();
    // The client leaves while the model call runs.
    tokio::time::timeout(Duration::from_secs(60), asked.notified())
        .await
        .expect("the model is asked");
    drop(first);
    // The model call takes two minutes: gone within 30 s (a loaded machine's margin) is the
    // disconnect stopping it.
    no_client_within(address, Duration::from_secs(30)).await;
    let mut second = connect(address, &[]).await.unwrap();
    let opened = call(&mut second, 1, "session.open", json!({"path": file})).await;
    assert!(opened["result"]["entries"].is_u64(), "{opened}");
    let appended = call(&mut second, 2, "message.append", user("two")).await;
    assert!(appended["result"]["entry_id"].is_string(), "{appended}");
}

#[tokio::test]
async fn a_drain_answers_the_requests_read_then_closes() {
    let dir = tempfile::tempdir().unwrap();
    let (address, stop, running) = listen(config(dir.path(), None), None).await;
    let mut socket = connect(address, &[]).await.unwrap();
    call(&mut socket, 1, "session.create", json!({"cwd": "/p"})).await;
    // Pipelined, then the drain: every request read is answered before the close.
    for id in 2..=6 {
        let request =
            json!({"jsonrpc": "2.0", "id": id, "method": "message.append", "params": user("kept")});
        socket
            .send(Message::text(request.to_string()))
            .await
            .unwrap();
    }
    let sixth = response(&mut socket, 6).await;
    let _ = stop.send(());
    assert!(sixth["result"]["entry_id"].is_string(), "{sixth}");
    let closed = tokio::time::timeout(Duration::from_secs(10), async {
        loop {
            match socket.next().await {
                Some(Ok(Message::Close(_))) | None | Some(Err(_)) => break,
                Some(Ok(_)) => {}
            }
        }
    })
    .await;
    assert!(closed.is_ok(), "the connection is closed after the drain");
    tokio::time::timeout(Duration::from_secs(10), running)
        .await
        .unwrap()
        .unwrap();
    // The entries acknowledged are in the file.
    let file = walk(dir.path()).pop().unwrap();
    let text = std::fs::read_to_string(file).unwrap();
    assert_eq!(text.matches("\"kept\"").count(), 5, "{text}");
    assert!(connect(address, &[]).await.is_err(), "no longer listening");
}

fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            files.extend(walk(&path));
        } else {
            files.push(path);
        }
    }
    files
}

pub(crate) fn database() -> Option<String> {
    match std::env::var("CTXKIT_TEST_DATABASE_URL") {
        Ok(url) if !url.is_empty() => Some(url),
        _ => {
            assert!(
                std::env::var_os("CI").is_none(),
                "CTXKIT_TEST_DATABASE_URL is not set: under CI the PostgreSQL tests must run"
            );
            None
        }
    }
}

pub(crate) async fn binding(url: &str, owner: &str) -> StoreBinding {
    let store = ctxkit_store::AnyStore::open(&ctxkit_store::StoreUrl::parse(url).unwrap())
        .await
        .unwrap();
    StoreBinding {
        store,
        lease: Duration::from_millis(1_500),
        owner: owner.to_owned(),
    }
}

#[test]
fn a_session_moves_to_another_instance_when_its_writer_dies() {
    let Some(url) = database() else { return };
    let dir = tempfile::tempdir().unwrap();
    // Instance A on its own runtime: dropping the runtime kills it as SIGKILL would (no
    // release, no renewal, the connection cut).
    let dying = tokio::runtime::Runtime::new().unwrap();
    let (address_a, id) = dying.block_on(async {
        let (address, stop, _running) =
            listen(config(dir.path(), Some(binding(&url, "A").await)), None).await;
        std::mem::forget(stop);
        let mut socket = connect(address, &[]).await.unwrap();
        let created = call(&mut socket, 1, "session.create", json!({"cwd": "/fleet"})).await;
        let id = created["result"]["session_id"].as_str().unwrap().to_owned();
        let appended = call(&mut socket, 2, "message.append", user("acknowledged on A")).await;
        assert!(appended["result"]["entry_id"].is_string(), "{appended}");
        std::mem::forget(socket);
        (address, id)
    });
    dying.shutdown_background();
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        assert!(connect(address_a, &[]).await.is_err(), "A is dead");
        let (address_b, _stop, _running) =
            listen(config(dir.path(), Some(binding(&url, "B").await)), None).await;
        let mut socket = connect(address_b, &[]).await.unwrap();
        // A's lease still runs: B refuses, naming the writer.
        let refused = call(&mut socket, 1, "session.open", json!({"id": id})).await;
        assert_eq!(
            refused["error"]["data"]["kind"], "session_in_use",
            "{refused}"
        );
        tokio::time::sleep(Duration::from_millis(1_700)).await;
        let opened = call(&mut socket, 2, "session.open", json!({"id": id})).await;
        assert_eq!(opened["result"]["entries"], 1, "{opened}");
        call(&mut socket, 3, "message.append", user("continued on B")).await;
        let view = call(&mut socket, 4, "view.get", Value::Null).await;
        let texts: Vec<&str> = view["result"]["messages"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|message| message["content"].as_str())
            .collect();
        assert_eq!(texts, ["acknowledged on A", "continued on B"], "{view}");
        // A clone is a new stored session: the client goes on in it, the parent's lease given up.
        let cloned = call(&mut socket, 5, "clone", Value::Null).await;
        let clone_id = cloned["result"]["session_id"].as_str().unwrap().to_owned();
        assert_ne!(clone_id, id, "{cloned}");
        let appended = call(&mut socket, 7, "message.append", user("on the clone")).await;
        assert!(appended["result"]["entry_id"].is_string(), "{appended}");
        // The listing is the database's.
        let listed = call(&mut socket, 6, "sessions.list", Value::Null).await;
        let ids: Vec<&str> = listed["result"]["sessions"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|session| session["id"].as_str())
            .collect();
        assert!(
            ids.contains(&id.as_str()) && ids.contains(&clone_id.as_str()),
            "{listed}"
        );
        // The database holds both, and a clean close gives the lease up at once.
        drop(socket);
        let store = binding(&url, "check").await.store;
        let exported = export_once_free(&store, &id)
            .await
            .expect("B released the lease when it cloned the session");
        assert_eq!(exported.entries.len(), 2);
        let clone = export_once_free(&store, &clone_id)
            .await
            .expect("B released the clone's lease when its client left");
        let header: Value = serde_json::from_str(&clone.header).unwrap();
        assert_eq!(header["parentSession"], id.as_str(), "{header}");
        assert!(clone.entries.last().unwrap().contains("on the clone"));
        assert_eq!(clone.entries.len(), 3);
    });
}

/// Session `id` as stored, once its lease is free (taken for a moment to read it); `None` when it
/// stays held for 5 s.
async fn export_once_free(
    store: &ctxkit_store::AnyStore,
    id: &str,
) -> Option<ctxkit_store::SessionLines> {
    use ctxkit_store::SessionStore as _;
    for _ in 0..50 {
        if store
            .acquire(id, "check", Duration::from_secs(1))
            .await
            .is_ok()
        {
            return Some(store.export(id).await.unwrap());
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    None
}

/// Found by a client sweep: a client that queued thousands of requests and disconnected kept its
/// session locked while the server ran every one of them for no one (two minutes there). What a
/// gone client queued is not run: its session is released at once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn what_a_gone_client_queued_is_not_run() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = config(dir.path(), None);
    config.max_request_bytes = 4 << 20;
    config.max_queued_bytes = 64 << 20;
    let (address, _stop, _running) = listen(config, None).await;
    let mut first = connect(address, &[]).await.unwrap();
    let file = written_session(&mut first, dir.path()).await;
    call(
        &mut first,
        4,
        "message.append",
        user(&"z".repeat(2_000_000)),
    )
    .await;
    call(&mut first, 5, "message.append", assistant("ok")).await;
    let view = json!({"jsonrpc": "2.0", "id": 6, "method": "view.get"}).to_string();
    for _ in 0..3_000 {
        first.feed(Message::text(view.clone())).await.unwrap();
    }
    first.flush().await.unwrap();
    drop(first);
    // 3,000 views of 2 MB take minutes; gone within 20 s (a loaded machine's margin) is the queue
    // dropped.
    no_client_within(address, Duration::from_secs(20)).await;
    let mut second = connect(address, &[]).await.unwrap();
    call(&mut second, 1, "session.open", json!({"path": file})).await;
    let appended = call(&mut second, 2, "message.append", user("two")).await;
    assert!(appended["result"]["entry_id"].is_string(), "{appended}");
}

/// The body of the answer to a WebSocket upgrade presenting `token`, read as it is sent.
async fn refusal(address: SocketAddr, token: Option<&str>) -> String {
    let mut stream = tokio::net::TcpStream::connect(address).await.unwrap();
    let authorization = token.map_or(String::new(), |token| {
        format!("Authorization: Bearer {token}\r\n")
    });
    let request = format!(
        "GET /rpc HTTP/1.1\r\nHost: {address}\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\
         Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\
         {authorization}Connection: close\r\n\r\n"
    );
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut answer = String::new();
    tokio::time::timeout(Duration::from_secs(10), stream.read_to_string(&mut answer))
        .await
        .unwrap()
        .unwrap();
    answer
}
