//! A span longer than a summary request carries: the plan holds its window (beginning and latest
//! messages) and the count left out, never the whole span; the request says where messages were
//! left out; the file operations of the part left out are kept.

use std::fmt::Write as _;

use ctxkit_compaction::{
    CompactOptions, CompactionSettings, Prompts, SPAN_WINDOW_MESSAGES, compact, history_request,
    prepare_compaction,
};
use ctxkit_session::Session;
use ctxkit_summarizer_offline::OfflineSummarizer;
use serde_json::json;
use tokio_util::sync::CancellationToken;

/// A session of `count` messages on one branch, user and assistant in turn; the assistant reply
/// in the middle reads `src/middle.rs`.
fn long_session(dir: &std::path::Path, count: usize) -> Session {
    let mut text = json!({"type": "session", "version": 3, "id": "long-span",
        "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/tmp/long"})
    .to_string();
    text.push('\n');
    for index in 0..count {
        let message = if index % 2 == 0 {
            json!({"role": "user", "content": format!("m{index}"), "timestamp": 1_767_225_600_000_i64})
        } else if index == count / 2 + 1 {
            json!({"role": "assistant", "content": [{"type": "toolCall", "id": "c1", "name": "read",
                "arguments": {"path": "src/middle.rs"}}], "provider": "anthropic",
                "model": "claude-sonnet-4-5", "stopReason": "toolUse", "timestamp": 1_767_225_600_000_i64})
        } else {
            json!({"role": "assistant", "content": [{"type": "text", "text": format!("m{index}")}],
                "provider": "anthropic", "model": "claude-sonnet-4-5", "stopReason": "stop",
                "timestamp": 1_767_225_600_000_i64})
        };
        let parent = (index > 0).then(|| format!("{index:08x}"));
        let line = json!({"type": "message", "id": format!("{:08x}", index + 1), "parentId": parent,
            "timestamp": "2026-01-01T00:00:00.000Z", "message": message});
        writeln!(text, "{line}").unwrap();
    }
    let path = dir.join("long.jsonl");
    std::fs::write(&path, text).unwrap();
    Session::open(&path).unwrap()
}

#[tokio::test]
async fn a_span_longer_than_a_request_is_planned_as_its_window_with_the_count_left_out() {
    let dir = tempfile::tempdir().unwrap();
    let count = SPAN_WINDOW_MESSAGES + 10_000;
    let session = long_session(dir.path(), count);
    let settings = CompactionSettings {
        enabled: true,
        reserve_tokens: 16_384,
        keep_recent_tokens: 20,
    };
    let plan = prepare_compaction(&session, None, settings)
        .unwrap()
        .unwrap();
    let gap = plan.history_gap.expect("the span is cut");
    assert_eq!(plan.messages_to_summarize.len(), SPAN_WINDOW_MESSAGES);
    assert_eq!(
        plan.history_len(),
        plan.messages_to_summarize.len() + gap.messages
    );
    assert!(plan.history_len() > count - 20, "{}", plan.history_len());
    assert_eq!(gap.at, 200, "the head: the first 200 messages");
    // The head is the span's beginning, the tail its latest messages.
    let text = |index: usize| {
        ctxkit_compaction::serialize_messages(&plan.messages_to_summarize[index..=index])
    };
    assert!(text(0).contains("m0"), "{}", text(0));
    assert!(text(gap.at).contains(&format!("m{}", gap.at + gap.messages)));
    // The file read in the part left out is tracked.
    assert!(plan.file_operations.read.contains("src/middle.rs"));

    let summarizer = OfflineSummarizer::default();
    let request = history_request(
        &plan,
        &Prompts::default(),
        &summarizer,
        &CompactOptions::default(),
    );
    assert_eq!(request.source.messages.len(), SPAN_WINDOW_MESSAGES);
    assert_eq!(request.source.omitted_messages, gap.messages);
    let omitted = format!("[{} messages left out here", gap.messages);
    assert!(request.user_text.contains(&omitted));
    // The line stands between the head's last message and the tail's first.
    let first_of_tail = gap.at + gap.messages;
    assert!(
        request
            .user_text
            .contains(&format!("[Assistant]: m199\n\n{omitted}"))
    );
    assert!(request.user_text.contains(&format!(
        "here: the span is longer than a summary request carries]\n\n[User]: m{first_of_tail}\n"
    )));
    assert!(!request.user_text.contains("[User]: m200\n"));
    let result = compact(
        &plan,
        &summarizer,
        &Prompts::default(),
        &CompactOptions::default(),
        &CancellationToken::new(),
    )
    .await
    .unwrap();
    assert!(
        result.summary.contains("src/middle.rs"),
        "{}",
        result.summary
    );
}

#[test]
fn a_span_within_the_bounds_is_planned_whole() {
    let dir = tempfile::tempdir().unwrap();
    let session = long_session(dir.path(), 2_000);
    let settings = CompactionSettings {
        enabled: true,
        reserve_tokens: 16_384,
        keep_recent_tokens: 20,
    };
    let plan = prepare_compaction(&session, None, settings)
        .unwrap()
        .unwrap();
    assert_eq!(plan.history_gap, None);
    assert_eq!(plan.history_len(), plan.messages_to_summarize.len());
    assert!(plan.messages_to_summarize.len() > 1_980);
}

/// A split turn whose prefix starts with one message longer than a request carries, then a reply,
/// a `read` call and its result (the tester's repro 07): the prefix is planned whole, so the
/// request's text holds the small messages after the big one, and the model's fit cuts the big
/// one's oldest part rather than the read.
#[test]
fn a_turn_prefix_starting_with_a_huge_message_keeps_its_later_small_messages() {
    let dir = tempfile::tempdir().unwrap();
    let assistant = |content: serde_json::Value, stop: &str| {
        json!({"role": "assistant", "content": content, "provider": "p", "model": "m",
            "stopReason": stop, "timestamp": 1})
    };
    let messages = [
        json!({"role": "user", "content": "first", "timestamp": 1}),
        assistant(json!([{"type": "text", "text": "a2"}]), "stop"),
        json!({"role": "user", "content": [{"type": "text", "text": "y".repeat(9_000_000)}],
            "timestamp": 1}),
        assistant(
            json!([{"type": "text", "text": "Let me look at f.txt"}]),
            "stop",
        ),
        assistant(
            json!([{"type": "toolCall", "id": "t", "name": "read", "arguments": {"path": "f.txt"}}]),
            "toolUse",
        ),
        json!({"role": "toolResult", "toolCallId": "t", "toolName": "read",
            "content": [{"type": "text", "text": "r"}], "isError": false, "timestamp": 1}),
        assistant(json!([{"type": "text", "text": "a7"}]), "stop"),
    ];
    let mut text = json!({"type": "session", "version": 3, "id": "huge-prefix",
        "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/tmp"})
    .to_string();
    text.push('\n');
    for (index, message) in messages.iter().enumerate() {
        let parent = (index > 0).then(|| format!("e{index}"));
        let line = json!({"type": "message", "id": format!("e{}", index + 1), "parentId": parent,
            "timestamp": "2026-01-01T00:00:00.000Z", "message": message});
        writeln!(text, "{line}").unwrap();
    }
    let path = dir.path().join("huge.jsonl");
    std::fs::write(&path, text).unwrap();
    let session = Session::open(&path).unwrap();
    let settings = CompactionSettings {
        enabled: true,
        reserve_tokens: 16_384,
        keep_recent_tokens: 1,
    };
    let plan = prepare_compaction(&session, None, settings)
        .unwrap()
        .unwrap();
    assert!(plan.is_split_turn);
    assert_eq!(plan.turn_prefix_gap, None);
    assert_eq!(plan.turn_prefix_len(), 4);
    let request = ctxkit_compaction::turn_prefix_request(
        &plan,
        &Prompts::default(),
        &OfflineSummarizer::default(),
        &CompactOptions::default(),
    );
    assert!(!request.user_text.contains("messages left out here"));
    assert!(request.user_text.contains("Let me look at f.txt"));
    assert!(request.user_text.contains("read(path=\"f.txt\")"));
    assert!(plan.file_operations.read.contains("f.txt"));
}
