//! Record kinds of Codex's late-2026 rollouts (multi-agent messages, generated images, token usage
//! records and the bookkeeping lines beside them): each one reaches the context as Codex showed
//! it to its model, or is kept quietly as data.

use ctxkit_import::{ImportedSession, IssueKind};
use ctxkit_protocol::EntryKind;

use crate::shapes::{describe, imported_context, shape};

/// Every message of the imported file, in file order (side branches included).
fn every_message(session: &ImportedSession) -> Vec<String> {
    session
        .entries()
        .iter()
        .filter_map(|entry| {
            if let EntryKind::Message(message) = &entry.kind {
                Some(describe(message))
            } else {
                None
            }
        })
        .collect()
}

fn unknown_records(session: &ImportedSession) -> Vec<String> {
    session
        .report
        .issues
        .iter()
        .filter(|issue| matches!(issue.kind, IssueKind::UnknownRecord { .. }))
        .map(|issue| issue.kind.to_string())
        .collect()
}

#[test]
fn agent_messages_generated_images_and_usage_records_of_late_2026_rollouts_are_read() {
    let (session, context) = imported_context(&shape("codex-2026-late-kinds.jsonl"));
    assert_eq!(unknown_records(&session), Vec::<String>::new());
    // The tool output's encrypted item is kept as it is, and said so.
    assert!(
        session
            .report
            .issues
            .iter()
            .any(|issue| issue.kind.to_string()
                == "kept a content block of type `encrypted_content` as it is; v3 has no such block")
    );
    assert_eq!(
        every_message(&session),
        [
            "user: [message from /root to /root/tester]\nRun the checkout tests and tell me which fail.",
            "assistant: <thinking Run the suite.>",
            "assistant: <call call_l1 exec_command>",
            "toolResult call_l1 exec_command: 2 failing: totals, coupons | <unknown Some(String(\"encrypted_content\"))>",
            "assistant: [web search: \"vitest coupon rounding\", \"checkout totals float\"]",
            "assistant: Two tests fail; drawing the flow for you.",
            "assistant: [generated an image: \"A diagram of the checkout flow\"]",
            "user: [message from /root/tester to /root]\ntotals and coupons fail; see the diagram.",
            "user: [message from /root to /root/tester]\nFix the coupon rounding.",
            "user: [message from /root to /root/tester]\nFix the coupon rounding.",
            "assistant: Rounded coupons to cents; tests pass.",
        ]
    );
    // After the remote compaction the context is the history Codex kept: the instruction it
    // continued from, then the answer.
    assert_eq!(
        context[1..],
        [
            "user: [message from /root to /root/tester]\nFix the coupon rounding.",
            "assistant: Rounded coupons to cents; tests pass.",
        ]
    );
    let jsonl = session.to_jsonl().unwrap();
    // The generated image stays with its item; the compaction takes the usage record's tokens.
    assert!(jsonl.contains("\"result\":\"iVBORw0KGgo=\""));
    assert!(jsonl.contains("\"tokensBefore\":5220"));
    let custom: Vec<String> = session
        .entries()
        .iter()
        .filter_map(|entry| {
            if let EntryKind::Custom(custom) = &entry.kind {
                Some(custom.custom_type.clone())
            } else {
                None
            }
        })
        .collect();
    for kind in [
        "import.codex.additional_tools",
        "import.codex.inter_agent_communication_metadata",
        "import.codex.token_usage_record",
        "import.codex.security_risk_score",
        "import.codex.retained_context",
        "import.codex.realtime_item",
        "import.codex.context_compaction",
    ] {
        assert!(
            custom.iter().any(|kept| kept == kind),
            "{kind} in {custom:?}"
        );
    }
}

const ENVIRONMENT: &str =
    "user: <environment_context>\n  <cwd>/home/dev/api</cwd>\n</environment_context>";

#[test]
fn a_rolled_back_turn_stays_in_the_file_but_leaves_the_context() {
    let (session, context) = imported_context(&shape("codex-rolled-back.jsonl"));
    assert_eq!(
        context,
        [
            ENVIRONMENT,
            "user: Add a /health route.",
            "assistant: Added GET /health.",
            ENVIRONMENT,
            "user: Add a /ready route instead.",
            "assistant: Added GET /ready.",
        ]
    );
    // The undone turn is a side branch, whole.
    let messages = every_message(&session);
    assert!(messages.contains(&"user: Also add /metrics with prom-client.".to_owned()));
    assert!(messages.contains(&"toolResult call_r1 shell: added 3 packages".to_owned()));
}

#[test]
fn a_rollback_on_the_last_line_leaves_the_context_at_the_turn_before() {
    let text = std::fs::read_to_string(shape("codex-rolled-back.jsonl")).unwrap();
    let through_rollback: Vec<&str> = text.lines().take(15).collect();
    assert!(through_rollback[14].contains("thread_rolled_back"));
    let temp = tempfile::tempdir().unwrap();
    let path = temp
        .path()
        .join("rollout-2026-07-10T08-00-00-019f4780-rolled-back.jsonl");
    std::fs::write(&path, through_rollback.join("\n")).unwrap();
    let (_, context) = imported_context(&path);
    assert_eq!(
        context,
        [
            ENVIRONMENT,
            "user: Add a /health route.",
            "assistant: Added GET /health.",
        ]
    );
}
