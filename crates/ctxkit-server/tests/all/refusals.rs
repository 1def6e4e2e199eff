//! Refusals that say what to do instead.

use serde_json::json;

use crate::server::start_with;
use crate::support::{reply, user};

/// QA r97: `fork {entry_id}` at an assistant entry said only "Invalid entry ID for forking".
#[tokio::test]
async fn forking_before_a_reply_says_to_fork_at_it() {
    let dir = tempfile::tempdir().unwrap();
    let mut client = start_with(dir.path(), None);
    client
        .call("session.create", json!({"cwd": dir.path()}))
        .await;
    client
        .call("message.append", json!({"message": user("question")}))
        .await;
    let answer = client
        .call("message.append", json!({"message": reply("answer", 10)}))
        .await;
    let entry_id = answer["result"]["entry_id"].clone();
    let refused = client.call("fork", json!({"entry_id": entry_id})).await;
    assert_eq!(
        refused["error"]["data"]["kind"], "invalid_fork_entry",
        "{refused}"
    );
    let message = refused["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("needs a user message") || message.contains("before a user"),
        "{message}"
    );
    assert!(message.contains(r#""position": "at""#), "{message}");
    let forked = client
        .call("fork", json!({"entry_id": entry_id, "position": "at"}))
        .await;
    assert_eq!(forked["result"]["cancelled"], false, "{forked}");
}

/// QA r101 serve D1: a keep-your-own-loop client appends its model's reply as docs/protocol.md
/// showed it (a usage without `cost`, or no usage); the file held it so and Pi 1.6.0 crashed
/// opening it. The reply is written with its counts and a zero cost. And a tool result answering
/// no open call is refused, naming the field, and nothing is written.
#[tokio::test]
async fn an_appended_reply_opens_in_pi_and_an_unpaired_result_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let mut client = start_with(dir.path(), None);
    let created = client
        .call("session.create", json!({"cwd": dir.path()}))
        .await;
    let file = created["result"]["session_file"]
        .as_str()
        .unwrap()
        .to_owned();
    client
        .call("message.append", json!({"message": user("question")}))
        .await;
    let counted = json!({"role": "assistant", "content": [{"type": "text", "text": "hi"}],
        "provider": "openai", "model": "gpt-4.1", "api": "openai-completions",
        "usage": {"input": 10, "output": 5, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 15},
        "stopReason": "stop", "timestamp": 1});
    let calling = json!({"role": "assistant", "stopReason": "toolUse", "timestamp": 2,
        "content": [{"type": "toolCall", "id": "c1", "name": "read", "arguments": {}}]});
    for message in [counted, calling] {
        let appended = client
            .call("message.append", json!({"message": message}))
            .await;
        assert!(appended["result"]["entry_id"].is_string(), "{appended}");
    }
    let result = |call: &str| {
        json!({"role": "toolResult", "toolCallId": call, "toolName": "read",
            "content": [{"type": "text", "text": "x"}], "isError": false, "timestamp": 3})
    };
    // A call in no reply; the open call; the same call again, answered already.
    for (call, accepted) in [("nope", false), ("c1", true), ("c1", false)] {
        let answer = client
            .call("message.append", json!({"message": result(call)}))
            .await;
        if accepted {
            assert!(answer["result"]["entry_id"].is_string(), "{answer}");
        } else {
            assert_eq!(answer["error"]["code"], -32602, "{answer}");
            let message = answer["error"]["message"].as_str().unwrap();
            assert!(
                message.contains(&format!("`message.toolCallId` `{call}` answers no open")),
                "{message}"
            );
        }
    }
    let lines: Vec<serde_json::Value> = std::fs::read_to_string(&file)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    let zero_cost = json!({"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0});
    let usages: Vec<_> = lines
        .iter()
        .filter(|line| line["message"]["role"] == "assistant")
        .map(|line| line["message"]["usage"].clone())
        .collect();
    assert_eq!(
        usages,
        [
            json!({"input": 10, "output": 5, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 15, "cost": zero_cost}),
            json!({"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 0, "cost": zero_cost}),
        ]
    );
    let results: Vec<_> = lines
        .iter()
        .filter(|line| line["message"]["role"] == "toolResult")
        .map(|line| line["message"]["toolCallId"].clone())
        .collect();
    assert_eq!(results, [json!("c1")], "only the paired result is written");
}
