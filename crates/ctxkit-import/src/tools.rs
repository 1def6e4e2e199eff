//! Pairing tool calls and results by id: results get their call's tool name, a result without a call
//! becomes a user message, and a call the conversation went past without a result gets an error
//! result, so every imported path is one a provider accepts. Every repair is reported.

use std::collections::{HashMap, HashSet};

use ctxkit_protocol::{
    AgentMessage, ContentBlock, EntryKind, JsonObject, MessageContent, SessionEntry,
    ToolResultMessage, UserMessage,
};
use serde_json::Value;

use crate::builder::{Planned, millis};
use crate::ids::IdAllocator;
use crate::report::{ImportIssue, IssueKind};

/// The text of an added result, for agents whose own text for it is not known (OpenCode).
pub(crate) const MISSING_RESULT_TEXT: &str = "No result was recorded for this tool call.";
/// The text Claude Code itself sends, as an error result, for a `tool_use` the next message holds no
/// `tool_result` for (its message normalization before each request, read in the published 2.1.197
/// build).
pub(crate) const CLAUDE_CODE_MISSING_RESULT_TEXT: &str =
    "[Tool result missing due to internal error]";
/// The text Codex itself sends for a call without a result (`context_manager/normalize.rs`).
pub(crate) const CODEX_MISSING_RESULT_TEXT: &str = "aborted";

struct Call {
    name: String,
    line: usize,
    assistant: String,
}

pub(crate) fn repair_tools(
    planned: Vec<Planned>,
    ids: &mut IdAllocator,
    issues: &mut Vec<ImportIssue>,
    missing_text: &str,
) -> Vec<Planned> {
    let mut calls: HashMap<String, Call> = HashMap::new();
    let mut call_order: Vec<String> = Vec::new();
    for item in &planned {
        if let EntryKind::Message(message) = &item.entry.kind
            && let AgentMessage::Assistant(assistant) = message.as_ref()
        {
            for block in &assistant.content {
                if let ContentBlock::ToolCall(call) = block
                    && !calls.contains_key(&call.id)
                {
                    call_order.push(call.id.clone());
                    calls.insert(
                        call.id.clone(),
                        Call {
                            name: call.name.clone(),
                            line: item.line,
                            assistant: item.entry.id.clone(),
                        },
                    );
                }
            }
        }
    }
    let mut answered: HashSet<String> = HashSet::new();
    let mut planned = planned;
    for item in &mut planned {
        let EntryKind::Message(message) = &mut item.entry.kind else {
            continue;
        };
        let AgentMessage::ToolResult(result) = message.as_mut() else {
            continue;
        };
        match calls.get(&result.tool_call_id) {
            Some(call) => {
                answered.insert(result.tool_call_id.clone());
                if result.tool_name.is_empty() {
                    result.tool_name.clone_from(&call.name);
                }
            }
            None => {
                issues.push(ImportIssue::at(
                    item.line,
                    IssueKind::OrphanToolResult {
                        tool_call_id: result.tool_call_id.clone(),
                    },
                ));
                **message = orphan_as_user(result);
            }
        }
    }

    // Calls without results, grouped by their assistant entry, in file order.
    let has_children: HashSet<String> = planned
        .iter()
        .filter_map(|item| item.entry.parent_id.clone())
        .collect();
    let mut missing: HashMap<String, Vec<String>> = HashMap::new();
    for id in call_order {
        if answered.contains(&id) {
            continue;
        }
        let Some(call) = calls.get(&id) else { continue };
        if has_children.contains(&call.assistant) {
            issues.push(ImportIssue::at(
                call.line,
                IssueKind::MissingToolResultAdded {
                    tool_call_id: id.clone(),
                },
            ));
            missing.entry(call.assistant.clone()).or_default().push(id);
        } else {
            issues.push(ImportIssue::at(
                call.line,
                IssueKind::ToolCallWithoutResult { tool_call_id: id },
            ));
        }
    }
    if missing.is_empty() {
        return planned;
    }
    // Insert the added results right after their call and hang the call's children under them.
    let mut reparent: HashMap<String, String> = HashMap::new();
    let mut output = Vec::with_capacity(planned.len());
    for mut item in planned {
        if let Some(parent) = item
            .entry
            .parent_id
            .as_ref()
            .and_then(|parent| reparent.get(parent))
        {
            item.entry.parent_id = Some(parent.clone());
        }
        let added = missing.remove(&item.entry.id);
        let (assistant_id, line, timestamp) = (
            item.entry.id.clone(),
            item.line,
            item.entry.timestamp.clone(),
        );
        output.push(item);
        let Some(call_ids) = added else { continue };
        let mut parent = assistant_id.clone();
        for call_id in call_ids {
            let id = ids.derive(&format!("missing-result:{call_id}"));
            let name = calls
                .get(&call_id)
                .map(|call| call.name.clone())
                .unwrap_or_default();
            let mut extra = JsonObject::new();
            extra.insert("importRepair".to_owned(), Value::Bool(true));
            let result = AgentMessage::ToolResult(ToolResultMessage {
                tool_call_id: call_id,
                tool_name: name,
                content: MessageContent::Blocks(vec![ContentBlock::text(missing_text)]),
                details: None,
                is_error: true,
                timestamp: millis(&timestamp),
                extra,
            });
            output.push(Planned {
                line,
                entry: SessionEntry {
                    id: id.clone(),
                    parent_id: Some(parent),
                    timestamp: timestamp.clone(),
                    kind: EntryKind::Message(Box::new(result)),
                },
            });
            parent = id;
        }
        reparent.insert(assistant_id, parent);
    }
    output
}

/// A result without its call, as a user message that says what it was.
fn orphan_as_user(result: &ToolResultMessage) -> AgentMessage {
    let mut blocks = vec![ContentBlock::text(format!(
        "[Result of tool call `{}`, whose call is missing]",
        result.tool_call_id
    ))];
    match &result.content {
        MessageContent::Text(text) => blocks.push(ContentBlock::text(text.clone())),
        MessageContent::Blocks(content) => blocks.extend(content.iter().cloned()),
    }
    let mut extra = JsonObject::new();
    extra.insert("importRepair".to_owned(), Value::Bool(true));
    extra.insert(
        "toolCallId".to_owned(),
        Value::String(result.tool_call_id.clone()),
    );
    if result.is_error {
        extra.insert("isError".to_owned(), Value::Bool(true));
    }
    if let Some(details) = &result.details {
        extra.insert("details".to_owned(), details.clone());
    }
    AgentMessage::User(UserMessage {
        content: MessageContent::Blocks(blocks),
        timestamp: result.timestamp,
        extra,
    })
}
