//! The memory all `serve --listen` clients share (`server.maxBufferedBytes`): a client that holds
//! most of it with a message it has not finished holds back another's message, which goes through
//! once the first is done; neither connection is lost.

use std::time::Duration;

use ctxkit_server::Listener;
use futures::{SinkExt as _, StreamExt as _};
use serde_json::Value;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::protocol::frame::Frame;
use tokio_tungstenite::tungstenite::protocol::frame::coding::{Data, OpCode};

use crate::websocket::{Socket, call, config, connect};

/// The next text message within `wait`, if one comes.
async fn answer_within(socket: &mut Socket, wait: Duration) -> Option<Value> {
    let deadline = tokio::time::Instant::now() + wait;
    loop {
        let message = tokio::time::timeout_at(deadline, socket.next())
            .await
            .ok()?;
        if let Some(Ok(Message::Text(text))) = message {
            return Some(serde_json::from_str(&text).unwrap());
        }
    }
}

fn frame(bytes: usize, opcode: OpCode, last: bool) -> Message {
    Message::Frame(Frame::message(vec![b'x'; bytes], opcode, last))
}

#[tokio::test]
async fn a_message_waits_for_room_another_client_holds_then_goes_through() {
    let dir = tempfile::tempdir().unwrap();
    // Requests of 8 KiB: a message is at most 2 × (8 + 64) KiB = 144 KiB, the smallest budget.
    let mut listener = Listener::bind(
        "127.0.0.1:0".parse().unwrap(),
        None,
        config(dir.path(), None),
    )
    .await
    .unwrap();
    listener.set_limits(ctxkit_http::ConnectionLimits::new(3));
    listener.set_memory_budget(0);
    let address = listener.local_addr();
    let (_stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let _running = tokio::spawn(listener.run(async move {
        let _ = stopped.await;
    }));
    let mut holder = connect(address, &[]).await.unwrap();
    let mut waiter = connect(address, &[]).await.unwrap();
    let mut small = connect(address, &[]).await.unwrap();
    // The holder sends 140 KiB of a message and not its end.
    holder
        .send(frame(70 * 1024, OpCode::Data(Data::Text), false))
        .await
        .unwrap();
    // A ping between the fragments gives nothing back (a sweep's attack: it released the
    // message's share, and the rest of it was read outside the budget).
    holder
        .send(Message::Frame(Frame::ping(b"ping".to_vec())))
        .await
        .unwrap();
    holder
        .send(frame(70 * 1024, OpCode::Data(Data::Continue), false))
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(300)).await;
    // The other's message of 140 KiB finds no room: it is not read, so not answered; a third
    // client's `initialize` is (a small message takes no share).
    waiter
        .send(Message::text("x".repeat(140 * 1024)))
        .await
        .unwrap();
    assert_eq!(
        answer_within(&mut waiter, Duration::from_millis(800)).await,
        None,
        "read beyond the budget"
    );
    let init = call(&mut small, 1, "initialize", Value::Null).await;
    assert_eq!(init["result"]["server"], "ctxkit", "{init}");
    // The holder's message ends: its bytes are the server's, and the waiter's message goes in.
    holder
        .send(frame(10, OpCode::Data(Data::Continue), true))
        .await
        .unwrap();
    for socket in [&mut holder, &mut waiter] {
        let answer = answer_within(socket, Duration::from_secs(10))
            .await
            .expect("an answer once there is room");
        assert!(
            answer["error"]["message"]
                .as_str()
                .is_some_and(|message| message.contains("server.maxRequestBytes")),
            "{answer}"
        );
        let init = call(socket, 2, "initialize", Value::Null).await;
        assert_eq!(init["result"]["server"], "ctxkit", "{init}");
    }
}

/// Found by the budget's sweep: the queue budget is first come, first served across clients, so a
/// client whose large requests waited for room behind its own long run held every other client's
/// small request behind them (a `session.create` waited for the other's run to end). A line up to
/// 64 KiB now takes its client's own allowance first.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_small_request_does_not_wait_behind_another_clients_large_queued_lines() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = config(dir.path(), None);
    let model = crate::attacks::slow(Duration::from_secs(120));
    let asked = std::sync::Arc::clone(&model.asked);
    config.agent = Some(crate::attacks::agent(model));
    // Lines up to 256 KiB: the smallest budget is 2 × (256 + 64) KiB = 640 KiB.
    config.max_request_bytes = 256 * 1024;
    config.max_queued_bytes = 64 << 20;
    let mut listener = Listener::bind("127.0.0.1:0".parse().unwrap(), None, config)
        .await
        .unwrap();
    listener.set_memory_budget(0);
    let address = listener.local_addr();
    let (_stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let _running = tokio::spawn(listener.run(async move {
        let _ = stopped.await;
    }));
    let mut hog = connect(address, &[]).await.unwrap();
    crate::websocket::written_session(&mut hog, dir.path()).await;
    let run = serde_json::json!({"jsonrpc": "2.0", "id": 4, "method": "agent.run", "params": {"text": "long"}});
    hog.send(Message::text(run.to_string())).await.unwrap();
    tokio::time::timeout(Duration::from_secs(30), asked.notified())
        .await
        .expect("the model is asked");
    // Behind the two-minute run, four lines of 200 KiB: three hold 600 KiB of the queue budget,
    // the fourth waits for room until the run ends.
    for id in 5..9 {
        let append = serde_json::json!({"jsonrpc": "2.0", "id": id, "method": "message.append",
            "params": crate::websocket::user(&"q".repeat(200 * 1024))});
        hog.send(Message::text(append.to_string())).await.unwrap();
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    let mut other = connect(address, &[]).await.unwrap();
    let request = serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "session.create",
        "params": {"cwd": dir.path().join("other")}});
    other
        .send(Message::text(request.to_string()))
        .await
        .unwrap();
    let created = answer_within(&mut other, Duration::from_secs(10))
        .await
        .expect("a small request is answered while another client's lines wait");
    assert!(created["result"]["session_id"].is_string(), "{created}");
}
