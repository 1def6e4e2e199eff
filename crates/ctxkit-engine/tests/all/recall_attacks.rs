//! `recall` reads back what the view shortened, never what the user took out of the context: a
//! message a `context_edit` replaced or omitted (a pasted key, a result holding injected text), or
//! one on another branch (a forgotten span, an abandoned branch).

use crate::support::*;

const HEADER: &str =
    r#"{"type":"session","version":3,"id":"s","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/p"}"#;

/// A session whose first turn held a key in the user's request and in a tool result and a
/// call's arguments, each edited out of the context, then summarized by a compaction; `extra`
/// lines follow.
fn edited_session(dir: &std::path::Path, extra: &[&str]) -> ctxkit_session::Session {
    let lines = [
        HEADER,
        r#"{"type":"message","id":"u1","parentId":null,"timestamp":"2025-01-01T00:00:01.000Z","message":{"role":"user","content":"my key is sk-PASTED-0001, use it","timestamp":1}}"#,
        r#"{"type":"message","id":"a1","parentId":"u1","timestamp":"2025-01-01T00:00:02.000Z","message":{"role":"assistant","content":[{"type":"toolCall","id":"c1","name":"bash","arguments":{"command":"export KEY=sk-ARGUMENT-0002"}}],"api":"x","provider":"x","model":"x","usage":{"input":1,"output":1,"cacheRead":0,"cacheWrite":0,"totalTokens":2,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"toolUse","timestamp":2}}"#,
        r#"{"type":"message","id":"r1","parentId":"a1","timestamp":"2025-01-01T00:00:03.000Z","message":{"role":"toolResult","toolCallId":"c1","toolName":"bash","content":[{"type":"text","text":"PASSWORD=sk-RESULT-0003"}],"isError":false,"timestamp":3}}"#,
        r#"{"type":"context_edit","id":"e1","parentId":"r1","timestamp":"2025-01-01T00:00:04.000Z","targetId":"u1","replacement":null}"#,
        r#"{"type":"context_edit","id":"e2","parentId":"e1","timestamp":"2025-01-01T00:00:05.000Z","targetId":"r1","replacement":{"content":[{"type":"text","text":"[output removed]"}]}}"#,
        r#"{"type":"context_edit","id":"e3","parentId":"e2","timestamp":"2025-01-01T00:00:06.000Z","targetId":"a1","replacement":{"content":[{"type":"text","text":"[call removed]"}]}}"#,
        r#"{"type":"message","id":"u2","parentId":"e3","timestamp":"2025-01-01T00:00:07.000Z","message":{"role":"user","content":"carry on","timestamp":7}}"#,
        r#"{"type":"compaction","id":"k1","parentId":"u2","timestamp":"2025-01-01T00:00:08.000Z","summary":"the summary","firstKeptEntryId":"u2","tokensBefore":100}"#,
    ];
    let mut text = lines.join("\n");
    for line in extra {
        text.push('\n');
        text.push_str(line);
    }
    text.push('\n');
    let path = dir.join("edited.jsonl");
    std::fs::write(&path, text).unwrap();
    ctxkit_session::Session::open(&path).unwrap()
}

const KEYS: [&str; 3] = ["sk-PASTED-0001", "sk-ARGUMENT-0002", "sk-RESULT-0003"];

#[tokio::test]
async fn recall_never_reads_back_a_message_the_user_edited_out_of_the_context() {
    let dir = tempfile::tempdir().unwrap();
    let harness = Harness::with_session(edited_session(dir.path(), &[]));
    let engine = &harness.engine;

    let summarized = engine.fetch_summarized(None).await.unwrap().unwrap();
    let by_query = engine
        .fetch_summarized(Some("key PASSWORD sk"))
        .await
        .unwrap()
        .unwrap();
    let result = engine.fetch_pruned("c1").await.unwrap();
    let call = engine.fetch_tool_call("c1").await.unwrap();
    let everything = format!("{summarized}\n{by_query}\n{result:?}\n{call:?}");
    for key in KEYS {
        assert!(!everything.contains(key), "{key} came back: {everything}");
    }
    // The replacements are what the context shows, so they are what recall shows.
    assert_eq!(result.as_deref(), Some("[output removed]"));
    assert!(summarized.contains("[output removed]"), "{summarized}");
    assert!(summarized.contains("[call removed]"), "{summarized}");
    // The edited call shows no call any more.
    assert_eq!(call, None);
}

#[tokio::test]
async fn recall_reads_only_the_current_branch() {
    // The leaf moves back to u2's branch after a branch that ran another command: its result and
    // call stay in the file, off the branch the model works on.
    let off_branch = [
        r#"{"type":"message","id":"a9","parentId":"k1","timestamp":"2025-01-01T00:00:09.000Z","message":{"role":"assistant","content":[{"type":"toolCall","id":"c9","name":"bash","arguments":{"command":"echo sk-BRANCH-0009"}}],"api":"x","provider":"x","model":"x","usage":{"input":1,"output":1,"cacheRead":0,"cacheWrite":0,"totalTokens":2,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"toolUse","timestamp":9}}"#,
        r#"{"type":"message","id":"r9","parentId":"a9","timestamp":"2025-01-01T00:00:10.000Z","message":{"role":"toolResult","toolCallId":"c9","toolName":"bash","content":[{"type":"text","text":"sk-BRANCH-0009"}],"isError":false,"timestamp":10}}"#,
        r#"{"type":"message","id":"u3","parentId":"k1","timestamp":"2025-01-01T00:00:11.000Z","message":{"role":"user","content":"another way","timestamp":11}}"#,
    ];
    let dir = tempfile::tempdir().unwrap();
    let harness = Harness::with_session(edited_session(dir.path(), &off_branch));
    assert_eq!(harness.engine.fetch_pruned("c9").await.unwrap(), None);
    assert_eq!(harness.engine.fetch_tool_call("c9").await.unwrap(), None);
}
