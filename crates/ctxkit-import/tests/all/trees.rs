//! Data-driven: each fixture's imported tree and report against `tests/expected/<fixture>.json`, and
//! the imported session read back by the store.

use ctxkit_import::{ImportedSession, IssueKind, SourceFormat, import_file};
use ctxkit_protocol::{AgentMessage, ContentBlock, EntryKind, MessageContent, SessionEntry};
use ctxkit_session::{LeafSelector, Session};
use serde_json::json;

use crate::{FIXTURES, check_file, expected_dir, fixtures_dir};

fn blocks(blocks: &[ContentBlock]) -> String {
    blocks
        .iter()
        .map(|block| match block {
            ContentBlock::Text(text) => {
                format!("text({})", text.text.chars().take(24).collect::<String>())
            }
            ContentBlock::Image(image) => format!("image({})", image.mime_type),
            ContentBlock::Thinking(thinking) => format!("thinking({})", thinking.thinking.len()),
            ContentBlock::ToolCall(call) => {
                format!("toolCall({}:{} {})", call.id, call.name, call.arguments)
            }
            ContentBlock::Unknown(object) => format!(
                "unknown({})",
                object
                    .get("type")
                    .map(ToString::to_string)
                    .unwrap_or_default()
            ),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

fn content(content: &MessageContent) -> String {
    match content {
        MessageContent::Text(text) => format!("\"{}\"", text.chars().take(24).collect::<String>()),
        MessageContent::Blocks(list) => blocks(list),
    }
}

/// One line per entry: `id <- parent type details`.
fn describe(entry: &SessionEntry) -> String {
    let detail = match &entry.kind {
        EntryKind::Message(message) => match message.as_ref() {
            AgentMessage::User(user) => format!("user [{}]", content(&user.content)),
            AgentMessage::Assistant(assistant) => format!(
                "assistant {} stop={} [{}]",
                assistant.model.as_deref().unwrap_or("-"),
                assistant.stop_reason.as_deref().unwrap_or("-"),
                blocks(&assistant.content)
            ),
            AgentMessage::ToolResult(result) => format!(
                "toolResult {}:{}{} [{}]",
                result.tool_call_id,
                result.tool_name,
                if result.is_error { " error" } else { "" },
                content(&result.content)
            ),
            other @ (AgentMessage::BashExecution(_)
            | AgentMessage::Custom(_)
            | AgentMessage::BranchSummary(_)
            | AgentMessage::CompactionSummary(_)
            | AgentMessage::Unknown(_)) => format!("{} message", other.role()),
        },
        EntryKind::Compaction(compaction) => format!(
            "compaction tokensBefore={} keepsNothing={} summary=\"{}\"",
            compaction.tokens_before,
            compaction.first_kept_entry_id == entry.id,
            compaction.summary.chars().take(30).collect::<String>()
        ),
        EntryKind::Custom(custom) => format!("custom {}", custom.custom_type),
        EntryKind::CustomMessage(custom) => format!(
            "custom_message {} [{}]",
            custom.custom_type,
            content(&custom.content)
        ),
        EntryKind::ModelChange(change) => {
            format!("model_change {}/{}", change.provider, change.model_id)
        }
        EntryKind::SessionInfo(info) => {
            format!("session_info {}", info.name.as_deref().unwrap_or(""))
        }
        other @ (EntryKind::ThinkingLevelChange(_)
        | EntryKind::BranchSummary(_)
        | EntryKind::Label(_)
        | EntryKind::ContextEdit(_)
        | EntryKind::Usage(_)
        | EntryKind::Unknown { .. }) => other.type_name().to_owned(),
    };
    format!(
        "{} <- {} {} {}",
        entry.id,
        entry.parent_id.as_deref().unwrap_or("root    "),
        entry.timestamp,
        detail
    )
}

fn render(session: &ImportedSession) -> String {
    let value = json!({
        "header": session.header,
        "records": session.report.records,
        "entries": session.entries().iter().map(describe).collect::<Vec<_>>(),
        "issues": session.report.issues.iter().map(ToString::to_string).collect::<Vec<_>>(),
    });
    serde_json::to_string_pretty(&value).unwrap() + "\n"
}

#[test]
fn imported_trees_match_expectations() {
    for (name, _, _) in FIXTURES {
        let session = import_file(&fixtures_dir().join(name), None).unwrap();
        check_file(
            &expected_dir().join(format!("{name}.json")),
            &render(&session),
        );
    }
}

fn import(name: &str) -> ImportedSession {
    import_file(&fixtures_dir().join(name), None).unwrap()
}

#[test]
fn detection_and_coverage() {
    let claude = import("claude-code-session.jsonl");
    assert_eq!(claude.format, SourceFormat::ClaudeCode);
    let codex = import("codex-rollout.jsonl");
    assert_eq!(codex.format, SourceFormat::Codex);
    for session in [&claude, &codex] {
        let kinds: Vec<&IssueKind> = session
            .report
            .issues
            .iter()
            .map(|issue| &issue.kind)
            .collect();
        assert!(
            kinds
                .iter()
                .any(|kind| matches!(kind, IssueKind::MalformedLine { .. }))
        );
        assert!(
            kinds
                .iter()
                .any(|kind| matches!(kind, IssueKind::OrphanToolResult { .. }))
        );
        assert!(
            kinds
                .iter()
                .any(|kind| matches!(kind, IssueKind::UnknownRecord { .. }))
        );
        let entries = session.entries();
        let compaction = entries.iter().find_map(|entry| match &entry.kind {
            EntryKind::Compaction(compaction) => Some(compaction),
            EntryKind::Message(_)
            | EntryKind::ThinkingLevelChange(_)
            | EntryKind::ModelChange(_)
            | EntryKind::BranchSummary(_)
            | EntryKind::Custom(_)
            | EntryKind::CustomMessage(_)
            | EntryKind::Label(_)
            | EntryKind::SessionInfo(_)
            | EntryKind::ContextEdit(_)
            | EntryKind::Usage(_)
            | EntryKind::Unknown { .. } => None,
        });
        let compaction = compaction.expect("a compaction entry");
        assert!(compaction.tokens_before > 0);
        assert!(!compaction.summary.is_empty());
    }
}

#[test]
fn imported_sessions_open_in_the_store_with_the_main_leaf_and_compaction_context() {
    let temp = tempfile::tempdir().unwrap();
    for name in ["claude-code-session.jsonl", "codex-rollout.jsonl"] {
        let session = import(name);
        let path = temp.path().join(session.file_name());
        session.write_to(&path).unwrap();
        let opened = Session::open(&path).unwrap();
        assert!(
            opened.diagnostics().is_empty(),
            "{name}: {:?}",
            opened.diagnostics()
        );
        assert_eq!(opened.entries().len(), session.entries().len());
        let entries = session.entries();
        let last = entries.last().unwrap();
        assert_eq!(opened.leaf_id(), Some(last.id.as_str()), "{name}");
        let context = opened.context_at(LeafSelector::Current);
        let first = opened.message(&context.messages[0]).unwrap();
        assert_eq!(
            first.role(),
            "compactionSummary",
            "{name}: context starts at the summary"
        );
        // Sidechain and pre-compaction messages are not in the context.
        assert!(
            context.messages.len() < 8,
            "{name}: {}",
            context.messages.len()
        );
    }
}
