//! Claude Code transcripts (`~/.claude/projects/<escaped cwd>/<session id>.jsonl`) → v3 entries.
//!
//! Records link by `uuid`/`parentUuid`; a user record's `tool_result` blocks become `toolResult`
//! messages, a `system` record with `subtype: "compact_boundary"` and the `isCompactSummary` user
//! record after it become one `compaction` entry, `summary` records set the session name, and every
//! other record is kept as a `custom` entry. Facts and sources: `docs/import-formats.md`.

mod messages;

use std::collections::HashMap;

use ctxkit_protocol::{
    CompactionEntry, EntryKind, JsonObject, SessionEntry, SessionInfoEntry, value_as_u64,
};
use serde_json::Value;

use crate::builder::{Builder, Planned, custom_kind, header, normalize_timestamp};
use crate::error::ImportError;
use crate::report::IssueKind;
use crate::source::{SourceFile, SourceLine, str_field};
use crate::{ImportedSession, SourceFormat};
use messages::{assistant_kind, user_entries};

const FORMAT: SourceFormat = SourceFormat::ClaudeCode;

/// The entries one source record became, before parents are resolved.
#[derive(Debug)]
struct Record {
    line: usize,
    uuid: Option<String>,
    parent_uuid: Option<String>,
    sidechain: bool,
    entries: Vec<Planned>,
}

/// Converts a Claude Code transcript.
pub fn convert_claude_code(source: &SourceFile) -> Result<ImportedSession, ImportError> {
    if source.lines.is_empty() {
        return Err(ImportError::Empty {
            path: source.path.clone(),
        });
    }
    let session_id = source
        .lines
        .iter()
        .find_map(|line| str_field(&line.record, "sessionId"))
        .map(str::to_owned)
        .or_else(|| {
            source
                .path
                .file_stem()
                .map(|stem| stem.to_string_lossy().into_owned())
        })
        .unwrap_or_default();
    let cwd = source
        .lines
        .iter()
        .find_map(|line| str_field(&line.record, "cwd"))
        .unwrap_or_default();
    let start = source
        .lines
        .iter()
        .find_map(|line| str_field(&line.record, "timestamp"))
        .unwrap_or_default();

    let mut builder = Builder::new(source);
    let mut records: Vec<Record> = Vec::new();
    // uuid → (record index, id of the record's last entry), for parents and aliases.
    let mut tails: HashMap<String, String> = HashMap::new();
    let mut boundaries: HashMap<String, usize> = HashMap::new();
    let mut open_boundary: Option<usize> = None;
    let mut last_timestamp = normalize_timestamp(start).unwrap_or_default();
    let mut main_tail_uuid: Option<String> = None;

    for line in &source.lines {
        let record = &line.record;
        let timestamp = str_field(record, "timestamp")
            .and_then(normalize_timestamp)
            .unwrap_or_else(|| last_timestamp.clone());
        last_timestamp.clone_from(&timestamp);
        let uuid = str_field(record, "uuid").map(str::to_owned);
        let sidechain = record.get("isSidechain").and_then(Value::as_bool) == Some(true);
        let record_type = str_field(record, "type").unwrap_or_default();
        let source_key = match &uuid {
            Some(uuid) => {
                if tails.contains_key(uuid) {
                    builder.issue(
                        line.line,
                        IssueKind::DuplicateId {
                            source_id: uuid.clone(),
                        },
                    );
                }
                uuid.clone()
            }
            None => format!(
                "line:{}:{}",
                line.line,
                serde_json::Value::Object(record.clone())
            ),
        };
        let mut parent_uuid = match record.get("parentUuid") {
            Some(Value::String(parent)) => Some(parent.clone()),
            Some(_) | None => None,
        };
        if uuid.is_none() {
            parent_uuid.clone_from(&main_tail_uuid);
        }

        let is_boundary =
            record_type == "system" && str_field(record, "subtype") == Some("compact_boundary");
        let is_summary = record_type == "user"
            && record.get("isCompactSummary").and_then(Value::as_bool) == Some(true);
        let mut entries = Vec::new();
        if is_boundary {
            if parent_uuid.is_none() {
                parent_uuid = str_field(record, "logicalParentUuid").map(str::to_owned);
            }
            let id = builder.ids.derive(&source_key);
            let kind = compaction_from_boundary(record, &id, &mut builder, line.line);
            entries.push(planned(line, id, &timestamp, kind));
            open_boundary = Some(records.len());
            if let Some(uuid) = &uuid {
                boundaries.insert(uuid.clone(), records.len());
            }
        } else if is_summary {
            let text = message_text(record);
            let boundary = parent_uuid
                .as_deref()
                .and_then(|parent| boundaries.get(parent).copied())
                .or(open_boundary.take());
            let filled = boundary
                .and_then(|index| records.get_mut(index))
                .and_then(|boundary| {
                    let entry = boundary.entries.first_mut()?;
                    match &mut entry.entry.kind {
                        EntryKind::Compaction(compaction) if compaction.summary.is_empty() => {
                            compaction.summary.clone_from(&text);
                            Some(entry.entry.id.clone())
                        }
                        EntryKind::Message(_)
                        | EntryKind::ThinkingLevelChange(_)
                        | EntryKind::ModelChange(_)
                        | EntryKind::Compaction(_)
                        | EntryKind::BranchSummary(_)
                        | EntryKind::Custom(_)
                        | EntryKind::CustomMessage(_)
                        | EntryKind::Label(_)
                        | EntryKind::SessionInfo(_)
                        | EntryKind::ContextEdit(_)
                        | EntryKind::Usage(_)
                        | EntryKind::Unknown { .. } => None,
                    }
                });
            match filled {
                Some(compaction_id) => {
                    // The summary record is the compaction: its children hang under that entry.
                    if let Some(uuid) = &uuid {
                        tails.insert(uuid.clone(), compaction_id);
                        if !sidechain {
                            main_tail_uuid = Some(uuid.clone());
                        }
                    }
                    continue;
                }
                None => {
                    builder.issue(line.line, IssueKind::CompactionWithoutTokenCount);
                    let id = builder.ids.derive(&source_key);
                    let kind = EntryKind::Compaction(CompactionEntry {
                        summary: text,
                        first_kept_entry_id: id.clone(),
                        tokens_before: 0,
                        details: None,
                        from_hook: None,
                        extra: JsonObject::new(),
                    });
                    entries.push(planned(line, id, &timestamp, kind));
                }
            }
        } else {
            match record_type {
                "user" => user_entries(line, &source_key, &timestamp, &mut builder, &mut entries),
                "assistant" => {
                    let id = builder.ids.derive(&source_key);
                    let kind = assistant_kind(record, &timestamp, &mut builder, line.line);
                    entries.push(planned(line, id, &timestamp, kind));
                }
                "summary" if str_field(record, "summary").is_some() => {
                    let id = builder.ids.derive(&source_key);
                    let mut extra = JsonObject::new();
                    if let Some(leaf) = record.get("leafUuid") {
                        extra.insert("leafUuid".to_owned(), leaf.clone());
                    }
                    let kind = EntryKind::SessionInfo(SessionInfoEntry {
                        name: str_field(record, "summary").map(str::to_owned),
                        extra,
                    });
                    entries.push(planned(line, id, &timestamp, kind));
                }
                "system" => {
                    let id = builder.ids.derive(&source_key);
                    entries.push(planned(
                        line,
                        id,
                        &timestamp,
                        custom_kind(FORMAT, "system", record),
                    ));
                }
                other => {
                    builder.issue(
                        line.line,
                        IssueKind::UnknownRecord {
                            record_type: other.to_owned(),
                        },
                    );
                    let id = builder.ids.derive(&source_key);
                    entries.push(planned(
                        line,
                        id,
                        &timestamp,
                        custom_kind(FORMAT, "unknown", record),
                    ));
                }
            }
        }
        // Chain the entries of one record.
        for index in 1..entries.len() {
            let previous = entries[index - 1].entry.id.clone();
            entries[index].entry.parent_id = Some(previous);
        }
        if let (Some(uuid), Some(last)) = (&uuid, entries.last()) {
            tails.insert(uuid.clone(), last.entry.id.clone());
        }
        if !sidechain && uuid.is_some() {
            main_tail_uuid.clone_from(&uuid);
        }
        records.push(Record {
            line: line.line,
            uuid,
            parent_uuid,
            sidechain,
            entries,
        });
    }
    if let Some(index) = open_boundary
        && let Some(record) = records.get(index)
    {
        builder.issue(record.line, IssueKind::CompactionWithoutSummary);
    }

    // Resolve parents, then order: sidechains (subagent runs) first, so the main conversation's
    // last entry is the file's last entry and becomes the leaf.
    let mut side: HashMap<String, bool> = HashMap::new();
    let mut side_entries = Vec::new();
    let mut main_entries = Vec::new();
    for mut record in records {
        let parent = record
            .parent_uuid
            .as_deref()
            .and_then(|parent| tails.get(parent).cloned());
        if let (Some(parent_uuid), None) = (&record.parent_uuid, &parent) {
            builder.issue(
                record.line,
                IssueKind::MissingParent {
                    parent: parent_uuid.clone(),
                },
            );
        }
        let parent_side = record
            .parent_uuid
            .as_deref()
            .map(|parent| side.get(parent).copied().unwrap_or(false));
        let is_side = record.sidechain && parent_side.unwrap_or(true);
        if let Some(uuid) = &record.uuid {
            side.insert(uuid.clone(), is_side);
        }
        if let Some(first) = record.entries.first_mut() {
            first.entry.parent_id = parent;
        }
        if is_side {
            side_entries.extend(record.entries);
        } else {
            main_entries.extend(record.entries);
        }
    }
    side_entries.extend(main_entries);
    let header = header(FORMAT, &session_id, start, cwd);
    Ok(builder.finish(FORMAT, header, side_entries, source.lines.len()))
}

pub(super) fn planned(line: &SourceLine, id: String, timestamp: &str, kind: EntryKind) -> Planned {
    Planned {
        line: line.line,
        entry: SessionEntry {
            id,
            parent_id: None,
            timestamp: timestamp.to_owned(),
            kind,
        },
    }
}

pub(super) fn message_of(record: &JsonObject) -> Option<&JsonObject> {
    record.get("message").and_then(Value::as_object)
}

/// The text of a record's message: a string content, or its text blocks joined by blank lines.
fn message_text(record: &JsonObject) -> String {
    match message_of(record).and_then(|message| message.get("content")) {
        Some(Value::String(text)) => text.clone(),
        Some(Value::Array(blocks)) => blocks
            .iter()
            .filter_map(|block| block.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n\n"),
        Some(_) | None => String::new(),
    }
}

fn compaction_from_boundary(
    record: &JsonObject,
    id: &str,
    builder: &mut Builder,
    line: usize,
) -> EntryKind {
    let metadata = record
        .get("compactMetadata")
        .or_else(|| record.get("compact_metadata"))
        .and_then(Value::as_object);
    let tokens = metadata.and_then(|metadata| {
        metadata
            .get("preTokens")
            .or_else(|| metadata.get("pre_tokens"))
            .and_then(value_as_u64)
    });
    if tokens.is_none() {
        builder.issue(line, IssueKind::CompactionWithoutTokenCount);
    }
    let files = metadata
        .and_then(|metadata| metadata.get("filesIncluded"))
        .cloned()
        .unwrap_or(Value::Array(Vec::new()));
    let mut details = JsonObject::new();
    details.insert("readFiles".to_owned(), files);
    details.insert("modifiedFiles".to_owned(), Value::Array(Vec::new()));
    let mut extra = JsonObject::new();
    if let Some(metadata) = metadata {
        extra.insert(
            "compactMetadata".to_owned(),
            Value::Object(metadata.clone()),
        );
    }
    EntryKind::Compaction(CompactionEntry {
        summary: String::new(),
        // Claude Code keeps nothing verbatim: the summary replaces all earlier history. An id that
        // is not on the path before the compaction (its own) keeps nothing.
        first_kept_entry_id: id.to_owned(),
        tokens_before: tokens.unwrap_or(0),
        details: Some(Value::Object(details)),
        from_hook: None,
        extra,
    })
}
