//! `forget` over the protocol, as a tester's own-loop client met it: a forgotten reply's tool
//! result stayed behind (and `recall` read a secret back), pins changed ids, and the old → new ids
//! of what was appended again were not returned.

use serde_json::{Value, json};

use crate::server::{Client, start_with};
use crate::support::{MODEL, PROVIDER, now_ms, reply, user};

async fn append(client: &mut Client, message: Value) -> String {
    let appended = client
        .call("message.append", json!({"message": message}))
        .await;
    appended["result"]["entry_id"].as_str().unwrap().to_owned()
}

/// The tester's session: a prompt, a reply reading `config.toml`, its secret result, `done`.
async fn secret_read(client: &mut Client) -> (String, String) {
    append(client, json!(user("show me the config"))).await;
    let call = append(
        client,
        json!({
            "role": "assistant",
            "content": [{"type": "toolCall", "id": "c1", "name": "read", "arguments": {"path": "config.toml"}}],
            "provider": PROVIDER, "model": MODEL, "api": "faux",
            "usage": {"input": 10, "output": 1, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 11},
            "stopReason": "toolUse", "timestamp": now_ms(),
        }),
    )
    .await;
    let result = append(
        client,
        json!({
            "role": "toolResult", "toolCallId": "c1", "toolName": "read",
            "content": [{"type": "text", "text": "password = \"hunter2\""}],
            "isError": false, "timestamp": now_ms(),
        }),
    )
    .await;
    append(client, json!(reply("done", 100))).await;
    (call, result)
}

#[tokio::test]
async fn a_forgotten_reply_takes_its_result_and_nothing_forgotten_is_read_back() {
    let dir = tempfile::tempdir().unwrap();
    let mut client = start_with(dir.path(), None);
    client
        .call("session.create", json!({"cwd": dir.path()}))
        .await;
    let (call, result) = secret_read(&mut client).await;
    let forgotten = client
        .call(
            "forget",
            json!({"from_id": call, "to_id": call, "summary": "a config read was removed"}),
        )
        .await;
    let answer = &forgotten["result"];
    assert_eq!(answer["results_left_out"], json!([result]), "{forgotten}");
    assert_eq!(answer["reappended"], 1, "{forgotten}");
    assert_eq!(answer["carried"][0]["type"], "message", "{forgotten}");
    assert_eq!(
        answer["carried"][0]["copy_id"], answer["new_leaf_id"],
        "{forgotten}"
    );
    let view = client.call("view.get", Value::Null).await;
    assert_eq!(view["result"]["report"]["orphans_repaired"], 0, "{view}");
    assert!(!view.to_string().contains("hunter2"), "{view}");
    let recalled = client.call("recall", json!({"reference": "c1"})).await;
    assert_eq!(recalled["result"]["is_error"], true, "{recalled}");
    let fetched = client
        .call("pruned.fetch", json!({"tool_call_id": "c1"}))
        .await;
    assert!(!fetched.to_string().contains("hunter2"), "{fetched}");
}

#[tokio::test]
async fn a_pin_keeps_the_id_pin_add_returned_through_a_reversed_forget() {
    let dir = tempfile::tempdir().unwrap();
    let mut client = start_with(dir.path(), None);
    client
        .call("session.create", json!({"cwd": dir.path()}))
        .await;
    let mut ids = Vec::new();
    for turn in 0..3 {
        ids.push(append(&mut client, json!(user(&format!("prompt {turn}")))).await);
        ids.push(append(&mut client, json!(reply(&format!("answer {turn}"), 100))).await);
    }
    let pin = client
        .call("pin.add", json!({"text": "always use tabs"}))
        .await;
    let pin_id = pin["result"]["id"].as_str().unwrap().to_owned();
    // The ends in the wrong order were refused as "not on the current branch".
    let forgotten = client
        .call("forget", json!({"from_id": ids[3], "to_id": ids[2]}))
        .await;
    assert_eq!(forgotten["result"]["from_id"], json!(ids[2]), "{forgotten}");
    assert_eq!(forgotten["result"]["to_id"], json!(ids[3]), "{forgotten}");
    let listed = client.call("pin.list", Value::Null).await;
    assert_eq!(listed["result"]["pins"][0]["id"], json!(pin_id), "{listed}");
    let view = client.call("view.get", Value::Null).await;
    assert!(
        view.to_string()
            .contains(&format!("<pinned id=\\\"{pin_id}\\\">")),
        "{view}"
    );
    let removed = client.call("pin.remove", json!({"pin_id": pin_id})).await;
    assert_eq!(removed["result"], json!({}), "{removed}");
    let listed = client.call("pin.list", Value::Null).await;
    assert_eq!(listed["result"]["pins"], json!([]), "{listed}");
}

/// The library refuses a blank pin (`EngineError::EmptyPin`); `pin.add` answers that refusal as
/// the request's fault, `-32602`, and writes nothing.
#[tokio::test]
async fn a_blank_pin_is_refused_as_invalid_params() {
    let dir = tempfile::tempdir().unwrap();
    let mut client = start_with(dir.path(), None);
    client
        .call("session.create", json!({"cwd": dir.path()}))
        .await;
    append(&mut client, json!(user("prompt"))).await;
    let refused = client.call("pin.add", json!({"text": " \n"})).await;
    assert_eq!(refused["error"]["code"], -32602, "{refused}");
    assert!(
        refused["error"]["message"]
            .as_str()
            .unwrap()
            .contains("`text` is empty"),
        "{refused}"
    );
    let listed = client.call("pin.list", Value::Null).await;
    assert_eq!(listed["result"]["pins"], json!([]), "{listed}");
}
