//! Asking about and cancelling a compaction over the protocol while it runs, or before it starts.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};

use crate::server::{Client, start_summarizing};
use crate::support::UntilCancelled;

/// A session past its threshold whose summaries wait until cancelled.
async fn waiting_summaries(dir: &std::path::Path) -> Client {
    let mut client = start_summarizing(dir, None, Arc::new(UntilCancelled));
    client.call("session.create", json!({"cwd": dir})).await;
    client
        .append_turns(&[("first", 100), ("second", 9_000)])
        .await;
    client
}

/// QA r97 (04): `session.info` waited behind the compaction and then said `is_compacting: false`.
#[tokio::test]
async fn session_info_during_a_compaction_says_it_runs() {
    let dir = tempfile::tempdir().unwrap();
    let mut client = waiting_summaries(dir.path()).await;
    let before = client.call("session.info", Value::Null).await;
    let compact = client.send("compact", json!({})).await;
    while !client
        .notifications
        .iter()
        .any(|message| message["params"]["type"] == "compaction_start")
    {
        client.poll(Duration::from_millis(20)).await;
    }
    let during = client.call("session.info", Value::Null).await;
    assert_eq!(during["result"]["is_compacting"], true, "{during}");
    let mut expected = before["result"].clone();
    expected["is_compacting"] = json!(true);
    assert_eq!(during["result"], expected);
    client.call("compact.cancel", Value::Null).await;
    let cancelled = client.answer(compact).await;
    assert_eq!(
        cancelled["error"]["data"]["kind"], "cancelled",
        "{cancelled}"
    );
    let after = client.call("session.info", Value::Null).await;
    assert_eq!(after["result"], before["result"], "{after}");
}

/// QA r97 (06): a `compact.cancel` written on the line right after its `compact` was answered
/// before that compaction started, which then ran to its end. It cancels it now, as in a batch,
/// also behind a compaction that runs (which it cancels too).
#[tokio::test]
async fn a_cancel_right_behind_its_compact_cancels_it() {
    let dir = tempfile::tempdir().unwrap();
    let mut client = waiting_summaries(dir.path()).await;
    let running = client.send("compact", json!({})).await;
    while !client
        .notifications
        .iter()
        .any(|message| message["params"]["type"] == "compaction_start")
    {
        client.poll(Duration::from_millis(20)).await;
    }
    let lines = concat!(
        r#"{"jsonrpc":"2.0","id":"c","method":"compact","params":{}}"#,
        "\n",
        r#"{"jsonrpc":"2.0","id":"x","method":"compact.cancel"}"#,
        "\n"
    );
    client.send_raw(lines.as_bytes()).await;
    let cancel = client.answer_to(json!("x")).await;
    assert_eq!(cancel["result"], json!({}), "{cancel}");
    let running = client.answer(running).await;
    assert_eq!(running["error"]["data"]["kind"], "cancelled", "{running}");
    // Its summary waits until cancelled: an answer is the cancel's doing.
    let queued = client.answer_to(json!("c")).await;
    assert_eq!(queued["error"]["data"]["kind"], "cancelled", "{queued}");
    // A later `compact` is not cancelled by it.
    let later = client.send("compact", json!({})).await;
    client.poll(Duration::from_millis(300)).await;
    assert!(
        !client
            .notifications
            .iter()
            .any(|message| message["id"] == later),
        "the later compaction runs until cancelled"
    );
    client.call("compact.cancel", Value::Null).await;
    let later = client.answer(later).await;
    assert_eq!(later["error"]["data"]["kind"], "cancelled", "{later}");
}
