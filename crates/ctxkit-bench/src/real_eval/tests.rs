use serde_json::json;

use super::*;
use ctxkit_protocol::SessionEntry;

fn entry(value: serde_json::Value) -> SessionEntry {
    serde_json::from_value(value).unwrap()
}

fn message(id: &str, role: &str, text: &str) -> SessionEntry {
    let message = match role {
        "user" => json!({"role": "user", "content": text, "timestamp": 1}),
        _ => json!({"role": "assistant", "content": [{"type": "text", "text": text}],
                    "provider": "p", "model": "m", "stopReason": "stop", "timestamp": 1,
                    "usage": {"input": 1, "output": 1, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 2}}),
    };
    entry(
        json!({"type": "message", "id": id, "parentId": null, "timestamp": "2026-01-01T00:00:00Z",
                 "message": message}),
    )
}

fn compaction(id: &str, kept: &str, summary: &str) -> SessionEntry {
    entry(json!({"type": "compaction", "id": id, "parentId": null,
                 "timestamp": "2026-01-01T00:00:00Z", "summary": summary,
                 "firstKeptEntryId": kept, "tokensBefore": 100}))
}

#[test]
fn spans_run_from_the_previous_kept_entry_to_the_next() {
    let entries = vec![
        message("a", "user", "fix src/a.rs"),
        message("b", "assistant", "done"),
        message("c", "user", "now src/b.rs"),
        compaction("k1", "c", "## Goal\nfix src/a.rs"),
        message("d", "assistant", "src/b.rs fixed"),
        compaction("k2", "k2", "## Goal\nsrc/b.rs"),
        message("e", "user", "thanks"),
    ];
    let points = compaction_points(&entries);
    assert_eq!(points.len(), 2);
    // The first replaced a and b; c was kept and is in the second span, with d.
    assert_eq!(points[0].messages.len(), 2);
    assert_eq!(points[0].previous, None);
    assert_eq!(points[1].messages.len(), 2);
    assert_eq!(points[1].previous.as_deref(), Some("## Goal\nfix src/a.rs"));
}

#[test]
fn facts_are_the_real_summary_identifiers_the_span_holds() {
    let point = CompactionPoint {
        messages: compaction_points(&[
            message("a", "user", "rename parse_header in src/head.rs"),
            compaction("k", "k", "x"),
        ])[0]
            .messages
            .clone(),
        previous: None,
        summary: "Renamed parse_header in src/head.rs; see /home/me/.claude/transcript.jsonl"
            .to_owned(),
    };
    let case = point_case(&point, "t", "developed");
    let facts: Vec<&str> = case.facts.iter().map(|fact| fact.what.as_str()).collect();
    assert_eq!(facts, ["parse_header", "src/head.rs"]);
}
