//! The records Claude Code and Codex write beside the conversation: each kind maps to what the
//! agent showed its model (a title, a queued prompt, an aborted turn, a web search, a patch) or is
//! kept quietly as data (`custom` entries, not reported).

use ctxkit_import::{ImportedSession, IssueKind};
use ctxkit_protocol::{ANTHROPIC_BLOCK_FIELD, ContentBlock, EntryKind};
use serde_json::{Value, json};

use crate::shapes::{imported_context, shape};

/// `customType`s of the `custom` entries, in file order, and the session names.
fn kept(session: &ImportedSession) -> (Vec<String>, Vec<String>) {
    let mut custom = Vec::new();
    let mut names = Vec::new();
    for entry in session.entries() {
        if let EntryKind::Custom(entry) = &entry.kind {
            custom.push(entry.custom_type.clone());
        }
        if let EntryKind::SessionInfo(info) = entry.kind {
            names.extend(info.name);
        }
    }
    (custom, names)
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
fn claude_code_bookkeeping_records_are_kept_and_titles_name_the_session() {
    let (session, context) = imported_context(&shape("claude-record-kinds.jsonl"));
    assert_eq!(
        context,
        [
            "user: Add a health endpoint.",
            "assistant: Writing the route. | <call toolu_k1 Write>",
            "toolResult toolu_k1 Write: File created successfully at: /home/dev/api/src/health.ts",
            "assistant: Added GET /health.",
            "user: Thanks",
            "assistant: You're welcome.",
        ]
    );
    let (custom, names) = kept(&session);
    assert_eq!(
        custom,
        [
            "import.claude-code.permission-mode",
            "import.claude-code.file-history-snapshot",
            "import.claude-code.attachment",
            "import.claude-code.system",
            "import.claude-code.ai-title",
            "import.claude-code.last-prompt",
            "import.claude-code.queue-operation",
            "import.claude-code.queue-operation",
        ]
    );
    // The name the user gave wins over the generated one.
    assert_eq!(names, ["health-check work"]);
    assert_eq!(unknown_records(&session), Vec::<String>::new());
    // The recap Claude Code showed the user is kept whole.
    let text = session.to_jsonl().unwrap();
    assert!(text.contains("Added a GET /health route in src/health.ts."));
}

#[test]
fn codex_tool_searches_snapshots_aborted_turns_and_web_searches_import_as_codex_showed_them() {
    let (session, context) = imported_context(&shape("codex-record-kinds.jsonl"));
    assert_eq!(
        context,
        [
            "user: Find a tool to profile the slow query and run it.",
            "assistant: <call call_k1 pg_explain>",
            "toolResult call_k1 pg_explain: aborted",
            "user: <turn_aborted>\nThe user interrupted the previous turn.\n</turn_aborted>",
            "user: Look it up on the web instead.",
            "assistant: [web search: opened https://www.postgresql.org/docs/current/using-explain.html]",
            "assistant: Use EXPLAIN (ANALYZE, BUFFERS) on the query.",
        ]
    );
    let (custom, _) = kept(&session);
    assert_eq!(
        custom,
        [
            "import.codex.session_meta",
            "import.codex.turn_context",
            "import.codex.world_state",
            "import.codex.tool_search_call",
            "import.codex.tool_search_output",
            "import.codex.ghost_snapshot",
            "import.codex.event_msg",
        ]
    );
    assert_eq!(unknown_records(&session), Vec::<String>::new());
}

#[test]
fn a_claude_code_call_without_a_result_gets_the_error_result_claude_code_sends() {
    let temp = tempfile::tempdir().unwrap();
    let path = temp.path().join("3c4d5e6f-unanswered.jsonl");
    let records = [
        r#"{"type":"user","uuid":"u1","parentUuid":null,"sessionId":"s1","cwd":"/home/dev/api","timestamp":"2026-05-10T12:00:00.000Z","message":{"role":"user","content":"Run the tests."}}"#,
        r#"{"type":"assistant","uuid":"a1","parentUuid":"u1","sessionId":"s1","cwd":"/home/dev/api","timestamp":"2026-05-10T12:00:01.000Z","message":{"id":"msg_1","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"tool_use","id":"toolu_u1","name":"Bash","input":{"command":"npm test"}}]}}"#,
        r#"{"type":"user","uuid":"u2","parentUuid":"a1","sessionId":"s1","cwd":"/home/dev/api","timestamp":"2026-05-10T12:05:00.000Z","message":{"role":"user","content":"Did they pass?"}}"#,
    ];
    std::fs::write(&path, records.join("\n")).unwrap();
    let (session, context) = imported_context(&path);
    assert_eq!(
        context,
        [
            "user: Run the tests.",
            "assistant: <call toolu_u1 Bash>",
            "toolResult toolu_u1 Bash: [Tool result missing due to internal error]",
            "user: Did they pass?",
        ]
    );
    assert!(
        session
            .report
            .issues
            .iter()
            .any(|issue| matches!(issue.kind, IssueKind::MissingToolResultAdded { .. }))
    );
    assert!(session.to_jsonl().unwrap().contains("\"isError\":true"));
}

#[test]
fn a_2025_codex_shell_output_reads_as_newer_versions_show_it() {
    let (session, context) = imported_context(&shape("codex-2025-exec-outputs.jsonl"));
    assert_eq!(
        context,
        [
            "user: List the repository and run the migrations.",
            "assistant: <call call_ls shell>",
            "toolResult call_ls shell: Exit code: 0\nWall time: 0.1 seconds\nOutput:\nARCHITECTURE.md\npackage.json\npackages\n",
            "assistant: <call call_migrate shell>",
            "toolResult call_migrate shell: Exit code: 1\nWall time: 3.4 seconds\nOutput:\nError: DATABASE_URL is not set\n",
            "assistant: <call call_echo shell>",
            // Output that only looks like the record stays as it was.
            "toolResult call_echo shell: {\"output\": 1}",
            "assistant: The migration needs DATABASE_URL.",
        ]
    );
    let results: Vec<(String, bool, Option<serde_json::Value>)> = session
        .entries()
        .into_iter()
        .filter_map(|entry| {
            let EntryKind::Message(message) = entry.kind else {
                return None;
            };
            message.as_tool_result().map(|result| {
                (
                    result.tool_call_id.clone(),
                    result.is_error,
                    result.details.clone(),
                )
            })
        })
        .collect();
    assert_eq!(
        results,
        [
            (
                "call_ls".to_owned(),
                false,
                Some(
                    serde_json::json!({"codexMetadata": {"exit_code": 0, "duration_seconds": 0.1}})
                )
            ),
            (
                "call_migrate".to_owned(),
                true,
                Some(
                    serde_json::json!({"codexMetadata": {"exit_code": 1, "duration_seconds": 3.4}})
                )
            ),
            ("call_echo".to_owned(), false, None),
        ]
    );
    assert_eq!(unknown_records(&session), Vec::<String>::new());
}

/// A PDF the user attached (`document`) and a tool search's `tool_reference` have no v3 block: each
/// is a text naming it, the block kept beside it as `anthropicBlock`, and the report says so. Kept
/// raw in the message, the PDF was a block Pi 1.6.0 sent as an image without data, which Anthropic
/// refused on every later turn.
#[test]
fn claude_code_blocks_without_a_v3_block_are_texts_with_the_block_beside_them() {
    let (session, context) = imported_context(&shape("claude-document-and-tool-reference.jsonl"));
    assert_eq!(
        context,
        [
            "user: [document: application/pdf, 15 bytes] | Summarize the attached API manual.",
            "assistant: <call toolu_s1 ToolSearch>",
            "toolResult toolu_s1 ToolSearch: [tool reference: ExitPlanMode]",
            "assistant: The manual documents start(), css() and csd().",
        ]
    );
    let kept: Vec<Value> = session
        .entries()
        .iter()
        .filter_map(|entry| {
            let EntryKind::Message(message) = &entry.kind else {
                return None;
            };
            message
                .as_user()
                .map(|user| user.content.blocks())
                .or_else(|| {
                    message
                        .as_tool_result()
                        .map(|result| result.content.blocks())
                })
        })
        .flatten()
        .filter_map(|block| {
            let ContentBlock::Text(text) = block else {
                return None;
            };
            text.extra.get(ANTHROPIC_BLOCK_FIELD).cloned()
        })
        .collect();
    assert_eq!(
        kept,
        [
            json!({"type": "document", "source": {"type": "base64", "media_type": "application/pdf", "data": "JVBERi0xLjQKJdPr6eEK"}}),
            json!({"type": "tool_reference", "tool_name": "ExitPlanMode"}),
        ]
    );
    let reported: Vec<String> = session
        .report
        .issues
        .iter()
        .map(|issue| issue.kind.to_string())
        .collect();
    assert_eq!(
        reported,
        [
            "a content block of type `document` is a text naming it, the block kept beside it as `anthropicBlock`; v3 has no such block",
            "a content block of type `tool_reference` is a text naming it, the block kept beside it as `anthropicBlock`; v3 has no such block",
        ]
    );
}

/// Claude Code (≥ 2.1.8x) stores a large tool result only as a `<persisted-output>` preview, the
/// full output in `<session>/tool-results/*.txt`: the preview is imported as it is, and the report
/// says the full output stayed behind (QA r102: nothing said so).
#[test]
fn a_persisted_output_preview_reports_the_output_left_behind() {
    let (session, context) = imported_context(&shape("claude-persisted-output.jsonl"));
    assert_eq!(context.len(), 4, "{context:?}");
    assert!(
        context[2].contains("Output too large (96.8KB)"),
        "{context:?}"
    );
    let reported: Vec<String> = session
        .report
        .issues
        .iter()
        .map(|issue| format!("{:?}: {}", issue.line, issue.kind))
        .collect();
    assert_eq!(
        reported,
        [
            "Some(3): a tool result is Claude Code's preview of a larger output; the full output stays \
          in `/home/dev/.claude/projects/-home-dev-vault/7c8d9e0f-persisted/tool-results/btl2qvu2t.txt` \
          (not imported)"
        ]
    );
}

/// Claude Code writes its own notices (rate limits, API errors, "No response requested.") as
/// assistant records of model `<synthetic>`. Imported with that model, 7 of 23 real sessions
/// ended on `anthropic/<synthetic>`, and continuing one asked the provider for that model (HTTP
/// 404). A notice is imported as Pi records its own failed requests: the reply of the model in
/// use (none before the first real reply), the placeholder kept as `claudeModel`.
#[test]
fn claude_code_notices_name_the_model_in_use_not_its_placeholder() {
    let path = shape("claude-synthetic-notices.jsonl");
    let (session, context) = imported_context(&path);
    let mut replies = Vec::new();
    let mut model_changes = Vec::new();
    for entry in session.entries() {
        match entry.kind {
            EntryKind::Message(message) => {
                if let Some(reply) = message.as_assistant() {
                    replies.push((
                        reply.model.clone(),
                        reply.stop_reason.clone().unwrap_or_default(),
                        reply.extra.get("claudeModel").cloned(),
                    ));
                }
            }
            EntryKind::ModelChange(change) => model_changes.push(change.model_id),
            EntryKind::Compaction(_)
            | EntryKind::ThinkingLevelChange(_)
            | EntryKind::BranchSummary(_)
            | EntryKind::Custom(_)
            | EntryKind::CustomMessage(_)
            | EntryKind::Label(_)
            | EntryKind::SessionInfo(_)
            | EntryKind::ContextEdit(_)
            | EntryKind::Usage(_)
            | EntryKind::Unknown { .. } => {}
        }
    }
    let opus = Some("claude-opus-4-6".to_owned());
    let placeholder = Some(serde_json::json!("<synthetic>"));
    assert_eq!(
        replies,
        [
            (None, "error".to_owned(), placeholder.clone()),
            (opus.clone(), "stop".to_owned(), None),
            (opus.clone(), "error".to_owned(), placeholder.clone()),
            (opus.clone(), "stop".to_owned(), placeholder.clone()),
            (opus.clone(), "error".to_owned(), placeholder),
        ]
    );
    assert_eq!(model_changes, ["claude-opus-4-6"]);
    assert_eq!(
        context.last().map(String::as_str),
        Some("assistant: You're out of extra usage · resets 3am (UTC)")
    );
    // The context's model is the last real one: what a continued session is talked to with.
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join(session.file_name());
    session.write_to(&out).unwrap();
    let opened = ctxkit_session::Session::open(&out).unwrap();
    let model = opened
        .context_at(ctxkit_session::LeafSelector::Current)
        .model
        .unwrap();
    assert_eq!(
        (model.provider.as_deref(), model.model_id.as_deref()),
        (Some("anthropic"), Some("claude-opus-4-6"))
    );
    assert!(
        !session
            .to_jsonl()
            .unwrap()
            .contains("\"model\":\"<synthetic>\"")
    );
}
