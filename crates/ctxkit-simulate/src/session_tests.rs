//! The at-risk and recalled definitions of a real session, on a small hand-built one.

use ctxkit_protocol::{
    AgentMessage, AssistantMessage, ContentBlock, JsonObject, MessageContent, ToolCall,
    ToolResultMessage, UserMessage,
};
use ctxkit_session::COMPACTION_SUMMARY_PREFIX;
use serde_json::json;

use super::meter::Request;
use super::named_recall::{NamedObservation, NamedTracker};
use super::session::{Responses, first_calls, session_trace};
use super::trace::{IdentifierKind, Trace};

fn user(text: &str) -> AgentMessage {
    AgentMessage::User(UserMessage {
        content: MessageContent::Text(text.to_owned()),
        timestamp: None,
        extra: JsonObject::new(),
    })
}

fn reply(text: &str, call: Option<(&str, serde_json::Value)>) -> AgentMessage {
    let mut content = vec![
        ContentBlock::Thinking(ctxkit_protocol::ThinkingContent {
            thinking: "maybe hidden_helper_fn matters".to_owned(),
            thinking_signature: None,
            extra: JsonObject::new(),
        }),
        ContentBlock::text(text),
    ];
    if let Some((id, arguments)) = call {
        content.push(ContentBlock::ToolCall(ToolCall {
            id: id.to_owned(),
            name: "bash".to_owned(),
            arguments,
            extra: JsonObject::new(),
        }));
    }
    AgentMessage::Assistant(AssistantMessage {
        content,
        api: Some("openai-responses".to_owned()),
        provider: Some("openai".to_owned()),
        model: Some("gpt-5".to_owned()),
        usage: None,
        stop_reason: Some("toolUse".to_owned()),
        error_message: None,
        timestamp: None,
        extra: JsonObject::new(),
    })
}

pub(super) fn result(id: &str, text: &str) -> AgentMessage {
    AgentMessage::ToolResult(ToolResultMessage {
        tool_call_id: id.to_owned(),
        tool_name: "bash".to_owned(),
        content: MessageContent::Blocks(vec![ContentBlock::text(text)]),
        details: None,
        is_error: false,
        timestamp: None,
        extra: JsonObject::new(),
    })
}

/// Two tasks, three calls.
fn session() -> Vec<AgentMessage> {
    vec![
        user("Fix the failing test in the billing crate"),
        reply(
            "I will run run_all_checks first.",
            Some(("t0", json!({"command": "cargo test -p billing"}))),
        ),
        result(
            "t0",
            "error[E0308]: mismatched types\n --> src/billing/ledger.rs:42:7\n in reconcile_ledger; \
             run_all_checks failed; hidden_helper_fn",
        ),
        reply(
            "E0308 comes from src/billing/ledger.rs.",
            Some(("t1", json!({"command": "cat src/billing/ledger.rs"}))),
        ),
        result("t1", "fn reconcile_ledger() { parse_header(x) }"),
        user("Also look at parse_header please"),
        reply(
            "reconcile_ledger calls parse_header; run_all_checks aside.",
            None,
        ),
    ]
}

fn named(trace: &Trace) -> Vec<(&str, IdentifierKind, &str, Vec<usize>)> {
    trace
        .named
        .iter()
        .map(|named| {
            (
                named.identifier.as_str(),
                named.kind,
                named.tool_call_id.as_str(),
                named.calls.clone(),
            )
        })
        .collect()
}

#[test]
fn tasks_start_at_user_messages_and_calls_keep_their_results() {
    let trace = session_trace(session(), Responses::OneMessageEach);
    assert_eq!(trace.tasks.len(), 2);
    assert_eq!(trace.calls(), 3);
    assert_eq!(trace.tasks[0].prompt.len(), 1);
    assert_eq!(trace.tasks[0].calls[0].results.len(), 1);
    assert_eq!(trace.messages().count(), session().len());
    let reply = &trace.tasks[1].calls[0].reply;
    assert_eq!(
        reply.model.as_deref(),
        Some(super::trace::MODEL),
        "replayed as the simulated model"
    );
}

/// Codex writes one response's reasoning, text and each function call as items of their own: one
/// call, holding every block, as the one request that produced them (its `token_count`). Pi writes
/// one message per response, so two replies in a row there are two requests.
#[test]
fn a_response_split_into_records_is_one_call_where_the_source_splits_responses() {
    let AgentMessage::Assistant(mut thinking_only) = reply("", None) else {
        unreachable!()
    };
    thinking_only.content.truncate(1);
    thinking_only.stop_reason = Some("stop".to_owned());
    let mut messages = vec![user("Fix the failing test in the billing crate")];
    messages.push(AgentMessage::Assistant(thinking_only));
    messages.push(reply(
        "First the tests.",
        Some(("t0", json!({"command": "cargo test"}))),
    ));
    messages.push(reply(
        "And the log.",
        Some(("t1", json!({"command": "cat log"}))),
    ));
    messages.push(result("t0", "ok"));
    messages.push(result("t1", "ok"));
    messages.push(reply("Done.", None));
    let split = session_trace(messages.clone(), Responses::Split);
    assert_eq!(split.calls(), 2);
    let first = &split.tasks[0].calls[0];
    assert_eq!(first.reply.content.len(), 1 + 3 + 3);
    assert_eq!(first.reply.stop_reason.as_deref(), Some("toolUse"));
    assert_eq!(first.results.len(), 2);
    assert_eq!(split.messages().count(), messages.len() - 2);
    let whole = session_trace(messages.clone(), Responses::OneMessageEach);
    assert_eq!(whole.calls(), 4);
    // The bound on calls cuts where the grouping starts a call, in both ways of writing replies.
    for (responses, total) in [(Responses::Split, 2), (Responses::OneMessageEach, 4)] {
        for max in 0..=total + 1 {
            let (kept, left_out) = first_calls(messages.clone(), responses, max);
            let replayed = session_trace(kept.clone(), responses).calls();
            assert_eq!(replayed, max.min(total), "{responses:?} {max}");
            assert_eq!(left_out.calls, total - replayed, "{responses:?} {max}");
            assert_eq!(
                left_out.messages + kept.len(),
                messages.len(),
                "{responses:?}"
            );
        }
    }
    assert_eq!(Responses::of_format("codex"), Responses::Split);
    for format in ["pi", "claude-code", "opencode"] {
        assert_eq!(Responses::of_format(format), Responses::OneMessageEach);
    }
}

/// A reply the source's provider refused with ("Prompt is too long", Claude Code's synthetic API
/// error) is not a call: replayed, it made every strategy with compaction recover from an overflow
/// no simulated request had (found on real Claude Code sessions of 3 calls and 600 tokens).
#[test]
fn error_replies_of_the_source_are_not_replayed() {
    let mut messages = session();
    let AgentMessage::Assistant(mut refused) = reply("Prompt is too long", None) else {
        unreachable!()
    };
    refused.stop_reason = Some("error".to_owned());
    refused.error_message = Some("prompt is too long: 210000 tokens > 200000 maximum".to_owned());
    messages.push(user("please continue"));
    messages.push(AgentMessage::Assistant(refused));
    let trace = session_trace(messages.clone(), Responses::OneMessageEach);
    assert_eq!(trace.calls(), 3, "the refused reply is not a call");
    assert_eq!(trace.messages().count(), messages.len() - 1);
}

#[test]
fn an_identifier_is_at_risk_when_a_tool_result_showed_it_first_and_a_reply_names_it_again() {
    let trace = session_trace(session(), Responses::OneMessageEach);
    assert_eq!(
        named(&trace),
        vec![
            ("E0308", IdentifierKind::ErrorCode, "t0", vec![1]),
            (
                "src/billing/ledger.rs",
                IdentifierKind::FilePath,
                "t0",
                vec![1]
            ),
            ("reconcile_ledger", IdentifierKind::Symbol, "t0", vec![2]),
            ("parse_header", IdentifierKind::Symbol, "t1", vec![2]),
        ],
        "run_all_checks came from the assistant; hidden_helper_fn is named only in thinking, \
         which is not read"
    );
}

fn observe(tracker: &mut NamedTracker<'_>, view: &[AgentMessage], call: usize) -> NamedObservation {
    let request = Request::measure(view).unwrap();
    tracker.observe(view, &request.messages, call)
}

#[test]
fn recalled_when_the_request_of_the_naming_call_still_holds_it() {
    let messages = session();
    let trace = session_trace(messages.clone(), Responses::OneMessageEach);
    let mut tracker = NamedTracker::new(&trace).unwrap();
    // Call 0: nothing is at risk yet.
    let first = observe(&mut tracker, &messages[..1], 0);
    assert_eq!(first.sample.all.at_risk, 0);
    assert_eq!(first.view.all.at_risk, 0);
    // Call 1, the whole history: both identifiers it names are there.
    let whole = observe(&mut tracker, &messages[..3], 1);
    assert_eq!(
        (whole.sample.all.at_risk, whole.sample.all.recalled),
        (2, 2)
    );
    // Call 1 with the tool result pruned: at risk and lost.
    let mut pruned = messages[..3].to_vec();
    pruned[2] = result("t0", "[output omitted]");
    let lost = observe(&mut tracker, &pruned, 1);
    assert_eq!((lost.sample.all.at_risk, lost.sample.all.recalled), (2, 0));
    // Each lost identifier is listed, with its source result still in the request.
    let missed: Vec<(&str, &str, bool, bool)> = lost
        .missed
        .iter()
        .map(|miss| {
            assert_eq!(miss.call, 1);
            // t0 was called by call 0's reply.
            assert_eq!(miss.source_call, 0);
            (
                miss.identifier.as_str(),
                miss.tool_call_id.as_str(),
                miss.source_in_view,
                miss.summarized,
            )
        })
        .collect();
    assert_eq!(missed.len(), 2);
    assert!(
        missed
            .iter()
            .all(|miss| miss.1 == "t0" && miss.2 && !miss.3)
    );
    assert!(whole.missed.is_empty());
    // Call 2 after a compaction: a summary naming reconcile_ledger as part of a longer word does
    // not count; the user's message still holds parse_header.
    let summary = user(&format!(
        "{COMPACTION_SUMMARY_PREFIX}Worked on reconcile_ledger_v2 and E0308.\n</summary>"
    ));
    let view = vec![summary, messages[5].clone()];
    let after = observe(&mut tracker, &view, 2);
    assert_eq!(
        (after.sample.all.at_risk, after.sample.all.recalled),
        (2, 1)
    );
    // reconcile_ledger is listed as lost behind a summary (its result gone).
    assert_eq!(after.missed.len(), 1);
    assert_eq!(after.missed[0].identifier, "reconcile_ledger");
    assert!(!after.missed[0].source_in_view && after.missed[0].summarized);
    assert_eq!(after.missed[0].source_call, 0);
    // Without the user's message, parse_header is lost too: t1 was called by call 1's reply.
    let bare = observe(&mut tracker, &view[..1], 2);
    let sources: Vec<(&str, usize)> = bare
        .missed
        .iter()
        .map(|miss| (miss.identifier.as_str(), miss.source_call))
        .collect();
    assert_eq!(sources, [("reconcile_ledger", 0), ("parse_header", 1)]);
    // The view counts everything at risk so far: E0308 (in the summary) and parse_header.
    assert_eq!((after.view.all.at_risk, after.view.all.recalled), (4, 2));
    // The stand-in keeps the file path whose result is gone while a summary is shown.
    assert_eq!(after.view_stand_in.all.recalled, 3);
    assert_eq!(
        after.sample_stand_in.all.recalled, 1,
        "no path is named at call 2"
    );
}

/// Codex records the reply that wrote a compaction's summary before its `compacted` line: the
/// source's compaction call, which is not replayed, as its compaction is not.
#[test]
fn the_reply_that_wrote_a_source_compaction_is_not_replayed() {
    let handoff = format!(
        "## Handoff Summary\n{}",
        "- patched `service/model.py`; next: rerun.\n".repeat(8)
    );
    let summary = format!(
        "Another language model started to solve this problem. Here is the summary:\n{handoff}"
    );
    let message = message_entry;
    let assistant = |text: &str| {
        serde_json::json!({"role": "assistant",
        "content": [{"type": "text", "text": text}], "api": "openai-responses", "provider": "openai",
        "model": "gpt-5", "stopReason": "stop", "timestamp": 1,
        "usage": {"input": 1, "output": 1, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 2}})
    };
    let lines = [
        serde_json::json!({"type": "session", "version": 3, "id": "s1",
            "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/tmp"}),
        message(
            "a",
            "s1",
            serde_json::json!({"role": "user", "content": "patch it", "timestamp": 1}),
        ),
        message("b", "a", assistant("Patched service/model.py.")),
        message("c", "b", assistant(&handoff)),
        serde_json::json!({"type": "compaction", "id": "d", "parentId": "c",
            "timestamp": "2026-01-01T00:00:00.000Z", "summary": summary,
            "firstKeptEntryId": "d", "tokensBefore": 100}),
        message(
            "e",
            "d",
            serde_json::json!({"role": "user", "content": "go on", "timestamp": 1}),
        ),
        message("f", "e", assistant("Rerun done.")),
    ];
    let loaded = loaded_from(&lines);
    let replies: Vec<String> = loaded
        .messages
        .iter()
        .filter_map(|message| message.as_assistant())
        .map(|reply| {
            reply
                .content
                .iter()
                .filter_map(|block| block.as_text())
                .collect()
        })
        .collect();
    assert_eq!(replies, ["Patched service/model.py.", "Rerun done."]);
    assert_eq!(loaded.skipped_summaries, 1);
}

/// What a tool keeps for a user interface is not replayed: the model's view never holds it.
#[test]
fn a_replayed_tool_result_carries_no_details() {
    let message = message_entry;
    let lines = [
        serde_json::json!({"type": "session", "version": 3, "id": "s1",
            "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/tmp"}),
        message(
            "a",
            "s1",
            serde_json::json!({"role": "user", "content": "read it", "timestamp": 1}),
        ),
        message(
            "b",
            "a",
            serde_json::json!({"role": "assistant", "stopReason": "toolUse", "timestamp": 2,
                "content": [{"type": "toolCall", "id": "c1", "name": "read",
                             "arguments": {"path": "a.rs"}}]}),
        ),
        message(
            "c",
            "b",
            serde_json::json!({"role": "toolResult", "toolCallId": "c1", "toolName": "read",
                "isError": false, "timestamp": 3, "content": [{"type": "text", "text": "fn a()"}],
                "details": {"file": "the whole file, for the user interface"}}),
        ),
    ];
    let loaded = loaded_from(&lines);
    let results: Vec<_> = loaded
        .messages
        .iter()
        .filter_map(|message| message.as_tool_result())
        .collect();
    assert_eq!(results.len(), 1);
    assert_eq!(results[0].details, None);
    assert_eq!(results[0].content.joined_text("\n"), "fn a()");
}

/// A message entry of a session file.
fn message_entry(id: &str, parent: &str, value: serde_json::Value) -> serde_json::Value {
    serde_json::json!({"type": "message", "id": id, "parentId": parent,
        "timestamp": "2026-01-01T00:00:00.000Z", "message": value})
}

/// `lines` written as a session file and loaded for replay.
fn loaded_from(lines: &[serde_json::Value]) -> super::session::LoadedSession {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.jsonl");
    let text: Vec<String> = lines.iter().map(|line| line.to_string()).collect();
    std::fs::write(&path, text.join("\n") + "\n").unwrap();
    super::session::load_session(&path).unwrap()
}
