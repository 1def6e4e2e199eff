//! A `serve --listen` instance frozen past its session's lease (SIGSTOP, a suspended machine; here
//! its runtime is not driven) while another writer takes the session over: once it runs again, its
//! next request is refused with `lease_lost` before it runs. It used to call the model (and would
//! have run the tools) and be refused only when it stored the turn. PostgreSQL from
//! `CTXKIT_TEST_DATABASE_URL`.

use std::sync::Arc;
use std::time::Duration;

use ctxkit_agent::testing::ScriptedModel;
use ctxkit_engine::ModelInfo;
use ctxkit_store::SessionStore as _;
use serde_json::json;

use crate::agent::{Fixed, agent_config};
use crate::websocket::{binding, call, config, connect, database, listen, user};

/// Drives `runtime` on a thread of its own until the returned sender is dropped: while it is not
/// driven, the instance on it is frozen as a stopped process is.
fn drive(
    runtime: &Arc<tokio::runtime::Runtime>,
) -> (std::sync::mpsc::Sender<()>, std::thread::JoinHandle<()>) {
    let (resume, stopped) = std::sync::mpsc::channel::<()>();
    let runtime = Arc::clone(runtime);
    let thread = std::thread::spawn(move || {
        runtime.block_on(async {
            while stopped.try_recv() == Err(std::sync::mpsc::TryRecvError::Empty) {
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        });
    });
    (resume, thread)
}

#[test]
fn a_writer_frozen_past_its_lease_runs_nothing_once_it_resumes() {
    let Some(url) = database() else { return };
    let dir = tempfile::tempdir().unwrap();
    let info = ModelInfo {
        provider: "mock".to_owned(),
        id: "coder".to_owned(),
        context_window: 100_000,
        cache: None,
    };
    let model = ScriptedModel::answering(info, &["answered"]);
    let frozen = Arc::new(
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap(),
    );
    let mut instance = config(dir.path(), Some(frozen.block_on(binding(&url, "A"))));
    instance.agent = Some(agent_config(Arc::new(Fixed(model.clone()))));
    let address = frozen.block_on(async {
        let (address, stop, _running) = listen(instance, None).await;
        std::mem::forget(stop);
        address
    });
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let (resume, thread) = drive(&frozen);
    let (mut socket, id) = runtime.block_on(async {
        let mut socket = connect(address, &[]).await.unwrap();
        let created = call(&mut socket, 1, "session.create", json!({"cwd": "/fleet"})).await;
        let id = created["result"]["session_id"].as_str().unwrap().to_owned();
        let appended = call(&mut socket, 2, "message.append", user("stored by A")).await;
        assert!(appended["result"]["entry_id"].is_string(), "{appended}");
        (socket, id)
    });
    // A stops; its 1.5 s lease runs out and B takes the session over.
    drop(resume);
    thread.join().unwrap();
    runtime.block_on(async {
        tokio::time::sleep(Duration::from_millis(2_000)).await;
        let store = binding(&url, "B").await.store;
        store
            .acquire(&id, "B", Duration::from_secs(30))
            .await
            .expect("A's lease expired while it was stopped");
    });
    // A runs again: the prompt is refused before the model is asked.
    let (resume, thread) = drive(&frozen);
    runtime.block_on(async {
        let run = call(
            &mut socket,
            3,
            "agent.run",
            json!({"text": "after the takeover"}),
        )
        .await;
        assert_eq!(run["error"]["data"]["kind"], "lease_lost", "{run}");
        let message = run["error"]["message"].as_str().unwrap();
        assert!(message.contains("was not run"), "{message}");
        assert!(
            model.requests().is_empty(),
            "the stale writer asked the model"
        );
        let info = call(&mut socket, 4, "session.info", json!(null)).await;
        assert_eq!(
            info["error"]["code"], -32001,
            "the session was closed: {info}"
        );
    });
    drop(resume);
    thread.join().unwrap();
    let exported = runtime.block_on(async {
        let store = binding(&url, "check").await.store;
        store.export(&id).await.unwrap()
    });
    assert_eq!(exported.entries.len(), 1, "only A's acknowledged entry");
}
