//! Building what the model sees at a leaf (Pi's `buildSessionContext`): walk root→leaf, track thinking
//! level and model, and emit messages, honouring the last compaction on the path. Pure: it returns
//! references to entries; materializing a message is a separate, lazy step.

use ctxkit_protocol::{AgentMessage, ModelRef, from_str_repaired, parse_agent_message};
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

/// One message of a context: the entry it comes from and how it is made from it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ContextMessage {
    pub entry: EntryIndex,
    pub kind: ContextMessageKind,
}

/// How a context message is made from its entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ContextMessageKind {
    /// The `message` of a `message` entry, as stored.
    Stored,
    /// A `custom` message made from a `custom_message` entry.
    Custom,
    /// A `branchSummary` message made from a `branch_summary` entry.
    BranchSummary,
    /// The `compactionSummary` message that opens a compacted context.
    CompactionSummary,
}

/// Builds the context at `leaf`; `None` (a leaf before the first entry) gives an empty context.
pub fn build_context(index: &SessionIndex, leaf: Option<EntryIndex>) -> SessionContext {
    match leaf {
        Some(leaf) => build_context_on_path(index, &index.path_to(leaf)),
        None => build_context_on_path(index, &[]),
    }
}

/// [`build_context`] for a root→leaf path already walked (`SessionIndex::path_to`).
pub fn build_context_on_path(index: &SessionIndex, path: &[EntryIndex]) -> SessionContext {
    let mut context = SessionContext {
        messages: Vec::new(),
        thinking_level: "off".to_owned(),
        model: None,
    };
    let mut compaction_position = None;
    // The last entry that sets the thinking level and the model; their strings are copied once, at
    // the end (a long path has thousands of assistant messages).
    let mut thinking_source = None;
    let mut model_source = None;
    for (position, &entry_index) in path.iter().enumerate() {
        let Some(entry) = index.get(entry_index) else {
            continue;
        };
        match &entry.meta {
            EntryMeta::ThinkingLevelChange { level: Some(_) } => thinking_source = Some(entry),
            EntryMeta::ModelChange { .. } => model_source = Some(entry),
            EntryMeta::Message {
                role: Some(role), ..
            } if &**role == "assistant" => model_source = Some(entry),
            EntryMeta::Compaction { .. } => compaction_position = Some(position),
            EntryMeta::ThinkingLevelChange { level: None }
            | EntryMeta::Message { .. }
            | EntryMeta::BranchSummary { .. }
            | EntryMeta::Custom
            | EntryMeta::CustomMessage
            | EntryMeta::Label { .. }
            | EntryMeta::SessionInfo { .. }
            | EntryMeta::Unknown { .. } => {}
        }
    }
    if let Some(EntryMeta::ThinkingLevelChange { level: Some(level) }) =
        thinking_source.map(|entry| &entry.meta)
    {
        context.thinking_level = level.to_string();
    }
    context.model = model_source.and_then(|entry| model_set_by(&entry.meta));
    let emit = |messages: &mut Vec<ContextMessage>, entry_index: EntryIndex| {
        let kind = index.get(entry_index).and_then(|entry| match &entry.meta {
            EntryMeta::Message { .. } => Some(ContextMessageKind::Stored),
            EntryMeta::CustomMessage => Some(ContextMessageKind::Custom),
            EntryMeta::BranchSummary { has_summary: true } => {
                Some(ContextMessageKind::BranchSummary)
            }
            EntryMeta::BranchSummary { has_summary: false }
            | EntryMeta::ThinkingLevelChange { .. }
            | EntryMeta::ModelChange { .. }
            | EntryMeta::Compaction { .. }
            | EntryMeta::Custom
            | EntryMeta::Label { .. }
            | EntryMeta::SessionInfo { .. }
            | EntryMeta::Unknown { .. } => None,
        });
        if let Some(kind) = kind {
            messages.push(ContextMessage {
                entry: entry_index,
                kind,
            });
        }
    };
    match compaction_position {
        None => {
            for &entry_index in path {
                emit(&mut context.messages, entry_index);
            }
        }
        Some(position) => {
            let compaction = path[position];
            context.messages.push(ContextMessage {
                entry: compaction,
                kind: ContextMessageKind::CompactionSummary,
            });
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
                | EntryMeta::Unknown { .. } => None,
            });
            let kept_from =
                first_kept.and_then(|first_kept| index.position_in(&path[..position], &first_kept));
            if let Some(kept_from) = kept_from {
                for &entry_index in &path[kept_from..position] {
                    emit(&mut context.messages, entry_index);
                }
            }
            for &entry_index in &path[position + 1..] {
                emit(&mut context.messages, entry_index);
            }
        }
    }
    context
}

/// The model a `model_change` entry or an assistant message sets.
fn model_set_by(meta: &EntryMeta) -> Option<ModelRef> {
    match meta {
        EntryMeta::ModelChange { provider, model_id } => Some(ModelRef {
            provider: provider.as_deref().map(str::to_owned),
            model_id: model_id.as_deref().map(str::to_owned),
        }),
        EntryMeta::Message {
            provider, model, ..
        } => Some(ModelRef {
            provider: provider.as_deref().map(str::to_owned),
            model_id: model.as_deref().map(str::to_owned),
        }),
        EntryMeta::ThinkingLevelChange { .. }
        | EntryMeta::Compaction { .. }
        | EntryMeta::BranchSummary { .. }
        | EntryMeta::Custom
        | EntryMeta::CustomMessage
        | EntryMeta::Label { .. }
        | EntryMeta::SessionInfo { .. }
        | EntryMeta::Unknown { .. } => None,
    }
}

/// The JSON value of a context message, exactly as Pi builds it: stored messages as written,
/// synthesized ones with Pi's fields in Pi's order and `timestamp` as epoch milliseconds (null when the
/// entry's timestamp does not parse).
pub fn context_message_value(
    entry: &StoredEntry,
    kind: ContextMessageKind,
) -> Result<Value, serde_json::Error> {
    if kind == ContextMessageKind::Stored {
        return match entry.message_json() {
            Some(json) => from_str_repaired(json),
            None => Ok(Value::Null),
        };
    }
    let fields: Value = from_str_repaired(entry.raw())?;
    let (role, keys): (&str, &[&str]) = match kind {
        ContextMessageKind::Custom => ("custom", &["customType", "content", "display", "details"]),
        ContextMessageKind::BranchSummary => ("branchSummary", &["summary", "fromId"]),
        ContextMessageKind::CompactionSummary => {
            ("compactionSummary", &["summary", "tokensBefore"])
        }
        ContextMessageKind::Stored => ("", &[]),
    };
    let mut message = serde_json::Map::new();
    message.insert("role".to_owned(), Value::String(role.to_owned()));
    for &key in keys {
        if let Some(value) = fields.get(key) {
            message.insert(key.to_owned(), value.clone());
        }
    }
    let timestamp = parse_timestamp_ms(entry.timestamp()).map_or(Value::Null, Value::from);
    message.insert("timestamp".to_owned(), timestamp);
    Ok(Value::Object(message))
}

/// The typed form of a context message.
pub fn context_message(
    entry: &StoredEntry,
    kind: ContextMessageKind,
) -> Result<AgentMessage, serde_json::Error> {
    if kind == ContextMessageKind::Stored
        && let Some(json) = entry.message_json()
    {
        return parse_agent_message(json);
    }
    serde_json::from_value(context_message_value(entry, kind)?)
}
