//! A `session.open` or `session.create` that is refused leaves the client's open session as it
//! was: still open, still writable and, on a database store, still leased to it. On a database
//! store the old session used to be closed before the new one was opened: its lease released and
//! its private copy deleted while `session.info` still answered from it, every later write failed
//! with `session_file_changed`, and another client could take it meanwhile. Checked on the files
//! (no store), on a directory store and on PostgreSQL (`CTXKIT_TEST_DATABASE_URL`).

use std::time::Duration;

use ctxkit_server::StoreBinding;
use ctxkit_store::SessionStore as _;
use serde_json::{Value, json};

use crate::websocket::{Socket, binding, call, config, connect, database, listen, user};

/// A store of session files in `root` with leases as a database has them.
fn directory_binding(root: &std::path::Path, owner: &str) -> StoreBinding {
    StoreBinding {
        store: ctxkit_store::AnyStore::Directory(ctxkit_store::DirectoryStore::new(root)),
        lease: Duration::from_millis(1_500),
        owner: owner.to_owned(),
    }
}

/// The requests that are refused, each with what it is.
fn refused_requests(store: bool, busy: Option<&str>) -> Vec<(&'static str, &'static str, Value)> {
    let mut requests = vec![
        (
            "an open of a file that does not exist",
            "session.open",
            json!({"path": "/nonexistent/ctxkit-test.jsonl"}),
        ),
        (
            "a create in a relative folder",
            "session.create",
            json!({"cwd": "/fleet", "session_dir": "relative/sessions"}),
        ),
        (
            "a create for a relative cwd",
            "session.create",
            json!({"cwd": "relative"}),
        ),
    ];
    if store {
        requests.push((
            "an open of an unknown id",
            "session.open",
            json!({"id": "nope"}),
        ));
    }
    if let Some(busy) = busy {
        requests.push((
            "an open of a session another client holds",
            "session.open",
            json!({"id": busy}),
        ));
    }
    requests
}

/// Creates a session, appends to it, sends each refused request and checks after each that the
/// session is still the one open and takes appends. Returns the session's id.
async fn survives_refused_requests(socket: &mut Socket, store: bool, busy: Option<&str>) -> String {
    let created = call(socket, 1, "session.create", json!({"cwd": "/fleet"})).await;
    let id = created["result"]["session_id"]
        .as_str()
        .unwrap_or_else(|| panic!("{created}"))
        .to_owned();
    let appended = call(socket, 2, "message.append", user("kept 1")).await;
    assert!(appended["result"]["entry_id"].is_string(), "{appended}");
    let mut number = 3;
    for (what, method, params) in refused_requests(store, busy) {
        let refused = call(socket, number, method, params).await;
        assert!(refused["error"].is_object(), "{what} succeeded: {refused}");
        let info = call(socket, number + 1, "session.info", Value::Null).await;
        assert_eq!(
            info["result"]["session_id"], id,
            "after {what}, the session is still open: {info}"
        );
        let appended = call(socket, number + 2, "message.append", user(what)).await;
        assert!(
            appended["result"]["entry_id"].is_string(),
            "after {what}, the session still takes appends: {appended}"
        );
        number += 3;
    }
    let view = call(socket, number, "view.get", Value::Null).await;
    let messages = view["result"]["messages"].as_array().unwrap();
    assert_eq!(
        messages.len(),
        1 + refused_requests(store, busy).len(),
        "{view}"
    );
    id
}

#[tokio::test]
async fn a_refused_open_or_create_leaves_a_file_session_open() {
    let dir = tempfile::tempdir().unwrap();
    let (address, _stop, _running) = listen(config(dir.path(), None), None).await;
    let mut socket = connect(address, &[]).await.unwrap();
    survives_refused_requests(&mut socket, false, None).await;
}

/// On a store: the refused requests change nothing, the session stays leased to its client (no
/// other client opens it) and what was appended after them is stored.
async fn a_refused_open_or_create_leaves_a_stored_session_open(
    first: StoreBinding,
    second: StoreBinding,
) {
    let dir = tempfile::tempdir().unwrap();
    let store = first.store.clone();
    let (address, _stop, _running) = listen(config(dir.path(), Some(first)), None).await;
    let (other_address, _other_stop, _other_running) =
        listen(config(dir.path(), Some(second)), None).await;
    let mut holder = connect(other_address, &[]).await.unwrap();
    let held = call(&mut holder, 1, "session.create", json!({"cwd": "/fleet"})).await;
    let busy = held["result"]["session_id"].as_str().unwrap().to_owned();

    let mut socket = connect(address, &[]).await.unwrap();
    let id = survives_refused_requests(&mut socket, true, Some(&busy)).await;

    let taken = call(&mut holder, 2, "session.open", json!({"id": id})).await;
    assert_eq!(
        taken["error"]["data"]["kind"], "session_in_use",
        "the session is still its client's: {taken}"
    );
    // Opening its own session again keeps what it wrote and goes on writing it.
    let reopened = call(&mut socket, 100, "session.open", json!({"id": id})).await;
    assert_eq!(reopened["result"]["session_id"], id, "{reopened}");
    let appended = call(&mut socket, 101, "message.append", user("after reopening")).await;
    assert!(appended["result"]["entry_id"].is_string(), "{appended}");
    let stored = store.export(&id).await.unwrap();
    assert_eq!(
        stored.entries.len(),
        2 + refused_requests(true, Some(&busy)).len(),
        "every acknowledged entry is stored"
    );
}

#[tokio::test]
async fn a_refused_open_or_create_leaves_a_session_of_a_directory_store_open() {
    let root = tempfile::tempdir().unwrap();
    a_refused_open_or_create_leaves_a_stored_session_open(
        directory_binding(root.path(), "A"),
        directory_binding(root.path(), "B"),
    )
    .await;
}

#[tokio::test]
async fn a_refused_open_or_create_leaves_a_session_of_a_database_open() {
    let Some(url) = database() else { return };
    a_refused_open_or_create_leaves_a_stored_session_open(
        binding(&url, "A").await,
        binding(&url, "B").await,
    )
    .await;
}
