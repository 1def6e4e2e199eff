//! Real-world shapes (hand-written fixtures under `tests/fixtures/shapes`): each is imported, written,
//! opened by the store, and its context checked message by message.

use std::path::{Path, PathBuf};

use ctxkit_import::{ImportedSession, IssueKind, SourceFormat, WriteOutcome, import_file};
use ctxkit_protocol::{AgentMessage, ContentBlock, MessageContent};
use ctxkit_session::{LeafSelector, Session};

pub fn shape(name: &str) -> PathBuf {
    crate::fixtures_dir().join("shapes").join(name)
}

fn text_of(content: &MessageContent) -> String {
    match content {
        MessageContent::Text(text) => text.clone(),
        MessageContent::Blocks(blocks) => blocks
            .iter()
            .map(block_text)
            .collect::<Vec<_>>()
            .join(" | "),
    }
}

fn block_text(block: &ContentBlock) -> String {
    match block {
        ContentBlock::Text(text) => text.text.clone(),
        ContentBlock::Image(image) => format!("<image {} {}B>", image.mime_type, image.data.len()),
        ContentBlock::Thinking(thinking) => format!("<thinking {}>", thinking.thinking),
        ContentBlock::ToolCall(call) => format!("<call {} {}>", call.id, call.name),
        ContentBlock::Unknown(object) => format!("<unknown {:?}>", object.get("type")),
    }
}

/// One line per context message: `role: text`.
pub fn describe(message: &AgentMessage) -> String {
    match message {
        AgentMessage::User(user) => format!("user: {}", text_of(&user.content)),
        AgentMessage::Assistant(assistant) => format!(
            "assistant: {}",
            assistant
                .content
                .iter()
                .map(block_text)
                .collect::<Vec<_>>()
                .join(" | ")
        ),
        AgentMessage::ToolResult(result) => format!(
            "toolResult {} {}: {}",
            result.tool_call_id,
            result.tool_name,
            text_of(&result.content)
        ),
        AgentMessage::Custom(custom) => {
            format!(
                "custom {}: {}",
                custom.custom_type,
                text_of(&custom.content)
            )
        }
        AgentMessage::CompactionSummary(summary) => {
            format!("compactionSummary: {}", summary.summary)
        }
        other @ (AgentMessage::BashExecution(_)
        | AgentMessage::BranchSummary(_)
        | AgentMessage::Unknown(_)) => other.role().to_owned(),
    }
}

/// Imports `path`, writes the session into a temp dir (checking a second write changes nothing and
/// the source stays as it was), opens it and returns the context at the leaf.
pub fn imported_context(path: &Path) -> (ImportedSession, Vec<String>) {
    let before = std::fs::read(path).unwrap();
    let session = import_file(path, None).unwrap();
    let temp = tempfile::tempdir().unwrap();
    let out = temp.path().join(session.file_name());
    assert_eq!(session.write_to(&out).unwrap(), WriteOutcome::Created);
    assert_eq!(
        import_file(path, None).unwrap().write_to(&out).unwrap(),
        WriteOutcome::UpToDate
    );
    assert_eq!(std::fs::read(path).unwrap(), before, "the source changed");
    let opened = Session::open(&out).unwrap();
    assert!(
        opened.diagnostics().is_empty(),
        "{}: {:?}",
        path.display(),
        opened.diagnostics()
    );
    let context = opened.context_at(LeafSelector::Current);
    let messages = context
        .messages
        .iter()
        .map(|message| describe(&opened.message(message).unwrap()))
        .collect();
    (session, messages)
}

fn has_issue(session: &ImportedSession, wanted: fn(&IssueKind) -> bool) -> bool {
    session
        .report
        .issues
        .iter()
        .any(|issue| wanted(&issue.kind))
}

#[test]
fn codex_remote_compaction_continues_from_the_replacement_history() {
    let (session, context) = imported_context(&shape("codex-remote-compaction.jsonl"));
    assert_eq!(session.format, SourceFormat::Codex);
    assert_eq!(
        context,
        [
            "user: The checkout total is off by one cent for discounts; fix it and add a test.",
            "assistant: Plan: 1. round the discount after subtracting it in src/cart.rs. 2. add a test for 19.99 with 15% off.",
            "user: Go ahead.",
            "assistant: <call call_p1 apply_patch>",
            "toolResult call_p1 apply_patch: {\"output\":\"Success. Updated the following files:\\nM src/cart.rs\\n\",\"metadata\":{\"exit_code\":0}}",
            "assistant: [web search: \"banker's rounding rust f64\"]",
            "assistant: Fixed: the discount is rounded on its own now, and a test covers 19.99 at 15% off.",
        ]
    );
    assert!(!has_issue(&session, |kind| matches!(
        kind,
        IssueKind::CompactionWithoutSummary | IssueKind::UnknownRecord { .. }
    )));
    // The encrypted checkpoint is kept as data, in the record and as its own entry.
    let text = session.to_jsonl().unwrap();
    assert!(text.contains("gAAAAB-opaque-compaction-checkpoint"));
    assert!(text.contains("\"customType\":\"import.codex.compaction\""));
    // The earlier conversation is still in the file, on its own root.
    assert!(text.contains("The discount is rounded before it is subtracted."));
}

#[test]
fn codex_2025_rollouts_without_envelopes_import() {
    let (session, context) = imported_context(&shape("codex-legacy-2025-08.jsonl"));
    assert_eq!(session.format, SourceFormat::Codex);
    assert_eq!(session.header.id, "0198c0de-legacy");
    assert_eq!(session.header.cwd, "C:\\Users\\dev\\notes");
    assert_eq!(
        context,
        [
            "user: <environment_context>\n  <cwd>C:\\Users\\dev\\notes</cwd>\n  <approval_policy>on-request</approval_policy>\n</environment_context>",
            "user: Count the TODOs in this repo.",
            "assistant: <thinking Use ripgrep.>",
            "assistant: <call call_l1 shell>",
            "toolResult call_l1 shell: {\"output\":\"notes.md:3\\n\",\"metadata\":{\"exit_code\":0,\"duration_seconds\":0.1}}",
            "assistant: There are 3 TODOs, all in notes.md.",
        ]
    );
    assert!(
        session.report.issues.is_empty(),
        "{:?}",
        session.report.issues
    );
}

#[test]
fn the_oldest_single_document_rollout_imports() {
    let (session, context) = imported_context(&shape("rollout-2025-05-03T10-00-00-oldest.json"));
    assert_eq!(session.format, SourceFormat::Codex);
    assert_eq!(session.header.id, "6f1c-oldest");
    assert_eq!(
        context,
        [
            "user: What does main.py do?",
            "assistant: <call call_o1 shell>",
            "toolResult call_o1 shell: print('hello')",
            "assistant: It prints hello.",
        ]
    );
    assert!(
        session.report.issues.is_empty(),
        "{:?}",
        session.report.issues
    );
}

#[test]
fn a_header_only_rollout_is_an_empty_session_with_a_note() {
    let (session, context) = imported_context(&shape("codex-header-only.jsonl"));
    assert_eq!(session.format, SourceFormat::Codex);
    assert_eq!(session.header.cwd, "/home/dev/empty");
    assert!(context.is_empty());
    assert!(has_issue(&session, |kind| matches!(
        kind,
        IssueKind::NoConversation
    )));
}
