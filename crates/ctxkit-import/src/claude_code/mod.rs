//! Claude Code transcripts (`~/.claude/projects/<escaped cwd>/<session id>.jsonl`) → v3 entries.
//!
//! Records link by `uuid`/`parentUuid`; a user record's `tool_result` blocks become `toolResult`
//! messages, a `system` record with `subtype: "compact_boundary"` and the `isCompactSummary` user
//! record after it become one `compaction` entry, `summary` records set the session name, and every
//! other record is kept as a `custom` entry. Facts and sources: `docs/import-formats.md`.

mod linear;
mod local;
mod messages;
mod progress;
mod reader;
mod uuids;

use std::collections::HashMap;
use std::path::Path;

use ctxkit_protocol::{CompactionEntry, EntryKind, JsonObject, SessionEntry, value_as_u64};
use serde_json::Value;

use crate::builder::{Builder, Planned, header};
use crate::error::ImportError;
use crate::report::IssueKind;
use crate::source::{SourceFile, SourceLine, str_field};
use crate::stored::Stored;
use crate::{ImportedSession, SourceFormat};
use reader::{ReadRecords, RecordReader};
use uuids::{Sym, Uuids};

const FORMAT: SourceFormat = SourceFormat::ClaudeCode;

/// Record types Claude Code writes that carry nothing its model is shown: kept as `custom` entries
/// `import.claude-code.<type>`, not reported as unknown.
const QUIET_RECORDS: &[&str] = &[
    "progress",
    "ai-title",
    "file-history-snapshot",
    "file-history-delta",
    "queue-operation",
    "permission-mode",
    "last-prompt",
    "teleported-from",
    "teleport-skipped-branch",
    "away_summary",
    "attachment",
    "mode",
    "memory-mode",
    "bridge-session",
    "agent-name",
    "agent-color",
    "agent-setting",
    "tag",
    "pr-link",
    "frame-link",
    "relocated",
    "continued-in",
    "ended-by-model",
    "worktree-state",
    "cost-state",
    "isolation-latch",
    "atis-latch",
    "dev-mods",
    "history-suppression",
    "attribution-snapshot",
    "content-replacement",
    "fork-context-ref",
    "observer-ref",
    "api-request",
    "api-request-shape",
    "api-request-blob",
    "artifact-comment-monitor",
    "artifact-autoreact-ledger",
];

/// The entries one source record became, before parents are resolved; its uuids by number
/// (`uuids`), so a record takes about 60 bytes beside its entries.
#[derive(Debug)]
struct Record {
    line: usize,
    uuid: Option<Sym>,
    parent_uuid: Option<Sym>,
    /// `message.id` of an assistant record: the API reply it is (a fragment of).
    message_id: Option<Sym>,
    /// The uuid of the record this one was merged into.
    alias_of: Option<Sym>,
    /// A compaction boundary's parent when its logical parent is not in the file: the main-line
    /// record written before it, so the history before the compaction stays on the path.
    fallback_parent_uuid: Option<Sym>,
    /// A compaction boundary's `preservedSegment.headUuid`: the first record Claude Code kept
    /// verbatim after its summary.
    kept_head_uuid: Option<Sym>,
    sidechain: bool,
    /// A user record holding `tool_result` blocks.
    tool_results: bool,
    /// A `user` or `assistant` record (a message of the conversation).
    conversational: bool,
    /// A user record of a local command (`local::is_local_command`).
    local_command: bool,
    /// A `progress` record (hook and tool progress), which is no part of the conversation.
    progress: bool,
    /// Merged into another record (a fragment of the same reply); writes nothing.
    removed: bool,
    entries: Vec<Stored>,
}

/// Converts a Claude Code transcript.
pub fn convert_claude_code(source: &SourceFile) -> Result<ImportedSession, ImportError> {
    if source.lines.is_empty() {
        return Err(ImportError::Empty {
            path: source.path.clone(),
        });
    }
    let mut outline = Outline::default();
    for line in &source.lines {
        outline.observe(&line.record);
    }
    let mut reader = RecordReader::new(source.issues.clone(), &outline);
    for line in &source.lines {
        reader.read(line);
    }
    Ok(finish(reader, outline, &source.path))
}

/// Converts the Claude Code transcript at `path` (a file [`crate::source::reads_by_line`]) reading
/// it twice a record at a time, never holding its records: once for what the whole file decides
/// (the session's identity, whether the user titled it, whether it is all sidechain), once to
/// convert. Gives what [`convert_claude_code`] gives for the file read whole.
pub(crate) fn convert_claude_code_file(path: &Path) -> Result<ImportedSession, ImportError> {
    let mut outline = Outline::default();
    let issues = crate::source::for_each_record(path, |line| {
        outline.observe(&line.record);
        true
    })?;
    if outline.records == 0 {
        return Err(ImportError::Empty {
            path: path.to_owned(),
        });
    }
    let mut reader = RecordReader::new(issues, &outline);
    crate::source::for_each_record(path, |line| {
        reader.read(line);
        true
    })?;
    Ok(finish(reader, outline, path))
}

fn finish(reader: RecordReader, outline: Outline, path: &Path) -> ImportedSession {
    let ReadRecords {
        mut builder,
        mut records,
        uuids,
        open_boundary,
    } = reader.finish();
    progress::relink_past_progress(&mut records, uuids.len());
    linear::relink_parallel_calls(&mut records, uuids.len());
    if let Some(index) = open_boundary
        && let Some(record) = records.get(index)
    {
        builder.issue(record.line, IssueKind::CompactionWithoutSummary);
    }
    let entries = link_records(records, &uuids, &mut builder);
    let identity = Identity::of(&outline, path);
    let cwd = outline.cwd.as_deref().unwrap_or_default();
    let mut header = header(FORMAT, &identity.session_id, outline.start(), cwd);
    if let Some(parent) = identity.parent_session_id {
        crate::builder::set_parent_session_id(&mut header, &parent);
    }
    builder.finish(FORMAT, header, entries, outline.records)
}

/// What the whole transcript decides, gathered a record at a time: the first `sessionId`, `cwd`
/// and `timestamp` any record gives, whether a `custom-title` record exists, and whether every
/// record with a uuid is a sidechain.
#[derive(Debug, Default)]
pub(super) struct Outline {
    records: usize,
    session_id: Option<String>,
    cwd: Option<String>,
    start: Option<String>,
    pub(super) user_titled: bool,
    /// A record with a uuid outside a sidechain.
    pub(super) some_main_record: bool,
}

impl Outline {
    fn observe(&mut self, record: &JsonObject) {
        self.records += 1;
        for (slot, key) in [
            (&mut self.session_id, "sessionId"),
            (&mut self.cwd, "cwd"),
            (&mut self.start, "timestamp"),
        ] {
            if slot.is_none() {
                *slot = str_field(record, key).map(str::to_owned);
            }
        }
        self.user_titled |= str_field(record, "type") == Some("custom-title");
        self.some_main_record |= record.contains_key("uuid")
            && record.get("isSidechain").and_then(Value::as_bool) != Some(true);
    }

    /// The first timestamp a record gives, or an empty one.
    pub(super) fn start(&self) -> &str {
        self.start.as_deref().unwrap_or_default()
    }
}

/// Which session a transcript is.
struct Identity {
    session_id: String,
    /// A subagent's transcript: the session it ran in.
    parent_session_id: Option<String>,
}

impl Identity {
    fn of(outline: &Outline, path: &Path) -> Self {
        let recorded_id = outline.session_id.clone();
        let stem = path
            .file_stem()
            .map(|stem| stem.to_string_lossy().into_owned());
        // A subagent transcript (`agent-<id>.jsonl`) carries its parent's `sessionId`: the session
        // is named after the file, and the parent is remembered.
        let subagent_stem = stem.clone().filter(|stem| stem.starts_with("agent-"));
        let parent_session_id = subagent_stem.as_ref().and(recorded_id.clone());
        Self {
            session_id: subagent_stem.or(recorded_id).or(stem).unwrap_or_default(),
            parent_session_id,
        }
    }
}

/// The entry a record hangs under. A parent that is not in the file makes a root, except for a
/// compaction boundary, which continues from the record written before it.
fn record_parent(record: &Record, uuids: &Uuids, builder: &mut Builder) -> Option<String> {
    let parent_uuid = record.parent_uuid?;
    if let Some(parent) = uuids.tail(parent_uuid) {
        return Some(parent);
    }
    let fallback = record
        .fallback_parent_uuid
        .and_then(|fallback| uuids.tail(fallback));
    let parent = uuids.parent_text(parent_uuid);
    let kind = match fallback {
        Some(_) => IssueKind::BoundaryParentMissing { parent },
        None => IssueKind::MissingParent { parent },
    };
    builder.issue(record.line, kind);
    fallback
}

/// A boundary that names the segment Claude Code kept verbatim keeps it: the compaction's first kept
/// entry is the segment's first record (on the path before the compaction, as Pi reads it).
fn keep_preserved_segment(record: &mut Record, first_entries: &HashMap<Sym, String>) {
    let Some(head) = record
        .kept_head_uuid
        .and_then(|head| first_entries.get(&head))
    else {
        return;
    };
    if let Some(compaction) = record
        .entries
        .first_mut()
        .and_then(Stored::kind_mut)
        .and_then(EntryKind::as_compaction_mut)
    {
        compaction.first_kept_entry_id.clone_from(head);
    }
}

/// Resolves each record's parent entry, then orders the entries: sidechains (subagent runs), stray
/// bookkeeping roots and a trailing chain of no conversation (`local`) first, so the main
/// conversation's last entry is the file's last entry and becomes the leaf.
fn link_records(records: Vec<Record>, uuids: &Uuids, builder: &mut Builder) -> Vec<Stored> {
    // Only the heads of kept segments are looked up here.
    let heads: std::collections::HashSet<Sym> = records
        .iter()
        .filter_map(|record| record.kept_head_uuid)
        .collect();
    let first_entries: HashMap<Sym, String> = records
        .iter()
        .filter(|record| record.uuid.is_some_and(|uuid| heads.contains(&uuid)))
        .filter_map(|record| Some((record.uuid?, record.entries.first()?.id.clone())))
        .collect();
    drop(heads);
    // Per uuid: whether its record went to the sidechains (none: no record has it yet).
    let mut side: Vec<Option<bool>> = vec![None; uuids.len()];
    let entry_count = records.iter().map(|record| record.entries.len()).sum();
    let side_count = records
        .iter()
        .filter(|record| record.sidechain && !record.removed)
        .map(|record| record.entries.len())
        .sum();
    // The main line's vector takes the sidechains in front at the end without growing.
    let mut side_entries = Vec::with_capacity(side_count);
    let mut main_entries = Vec::with_capacity(entry_count);
    let local_chain =
        local::trailing_chain_without_conversation(&records, |parent| uuids.has_tail(parent));
    for (index, mut record) in records.into_iter().enumerate() {
        if record.removed {
            continue;
        }
        let parent = record_parent(&record, uuids, builder);
        // A record of no conversation (a `turn_duration`, progress) whose parent is not in the file
        // would be a root at the file's end, so the leaf, and leave the conversation off its path:
        // it goes in front with the sidechains, as does a trailing chain of local commands and
        // bookkeeping from a root (`local`).
        let stray = (parent.is_none()
            && record.parent_uuid.is_some()
            && !record.entries.iter().any(Stored::is_conversation))
            || local_chain.is_some_and(|start| index >= start && !record.sidechain);
        keep_preserved_segment(&mut record, &first_entries);
        let parent_side = record
            .parent_uuid
            .map(|parent| side.get(parent.index()).copied().flatten().unwrap_or(false));
        let is_side = record.sidechain && parent_side.unwrap_or(true);
        if let Some(slot) = record.uuid.and_then(|uuid| side.get_mut(uuid.index())) {
            *slot = Some(is_side);
        }
        if let Some(first) = record.entries.first_mut() {
            first.parent_id = parent;
        }
        if is_side || stray {
            side_entries.extend(record.entries);
        } else {
            main_entries.extend(record.entries);
        }
    }
    if !side_entries.is_empty() {
        main_entries.splice(0..0, side_entries);
    }
    main_entries
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

/// The name a `summary`, `ai-title` or `custom-title` record gives the session.
fn title(record: &JsonObject) -> Option<&str> {
    str_field(record, "summary")
        .or_else(|| str_field(record, "customTitle"))
        .or_else(|| str_field(record, "aiTitle"))
        .or_else(|| str_field(record, "title"))
}

/// Whether a user record's content holds `tool_result` blocks.
fn has_tool_results(record: &JsonObject) -> bool {
    message_of(record)
        .and_then(|message| message.get("content"))
        .and_then(Value::as_array)
        .is_some_and(|blocks| {
            blocks
                .iter()
                .any(|block| block.get("type").and_then(Value::as_str) == Some("tool_result"))
        })
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
