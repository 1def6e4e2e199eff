//! Building what the model sees at a leaf (Pi's `buildSessionContext`): walk root→leaf, track thinking
//! level and model, and emit messages, honouring the last compaction on the path. Pure: it returns
//! references to entries; materializing a message is a separate, lazy step.

use std::collections::HashMap;

use ctxkit_protocol::{AgentMessage, ModelRef, from_str_repaired, parse_agent_message};
use serde::Deserialize;
use serde_json::Value;

use crate::entry::{EntryMeta, StoredEntry};
use crate::ids::parse_timestamp_ms;
use crate::index::{EntryIndex, SessionIndex};

/// The model's view at one leaf.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionContext {
    pub messages: Vec<ContextMessage>,
    /// `off` unless a `thinking_level_change` on the path says otherwise.
    pub thinking_level: String,
    /// Set by `model_change` entries and assistant messages on the path.
    pub model: Option<ModelRef>,
}

/// One message of a context: the entry it comes from, how it is made from it, and the
/// `context_edit` entry (Pi 0.87) whose replacement content it carries, if any.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ContextMessage {
    pub entry: EntryIndex,
    pub kind: ContextMessageKind,
    pub edit: Option<EntryIndex>,
}

impl ContextMessage {
    /// A message made from `entry` as stored, without an edit.
    pub fn new(entry: EntryIndex, kind: ContextMessageKind) -> Self {
        Self {
            entry,
            kind,
            edit: None,
        }
    }
}

/// How a context message is made from its entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ContextMessageKind {
    /// The `message` of a `message` entry, as stored.
    Stored,
    /// A `custom` message made from a `custom_message` entry.
    Custom,
    /// A `branchSummary` message made from a `branch_summary` entry.
    BranchSummary,
    /// The `compactionSummary` message that opens a compacted context.
    CompactionSummary,
    /// The `systemMessage` a compaction recorded (Pi 0.87): the replayed prompt state, placed
    /// before the summary.
    CompactionSystem,
}

/// Builds the context at `leaf`; `None` (a leaf before the first entry) gives an empty context.
pub fn build_context(index: &SessionIndex, leaf: Option<EntryIndex>) -> SessionContext {
    match leaf {
        Some(leaf) => build_context_on_path(index, &index.path_to(leaf)),
        None => build_context_on_path(index, &[]),
    }
}

/// One entry of the compaction-aware entry list and the messages it projects to (Pi 0.87's
/// `buildSessionProjection`): empty for metadata, for omitted entries and for older compactions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProjectedEntry {
    pub entry: EntryIndex,
    pub messages: Vec<ContextMessage>,
}

/// [`build_context`] for a root→leaf path already walked (`SessionIndex::path_to`).
pub fn build_context_on_path(index: &SessionIndex, path: &[EntryIndex]) -> SessionContext {
    let (thinking_level, model) = context_settings(index, path);
    let messages = project_path(index, path)
        .into_iter()
        .flat_map(|projected| projected.messages)
        .collect();
    SessionContext {
        messages,
        thinking_level,
        model,
    }
}

/// The thinking level and model the path sets.
fn context_settings(index: &SessionIndex, path: &[EntryIndex]) -> (String, Option<ModelRef>) {
    // The last entry that sets the thinking level and the model; their strings are copied once, at
    // the end (a long path has thousands of assistant messages).
    let mut thinking_source = None;
    let mut model_source = None;
    for &entry_index in path {
        let Some(entry) = index.get(entry_index) else {
            continue;
        };
        match &entry.meta {
            EntryMeta::ThinkingLevelChange { level: Some(_) } => thinking_source = Some(entry),
            EntryMeta::ModelChange { .. } => model_source = Some(entry),
            EntryMeta::Message {
                role: Some(role), ..
            } if &**role == "assistant" => model_source = Some(entry),
            EntryMeta::ThinkingLevelChange { level: None }
            | EntryMeta::Message { .. }
            | EntryMeta::Compaction { .. }
            | EntryMeta::BranchSummary { .. }
            | EntryMeta::Custom
            | EntryMeta::CustomMessage
            | EntryMeta::Label { .. }
            | EntryMeta::SessionInfo { .. }
            | EntryMeta::ContextEdit { .. }
            | EntryMeta::Usage
            | EntryMeta::Unknown { .. } => {}
        }
    }
    let thinking_level = match thinking_source.map(|entry| &entry.meta) {
        Some(EntryMeta::ThinkingLevelChange { level: Some(level) }) => level.to_string(),
        _ => "off".to_owned(),
    };
    (thinking_level, model_source.and_then(model_set_by))
}

/// The entries a context is made of: the path, or, after a compaction, the compaction itself, its
/// kept range (system messages left out: the compaction replays them) and what follows it.
pub fn context_entries(index: &SessionIndex, path: &[EntryIndex]) -> Vec<EntryIndex> {
    let compaction_position = path.iter().rposition(|&entry_index| {
        index
            .get(entry_index)
            .is_some_and(|entry| matches!(entry.meta, EntryMeta::Compaction { .. }))
    });
    let Some(position) = compaction_position else {
        return path.to_vec();
    };
    let compaction = path[position];
    let mut entries = vec![compaction];
    let first_kept = index.get(compaction).and_then(|entry| match &entry.meta {
        EntryMeta::Compaction {
            first_kept_entry_id,
        } => first_kept_entry_id.clone(),
        EntryMeta::Message { .. }
        | EntryMeta::ThinkingLevelChange { .. }
        | EntryMeta::ModelChange { .. }
        | EntryMeta::BranchSummary { .. }
        | EntryMeta::Custom
        | EntryMeta::CustomMessage
        | EntryMeta::Label { .. }
        | EntryMeta::SessionInfo { .. }
        | EntryMeta::ContextEdit { .. }
        | EntryMeta::Usage
        | EntryMeta::Unknown { .. } => None,
    });
    // A retain-none compaction names itself, which is not before it: nothing is kept.
    let kept_from =
        first_kept.and_then(|first_kept| index.position_in(&path[..position], &first_kept));
    if let Some(kept_from) = kept_from {
        entries.extend(
            path[kept_from..position]
                .iter()
                .copied()
                .filter(|&entry_index| {
                    index
                        .get(entry_index)
                        .is_none_or(|entry| entry.role() != Some("system"))
                }),
        );
    }
    entries.extend_from_slice(&path[position + 1..]);
    entries
}

/// What a `context_edit` does to its target.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EditEffect {
    /// `replacement: null`: the target's messages leave the context.
    Omit,
    /// `replacement: {content}`: the target's content is replaced.
    Replace(EntryIndex),
}

/// The edit in force for each target among `entries`: the last one wins. An edit without a
/// `replacement` field (Pi throws on it) is ignored.
pub fn edits_among(index: &SessionIndex, entries: &[EntryIndex]) -> HashMap<Box<str>, EditEffect> {
    let mut edits = HashMap::new();
    for &entry_index in entries {
        let Some(entry) = index.get(entry_index) else {
            continue;
        };
        let EntryMeta::ContextEdit {
            target_id: Some(target_id),
        } = &entry.meta
        else {
            continue;
        };
        // Only `message` lines are ever left on disk.
        let Some(raw) = entry.memory_raw() else {
            continue;
        };
        let Ok(fields) = from_str_repaired::<Value>(raw) else {
            continue;
        };
        let effect = match fields.get("replacement") {
            None => continue,
            Some(Value::Null) => EditEffect::Omit,
            Some(_) => EditEffect::Replace(entry_index),
        };
        edits.insert(target_id.clone(), effect);
    }
    edits
}

/// Pi 0.87's projection of a path: each context entry with the messages it contributes, context
/// edits applied.
pub fn project_path(index: &SessionIndex, path: &[EntryIndex]) -> Vec<ProjectedEntry> {
    let entries = context_entries(index, path);
    let edits = edits_among(index, &entries);
    entries
        .iter()
        .enumerate()
        .map(|(position, &entry_index)| {
            let Some(entry) = index.get(entry_index) else {
                return ProjectedEntry {
                    entry: entry_index,
                    messages: Vec::new(),
                };
            };
            let is_older_compaction =
                position > 0 && matches!(entry.meta, EntryMeta::Compaction { .. });
            let mut messages = if is_older_compaction {
                Vec::new()
            } else {
                entry_messages(entry_index, entry)
            };
            match edits.get(entry.id()) {
                None => {}
                Some(EditEffect::Omit) => messages.clear(),
                Some(&EditEffect::Replace(edit)) => {
                    for message in &mut messages {
                        message.edit = Some(edit);
                    }
                }
            }
            ProjectedEntry {
                entry: entry_index,
                messages,
            }
        })
        .collect()
}

/// The messages one entry contributes to a context, before edits (Pi's
/// `sessionEntryToContextMessages`).
pub fn entry_messages(entry_index: EntryIndex, entry: &StoredEntry) -> Vec<ContextMessage> {
    let message = |kind| ContextMessage::new(entry_index, kind);
    match &entry.meta {
        EntryMeta::Message { .. } => vec![message(ContextMessageKind::Stored)],
        EntryMeta::CustomMessage => vec![message(ContextMessageKind::Custom)],
        EntryMeta::BranchSummary { has_summary: true } => {
            vec![message(ContextMessageKind::BranchSummary)]
        }
        EntryMeta::Compaction { .. } => {
            if compaction_has_system_message(entry) {
                vec![
                    message(ContextMessageKind::CompactionSystem),
                    message(ContextMessageKind::CompactionSummary),
                ]
            } else {
                vec![message(ContextMessageKind::CompactionSummary)]
            }
        }
        EntryMeta::BranchSummary { has_summary: false }
        | EntryMeta::ThinkingLevelChange { .. }
        | EntryMeta::ModelChange { .. }
        | EntryMeta::Custom
        | EntryMeta::Label { .. }
        | EntryMeta::SessionInfo { .. }
        | EntryMeta::ContextEdit { .. }
        | EntryMeta::Usage
        | EntryMeta::Unknown { .. } => Vec::new(),
    }
}

/// Whether a compaction carries a `systemMessage` JavaScript reads as true.
fn compaction_has_system_message(entry: &StoredEntry) -> bool {
    // Only `message` lines are ever left on disk.
    let Some(raw) = entry.memory_raw() else {
        return false;
    };
    if !raw.contains("\"systemMessage\"") {
        return false;
    }
    from_str_repaired::<Value>(raw)
        .ok()
        .and_then(|fields| fields.get("systemMessage").map(js_truthy))
        .unwrap_or(false)
}

/// JavaScript truthiness of a JSON value.
fn js_truthy(value: &Value) -> bool {
    match value {
        Value::Null => false,
        Value::Bool(flag) => *flag,
        Value::Number(number) => number.as_f64().is_some_and(|float| float != 0.0),
        Value::String(text) => !text.is_empty(),
        Value::Array(_) | Value::Object(_) => true,
    }
}

/// The model a `model_change` entry or an assistant message sets (read from the line when it was
/// not indexed; an assistant line that cannot be read back sets none).
pub(crate) fn model_set_by(entry: &StoredEntry) -> Option<ModelRef> {
    match &entry.meta {
        EntryMeta::ModelChange { provider, model_id } => Some(ModelRef {
            provider: provider.as_deref().map(str::to_owned),
            model_id: model_id.as_deref().map(str::to_owned),
        }),
        EntryMeta::Message { .. } => {
            let (provider, model) = entry.assistant_model().ok().flatten()?;
            Some(ModelRef {
                provider: provider.as_deref().map(str::to_owned),
                model_id: model.as_deref().map(str::to_owned),
            })
        }
        EntryMeta::ThinkingLevelChange { .. }
        | EntryMeta::Compaction { .. }
        | EntryMeta::BranchSummary { .. }
        | EntryMeta::Custom
        | EntryMeta::CustomMessage
        | EntryMeta::Label { .. }
        | EntryMeta::SessionInfo { .. }
        | EntryMeta::ContextEdit { .. }
        | EntryMeta::Usage
        | EntryMeta::Unknown { .. } => None,
    }
}

/// The JSON value of a context message, exactly as Pi builds it: stored messages as written (a
/// missing or null `content` read as `[]`, or `""` for a system message), synthesized ones with Pi's
/// fields in Pi's order and `timestamp` as epoch milliseconds (null when the entry's timestamp does
/// not parse). `edit` is the `context_edit` entry whose replacement the message carries.
pub fn context_message_value(
    entry: &StoredEntry,
    kind: ContextMessageKind,
    edit: Option<&StoredEntry>,
) -> crate::Result<Value> {
    let mut message = match kind {
        ContextMessageKind::Stored => match entry.message_json()? {
            Some(json) => {
                normalize_content(from_str_repaired(&json).map_err(|e| entry.invalid(e))?)
            }
            None => Value::Null,
        },
        ContextMessageKind::CompactionSystem => {
            let fields: Value =
                from_str_repaired(&entry.raw()?).map_err(|error| entry.invalid(error))?;
            fields.get("systemMessage").cloned().unwrap_or(Value::Null)
        }
        ContextMessageKind::Custom
        | ContextMessageKind::BranchSummary
        | ContextMessageKind::CompactionSummary => {
            synthesized_message(entry, kind).map_err(|error| entry.invalid(error))?
        }
    };
    if let Some(edit) = edit {
        apply_edit(&mut message, edit).map_err(|error| edit.invalid(error))?;
    }
    Ok(message)
}

/// A message Pi makes from a non-message entry.
fn synthesized_message(
    entry: &StoredEntry,
    kind: ContextMessageKind,
) -> Result<Value, serde_json::Error> {
    // Only `message` lines are ever left on disk; this is never one.
    let fields: Value = from_str_repaired(entry.memory_raw().unwrap_or_default())?;
    let (role, keys): (&str, &[&str]) = match kind {
        ContextMessageKind::Custom => ("custom", &["customType", "content", "display", "details"]),
        ContextMessageKind::BranchSummary => ("branchSummary", &["summary", "fromId"]),
        ContextMessageKind::CompactionSummary => {
            ("compactionSummary", &["summary", "tokensBefore"])
        }
        ContextMessageKind::Stored | ContextMessageKind::CompactionSystem => ("", &[]),
    };
    let mut message = serde_json::Map::new();
    message.insert("role".to_owned(), Value::String(role.to_owned()));
    for &key in keys {
        match fields.get(key) {
            Some(Value::Null) | None if kind == ContextMessageKind::Custom && key == "content" => {
                message.insert(key.to_owned(), Value::Array(Vec::new()));
            }
            Some(value) => {
                message.insert(key.to_owned(), value.clone());
            }
            None => {}
        }
    }
    let timestamp = parse_timestamp_ms(entry.timestamp()).map_or(Value::Null, Value::from);
    message.insert("timestamp".to_owned(), timestamp);
    Ok(Value::Object(message))
}

/// Pi 0.87 reads a missing or null `content` as `[]` (user, assistant, tool result) or `""` (system).
fn normalize_content(mut message: Value) -> Value {
    let Some(object) = message.as_object_mut() else {
        return message;
    };
    let empty = match object.get("role").and_then(Value::as_str) {
        Some("system") => Value::String(String::new()),
        Some("user" | "assistant" | "toolResult") => Value::Array(Vec::new()),
        Some(_) | None => return message,
    };
    if object.get("content").is_none_or(Value::is_null) {
        object.insert("content".to_owned(), empty);
    }
    message
}

/// Puts an edit's replacement content into a user, assistant, tool-result or custom message; other
/// roles keep theirs. A string replacement becomes one text block for assistant and tool results.
fn apply_edit(message: &mut Value, edit: &StoredEntry) -> Result<(), serde_json::Error> {
    let Some(object) = message.as_object_mut() else {
        return Ok(());
    };
    let role = object.get("role").and_then(Value::as_str).unwrap_or("");
    let blocks_for_text = match role {
        "assistant" | "toolResult" => true,
        "user" | "custom" => false,
        _ => return Ok(()),
    };
    // Only `message` lines are ever left on disk; an edit is never one.
    let fields: Value = from_str_repaired(edit.memory_raw().unwrap_or_default())?;
    match fields
        .get("replacement")
        .and_then(|replacement| replacement.get("content"))
    {
        Some(Value::String(text)) if blocks_for_text => {
            let block = serde_json::json!([{"type": "text", "text": text}]);
            object.insert("content".to_owned(), block);
        }
        Some(content) if is_usable_content(content) => {
            object.insert("content".to_owned(), content.clone());
        }
        // No content, or one no message holds (a number, an object, a list of things that are not
        // content blocks; Pi 1.6.0 sends it as it is, and its estimates throw on a number or an
        // object): the target's content is put away, and `ctxkit check` names the edit's line.
        Some(_) | None => {
            object.remove("content");
        }
    }
    Ok(())
}

/// Whether a replacement's content reads as a message's content: a string, a list of content
/// blocks, or `null` (no blocks, as Pi writes an empty content).
fn is_usable_content(content: &Value) -> bool {
    ctxkit_protocol::MessageContent::deserialize(content).is_ok()
}

/// The typed form of a context message.
pub fn context_message(
    entry: &StoredEntry,
    kind: ContextMessageKind,
    edit: Option<&StoredEntry>,
) -> crate::Result<AgentMessage> {
    if kind == ContextMessageKind::Stored
        && edit.is_none()
        && let Some(json) = entry.message_json()?
    {
        let parsed = parse_agent_message(&json).map_err(|error| entry.invalid(error));
        let content_missing = || {
            from_str_repaired::<Value>(&json).is_ok_and(|message| {
                message
                    .as_object()
                    .is_some_and(|object| object.get("content").is_none_or(Value::is_null))
            })
        };
        if parsed.is_ok() || !content_missing() {
            return parsed;
        }
    }
    // Edited, synthesized, or with a null or missing content that Pi 0.87 normalizes.
    serde_json::from_value(context_message_value(entry, kind, edit)?)
        .map_err(|error| entry.invalid(error))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn index(lines: &[&str]) -> SessionIndex {
        let entries = lines
            .iter()
            .enumerate()
            .map(|(line, text)| StoredEntry::from_line((*text).into(), line + 2).unwrap())
            .collect();
        SessionIndex::build(entries, &mut Vec::new())
    }

    fn contents(index: &SessionIndex) -> Vec<Value> {
        let leaf = index.entries().len() - 1;
        build_context(index, Some(leaf))
            .messages
            .iter()
            .map(|message| {
                let entry = index.get(message.entry).unwrap();
                let edit = message.edit.and_then(|edit| index.get(edit));
                let value = context_message_value(entry, message.kind, edit).unwrap();
                json!([value["role"], value["content"]])
            })
            .collect()
    }

    #[test]
    fn the_last_edit_on_the_path_wins_and_applies_before_it() {
        let index = index(&[
            r#"{"type":"message","id":"u","parentId":null,"timestamp":"t","message":{"role":"user","content":"long"}}"#,
            r#"{"type":"message","id":"a","parentId":"u","timestamp":"t","message":{"role":"assistant","content":[]}}"#,
            r#"{"type":"context_edit","id":"e1","parentId":"a","timestamp":"t","targetId":"a","replacement":{"content":"first"}}"#,
            r#"{"type":"context_edit","id":"e2","parentId":"e1","timestamp":"t","targetId":"a","replacement":{"content":"second"}}"#,
            r#"{"type":"context_edit","id":"e3","parentId":"e2","timestamp":"t","targetId":"u","replacement":null}"#,
            r#"{"type":"usage","id":"g","parentId":"e3","timestamp":"t","kind":"cache_warm"}"#,
        ]);
        assert_eq!(
            contents(&index),
            [json!(["assistant", [{"type": "text", "text": "second"}]])]
        );
    }

    /// QA r103, defect 4: a replacement whose content no message holds made every typed read of
    /// the context fail, naming the target's line; its content is put away now, as a replacement
    /// without content puts it away (docs/pi-compatibility.md, divergence 17).
    #[test]
    fn a_replacement_of_the_wrong_type_puts_the_content_away() {
        for (replacement, expected) in [
            (r#"{"content":5}"#, Value::Null),
            (r#"{"content":{"text":"x"}}"#, Value::Null),
            (r#"{"content":[5]}"#, Value::Null),
            (r#"{}"#, Value::Null),
            (r#"{"content":"kept"}"#, json!("kept")),
            (r#"{"content":null}"#, Value::Null),
        ] {
            let edit = format!(
                r#"{{"type":"context_edit","id":"e","parentId":"a","timestamp":"t","targetId":"u","replacement":{replacement}}}"#
            );
            let index = index(&[
                r#"{"type":"message","id":"u","parentId":null,"timestamp":"t","message":{"role":"user","content":"long","timestamp":1}}"#,
                r#"{"type":"message","id":"a","parentId":"u","timestamp":"t","message":{"role":"assistant","content":[]}}"#,
                &edit,
            ]);
            assert_eq!(
                contents(&index)[0],
                json!(["user", expected]),
                "{replacement}"
            );
            let context = build_context(&index, Some(2));
            for message in &context.messages {
                let entry = index.get(message.entry).unwrap();
                let edit = message.edit.and_then(|edit| index.get(edit));
                context_message(entry, message.kind, edit).unwrap();
            }
        }
    }

    #[test]
    fn a_compaction_leads_with_its_system_message_and_drops_kept_ones() {
        let index = index(&[
            r#"{"type":"message","id":"s","parentId":null,"timestamp":"t","message":{"role":"system","content":"old"}}"#,
            r#"{"type":"message","id":"u","parentId":"s","timestamp":"t","message":{"role":"user","content":null}}"#,
            r#"{"type":"message","id":"s2","parentId":"u","timestamp":"t","message":{"role":"system","content":"kept"}}"#,
            r#"{"type":"compaction","id":"c","parentId":"s2","timestamp":"t","summary":"S","firstKeptEntryId":"u","tokensBefore":1,"systemMessage":{"role":"system","content":"replay"}}"#,
            r#"{"type":"message","id":"s3","parentId":"c","timestamp":"t","message":{"role":"system","content":"later"}}"#,
        ]);
        assert_eq!(
            contents(&index),
            [
                json!(["system", "replay"]),
                json!(["compactionSummary", null]),
                json!(["user", []]),
                json!(["system", "later"]),
            ]
        );
    }

    #[test]
    fn a_retain_none_compaction_keeps_nothing_before_it() {
        let index = index(&[
            r#"{"type":"message","id":"u","parentId":null,"timestamp":"t","message":{"role":"user","content":"a"}}"#,
            r#"{"type":"compaction","id":"c","parentId":"u","timestamp":"t","summary":"S","firstKeptEntryId":"c","tokensBefore":1}"#,
            r#"{"type":"message","id":"v","parentId":"c","timestamp":"t","message":{"role":"user","content":"b"}}"#,
        ]);
        assert_eq!(
            contents(&index),
            [json!(["compactionSummary", null]), json!(["user", "b"])]
        );
    }
}
