//! A database outage under `serve --listen` (PostgreSQL from `CTXKIT_TEST_DATABASE_URL`, reached
//! through a proxy the test cuts): `/health` says the store is unavailable, the request whose
//! entries could not be stored says the session was closed and how to reopen it, and the same
//! client reopens it at once when the database is back (its own lease, which it could not
//! release, no longer locks it out for the lease's length).

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::net::{TcpListener, TcpStream};

use crate::websocket::{binding, call, config, connect, database, get, listen, user};

/// A TCP proxy in front of the test database: `cut` drops every connection and every new one at
/// once (the database is down, for this server only), `restore` forwards again.
struct Proxy {
    address: SocketAddr,
    up: Arc<tokio::sync::watch::Sender<bool>>,
}

impl Proxy {
    async fn start(target: SocketAddr) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap();
        let up = Arc::new(tokio::sync::watch::Sender::new(true));
        let state = Arc::clone(&up);
        tokio::spawn(async move {
            while let Ok((mut client, _)) = listener.accept().await {
                let mut watched = state.subscribe();
                if !*watched.borrow() {
                    continue;
                }
                tokio::spawn(async move {
                    let Ok(mut server) = TcpStream::connect(target).await else {
                        return;
                    };
                    tokio::select! {
                        _ = tokio::io::copy_bidirectional(&mut client, &mut server) => {}
                        _ = watched.wait_for(|up| !*up) => {}
                    }
                });
            }
        });
        Self { address, up }
    }

    fn cut(&self) {
        self.up.send_replace(false);
    }

    fn restore(&self) {
        self.up.send_replace(true);
    }
}

/// `url` with its host and port replaced by `address`, and the address it named.
async fn through(url: &str, address: SocketAddr) -> (String, SocketAddr) {
    let (scheme, rest) = url.split_once("://").unwrap();
    let (user, rest) = rest
        .rsplit_once('@')
        .map_or(("", rest), |(user, rest)| (user, rest));
    let (authority, path) = rest.split_once('/').unwrap();
    let target = tokio::net::lookup_host(authority)
        .await
        .unwrap()
        .next()
        .unwrap();
    let user = if user.is_empty() {
        String::new()
    } else {
        format!("{user}@")
    };
    (format!("{scheme}://{user}{address}/{path}"), target)
}

fn texts(view: &Value) -> Vec<String> {
    view["result"]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|message| message["content"].as_str().map(str::to_owned))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn after_a_database_outage_the_client_reopens_its_session_at_once() {
    let Some(url) = database() else { return };
    let (_, target) = through(&url, "127.0.0.1:1".parse().unwrap()).await;
    let proxy = Proxy::start(target).await;
    let (proxied, _) = through(&url, proxy.address).await;
    let mut store = binding(&proxied, "outage").await;
    // Longer than the test: only its own lease being its own lets the client in again.
    store.lease = Duration::from_secs(120);
    let dir = tempfile::tempdir().unwrap();
    let (address, _stop, _running) = listen(config(dir.path(), Some(store)), None).await;
    let (status, body) = get(address, "/health").await;
    assert!(status.contains(" 200 "), "{status} {body}");
    assert!(body.contains(r#""store":"database""#), "{body}");

    let mut socket = connect(address, &[]).await.unwrap();
    let created = call(&mut socket, 1, "session.create", json!({"cwd": "/outage"})).await;
    let id = created["result"]["session_id"].as_str().unwrap().to_owned();
    let before = call(&mut socket, 2, "message.append", user("before")).await;
    assert!(before["result"]["entry_id"].is_string(), "{before}");

    proxy.cut();
    let asked = Instant::now();
    let (status, body) = get(address, "/health").await;
    assert!(status.contains(" 503 "), "{status} {body}");
    assert!(body.contains(r#""status":"store_unavailable""#), "{body}");
    assert!(
        asked.elapsed() < Duration::from_secs(5),
        "{:?}",
        asked.elapsed()
    );
    let failed = call(&mut socket, 3, "message.append", user("during")).await;
    assert_eq!(failed["error"]["data"]["kind"], "store", "{failed}");
    let message = failed["error"]["message"].as_str().unwrap();
    assert!(message.contains("the session was closed"), "{message}");
    assert!(message.contains("`session.open`"), "{message}");

    proxy.restore();
    let reopened = call(&mut socket, 4, "session.open", json!({"id": id})).await;
    assert_eq!(reopened["result"]["entries"], 1, "{reopened}");
    let after = call(&mut socket, 5, "message.append", user("after")).await;
    assert!(after["result"]["entry_id"].is_string(), "{after}");
    let view = call(&mut socket, 6, "view.get", Value::Null).await;
    assert_eq!(texts(&view), ["before", "after"], "{view}");
    let (status, body) = get(address, "/health").await;
    assert!(status.contains(" 200 "), "{status} {body}");
}
