//! A client that runs its own loop answers the `recall` its view tells the model to call: the
//! `recall` method gives what `agent.run`'s `recall` tool gives, and `docs/protocol.md` offers the
//! tool's own schema.

use std::path::Path;

use ctxkit_agent::TypedTool;
use serde_json::{Value, json};

use crate::server::start_with;
use crate::support::{MODEL, PROVIDER, now_ms, reply, user};

/// A turn that called `read` and got `text` back.
async fn append_tool_turn(client: &mut crate::server::Client, id: &str, text: &str) {
    let call = json!({
        "role": "assistant",
        "content": [{"type": "toolCall", "id": id, "name": "read", "arguments": {"path": "a"}}],
        "provider": PROVIDER, "model": MODEL, "api": "faux",
        "usage": {"input": 10, "output": 0, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 10},
        "stopReason": "toolUse", "timestamp": now_ms(),
    });
    let result = json!({
        "role": "toolResult", "toolCallId": id, "toolName": "read",
        "content": [{"type": "text", "text": text}], "isError": false, "timestamp": now_ms(),
    });
    for message in [call, result] {
        let appended = client
            .call("message.append", json!({"message": message}))
            .await;
        assert!(appended["result"]["entry_id"].is_string(), "{appended}");
    }
}

#[tokio::test]
async fn an_own_loop_client_answers_the_recall_its_view_asks_for() {
    let dir = tempfile::tempdir().unwrap();
    let mut client = start_with(dir.path(), None);
    client
        .call("session.create", json!({"cwd": dir.path()}))
        .await;
    client
        .call(
            "message.append",
            json!({"message": user("where does it listen?")}),
        )
        .await;
    append_tool_turn(
        &mut client,
        "call_0",
        "config\nthe server listens on port 8431\nend",
    )
    .await;
    client
        .call(
            "message.append",
            json!({"message": reply("port 8431", 9_000)}),
        )
        .await;
    client.append_turns(&[("next", 9_100)]).await;
    let compacted = client.call("compact", json!({})).await;
    assert!(compacted["result"]["entry_id"].is_string(), "{compacted}");
    let view = client.call("view.get", Value::Null).await;
    // The summary heads the view and tells the model to call `recall`.
    let summary = view["result"]["messages"][0].to_string();
    assert!(
        summary.contains("call `recall` with reference `ctxkit://summarized`"),
        "{view}"
    );

    let found = client
        .call(
            "recall",
            json!({"reference": "ctxkit://summarized", "query": "port"}),
        )
        .await;
    assert_eq!(found["result"]["is_error"], false, "{found}");
    let text = found["result"]["text"].as_str().unwrap();
    assert!(text.contains("listens on port 8431"), "{found}");
    let result = client
        .call(
            "recall",
            json!({"reference": "ctxkit://tool-result/call_0"}),
        )
        .await;
    assert_eq!(
        result["result"],
        json!({"text": "config\nthe server listens on port 8431\nend", "is_error": false,
            "truncated": false})
    );
    let call = client
        .call("recall", json!({"reference": "ctxkit://tool-call/call_0"}))
        .await;
    assert_eq!(
        call["result"]["text"], "read (call call_0)\npath: a\n",
        "{call}"
    );
    // Nothing found: an error result worded for the model, as the tool words it.
    let missing = client
        .call(
            "recall",
            json!({"reference": "ctxkit://summarized", "query": "redis"}),
        )
        .await;
    assert_eq!(missing["result"]["is_error"], true, "{missing}");
    assert!(
        missing["result"]["text"]
            .as_str()
            .unwrap()
            .contains("`redis`"),
        "{missing}"
    );
    let unknown = client.call("recall", json!({"reference": "nope"})).await;
    assert_eq!(
        unknown["result"],
        json!({"text": "No tool result `nope` on the current branch, nor on a branch its \
            summaries left behind: recall reads no other branch", "is_error": true,
            "truncated": false})
    );
    // A client may bound the answer tighter than the tool's limit; the cut says how to ask for less.
    let long: String = (0..300)
        .map(|line| format!("row {line} of the table\n"))
        .collect();
    append_tool_turn(&mut client, "call_1", &long).await;
    let bounded = client
        .call(
            "recall",
            json!({"reference": "ctxkit://tool-result/call_1", "max_bytes": 2048}),
        )
        .await;
    assert_eq!(bounded["result"]["truncated"], true, "{bounded}");
    let text = bounded["result"]["text"].as_str().unwrap();
    assert!(text.starts_with("row 0 of the table\n"), "{text}");
    assert!(
        text.len() <= 2048,
        "the note is within max_bytes: {}",
        text.len()
    );
    assert!(text.contains("give a `query`"), "{text}");
}

/// The schema `docs/protocol.md` tells an own-loop client to offer is the built-in tool's.
#[test]
fn the_protocol_doc_offers_the_recall_tools_own_schema() {
    let path = Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../docs/protocol.md"
    ));
    let text = std::fs::read_to_string(path).unwrap();
    let after = text
        .split("Offer it with this JSON schema")
        .nth(1)
        .expect("docs/protocol.md gives the recall tool's schema");
    let block = after
        .split("```json\n")
        .nth(1)
        .and_then(|rest| rest.split("\n```").next())
        .unwrap();
    let documented: Value = serde_json::from_str(block).unwrap();
    assert_eq!(documented, ctxkit_agent::tools::Recall.parameters());
}
