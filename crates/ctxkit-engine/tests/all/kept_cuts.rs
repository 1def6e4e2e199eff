//! Results the prune layer cut before a compaction stay cut in the messages the compaction kept:
//! the kept messages' own requests were sent before it, so the first request after it (written
//! whole, behind the new summary) cuts what had been cut, and `recall` still reads them whole.

use ctxkit_protocol::AgentMessage;
use serde_json::{Value, json};

use crate::support::*;

/// A long listing, as a tool result the prune layer cuts.
fn listing(id: &str) -> String {
    (0..300)
        .map(|line| format!("{id} line {line}: src/module_{line}/lib.rs compiled\n"))
        .collect()
}

/// A session of `calls` calls with large results, compacted with the calls from `kept_from` on
/// kept, and one call after the compaction.
fn compacted_session(
    dir: &std::path::Path,
    calls: usize,
    kept_from: usize,
) -> ctxkit_session::Session {
    let mut lines = vec![json!({"type": "session", "version": 3, "id": "s",
        "timestamp": "2025-01-01T00:00:00.000Z", "cwd": "/p"})];
    let mut parent = Value::Null;
    let mut second = 0;
    let mut push = |lines: &mut Vec<Value>, id: String, mut entry: Value| {
        second += 1;
        entry["id"] = json!(id);
        entry["parentId"] = parent.clone();
        entry["timestamp"] = json!(format!(
            "2025-01-01T00:{:02}:{:02}.000Z",
            second / 60,
            second % 60
        ));
        lines.push(entry);
        parent = json!(id);
    };
    push(
        &mut lines,
        "u".into(),
        json!({"type": "message",
        "message": {"role": "user", "content": "build every module", "timestamp": 1}}),
    );
    let call = |lines: &mut Vec<Value>,
                push: &mut dyn FnMut(&mut Vec<Value>, String, Value),
                index: usize| {
        let id = format!("c{index}");
        push(
            lines,
            format!("a{index}"),
            json!({"type": "message", "message": {
            "role": "assistant", "stopReason": "toolUse", "timestamp": 2,
            "provider": PROVIDER, "model": MODEL, "api": "faux",
            "usage": {"input": 10, "output": 1, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 11},
            "content": [{"type": "toolCall", "id": id, "name": "bash", "arguments": {"command": "make"}}]}}),
        );
        push(
            lines,
            format!("r{index}"),
            json!({"type": "message", "message": {
            "role": "toolResult", "toolCallId": id, "toolName": "bash", "isError": false,
            "timestamp": 3, "content": [{"type": "text", "text": listing(&id)}]}}),
        );
    };
    for index in 0..calls {
        call(&mut lines, &mut push, index);
    }
    push(
        &mut lines,
        "k".into(),
        json!({"type": "compaction", "summary": "built the first modules",
        "firstKeptEntryId": format!("a{kept_from}"), "tokensBefore": 100_000}),
    );
    call(&mut lines, &mut push, calls);
    let text: String = lines.iter().map(|line| format!("{line}\n")).collect();
    let path = dir.join("compacted.jsonl");
    std::fs::write(&path, text).unwrap();
    ctxkit_session::Session::open(&path).unwrap()
}

/// The ids of the results a view shows cut.
fn cut_ids(messages: &[AgentMessage]) -> Vec<String> {
    messages
        .iter()
        .filter_map(AgentMessage::as_tool_result)
        .filter_map(|result| {
            ctxkit_transform::pruned_reference(&result.content.joined_text("\n")).map(str::to_owned)
        })
        .collect()
}

#[tokio::test]
async fn the_results_a_compaction_kept_are_cut_again_after_it_and_recalled_whole() {
    let dir = tempfile::tempdir().unwrap();
    let harness = Harness::with_session(compacted_session(dir.path(), 60, 20));
    let view = harness.engine.model_view().await.unwrap();
    let keep = ctxkit_settings::TransformSettings::default().keep_recent_tool_results;
    // Every kept result the model has read, but the last `keep`, is cut: the request after the
    // compaction is written whole, so the cut costs no cache.
    let expected: Vec<String> = (20..60 - keep).map(|index| format!("c{index}")).collect();
    assert_eq!(cut_ids(&view.messages), expected);
    // Read as a context with no compaction, the kept messages' own requests never pay for a
    // cut and the results came back whole (the fault).
    let transcript: Vec<AgentMessage> = harness
        .engine
        .with_session(|session| {
            let context = session.leaf_context();
            let messages = context.messages.iter();
            messages
                .map(|message| session.message(message).unwrap())
                .collect()
        })
        .await;
    let plain = ctxkit_engine::build_view(&transcript, &settings(2_000), 100_000);
    assert!(
        cut_ids(&plain.messages).len() < expected.len(),
        "{:?}",
        cut_ids(&plain.messages)
    );
    // The stored result is untouched, and recall reads it whole.
    let whole = harness.engine.fetch_pruned("c20").await.unwrap();
    assert_eq!(whole.as_deref(), Some(listing("c20").as_str()));
}
