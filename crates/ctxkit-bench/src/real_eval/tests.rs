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

/// Codex records its model's answer to the compaction prompt as a reply before the `compacted`
/// line, whose summary quotes it: that reply is the summary, not history it summarized.
#[test]
fn the_reply_that_wrote_the_summary_is_not_in_the_span() {
    let handoff = format!(
        "## Handoff Summary\n- Workspace `D:\\app`; patched `service/model.py`.\n{}",
        "- Next: rerun the evaluation with the V8 features.\n".repeat(4)
    );
    let summary = format!(
        "Another language model started to solve this problem and produced a summary of its \
         thinking process. Here is the summary produced by the other language model:\n{handoff}"
    );
    let entries = vec![
        message("a", "user", "patch service/model.py"),
        message(
            "b",
            "assistant",
            "Patched service/model.py and ran the tests.",
        ),
        message("c", "assistant", &handoff),
        compaction("k1", "k1", &summary),
    ];
    let points = compaction_points(&entries);
    assert_eq!(points[0].messages.len(), 2);
    // A short reply the summary happens to end with stays, and so does a long one it only quotes.
    let entries = vec![
        message("a", "user", "patch service/model.py"),
        message(
            "b",
            "assistant",
            "- Next: rerun the evaluation with the V8 features.",
        ),
        compaction("k1", "k1", &summary),
    ];
    assert_eq!(compaction_points(&entries)[0].messages.len(), 2);
    let quoted = format!("## Goal\n{handoff}\n## Next Steps\n- rerun");
    let entries = vec![
        message("a", "user", "patch service/model.py"),
        message("c", "assistant", &handoff),
        compaction("k1", "k1", &quoted),
    ];
    assert_eq!(compaction_points(&entries)[0].messages.len(), 2);
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

#[test]
fn points_are_named_by_their_session_id() {
    assert_eq!(
        short_name("2026-05-13T04-21-46-749Z_019e1f91-c27d-71c0-b70c-b36435f7fcb1.jsonl"),
        "019e1f91"
    );
    assert_eq!(
        short_name("rollout-2026-07-13T22-18-49-019f5bd8-48b3-76d1-a587-4716372d26ea.jsonl"),
        "019f5bd8"
    );
    assert_eq!(
        short_name("bd744386-6688-4943-bda5-94ee286ce883.jsonl.reset.2026-04-08T06-28-47.173Z"),
        "bd744386"
    );
    assert_eq!(short_name("session.jsonl"), "session.");
}

/// A transcript that begins with the summary of the session it continues has no span to score.
#[test]
fn a_compaction_with_nothing_before_it_says_so() {
    let entries = vec![
        compaction("k1", "k1", "## Goal\nfix `src/a.rs`"),
        message("a", "user", "go on with src/a.rs"),
    ];
    let points = compaction_points(&entries);
    let row = ManifestRow {
        repository: "owner/name".to_owned(),
        path: "session.jsonl".to_owned(),
        agent: "pi".to_owned(),
        split: "blind".to_owned(),
        file: PathBuf::from("session.jsonl"),
    };
    let skipped = evaluate_point(&points[0], &row, "k1#1").unwrap_err();
    assert_eq!(skipped.reason, "nothing before it in the file");
}
