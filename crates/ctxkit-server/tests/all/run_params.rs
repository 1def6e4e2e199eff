//! `agent.run` refuses a run that could not do what it asks before any model is called (sweep 9:
//! an empty prompt was sent to the model and stored; a `cwd` that does not exist, or is a file,
//! was named to the model and every tool failed there; `max_tokens: 0` went out as 1).

use std::sync::Arc;

use ctxkit_agent::testing::ScriptedModel;
use ctxkit_engine::ModelInfo;
use serde_json::json;

use crate::agent::{Fixed, agent_config};
use crate::server::start_with;

#[tokio::test]
async fn a_run_that_cannot_work_is_refused_before_the_model_is_asked() {
    let dir = tempfile::tempdir().unwrap();
    let info = ModelInfo {
        provider: "mock".to_owned(),
        id: "coder".to_owned(),
        context_window: 8_192,
        cache: None,
    };
    let model = ScriptedModel::answering(info, &["fine"]);
    let mut client = start_with(
        dir.path(),
        Some(agent_config(Arc::new(Fixed(model.clone())))),
    );
    let project = dir.path().display().to_string();
    let created = client.call("session.create", json!({"cwd": project})).await;
    assert!(created["result"]["session_id"].is_string(), "{created}");
    let file = dir.path().join("main.rs");
    std::fs::write(&file, "fn main() {}\n").unwrap();
    // QA (2026-12-05): a run in ctxkit's own folders started `bash` among its keys.
    let private = ctxkit_session::private_temporary_folder("serve").unwrap();
    let refused = [
        (
            json!({"text": "hi", "cwd": private.path().display().to_string()}),
            "ctxkit's own folder",
        ),
        (json!({"text": "  \n"}), "`text` is empty"),
        (
            json!({"text": "hi", "approve": "yes"}),
            "`approve` is \"none\" or \"all\"",
        ),
        (json!({"text": "hi", "approve": true}), "expected a string"),
        (json!({"text": "hi", "max_tokens": 0}), "`max_tokens` is 0"),
        (
            json!({"text": "hi", "cwd": dir.path().join("missing").display().to_string()}),
            "is not a folder on this machine",
        ),
        (
            json!({"text": "hi", "cwd": file.display().to_string()}),
            "is not a folder on this machine",
        ),
    ];
    for (params, reason) in refused {
        let run = client.call("agent.run", params.clone()).await;
        assert_eq!(run["error"]["code"], -32602, "{params}: {run}");
        let message = run["error"]["message"].as_str().unwrap();
        assert!(message.contains(reason), "{params}: {message}");
    }
    assert!(model.requests().is_empty(), "the model was asked");
    let transcript = client.call("transcript.get", json!({})).await;
    assert_eq!(
        transcript["result"]["messages"].as_array().map(Vec::len),
        Some(0),
        "{transcript}"
    );
    let run = client
        .call("agent.run", json!({"text": "hi", "cwd": project}))
        .await;
    assert_eq!(run["result"]["outcome"], "answered", "{run}");
}
