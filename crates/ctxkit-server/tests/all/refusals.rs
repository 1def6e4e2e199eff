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
