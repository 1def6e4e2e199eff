//! `serve --listen` stopped by a signal while a client's turn runs a command: every client is told
//! (`server_stopping`, then a close 1001 with the reason), the run is cancelled (at once for SIGHUP
//! and Ctrl-C; for SIGTERM after the drain's grace, or at a second signal), the command's process
//! group is killed, the session is written (a database session's lease released, so another
//! writer takes it at once) and the server exits with 128 + the signal's number.
//!
//! QA (fourth round): a stopped `serve --listen` let a running turn go on for 30 s, then dropped
//! it: the agent's `sleep 600` outlived the server (its own process group), the client's socket
//! closed 1000 "the server ended the session" without a word of why, a database session stayed
//! leased until its lease ran out, and the server exited 0 on any signal.

use std::io::{BufRead as _, BufReader};
use std::net::TcpStream;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tungstenite::protocol::frame::coding::CloseCode;
use tungstenite::{Message, WebSocket};

use crate::chat::{World, text, tool_call};
use crate::serve_ends::{alive, assert_command_ends, started_sleep};

/// A `serve --listen` on a free loopback port.
struct Listening {
    child: Child,
    address: String,
}

impl Listening {
    fn start(world: &World, store: Option<&str>) -> Self {
        let mut command = Command::new(env!("CARGO_BIN_EXE_ctxkit"));
        for name in crate::PROVIDER_VARIABLES {
            command.env_remove(name);
        }
        command.envs(store.map(|store| ("CTXKIT_STORE", store)));
        let mut child = command
            .args(["serve", "--listen", "127.0.0.1:0"])
            .env("CTXKIT_HOME", world.home.path())
            .env_remove("CTXKIT_SESSIONS_DIR")
            .current_dir(&world.project)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let address = line
            .strip_prefix("Listening on ws://")
            .and_then(|rest| rest.split('/').next())
            .unwrap_or_else(|| panic!("{line:?}"))
            .to_owned();
        Self { child, address }
    }

    fn signal(&self, name: &str) {
        let sent = Command::new("kill")
            .args([&format!("-{name}"), &self.child.id().to_string()])
            .status()
            .unwrap();
        assert!(sent.success());
    }
}

/// A client of the server, reading with a timeout.
struct Client {
    socket: WebSocket<TcpStream>,
    /// Every text message received, in order.
    received: Vec<Value>,
}

impl Client {
    fn connect(address: &str) -> Self {
        let stream = TcpStream::connect(address).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(20)))
            .unwrap();
        let (socket, _) = tungstenite::client(format!("ws://{address}/rpc"), stream).unwrap();
        Self {
            socket,
            received: Vec::new(),
        }
    }

    fn send(&mut self, id: u64, method: &str, params: Value) {
        let request = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        self.socket
            .send(Message::text(request.to_string()))
            .unwrap();
    }

    /// The next message; at the close, an error with its code and reason.
    fn next(&mut self) -> Result<Value, (CloseCode, String)> {
        loop {
            match self.socket.read().unwrap() {
                Message::Text(text) => {
                    let value: Value = serde_json::from_str(&text).unwrap();
                    self.received.push(value.clone());
                    return Ok(value);
                }
                Message::Close(Some(frame)) => return Err((frame.code, frame.reason.to_string())),
                Message::Close(None) => return Err((CloseCode::Status, String::new())),
                Message::Binary(_) | Message::Ping(_) | Message::Pong(_) | Message::Frame(_) => {}
            }
        }
    }

    fn answer(&mut self, id: u64) -> Value {
        loop {
            let message = self.next().unwrap();
            if message["id"] == id {
                return message;
            }
        }
    }

    /// Every message up to the close, and the close.
    fn until_close(&mut self) -> (CloseCode, String) {
        loop {
            if let Err(close) = self.next() {
                return close;
            }
        }
    }

    fn notification(&self, method: &str) -> Option<&Value> {
        self.received
            .iter()
            .find(|message| message["method"] == method)
    }
}

/// How the server is stopped.
#[derive(Debug, Clone, Copy)]
enum Stop {
    /// One signal, which cancels at once.
    Now(&'static str),
    /// SIGTERM (a drain: the run goes on), then a second SIGTERM, which cancels it.
    TerminateTwice,
}

/// A client's `agent.run` runs `sleep 600`; the server is stopped as `stop` says.
fn stop_during_a_command(stop: Stop, store: Option<&str>) {
    let world = World::new(100_000, json!({}));
    world.answer(tool_call(
        "call_1",
        "bash",
        json!({"command": "sleep 600 & echo $! > sleep.pid; wait", "timeout": 900}),
    ));
    world.answer(text("done", 400));
    let mut server = Listening::start(&world, store);
    let mut client = Client::connect(&server.address);
    client.send(1, "session.create", json!({"cwd": world.project}));
    let created = client.answer(1);
    let session = created["result"]["session_id"].as_str().unwrap().to_owned();
    let file = PathBuf::from(created["result"]["session_file"].as_str().unwrap());
    client.send(
        2,
        "agent.run",
        json!({"text": "sleep-for-a-while", "approve": "all"}),
    );
    let pid = started_sleep(&world.project.join("sleep.pid"));
    let number = match stop {
        Stop::Now(name) => {
            server.signal(name);
            if name == "HUP" { 1 } else { 2 }
        }
        Stop::TerminateTwice => {
            server.signal("TERM");
            let stopping = loop {
                let message = client.next().unwrap();
                if message["method"] == "server_stopping" {
                    break message;
                }
            };
            assert_eq!(stopping["params"]["grace_ms"], 30_000, "{stopping}");
            // The drain lets the run go on.
            std::thread::sleep(Duration::from_millis(300));
            assert!(alive(&pid), "the drain cancelled the run at once");
            // A new connection is still taken and told of the drain (sweep 9: it was refused,
            // which a balancer reads as a crash).
            let health = http_get(&server.address, "/health");
            assert!(
                health.starts_with("HTTP/1.1 503") && health.contains(r#"{"status":"draining"}"#),
                "{health}"
            );
            server.signal("TERM");
            15
        }
    };
    let (code, reason) = client.until_close();
    let stopped = Instant::now();
    let status = server.child.wait().unwrap();
    assert!(
        stopped.elapsed() < Duration::from_secs(5),
        "{stop:?}: the server took {:?} to exit after the close",
        stopped.elapsed()
    );
    assert_command_ends(
        &pid,
        stopped,
        Duration::from_secs(3),
        &format!("{stop:?}: the command outlived the server"),
    );
    assert_eq!(status.code(), Some(128 + number), "{stop:?}: {status:?}");
    let signal = ["", "SIGHUP", "SIGINT"]
        .get(number as usize)
        .copied()
        .unwrap_or("SIGTERM");
    let stopping = client
        .notification("server_stopping")
        .unwrap_or_else(|| panic!("{stop:?}: no server_stopping in {:?}", client.received));
    assert_eq!(stopping["params"]["reason"], signal, "{stopping}");
    let run = client
        .received
        .iter()
        .find(|message| message["id"] == 2)
        .unwrap_or_else(|| panic!("{stop:?}: agent.run unanswered: {:?}", client.received));
    assert_eq!(run["result"]["outcome"], "interrupted", "{run}");
    assert_eq!(code, CloseCode::Away, "{stop:?}: {reason}");
    assert!(reason.contains(signal), "{reason}");
    let text = match store {
        None => std::fs::read_to_string(&file).unwrap(),
        Some(store) => exported_after_taking_the_lease(&world, store, &session),
    };
    assert!(text.contains("sleep-for-a-while"), "{text}");
    assert!(text.contains("Command cancelled"), "{text}");
}

/// The answer to `GET path` on a new connection to `address`, as text.
fn http_get(address: &str, path: &str) -> String {
    use std::io::{Read as _, Write as _};
    let mut stream = std::net::TcpStream::connect(address).unwrap();
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: {address}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    answer
}

/// The database session, read by another writer that takes its lease at once (a lease the
/// stopped server kept would refuse it, exit 5, for `store.leaseSeconds`).
fn exported_after_taking_the_lease(world: &World, store: &str, session: &str) -> String {
    let exported = world.home.path().join("exported.jsonl");
    let ctxkit = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_ctxkit"))
            .args(["--store", store])
            .args(args)
            .env("CTXKIT_HOME", world.home.path())
            .current_dir(&world.project)
            .output()
            .unwrap()
    };
    let output = ctxkit(&[
        "store",
        "export",
        session,
        "-o",
        &exported.display().to_string(),
    ]);
    assert!(output.status.success(), "{output:?}");
    let text = std::fs::read_to_string(&exported).unwrap();
    let last = text
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter_map(|entry| entry["id"].as_str().map(str::to_owned))
        .next_back()
        .unwrap();
    let labelled = ctxkit(&["label", session, &last, "after-the-stop"]);
    assert!(
        labelled.status.success(),
        "the lease was kept: {labelled:?}"
    );
    text
}

#[test]
fn serve_listen_sighup_cancels_the_run_kills_its_command_and_exits_129() {
    stop_during_a_command(Stop::Now("HUP"), None);
}

#[test]
fn serve_listen_ctrl_c_cancels_the_run_and_exits_130() {
    stop_during_a_command(Stop::Now("INT"), None);
}

#[test]
fn serve_listen_sigterm_drains_and_a_second_sigterm_cancels_the_run() {
    stop_during_a_command(Stop::TerminateTwice, None);
}

#[test]
fn serve_listen_sighup_releases_a_database_sessions_lease_at_once() {
    if let Some(database) = crate::store::database() {
        stop_during_a_command(Stop::Now("HUP"), Some(&database));
    }
}
