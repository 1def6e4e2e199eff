//! A listening server that stops tells each client first: the `server_stopping` notification
//! reaches an idle client before the 1001 close frame, every time. It used to be sent from a task of
//! its own, which the client's end of input could abort before it ran (10 of 30 stops with the
//! real binary), so the client got only the close frame.

use std::time::Duration;

use futures::StreamExt as _;
use serde_json::{Value, json};
use tokio_tungstenite::tungstenite::Message;

use ctxkit_server::Listener;

use crate::websocket::{call, config, connect};

/// How many stops: the notice went missing in about one stop of three.
const STOPS: usize = 60;

/// The text messages an idle client receives after the server is told to stop, and the close
/// frame's code. The listener runs on the test's own thread, outside the runtime's workers, as
/// `ctxkit serve --listen` runs it (`block_on`): the stop wakes the client's tasks from outside.
async fn received_on_stop(dir: &std::path::Path) -> (Vec<Value>, Option<u16>) {
    let listener = Listener::bind("127.0.0.1:0".parse().unwrap(), None, config(dir, None))
        .await
        .unwrap();
    let address = listener.local_addr();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let client = tokio::spawn(async move {
        let mut socket = connect(address, &[]).await.unwrap();
        let created = call(&mut socket, 1, "session.create", json!({"cwd": "/p"})).await;
        assert!(created["result"]["session_id"].is_string(), "{created}");
        let _ = stop.send(());
        let mut received = Vec::new();
        let close = tokio::time::timeout(Duration::from_secs(10), async {
            loop {
                match socket.next().await {
                    Some(Ok(Message::Text(text))) => {
                        received.push(serde_json::from_str::<Value>(&text).unwrap());
                    }
                    Some(Ok(Message::Close(frame))) => {
                        break frame.map(|frame| u16::from(frame.code));
                    }
                    None | Some(Err(_)) => break None,
                    Some(Ok(_)) => {}
                }
            }
        })
        .await
        .expect("the connection closes within 10 s");
        (received, close)
    });
    tokio::time::timeout(
        Duration::from_secs(20),
        listener.run(async move {
            let _ = stopped.await;
        }),
    )
    .await
    .expect("the server stops within 20 s");
    client.await.unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_idle_client_is_told_the_server_stops_before_the_close_every_time() {
    let dir = tempfile::tempdir().unwrap();
    let mut missing = 0;
    for _ in 0..STOPS {
        let (received, close) = received_on_stop(dir.path()).await;
        assert_eq!(close, Some(1001), "{received:?}");
        let told = received
            .iter()
            .filter(|message| message["method"] == "server_stopping")
            .count();
        assert!(told <= 1, "told once: {received:?}");
        if told == 0 {
            missing += 1;
        }
    }
    assert_eq!(
        missing, 0,
        "{missing} of {STOPS} stops closed without `server_stopping`"
    );
}
