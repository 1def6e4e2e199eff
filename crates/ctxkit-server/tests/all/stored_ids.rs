//! A database store's contents are another user's to write (a shared database, a session someone
//! sent and `store import`ed): a stored session whose id is a path does not choose where `serve`
//! writes its private copy. PostgreSQL from `CTXKIT_TEST_DATABASE_URL`.

use ctxkit_store::SessionStore as _;
use serde_json::json;

use crate::websocket::{binding, call, config, connect, database, listen};

#[test]
fn a_stored_session_whose_id_is_a_path_is_copied_inside_the_private_folder() {
    let Some(url) = database() else { return };
    let dir = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let store = binding(&url, "A").await;
        // An absolute id, and one climbing out of the private folder.
        let absolute = outside.path().join("planted").display().to_string();
        let climbing = format!(
            "../../../../../../..{}",
            outside.path().join("climbed").display()
        );
        for id in [&absolute, &climbing] {
            let header = json!({"type": "session", "version": 3, "id": id,
                "timestamp": "2026-12-01T00:00:00.000Z", "cwd": "/fleet"});
            let lines =
                ctxkit_store::SessionLines::parse("attack", format!("{header}\n").as_bytes())
                    .unwrap();
            store.store.import(&lines).await.unwrap();
        }
        let (address, _stop, _running) = listen(config(dir.path(), Some(store)), None).await;
        let mut socket = connect(address, &[]).await.unwrap();
        for (number, id) in (1..).zip([&absolute, &climbing]) {
            let opened = call(&mut socket, number, "session.open", json!({"id": id})).await;
            assert_eq!(opened["result"]["session_id"], json!(id), "{opened}");
            let written: Vec<_> = std::fs::read_dir(outside.path())
                .unwrap()
                .flatten()
                .collect();
            assert!(written.is_empty(), "the copy went outside: {written:?}");
        }
    });
}
