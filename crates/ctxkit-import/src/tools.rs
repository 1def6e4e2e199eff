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
use crate::stored::Stored;

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

/// The tool calls of a session by id, and their ids in file order (the first of a repeated id).
#[derive(Default)]
struct Calls {
    by_id: HashMap<String, Call>,
    order: Vec<String>,
}

/// Pairs calls and results: results get their call's tool name, orphan results become user
/// messages, and calls the conversation went past get an error result with `missing_text`
/// (inserted after the call, the call's children moved under it). Every repair is an issue.
pub(crate) fn repair_tools(
    mut planned: Vec<Stored>,
    ids: &mut IdAllocator,
    issues: &mut Vec<ImportIssue>,
    missing_text: &str,
) -> Vec<Stored> {
    let calls = collect_calls(&planned);
    let answered = pair_results(&mut planned, &calls, issues);
    let missing = unanswered_calls(&planned, &calls, &answered, issues);
    if missing.is_empty() {
        return planned;
    }
    insert_missing_results(planned, missing, &calls, ids, missing_text)
}

fn collect_calls(planned: &[Stored]) -> Calls {
    let mut calls = Calls::default();
    for item in planned {
        for (id, name) in item.tool_calls() {
            if !calls.by_id.contains_key(&id) {
                calls.order.push(id.clone());
                calls.by_id.insert(
                    id,
                    Call {
                        name,
                        line: item.line,
                        assistant: item.id.clone(),
                    },
                );
            }
        }
    }
    calls
}

/// Names each result after its call; a result without a call becomes a user message. The ids of
/// the calls answered.
fn pair_results(
    planned: &mut [Stored],
    calls: &Calls,
    issues: &mut Vec<ImportIssue>,
) -> HashSet<String> {
    let mut answered: HashSet<String> = HashSet::new();
    for item in planned {
        // Tool results stay structured (`stored`): any other entry is not one.
        if item.kind().is_none() {
            continue;
        }
        let line = item.line;
        let Some(EntryKind::Message(message)) = item.kind_mut() else {
            continue;
        };
        let AgentMessage::ToolResult(result) = message.as_mut() else {
            continue;
        };
        match calls.by_id.get(&result.tool_call_id) {
            Some(call) => {
                answered.insert(result.tool_call_id.clone());
                if result.tool_name.is_empty() {
                    result.tool_name.clone_from(&call.name);
                }
            }
            None => {
                issues.push(ImportIssue::at(
                    line,
                    IssueKind::OrphanToolResult {
                        tool_call_id: result.tool_call_id.clone(),
                    },
                ));
                **message = orphan_as_user(result);
            }
        }
    }
    answered
}

/// Calls without results that the conversation went past, grouped by their assistant entry, in
/// file order; a call at the end of a branch is reported and left alone.
fn unanswered_calls(
    planned: &[Stored],
    calls: &Calls,
    answered: &HashSet<String>,
    issues: &mut Vec<ImportIssue>,
) -> HashMap<String, Vec<String>> {
    // Listed only when a call went unanswered (a million entries' parents take 35 MB).
    let has_children: HashSet<&str> = if calls.order.iter().all(|id| answered.contains(id)) {
        HashSet::new()
    } else {
        planned
            .iter()
            .filter_map(|item| item.parent_id.as_deref())
            .collect()
    };
    let mut missing: HashMap<String, Vec<String>> = HashMap::new();
    for id in &calls.order {
        if answered.contains(id) {
            continue;
        }
        let Some(call) = calls.by_id.get(id) else {
            continue;
        };
        if has_children.contains(call.assistant.as_str()) {
            issues.push(ImportIssue::at(
                call.line,
                IssueKind::MissingToolResultAdded {
                    tool_call_id: id.clone(),
                },
            ));
            missing
                .entry(call.assistant.clone())
                .or_default()
                .push(id.clone());
        } else {
            issues.push(ImportIssue::at(
                call.line,
                IssueKind::ToolCallWithoutResult {
                    tool_call_id: id.clone(),
                },
            ));
        }
    }
    missing
}

/// Inserts the added results right after their call and hangs the call's children under them.
fn insert_missing_results(
    planned: Vec<Stored>,
    mut missing: HashMap<String, Vec<String>>,
    calls: &Calls,
    ids: &mut IdAllocator,
    missing_text: &str,
) -> Vec<Stored> {
    let mut reparent: HashMap<String, String> = HashMap::new();
    let mut output = Vec::with_capacity(planned.len());
    for mut item in planned {
        if let Some(parent) = item
            .parent_id
            .as_ref()
            .and_then(|parent| reparent.get(parent))
        {
            item.parent_id = Some(parent.clone());
        }
        let added = missing.remove(&item.id);
        let Some(call_ids) = added else {
            output.push(item);
            continue;
        };
        let (assistant_id, line, timestamp) = (item.id.clone(), item.line, item.timestamp());
        output.push(item);
        let mut parent = assistant_id.clone();
        for call_id in call_ids {
            let id = ids.derive(&format!("missing-result:{call_id}"));
            let name = calls
                .by_id
                .get(&call_id)
                .map(|call| call.name.clone())
                .unwrap_or_default();
            output.push(Stored::from(Planned {
                line,
                entry: SessionEntry {
                    id: id.clone(),
                    parent_id: Some(parent),
                    timestamp: timestamp.clone(),
                    kind: missing_result(call_id, name, &timestamp, missing_text),
                },
            }));
            parent = id;
        }
        reparent.insert(assistant_id, parent);
    }
    output
}

/// The error result added for a call without one (`importRepair: true`).
fn missing_result(call_id: String, name: String, timestamp: &str, text: &str) -> EntryKind {
    let mut extra = JsonObject::new();
    extra.insert("importRepair".to_owned(), Value::Bool(true));
    let result = AgentMessage::ToolResult(ToolResultMessage {
        tool_call_id: call_id,
        tool_name: name,
        content: MessageContent::Blocks(vec![ContentBlock::text(text)]),
        details: None,
        is_error: true,
        timestamp: millis(timestamp),
        extra,
    });
    EntryKind::Message(Box::new(result))
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
