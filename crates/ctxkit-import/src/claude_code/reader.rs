//! Reading a Claude Code transcript record by record: the entries each record becomes, with what
//! linking them needs later (its uuid and parent, whether it is a sidechain, the reply it belongs
//! to). A compaction is a `compact_boundary` record and the `isCompactSummary` user record after it,
//! read as one `compaction` entry.

use std::collections::HashMap;

use ctxkit_protocol::{CompactionEntry, EntryKind, JsonObject, ModelChangeEntry, SessionInfoEntry};
use serde_json::Value;

use super::messages::{assistant_kind, is_placeholder_model, queued_prompt, user_entries};
use super::{
    FORMAT, Outline, QUIET_RECORDS, Record, Sym, Uuids, compaction_from_boundary, has_tool_results,
    message_of, message_text, planned, title,
};
use crate::builder::{Builder, Planned, custom_kind, normalize_timestamp};
use crate::report::{ImportIssue, IssueKind};
use crate::source::{SourceLine, str_field};
use crate::stored::Stored;

/// What a record's entries need from it, read once.
struct RecordHead<'line> {
    line: &'line SourceLine,
    record_type: &'line str,
    uuid: Option<String>,
    /// The uuid's number.
    sym: Option<Sym>,
    /// The record's uuid, or for a record without one its line and content.
    source_key: String,
    timestamp: String,
    sidechain: bool,
}

impl RecordHead<'_> {
    fn record(&self) -> &JsonObject {
        &self.line.record
    }

    fn planned(&self, id: String, kind: EntryKind) -> Planned {
        planned(self.line, id, &self.timestamp, kind)
    }
}

/// The records read so far and what reading the next one needs.
pub(super) struct RecordReader {
    builder: Builder,
    records: Vec<Record>,
    /// The uuids by number, with the id of each record's last entry, for parents and aliases.
    uuids: Uuids,
    /// uuid of a `compact_boundary` record → its record index.
    boundaries: HashMap<Sym, usize>,
    /// The last boundary not yet given its summary.
    open_boundary: Option<usize>,
    /// A record without a timestamp takes the one before it.
    last_timestamp: String,
    /// The main conversation's last record: the parent of records without a uuid.
    main_tail_uuid: Option<Sym>,
    /// The main line's last real model (not a placeholder).
    model: Option<String>,
    /// The last real model of a sidechain record (a subagent may run another model).
    sidechain_model: Option<String>,
    /// A title the user set wins over the ones Claude Code generates.
    user_titled: bool,
    /// A subagent's own file is all sidechain: its model changes are its main line's.
    all_sidechain: bool,
}

/// What reading a whole transcript gave.
pub(super) struct ReadRecords {
    pub(super) builder: Builder,
    pub(super) records: Vec<Record>,
    pub(super) uuids: Uuids,
    pub(super) open_boundary: Option<usize>,
}

impl RecordReader {
    /// A reader of a transcript whose lines had the problems `issues`, outlined by `outline`.
    pub(super) fn new(issues: Vec<ImportIssue>, outline: &Outline) -> Self {
        Self {
            builder: Builder::new(issues),
            records: Vec::new(),
            uuids: Uuids::default(),
            boundaries: HashMap::new(),
            open_boundary: None,
            last_timestamp: normalize_timestamp(outline.start()).unwrap_or_default(),
            main_tail_uuid: None,
            model: None,
            sidechain_model: None,
            user_titled: outline.user_titled,
            all_sidechain: !outline.some_main_record,
        }
    }

    pub(super) fn finish(self) -> ReadRecords {
        ReadRecords {
            builder: self.builder,
            records: self.records,
            uuids: self.uuids,
            open_boundary: self.open_boundary,
        }
    }

    /// Reads one record into its entries.
    pub(super) fn read(&mut self, line: &SourceLine) {
        let head = self.head(line);
        let record = head.record();
        let mut parent_uuid = match record.get("parentUuid") {
            Some(Value::String(parent)) => Some(self.uuids.intern_parent(parent)),
            Some(_) | None => None,
        };
        if head.uuid.is_none() {
            parent_uuid = self.main_tail_uuid;
        }
        let is_boundary = head.record_type == "system"
            && str_field(record, "subtype") == Some("compact_boundary");
        let is_summary = head.record_type == "user"
            && record.get("isCompactSummary").and_then(Value::as_bool) == Some(true);
        let mut boundary_links = (None, None);
        let entries = if is_boundary {
            if parent_uuid.is_none() {
                parent_uuid = str_field(record, "logicalParentUuid")
                    .map(|parent| self.uuids.intern_parent(parent));
                boundary_links.0 = self.main_tail_uuid;
            }
            boundary_links.1 = preserved_head(record).map(|head| self.uuids.intern(head));
            self.boundary_entries(&head)
        } else if is_summary {
            match self.compact_summary(&head, parent_uuid) {
                Some(entries) => entries,
                // Merged into its boundary's compaction: the record writes nothing of its own.
                None => return,
            }
        } else {
            self.record_entries(&head)
        };
        self.push(head, parent_uuid, entries);
        if let (Some(record), (fallback, kept_head)) = (self.records.last_mut(), boundary_links) {
            record.fallback_parent_uuid = fallback;
            record.kept_head_uuid = kept_head;
        }
    }

    /// The record's type, uuid, key, timestamp and side; a repeated uuid is reported.
    fn head<'line>(&mut self, line: &'line SourceLine) -> RecordHead<'line> {
        let record = &line.record;
        let timestamp = str_field(record, "timestamp")
            .and_then(normalize_timestamp)
            .unwrap_or_else(|| self.last_timestamp.clone());
        self.last_timestamp.clone_from(&timestamp);
        let uuid = str_field(record, "uuid").map(str::to_owned);
        let mut sym = uuid.as_deref().map(|uuid| self.uuids.intern(uuid));
        let source_key = match &uuid {
            Some(uuid) => {
                if sym.is_some_and(|sym| self.uuids.has_tail(sym)) {
                    self.builder.issue(
                        line.line,
                        IssueKind::DuplicateId {
                            source_id: uuid.clone(),
                        },
                    );
                    sym = Some(self.uuids.intern_again(uuid));
                }
                uuid.clone()
            }
            None => format!("line:{}:{}", line.line, Value::Object(record.clone())),
        };
        RecordHead {
            line,
            record_type: str_field(record, "type").unwrap_or_default(),
            uuid,
            sym,
            source_key,
            timestamp,
            sidechain: record.get("isSidechain").and_then(Value::as_bool) == Some(true),
        }
    }

    /// A `compact_boundary` record: a `compaction` entry waiting for its summary record.
    fn boundary_entries(&mut self, head: &RecordHead<'_>) -> Vec<Planned> {
        let id = self.builder.ids.derive(&head.source_key);
        let kind = compaction_from_boundary(head.record(), &id, &mut self.builder, head.line.line);
        self.open_boundary = Some(self.records.len());
        if let Some(sym) = head.sym {
            self.boundaries.insert(sym, self.records.len());
        }
        vec![head.planned(id, kind)]
    }

    /// An `isCompactSummary` user record: its text fills its boundary's compaction (`None`: the
    /// record's children hang under that entry), or without a boundary waiting it is a compaction
    /// of its own.
    fn compact_summary(
        &mut self,
        head: &RecordHead<'_>,
        parent_uuid: Option<Sym>,
    ) -> Option<Vec<Planned>> {
        let text = message_text(head.record());
        let open = self.open_boundary.take();
        let boundary = parent_uuid
            .and_then(|parent| self.boundaries.get(&parent).copied())
            .or(open);
        let filled = boundary
            .and_then(|index| self.records.get_mut(index))
            .and_then(|boundary| fill_summary(boundary, &text));
        if let Some(compaction_id) = filled {
            if let Some(sym) = head.sym {
                self.uuids.set_tail(sym, &compaction_id);
                if !head.sidechain {
                    self.main_tail_uuid = Some(sym);
                }
            }
            return None;
        }
        self.builder
            .issue(head.line.line, IssueKind::CompactionWithoutTokenCount);
        let id = self.builder.ids.derive(&head.source_key);
        let kind = EntryKind::Compaction(CompactionEntry {
            summary: text,
            first_kept_entry_id: id.clone(),
            tokens_before: 0,
            details: None,
            from_hook: None,
            extra: JsonObject::new(),
        });
        Some(vec![head.planned(id, kind)])
    }

    /// Every record other than a compaction's: messages, titles, and records kept as data.
    fn record_entries(&mut self, head: &RecordHead<'_>) -> Vec<Planned> {
        let record = head.record();
        let mut entries = Vec::new();
        match head.record_type {
            "user" => user_entries(
                head.line,
                &head.source_key,
                &head.timestamp,
                &mut self.builder,
                &mut entries,
            ),
            "assistant" => self.assistant_entries(head, &mut entries),
            "summary" | "ai-title" | "custom-title"
                if title(record).is_some()
                    && !(head.record_type == "ai-title" && self.user_titled) =>
            {
                let id = self.builder.ids.derive(&head.source_key);
                entries.push(head.planned(id, title_kind(record)));
            }
            quiet if QUIET_RECORDS.contains(&quiet) => {
                let id = self.builder.ids.derive(&head.source_key);
                let kind = queued_prompt(record, &head.timestamp)
                    .unwrap_or_else(|| custom_kind(FORMAT, quiet, record));
                entries.push(head.planned(id, kind));
            }
            "system" => {
                let id = self.builder.ids.derive(&head.source_key);
                entries.push(head.planned(id, custom_kind(FORMAT, "system", record)));
            }
            other => {
                self.builder.issue(
                    head.line.line,
                    IssueKind::UnknownRecord {
                        record_type: other.to_owned(),
                    },
                );
                let id = self.builder.ids.derive(&head.source_key);
                entries.push(head.planned(id, custom_kind(FORMAT, "unknown", record)));
            }
        }
        entries
    }

    /// An assistant record: a `model_change` first when its model is a new one on the main line.
    fn assistant_entries(&mut self, head: &RecordHead<'_>, entries: &mut Vec<Planned>) {
        let record = head.record();
        let this_model = message_of(record)
            .and_then(|message| str_field(message, "model"))
            .filter(|name| !is_placeholder_model(name));
        let main_line = !head.sidechain || self.all_sidechain;
        if !main_line && let Some(this_model) = this_model {
            self.sidechain_model = Some(this_model.to_owned());
        }
        if main_line
            && let Some(this_model) = this_model
            && self.model.as_deref() != Some(this_model)
        {
            self.model = Some(this_model.to_owned());
            let id = self
                .builder
                .ids
                .derive(&format!("{}#model", head.source_key));
            let kind = EntryKind::ModelChange(ModelChangeEntry {
                provider: "anthropic".to_owned(),
                model_id: this_model.to_owned(),
                extra: JsonObject::new(),
            });
            entries.push(head.planned(id, kind));
        }
        let model_in_use = if main_line {
            self.model.as_deref()
        } else {
            self.sidechain_model.as_deref()
        };
        let id = self.builder.ids.derive(&head.source_key);
        let kind = assistant_kind(
            record,
            &head.timestamp,
            model_in_use,
            &mut self.builder,
            head.line.line,
        );
        entries.push(head.planned(id, kind));
    }

    /// Chains the entries of one record and remembers the record.
    fn push(&mut self, head: RecordHead<'_>, parent_uuid: Option<Sym>, mut entries: Vec<Planned>) {
        for index in 1..entries.len() {
            let previous = entries[index - 1].entry.id.clone();
            entries[index].entry.parent_id = Some(previous);
        }
        if let (Some(sym), Some(last)) = (head.sym, entries.last()) {
            self.uuids.set_tail(sym, &last.entry.id);
        }
        let conversational = entries
            .iter()
            .any(|planned| matches!(planned.entry.kind, EntryKind::Message(_)));
        // Each entry written as its line now (`stored`); the records of a long transcript are
        // held until the end.
        // A new vector: collected in place, the entries' vector (472 bytes an entry) would be kept.
        let mut stored = Vec::with_capacity(entries.len());
        stored.extend(entries.into_iter().map(Stored::from));
        let entries = stored;
        if !head.sidechain && head.sym.is_some() {
            self.main_tail_uuid = head.sym;
        }
        let record = &head.line.record;
        let message_id = (head.record_type == "assistant")
            .then(|| message_of(record).and_then(|message| str_field(message, "id")))
            .flatten()
            .map(|message_id| self.uuids.intern(message_id));
        self.records.push(Record {
            line: head.line.line,
            uuid: head.sym,
            parent_uuid,
            sidechain: head.sidechain,
            message_id,
            tool_results: head.record_type == "user" && has_tool_results(record),
            conversational,
            local_command: super::local::is_local_command(record),
            progress: head.record_type == "progress",
            removed: false,
            alias_of: None,
            fallback_parent_uuid: None,
            kept_head_uuid: None,
            entries,
        });
    }
}

/// `compactMetadata.preservedSegment.headUuid` of a boundary record.
fn preserved_head(record: &JsonObject) -> Option<&str> {
    let metadata = record
        .get("compactMetadata")
        .or_else(|| record.get("compact_metadata"))?;
    let segment = metadata
        .get("preservedSegment")
        .or_else(|| metadata.get("preserved_segment"))?;
    segment
        .get("headUuid")
        .or_else(|| segment.get("head_uuid"))
        .and_then(Value::as_str)
}

/// Puts a summary's text into a boundary record's compaction still without one; its entry id.
fn fill_summary(boundary: &mut Record, text: &str) -> Option<String> {
    let entry = boundary.entries.first_mut()?;
    let compaction = entry.kind_mut()?.as_compaction_mut()?;
    if !compaction.summary.is_empty() {
        return None;
    }
    compaction.summary = text.to_owned();
    Some(entry.id.clone())
}

/// The `session_info` a title record becomes, keeping its `leafUuid`.
fn title_kind(record: &JsonObject) -> EntryKind {
    let mut extra = JsonObject::new();
    if let Some(leaf) = record.get("leafUuid") {
        extra.insert("leafUuid".to_owned(), leaf.clone());
    }
    EntryKind::SessionInfo(SessionInfoEntry {
        name: title(record).map(str::to_owned),
        extra,
    })
}
