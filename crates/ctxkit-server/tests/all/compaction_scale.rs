//! What a compaction reports as before → after to a client that runs its own loop: the scale of
//! its status line (`context.usage`), the provider's count of the client's requests.

use serde_json::{Value, json};

use crate::server::start_with;
use crate::support::{MODEL, PROVIDER};

/// QA (defect 5): `context.usage` said 26416 (the reply's usage, which counts the client's own
/// system prompt and tools), `compaction.list` 26416, and the `compaction_end` event 20810:
/// ctxkit's estimate of the messages alone.
#[tokio::test]
async fn an_own_loop_compaction_reports_the_status_line_s_count() {
    let dir = tempfile::tempdir().unwrap();
    let mut client = start_with(dir.path(), None);
    client
        .call("session.create", json!({"cwd": dir.path()}))
        .await;
    client
        .call(
            "model.set",
            json!({"model": {"provider": PROVIDER, "id": MODEL, "context_window": 10_000}}),
        )
        .await;
    // The replies' usage counts far more than their few words: the client's prompt and tools.
    client
        .append_turns(&[("first", 100), ("second", 9_000)])
        .await;
    let usage = client.call("context.usage", Value::Null).await;
    let status = usage["result"]["tokens"].as_u64().unwrap();
    let messages =
        client.call("view.get", Value::Null).await["result"]["report"]["estimated_tokens_before"]
            .as_u64()
            .unwrap();
    let report = client.call("check.after_run", Value::Null).await;
    let end = &report["result"]["compaction"];
    assert_eq!(end["tokens_before"].as_u64(), Some(status), "{report}");
    let listed = client.call("compaction.list", Value::Null).await;
    let entry = &listed["result"]["compactions"][0];
    assert_eq!(entry["tokens_before"], end["tokens_before"], "{listed}");
    // After: the messages' estimate (as listed) plus what the provider counted beyond the
    // messages' estimate before, so both sides are on one scale.
    let after = end["tokens_after"].as_u64().unwrap();
    let messages_after = entry["tokens_after"].as_u64().unwrap();
    assert_eq!(
        after,
        messages_after + (status - messages),
        "{report} {listed}"
    );
}
