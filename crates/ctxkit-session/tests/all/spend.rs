//! Pi 1.6's `usage` on a tool result (the tool's own model calls: a subagent, code execution)
//! counts in the session's spend, as Pi's `getUsageCostBreakdown` counts it, and once.

use ctxkit_session::{FreeModels, Session, session_spend};

const HEADER: &str =
    r#"{"type":"session","version":3,"id":"s","timestamp":"2025-01-01T00:00:00Z","cwd":"/p"}"#;

fn usage(input: u64, output: u64, total: f64) -> String {
    format!(
        r#"{{"input":{input},"output":{output},"cacheRead":0,"cacheWrite":0,"totalTokens":{},"cost":{{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":{total},"totalFromProvider":true}}}}"#,
        input + output
    )
}

/// The repro's session, as Pi 1.6.0's SDK writes it: two replies at $0.01 and a subagent's tool
/// result that records $1.00 of its own calls.
fn subagent_session(dir: &std::path::Path) -> std::path::PathBuf {
    let lines = [
        HEADER.to_owned(),
        r#"{"type":"message","id":"u","parentId":null,"timestamp":"2025-01-01T00:00:01Z","message":{"role":"user","content":"review","timestamp":1}}"#.to_owned(),
        format!(
            r#"{{"type":"message","id":"a","parentId":"u","timestamp":"2025-01-01T00:00:02Z","message":{{"role":"assistant","content":[{{"type":"toolCall","id":"t1","name":"subagent","arguments":{{}}}}],"provider":"anthropic","model":"m","usage":{},"stopReason":"toolUse","timestamp":2}}}}"#,
            usage(1000, 50, 0.01)
        ),
        format!(
            r#"{{"type":"message","id":"r","parentId":"a","timestamp":"2025-01-01T00:00:03Z","message":{{"role":"toolResult","toolCallId":"t1","toolName":"subagent","content":[{{"type":"text","text":"review done"}}],"isError":false,"timestamp":3,"usage":{}}}}}"#,
            usage(200_000, 8000, 1.0)
        ),
        format!(
            r#"{{"type":"message","id":"b","parentId":"r","timestamp":"2025-01-01T00:00:04Z","message":{{"role":"assistant","content":[{{"type":"text","text":"nothing found"}}],"provider":"anthropic","model":"m","usage":{},"stopReason":"stop","timestamp":4}}}}"#,
            usage(1100, 20, 0.01)
        ),
    ];
    let path = dir.join("s.jsonl");
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    path
}

#[test]
fn a_tool_results_usage_counts_in_the_spend() {
    let dir = tempfile::tempdir().unwrap();
    let session = Session::open(&subagent_session(dir.path())).unwrap();
    let spend = session_spend(session.entries(), &FreeModels::NONE);
    assert!((spend.total_dollars() - 1.02).abs() < 1e-9, "{spend:?}");
    assert_eq!((spend.requests.calls, spend.tools.calls), (2, 1));
    assert_eq!(spend.tools.input_tokens, 200_000);
    assert_eq!(spend.counted_calls(), 3);
    assert_eq!(spend.unpriced_calls(), 0);
}

#[test]
fn a_copied_tool_result_counts_nothing_again() {
    let dir = tempfile::tempdir().unwrap();
    let mut session = Session::open(&subagent_session(dir.path())).unwrap();
    // `undo-compact` and `forget` bring entries back as copies.
    session.append_copies(&["a", "r", "b"]).unwrap();
    let reopened = Session::open(&subagent_session_path(dir.path())).unwrap();
    for entries in [session.entries(), reopened.entries()] {
        let spend = session_spend(entries, &FreeModels::NONE);
        assert!((spend.total_dollars() - 1.02).abs() < 1e-9, "{spend:?}");
        assert_eq!(spend.tools.calls, 1);
    }
}

fn subagent_session_path(dir: &std::path::Path) -> std::path::PathBuf {
    dir.join("s.jsonl")
}

/// QA (session files, defect 1): an imported Codex response's replies before its last carry a
/// usage of zeros (Pi requires one on every reply); they are parts of one call, not calls. A failed
/// reply's zeros still count as a call that used nothing.
#[test]
fn a_reply_with_a_usage_of_zeros_is_no_call_unless_it_failed() {
    let dir = tempfile::tempdir().unwrap();
    let reply = |id: &str, parent: &str, at: u64, usage: String, stop: &str| {
        format!(
            r#"{{"type":"message","id":"{id}","parentId":"{parent}","timestamp":"2025-01-01T00:00:0{at}Z","message":{{"role":"assistant","content":[{{"type":"text","text":"x"}}],"provider":"openai","model":"m","usage":{usage},"stopReason":"{stop}","timestamp":{at}}}}}"#
        )
    };
    let lines = [
        HEADER.to_owned(),
        r#"{"type":"message","id":"u","parentId":null,"timestamp":"2025-01-01T00:00:01Z","message":{"role":"user","content":"go","timestamp":1}}"#.to_owned(),
        reply("r", "u", 2, usage(0, 0, 0.0), "stop"),
        reply("a", "r", 3, usage(1000, 50, 0.01), "stop"),
        reply("e", "a", 4, usage(0, 0, 0.0), "error"),
    ];
    let path = dir.path().join("s.jsonl");
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    let session = Session::open(&path).unwrap();
    let spend = session_spend(session.entries(), &FreeModels::NONE);
    assert_eq!(
        (spend.requests.calls, spend.requests.empty_calls),
        (2, 1),
        "{spend:?}"
    );
    assert_eq!(spend.counted_calls(), 1);
}

/// QA (2026-12-07): a Claude Code transcript that wrote its history again (new uuids, new times,
/// the same `message.id` and usage) was billed twice. Replies with the same response id and the
/// same tokens are one paid call; another response id, or other tokens, is another call.
#[test]
fn a_reply_written_again_with_its_response_id_counts_once() {
    let dir = tempfile::tempdir().unwrap();
    let reply = |id: &str, parent: &str, response: &str, at: u64, cost: f64| {
        format!(
            r#"{{"type":"message","id":"{id}","parentId":"{parent}","timestamp":"2025-01-01T00:00:02Z","message":{{"role":"assistant","content":[{{"type":"text","text":"ok"}}],"provider":"anthropic","model":"m","responseId":"{response}","usage":{},"stopReason":"stop","timestamp":{at}}}}}"#,
            usage(1000, 50, cost)
        )
    };
    let lines = [
        HEADER.to_owned(),
        r#"{"type":"message","id":"u","parentId":null,"timestamp":"2025-01-01T00:00:01Z","message":{"role":"user","content":"hi","timestamp":1}}"#.to_owned(),
        reply("a", "u", "msg_01", 2, 0.01),
        // The history written again from the root, restamped.
        r#"{"type":"message","id":"u2","parentId":null,"timestamp":"2025-01-01T00:01:01Z","message":{"role":"user","content":"hi","timestamp":60001}}"#.to_owned(),
        reply("a2", "u2", "msg_01", 60002, 0.01),
        reply("b", "a2", "msg_02", 60003, 0.01),
    ];
    let path = dir.path().join("s.jsonl");
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    let session = Session::open(&path).unwrap();
    let spend = session_spend(session.entries(), &FreeModels::NONE);
    assert_eq!(spend.requests.calls, 2, "{spend:?}");
    assert!((spend.total_dollars() - 0.02).abs() < 1e-9, "{spend:?}");
}
