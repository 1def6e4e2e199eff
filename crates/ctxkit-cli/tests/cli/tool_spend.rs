//! `info` counts Pi 1.6's `usage` on a tool result (a subagent's own model calls), as Pi 1.6.0's
//! cost breakdown does ("Tools/summaries"); it left it out.

use crate::Run;

fn usage(input: u64, total: f64) -> String {
    format!(
        r#"{{"input":{input},"output":10,"cacheRead":0,"cacheWrite":0,"totalTokens":{},"cost":{{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":{total},"totalFromProvider":true}}}}"#,
        input + 10
    )
}

#[test]
fn info_counts_the_cost_of_a_tools_own_model_calls() {
    let run = Run::new();
    let lines = [
        r#"{"type":"session","version":3,"id":"s","timestamp":"2025-01-01T00:00:00Z","cwd":"/p"}"#.to_owned(),
        r#"{"type":"message","id":"u","parentId":null,"timestamp":"2025-01-01T00:00:01Z","message":{"role":"user","content":"review","timestamp":1}}"#.to_owned(),
        format!(
            r#"{{"type":"message","id":"a","parentId":"u","timestamp":"2025-01-01T00:00:02Z","message":{{"role":"assistant","content":[{{"type":"toolCall","id":"t1","name":"subagent","arguments":{{}}}}],"provider":"anthropic","model":"m","usage":{},"stopReason":"toolUse","timestamp":2}}}}"#,
            usage(1000, 0.01)
        ),
        format!(
            r#"{{"type":"message","id":"r","parentId":"a","timestamp":"2025-01-01T00:00:03Z","message":{{"role":"toolResult","toolCallId":"t1","toolName":"subagent","content":[{{"type":"text","text":"done"}}],"isError":false,"timestamp":3,"usage":{}}}}}"#,
            usage(200_000, 1.0)
        ),
        format!(
            r#"{{"type":"message","id":"b","parentId":"r","timestamp":"2025-01-01T00:00:04Z","message":{{"role":"assistant","content":[{{"type":"text","text":"fine"}}],"provider":"anthropic","model":"m","usage":{},"stopReason":"stop","timestamp":4}}}}"#,
            usage(1100, 0.01)
        ),
    ];
    let path = run.home.path().join("s.jsonl");
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    let info = run.ctxkit(&["info", path.to_str().unwrap()]);
    assert!(info.contains("$1.02 over 3 model calls"), "{info}");
    assert!(info.contains("  tools"), "{info}");
    let json = run.ctxkit(&["info", path.to_str().unwrap(), "--json"]);
    let (_, json) = json.split_once('\n').unwrap();
    let record: serde_json::Value = serde_json::from_str(json).unwrap();
    assert_eq!(record["spend"]["tools"]["calls"], 1);
    assert_eq!(record["spend"]["dollars"], 1.02);
}
