//! An OpenCode session ([`RawSession`]) → v3 entries, one chain in message order, the way OpenCode
//! turns its messages into model messages: a user message's text and file parts; an assistant
//! message split at its `step-start` parts into one reply per step (`steps`: text, reasoning, tool calls)
//! followed by one `toolResult` per tool part; a compaction (a user message with a `compaction` part,
//! then an assistant message with `summary: true`) becomes a `compaction` entry. `session_message`
//! rows are converted by `next`; messages a revert undid go on a side branch (`timeline`).

use std::collections::{HashMap, HashSet};

use ctxkit_protocol::{
    AgentMessage, CompactionEntry, ContentBlock, CustomEntry, EntryKind, JsonObject,
    MessageContent, SessionEntry, SessionInfoEntry, UserMessage, value_as_u64,
};
use ctxkit_session::iso_from_ms;
use serde_json::Value;

use super::blocks::{cost_of, file_block, summary_details, tool_result};
use super::steps::{split_steps, step_reply, step_times};
use super::storage::{RawMessage, RawSession, str_of};
use super::timeline::{Item, Walk};
use crate::builder::{Builder, Planned, header, set_parent_session_id};
use crate::error::ImportError;
use crate::report::IssueKind;
use crate::stored::Stored;
use crate::{ImportedSession, SourceFormat, custom_type};

const FORMAT: SourceFormat = SourceFormat::OpenCode;

pub(super) struct Chain {
    pub(super) builder: Builder,
    planned: Vec<Stored>,
    /// OpenCode message id → the id of its first entry (for a compaction's kept tail).
    first_entry_of: HashMap<String, String>,
    /// The message ids a compaction request names as its kept tail: the only ones
    /// `first_entry_of` keeps (a million messages would take a hundred megabytes).
    named_tails: HashSet<String>,
    /// Context tokens of the last assistant reply.
    pub(super) last_tokens: Option<u64>,
    /// `tail_start_id` of a compaction request waiting for its summary.
    pending_tail: Option<Option<String>>,
}

impl Chain {
    /// Appends an entry under the last one.
    pub(super) fn push(
        &mut self,
        ordinal: usize,
        key: &str,
        time: &str,
        kind: EntryKind,
    ) -> String {
        let parent_id = self.planned.last().map(|previous| previous.id.clone());
        self.push_under(parent_id, ordinal, key, time, kind)
    }

    /// Appends a compaction whose kept part starts at entry `kept` (none: the compaction itself).
    pub(super) fn push_compaction(
        &mut self,
        ordinal: usize,
        key: &str,
        time: &str,
        mut compaction: CompactionEntry,
        kept: Option<String>,
    ) {
        let id = self.builder.ids.derive(key);
        compaction.first_kept_entry_id = kept.unwrap_or_else(|| id.clone());
        let parent_id = self.planned.last().map(|previous| previous.id.clone());
        self.planned.push(Stored::from(Planned {
            line: ordinal,
            entry: SessionEntry {
                id,
                parent_id,
                timestamp: time.to_owned(),
                kind: EntryKind::Compaction(compaction),
            },
        }));
    }

    fn push_under(
        &mut self,
        parent_id: Option<String>,
        ordinal: usize,
        key: &str,
        time: &str,
        kind: EntryKind,
    ) -> String {
        let id = self.builder.ids.derive(key);
        self.planned.push(Stored::from(Planned {
            line: ordinal,
            entry: SessionEntry {
                id: id.clone(),
                parent_id,
                timestamp: time.to_owned(),
                kind,
            },
        }));
        id
    }
}

pub(super) fn convert_session(raw: RawSession) -> Result<ImportedSession, ImportError> {
    let RawSession { info, rows, issues } = raw;
    let session_id = str_of(&info, "id").unwrap_or_default().to_owned();
    let created = time_of(&info, "created");
    let start = created.map(iso_from_ms).unwrap_or_default();
    let mut header = header(
        FORMAT,
        &session_id,
        &start,
        str_of(&info, "directory").unwrap_or_default(),
    );
    if let Some(parent) = str_of(&info, "parentID") {
        set_parent_session_id(&mut header, parent);
    }
    let mut chain = Chain {
        builder: Builder::default(),
        planned: Vec::new(),
        first_entry_of: HashMap::new(),
        named_tails: HashSet::new(),
        last_tokens: None,
        pending_tail: None,
    };
    chain.builder.issues.extend(
        issues
            .into_iter()
            .map(|kind| crate::report::ImportIssue { line: None, kind }),
    );
    if let Some(title) = str_of(&info, "title").filter(|title| !title.is_empty()) {
        let mut extra = JsonObject::new();
        extra.insert("opencodeSession".to_owned(), Value::Object(info.clone()));
        // OpenCode's placeholder is no name: the listing shows the first message instead.
        let name = (!is_placeholder_title(title)).then(|| title.to_owned());
        let kind = EntryKind::SessionInfo(SessionInfoEntry { name, extra });
        chain.push(0, &format!("{session_id}:session"), &start, kind);
    }
    let walk = Walk::open(&info, rows)?;
    chain.named_tails = walk.named_tails()?;
    let mut last_time = start.clone();
    let mut ordinal = 0;
    // What a revert undid goes on a side branch, under the last kept entry.
    let mut kept_leaf = None;
    // Each message read, converted and let go.
    let reverted = walk.walk(&mut |item, undone| {
        if undone && kept_leaf.is_none() {
            kept_leaf = Some(chain.planned.last().map(|last| last.id.clone()));
        }
        ordinal += 1;
        convert_item(&mut chain, ordinal, item, &mut last_time);
    })?;
    if let Some((revert, undone)) = reverted {
        // A marker under the last kept entry, written last, makes the kept conversation the
        // leaf, as OpenCode shows it.
        let mut data = JsonObject::new();
        data.insert("revert".to_owned(), revert);
        data.insert("undoneMessages".to_owned(), Value::from(undone));
        let kind = EntryKind::Custom(CustomEntry {
            custom_type: custom_type(FORMAT, "revert"),
            data: Some(Value::Object(data)),
            extra: JsonObject::new(),
        });
        chain.push_under(
            kept_leaf.flatten(),
            ordinal,
            &format!("{session_id}:revert"),
            &last_time,
            kind,
        );
    }
    Ok(chain
        .builder
        .finish(FORMAT, header, chain.planned, ordinal + 1))
}

/// Converts one message of either model, remembering its first entry.
fn convert_item(chain: &mut Chain, ordinal: usize, item: &Item, last_time: &mut String) {
    let before = chain.planned.len();
    match item {
        Item::Legacy(message) => {
            let time = time_of(&message.info, "created")
                .map(iso_from_ms)
                .unwrap_or_else(|| last_time.clone());
            last_time.clone_from(&time);
            legacy_message(chain, ordinal, message, &time);
        }
        Item::Next(row) => {
            let message = row.parsed();
            let time = time_of(&message.data, "created").unwrap_or(message.time_created);
            let time = iso_from_ms(time);
            last_time.clone_from(&time);
            super::next::convert(chain, ordinal, &message, &time);
        }
    }
    if let Some(first) = chain.planned.get(before)
        && chain.named_tails.contains(item.id())
    {
        chain
            .first_entry_of
            .insert(item.id().to_owned(), first.id.clone());
    }
}

fn legacy_message(chain: &mut Chain, ordinal: usize, message: &RawMessage, time: &str) {
    super::blocks::report_unknown_parts(&mut chain.builder, ordinal, &message.parts);
    match str_of(&message.info, "role") {
        Some("user") => user(chain, ordinal, message, time),
        Some("assistant") => assistant(chain, ordinal, message, time),
        other => {
            chain.builder.issue(
                ordinal,
                IssueKind::UnknownRecord {
                    record_type: format!("message/{}", other.unwrap_or("(none)")),
                },
            );
            let kind = custom(
                "message",
                Value::Object(message.info.clone()),
                &message.parts,
            );
            chain.push(ordinal, message_id(message), time, kind);
        }
    }
}

fn message_id(message: &RawMessage) -> &str {
    str_of(&message.info, "id").unwrap_or_default()
}

pub(super) fn time_of(object: &JsonObject, key: &str) -> Option<i64> {
    object
        .get("time")?
        .get(key)
        .and_then(value_as_u64)
        .and_then(|ms| i64::try_from(ms).ok())
}

pub(super) fn part_type(part: &JsonObject) -> &str {
    str_of(part, "type").unwrap_or_default()
}

/// A `custom` entry keeping what the conversation does not show.
fn custom(kind: &str, info: Value, parts: &[JsonObject]) -> EntryKind {
    let mut data = JsonObject::new();
    data.insert("info".to_owned(), info);
    data.insert(
        "parts".to_owned(),
        Value::Array(parts.iter().cloned().map(Value::Object).collect()),
    );
    EntryKind::Custom(CustomEntry {
        custom_type: custom_type(FORMAT, kind),
        data: Some(Value::Object(data)),
        extra: JsonObject::new(),
    })
}

fn user(chain: &mut Chain, ordinal: usize, message: &RawMessage, time: &str) {
    if let Some(request) = message
        .parts
        .iter()
        .find(|part| part_type(part) == "compaction")
    {
        chain.pending_tail = Some(str_of(request, "tail_start_id").map(str::to_owned));
        let kind = custom(
            "compaction_request",
            Value::Object(message.info.clone()),
            &message.parts,
        );
        chain.push(ordinal, message_id(message), time, kind);
        return;
    }
    let mut blocks = Vec::new();
    let mut kept = Vec::new();
    for part in &message.parts {
        match part_type(part) {
            "text" if part.get("ignored").and_then(Value::as_bool) != Some(true) => {
                blocks.push(ContentBlock::text(str_of(part, "text").unwrap_or_default()));
            }
            "file" => blocks.push(file_block(part, &mut chain.builder, ordinal)),
            "agent" => blocks.push(ContentBlock::text(format!(
                "@{}",
                str_of(part, "name").unwrap_or_default()
            ))),
            "subtask" => blocks.push(ContentBlock::text(format!(
                "[subtask for agent {}: {}]\n{}",
                str_of(part, "agent").unwrap_or_default(),
                str_of(part, "description").unwrap_or_default(),
                str_of(part, "prompt").unwrap_or_default()
            ))),
            _ => kept.push(Value::Object(part.clone())),
        }
    }
    let mut extra = JsonObject::new();
    extra.insert(
        "opencodeInfo".to_owned(),
        Value::Object(message.info.clone()),
    );
    if !kept.is_empty() {
        extra.insert("opencodeParts".to_owned(), Value::Array(kept));
    }
    let user = AgentMessage::User(UserMessage {
        content: MessageContent::Blocks(blocks),
        timestamp: time_of(&message.info, "created"),
        extra,
    });
    chain.push(
        ordinal,
        message_id(message),
        time,
        EntryKind::Message(Box::new(user)),
    );
}

fn assistant(chain: &mut Chain, ordinal: usize, message: &RawMessage, time: &str) {
    let info = &message.info;
    let text: Vec<&str> = message
        .parts
        .iter()
        .filter(|part| part_type(part) == "text")
        .filter_map(|part| str_of(part, "text"))
        .collect();
    if info.get("summary").and_then(Value::as_bool) == Some(true) {
        let tail = chain.pending_tail.take().flatten();
        let mut extra = JsonObject::new();
        extra.insert("opencodeInfo".to_owned(), Value::Object(info.clone()));
        let tokens = chain.last_tokens;
        if tokens.is_none() {
            chain
                .builder
                .issue(ordinal, IssueKind::CompactionWithoutTokenCount);
        }
        let kept = tail.and_then(|tail| chain.first_entry_of.get(&tail).cloned());
        let compaction = CompactionEntry {
            summary: text.join("\n\n"),
            first_kept_entry_id: String::new(),
            tokens_before: tokens.unwrap_or(0),
            details: summary_details(&message.info, &message.parts),
            from_hook: None,
            extra,
        };
        chain.push_compaction(ordinal, message_id(message), time, compaction, kept);
        return;
    }
    let steps = split_steps(&message.parts);
    let last_step = steps.len() - 1;
    // The message's `cost` sums its steps': what the steps' `step-finish` parts do not record
    // is the last step's, when that step has none of its own.
    let recorded: f64 = message
        .parts
        .iter()
        .filter(|part| part_type(part) == "step-finish")
        .filter_map(cost_of)
        .sum();
    let cost_left = cost_of(info).map(|cost| (cost - recorded).max(0.0));
    let times = step_times(time_of(info, "created"), &steps);
    for ((number, step), step_time) in steps.iter().enumerate().zip(times) {
        let key = if number == 0 {
            message_id(message).to_owned()
        } else {
            format!("{}#{number}", message_id(message))
        };
        let last = (number == last_step).then_some(cost_left);
        let mut reply = step_reply(info, step, last);
        reply.timestamp = step_time;
        let has_content = !reply.content.is_empty() || reply.is_aborted_or_error();
        if !has_content {
            continue;
        }
        if let Some(usage) = &reply.usage {
            chain.last_tokens = Some(usage.input_tokens());
        }
        chain.push(
            ordinal,
            &key,
            time,
            EntryKind::Message(Box::new(AgentMessage::Assistant(reply))),
        );
        for part in step.iter().filter(|part| part_type(part) == "tool") {
            let result = tool_result(part, time_of(info, "created"));
            let part_key = str_of(part, "id").unwrap_or_default().to_owned();
            chain.push(
                ordinal,
                &part_key,
                time,
                EntryKind::Message(Box::new(result)),
            );
        }
    }
}

/// Whether `title` is the one OpenCode gives a session before it has one (`New session - ` or
/// `Child session - ` and the creation time, `2026-07-30T14:04:55.689Z`), which OpenCode itself
/// treats as no title.
fn is_placeholder_title(title: &str) -> bool {
    let Some(time) = ["New session - ", "Child session - "]
        .iter()
        .find_map(|prefix| title.strip_prefix(prefix))
    else {
        return false;
    };
    const SHAPE: &[u8] = b"dddd-dd-ddTdd:dd:dd.dddZ";
    time.len() == SHAPE.len()
        && time.bytes().zip(SHAPE).all(|(byte, &shape)| match shape {
            b'd' => byte.is_ascii_digit(),
            other => byte == other,
        })
}

#[cfg(test)]
mod placeholder_tests {
    use super::is_placeholder_title;

    #[test]
    fn opencode_s_placeholder_titles_are_no_name() {
        assert!(is_placeholder_title(
            "New session - 2026-07-30T14:04:55.689Z"
        ));
        assert!(is_placeholder_title(
            "Child session - 2025-01-02T03:04:05.006Z"
        ));
        assert!(!is_placeholder_title("New session - fix the parser"));
        assert!(!is_placeholder_title("New session - 2026-07-30T14:04:55Z"));
        assert!(!is_placeholder_title("Fix the parser"));
    }
}
