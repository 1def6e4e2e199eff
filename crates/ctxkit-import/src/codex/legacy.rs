//! The shapes of rollout lines across Codex versions, read into one view ([`Line`]):
//!
//! - today's `{timestamp, type, payload}` envelopes;
//! - 2025 rollouts: a bare first line `{id, timestamp, instructions, git}`, bare `ResponseItem`s
//!   (`{"type": "message", …}`) and `{"record_type": "state"}` bookkeeping lines;
//! - the oldest `rollout-*.json`: one document `{session, items}`, expanded here into a session line
//!   and one line per item.

use std::borrow::Cow;

use ctxkit_protocol::JsonObject;
use serde_json::Value;

use super::items::RESPONSE_ITEM_TYPES;
use crate::source::{SourceFile, SourceLine, str_field};

/// A rollout line: its source line number, the key its entry ids derive from, and the record.
pub(super) struct RolloutLine<'a> {
    pub(super) line: usize,
    pub(super) key: String,
    pub(super) record: Cow<'a, JsonObject>,
}

/// What a rollout line is, whichever version wrote it.
pub(crate) enum Line<'a> {
    /// The session's metadata (`session_meta` payload, or the bare first line of older rollouts).
    Meta(&'a JsonObject),
    /// A `ResponseItem` (an envelope's payload, or a bare item).
    Item(&'a JsonObject),
    Compacted(&'a JsonObject),
    TurnContext(&'a JsonObject),
    Event(&'a JsonObject),
    /// `{"record_type": "state"}`: Codex's bookkeeping, no conversation.
    State,
    /// `inter_agent_communication` (2026 versions): a message one agent of a multi-agent run sent
    /// another, which Codex puts in the history of the thread whose rollout holds it.
    Communication(&'a JsonObject),
    /// `token_usage_record` (2026 versions): the usage of one model request.
    TokenUsage(&'a JsonObject),
    /// Records of newer versions that hold no conversation, with their type: `world_state` (the
    /// environment the next turn runs in, whole or as a change), `inter_agent_communication_metadata`
    /// (how the next agent message was delivered), `retained_context`, `security_risk_score`,
    /// `realtime_item`, `rollout_reference`.
    Bookkeeping(&'static str),
    /// Anything else, with its type.
    Unknown(String),
}

/// Envelope types of records without conversation (see [`Line::Bookkeeping`]).
const BOOKKEEPING_LINES: &[&str] = &[
    "world_state",
    "inter_agent_communication_metadata",
    "retained_context",
    "security_risk_score",
    "realtime_item",
    "rollout_reference",
];

/// Reads one record as a rollout line.
pub(crate) fn classify(record: &JsonObject) -> Line<'_> {
    let kind = str_field(record, "type");
    if let (Some(kind), Some(payload)) = (kind, record.get("payload").and_then(Value::as_object)) {
        return match kind {
            "session_meta" => Line::Meta(payload),
            "response_item" => Line::Item(payload),
            "compacted" => Line::Compacted(payload),
            "turn_context" => Line::TurnContext(payload),
            "event_msg" => Line::Event(payload),
            "inter_agent_communication" => Line::Communication(payload),
            "token_usage_record" => Line::TokenUsage(payload),
            other => BOOKKEEPING_LINES
                .iter()
                .find(|known| **known == other)
                .map_or_else(
                    || Line::Unknown(other.to_owned()),
                    |known| Line::Bookkeeping(known),
                ),
        };
    }
    if record.contains_key("record_type") {
        return Line::State;
    }
    match kind {
        Some(kind) if RESPONSE_ITEM_TYPES.contains(&kind) => Line::Item(record),
        Some(other) => Line::Unknown(other.to_owned()),
        None if str_field(record, "id").is_some() && record.contains_key("timestamp") => {
            Line::Meta(record)
        }
        None => Line::Unknown("(none)".to_owned()),
    }
}

/// Whether a record is one only Codex writes (used by format detection): an envelope, a state line,
/// a bare item or session line without Claude Code's fields, or a `{session, items}` document.
/// A record without a `payload` that carries `parentId` (the tree link of Pi's entries) or a
/// `message` object (how Pi and Claude Code wrap a message; a Codex item holds `role` and `content`
/// itself) is not Codex's, although Pi names its entries `message` and `compaction` as Codex names
/// bare items.
pub(crate) fn is_rollout_record(record: &JsonObject) -> bool {
    if record.contains_key("sessionId") || record.contains_key("uuid") {
        return false;
    }
    let bare = !record.contains_key("payload");
    if bare
        && (record.contains_key("parentId") || record.get("message").is_some_and(Value::is_object))
    {
        return false;
    }
    if is_document(record) {
        return true;
    }
    match classify(record) {
        Line::Meta(_)
        | Line::Item(_)
        | Line::Compacted(_)
        | Line::TurnContext(_)
        | Line::Event(_)
        | Line::State
        | Line::Communication(_)
        | Line::TokenUsage(_)
        | Line::Bookkeeping(_) => true,
        Line::Unknown(_) => false,
    }
}

fn is_document(record: &JsonObject) -> bool {
    record.get("session").is_some_and(Value::is_object)
        && record.get("items").is_some_and(Value::is_array)
}

/// The lines of a rollout, `{session, items}` documents expanded (the session as a `session_meta`
/// line keyed by the document's line, item `n` keyed `<line>.<n>`).
pub(super) fn rollout_lines(source: &SourceFile) -> Vec<RolloutLine<'_>> {
    let mut lines = Vec::with_capacity(source.lines.len());
    for line in &source.lines {
        expand(line, |rollout_line| lines.push(rollout_line));
    }
    lines
}

/// The rollout lines one source line is: itself, or a document's session and items.
pub(super) fn expand<'line>(line: &'line SourceLine, mut each: impl FnMut(RolloutLine<'line>)) {
    let record = &line.record;
    if !is_document(record) {
        each(RolloutLine {
            line: line.line,
            key: line.line.to_string(),
            record: Cow::Borrowed(record),
        });
        return;
    }
    if let Some(session) = record.get("session") {
        let mut meta = JsonObject::new();
        meta.insert("type".to_owned(), Value::String("session_meta".to_owned()));
        meta.insert("payload".to_owned(), session.clone());
        if let Some(timestamp) = session.get("timestamp") {
            meta.insert("timestamp".to_owned(), timestamp.clone());
        }
        each(RolloutLine {
            line: line.line,
            key: line.line.to_string(),
            record: Cow::Owned(meta),
        });
    }
    let items = record.get("items").and_then(Value::as_array);
    for (index, item) in items.into_iter().flatten().enumerate() {
        if let Value::Object(item) = item {
            each(RolloutLine {
                line: line.line,
                key: format!("{}.{index}", line.line),
                record: Cow::Borrowed(item),
            });
        }
    }
}

/// The thread a spawned subagent's rollout belongs to:
/// `session_meta.source.subagent.thread_spawn.parent_thread_id`.
pub(crate) fn parent_thread_id(meta: &JsonObject) -> Option<&str> {
    meta.get("source")?
        .get("subagent")?
        .get("thread_spawn")?
        .get("parent_thread_id")?
        .as_str()
}

/// The working directory older rollouts only state in the first `<environment_context>` message:
/// `<cwd>…</cwd>`.
pub(super) fn cwd_from_environment_context(line: &RolloutLine<'_>) -> Option<String> {
    let Line::Item(item) = classify(&line.record) else {
        return None;
    };
    let content = item.get("content")?.as_array()?;
    content.iter().find_map(|part| {
        let text = part.get("text")?.as_str()?;
        let start = text.find("<cwd>")? + "<cwd>".len();
        let end = text[start..].find("</cwd>")? + start;
        Some(text[start..end].trim().to_owned())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn object(value: serde_json::Value) -> JsonObject {
        value.as_object().unwrap().clone()
    }

    #[test]
    fn every_version_of_a_line_is_read() {
        let envelope =
            object(serde_json::json!({"type": "response_item", "payload": {"type": "message"}}));
        assert!(matches!(classify(&envelope), Line::Item(_)));
        let bare = object(serde_json::json!({"type": "function_call", "call_id": "c"}));
        assert!(matches!(classify(&bare), Line::Item(_)));
        let meta = object(serde_json::json!({"id": "s", "timestamp": "2025-08-01T00:00:00Z"}));
        assert!(matches!(classify(&meta), Line::Meta(_)));
        let state = object(serde_json::json!({"record_type": "state"}));
        assert!(matches!(classify(&state), Line::State));
        let world = object(serde_json::json!({
            "type": "world_state",
            "payload": {"full": false, "state": {"environments": {}}},
        }));
        assert!(matches!(classify(&world), Line::Bookkeeping("world_state")));
        let claude = object(serde_json::json!({"type": "user", "sessionId": "s", "uuid": "u"}));
        assert!(!is_rollout_record(&claude));
    }

    /// Pi names its entries `message` and `compaction`, as Codex names bare items; its entries
    /// (linked by `parentId`, or v1 messages wrapped in `message`) are not rollout records.
    #[test]
    fn pi_entries_are_not_rollout_records() {
        let entry = object(serde_json::json!({
            "type": "message", "id": "a1", "parentId": null, "timestamp": "2025-03-14T09:19:15.785Z",
            "message": {"role": "user", "content": "hi", "timestamp": 1},
        }));
        assert!(!is_rollout_record(&entry));
        let compaction = object(serde_json::json!({
            "type": "compaction", "id": "c1", "parentId": "a1", "summary": "s",
            "firstKeptEntryId": "a1", "tokensBefore": 10,
        }));
        assert!(!is_rollout_record(&compaction));
        let v1 = object(serde_json::json!({
            "type": "message", "timestamp": "2025-03-14T09:19:15.785Z",
            "message": {"role": "user", "content": "hi"},
        }));
        assert!(!is_rollout_record(&v1));
        let bare = object(serde_json::json!({"type": "message", "role": "user", "content": []}));
        assert!(is_rollout_record(&bare));
    }
}
