//! Codex rollouts (`~/.codex/sessions/YYYY/MM/DD/rollout-<time>-<id>.jsonl`) → v3 entries.
//!
//! Today's lines are `{timestamp, type, payload}`; older rollouts have a bare session line, bare
//! `ResponseItem`s and `{"record_type": "state"}` lines, and the oldest are one JSON document
//! `{session, items}` (`legacy`). A rollout is linear, so entries form one chain, except that the turns
//! a `thread_rolled_back` event undoes become a side branch (`turns`); ids derive from the session id
//! and the line number. `response_item`s become messages (`items`), `compacted` with a
//! becomes a `compaction` entry on the same thread (tokens from the last `token_count` event; a remote
//! compaction, whose summary is encrypted, is followed by the history Codex kept), `turn_context` a
//! `model_change` when the model changes, and every other record a `custom` entry. Facts and sources:
//! `docs/import-formats.md`.

mod batches;
mod items;
mod legacy;
mod turns;
mod usage;

use ctxkit_protocol::{
    AgentMessage, CompactionEntry, EntryKind, JsonObject, ModelChangeEntry, SessionEntry,
    value_as_u64,
};
use serde_json::Value;

use crate::builder::{Builder, Planned, custom_kind, header, normalize_timestamp};
use crate::error::ImportError;
use crate::report::{ImportIssue, IssueKind};
use crate::source::{SourceFile, str_field};
use crate::stored::Stored;
use crate::{ImportedSession, SourceFormat};
use items::response_item;
pub(crate) use legacy::{Line, classify, is_rollout_record, parent_thread_id};

const FORMAT: SourceFormat = SourceFormat::Codex;

/// Running state while walking the rollout.
#[derive(Debug, Default)]
struct State {
    model: Option<String>,
    provider: Option<String>,
    /// Context tokens of the last `token_count` event.
    last_tokens: Option<u64>,
}

/// The summary of a remote compaction: Codex keeps it encrypted, so none is readable.
pub const REMOTE_COMPACTION_SUMMARY: &str = "Codex compacted this conversation on the server; its \
summary is encrypted and cannot be read here. The conversation continues from the messages Codex \
kept, which follow.";

/// Converts a Codex rollout.
pub fn convert_codex(source: &SourceFile) -> Result<ImportedSession, ImportError> {
    if source.lines.is_empty() {
        return Err(ImportError::Empty {
            path: source.path.clone(),
        });
    }
    let lines = legacy::rollout_lines(source);
    let mut outline = Outline::default();
    for line in &lines {
        outline.observe(line);
    }
    let mut converter = Converter::new(outline, &source.path, source.issues.clone());
    for line in &lines {
        converter.read(line);
    }
    Ok(converter.finish(source.lines.len()))
}

/// Converts the rollout at `path` (a file [`crate::source::reads_by_line`]) reading it twice a
/// record at a time, never holding its records: once for its metadata and identity, once to
/// convert. Gives what [`convert_codex`] gives for the file read whole.
pub(crate) fn convert_codex_file(path: &std::path::Path) -> Result<ImportedSession, ImportError> {
    let mut outline = Outline::default();
    let mut records = 0;
    let issues = crate::source::for_each_record(path, |line| {
        records += 1;
        legacy::expand(line, |rollout_line| outline.observe(&rollout_line));
        true
    })?;
    if records == 0 {
        return Err(ImportError::Empty {
            path: path.to_owned(),
        });
    }
    let mut converter = Converter::new(outline, path, issues);
    crate::source::for_each_record(path, |line| {
        legacy::expand(line, |rollout_line| converter.read(&rollout_line));
        true
    })?;
    Ok(converter.finish(records))
}

/// What the whole rollout decides, gathered a line at a time: its first `session_meta` payload,
/// the first `<cwd>` of an environment context and the first timestamp.
#[derive(Debug, Default)]
struct Outline {
    meta: Option<JsonObject>,
    context_cwd: Option<String>,
    first_timestamp: Option<String>,
    usage: usage::CallUsage,
}

impl Outline {
    fn observe(&mut self, line: &legacy::RolloutLine<'_>) {
        self.usage.observe(line);
        if self.meta.is_none()
            && let Line::Meta(meta) = classify(&line.record)
        {
            self.meta = Some(meta.clone());
        }
        if self.context_cwd.is_none() {
            self.context_cwd = legacy::cwd_from_environment_context(line);
        }
        if self.first_timestamp.is_none() {
            self.first_timestamp = str_field(&line.record, "timestamp").map(str::to_owned);
        }
    }
}

/// The rollout's lines becoming one chain of entries.
struct Converter {
    meta: Option<JsonObject>,
    identity: Identity,
    state: State,
    builder: Builder,
    planned: Vec<Stored>,
    last_timestamp: String,
    /// The entry the next one hangs under: the last one, or after a rollback the entry before
    /// the first undone turn.
    tip: Option<String>,
    turns: turns::Turns,
    /// The usage of each model call, by the line of its last reply.
    usage: usage::CallUsage,
    /// The run of parallel calls being gathered into one message.
    batches: batches::Batches,
}

impl Converter {
    fn new(mut outline: Outline, path: &std::path::Path, issues: Vec<ImportIssue>) -> Self {
        let identity = Identity::of(path, &outline);
        outline.usage.finish();
        let meta = outline.meta;
        Self {
            state: State {
                provider: meta
                    .as_ref()
                    .and_then(|meta| str_field(meta, "model_provider"))
                    .map(str::to_owned),
                ..State::default()
            },
            last_timestamp: normalize_timestamp(&identity.start).unwrap_or_default(),
            meta,
            identity,
            builder: Builder::new(issues),
            planned: Vec::new(),
            tip: None,
            turns: turns::Turns::default(),
            usage: outline.usage,
            batches: batches::Batches::default(),
        }
    }

    fn read(&mut self, line: &legacy::RolloutLine<'_>) {
        let timestamp = str_field(&line.record, "timestamp")
            .and_then(normalize_timestamp)
            .unwrap_or_else(|| self.last_timestamp.clone());
        self.last_timestamp.clone_from(&timestamp);
        if let Some(count) = turns::rolled_back_turns(&line.record) {
            let released = self.batches.release();
            self.chain(released);
            if let Some(parent) = self.turns.roll_back(count) {
                self.tip = parent;
            }
        }
        let mut emitted = line_entries(line, &timestamp, &mut self.state, &mut self.builder);
        if let Some(counts) = self.usage.take(&line.key) {
            record_usage(&mut emitted, counts);
        }
        let session_id = self.identity.session_id.clone();
        for (index, mut kind) in emitted.into_iter().enumerate() {
            if self.batches.absorb(&mut kind) {
                continue;
            }
            let key = if index == 0 {
                format!("{session_id}:{}", line.key)
            } else {
                format!("{session_id}:{}#{index}", line.key)
            };
            let id = self.builder.ids.derive(&key);
            let released = self.batches.place(batches::Pending {
                line: line.line,
                kind: keeping_nothing_before(kind, &id),
                id,
                timestamp: timestamp.clone(),
            });
            self.chain(released);
        }
    }

    /// Hangs `entries` one under the other below the tip, in order.
    fn chain(&mut self, entries: Vec<batches::Pending>) {
        for pending in entries {
            let parent_id = self.tip.replace(pending.id.clone());
            self.turns.observe(&pending.kind, parent_id.as_ref());
            self.planned.push(Stored::from(Planned {
                line: pending.line,
                entry: SessionEntry {
                    kind: pending.kind,
                    id: pending.id,
                    parent_id,
                    timestamp: pending.timestamp,
                },
            }));
        }
    }

    fn finish(mut self, records: usize) -> ImportedSession {
        let released = self.batches.release();
        self.chain(released);
        let Identity {
            session_id,
            cwd,
            start,
        } = &self.identity;
        let mut header = header(FORMAT, session_id, start, cwd);
        if let Some(parent) = self.meta.as_ref().and_then(legacy::parent_thread_id) {
            crate::builder::set_parent_session_id(&mut header, parent);
        }
        self.builder.finish(FORMAT, header, self.planned, records)
    }
}

/// Which session a rollout is, and where and when it started.
struct Identity {
    session_id: String,
    cwd: String,
    start: String,
}

impl Identity {
    /// From the session's metadata line, else the file name, the environment context and the
    /// first timestamp.
    fn of(path: &std::path::Path, outline: &Outline) -> Self {
        let meta = outline.meta.as_ref();
        let session_id = meta
            .and_then(|meta| str_field(meta, "id"))
            .map(str::to_owned)
            .or_else(|| {
                path.file_stem()
                    .map(|stem| stem.to_string_lossy().into_owned())
            })
            .unwrap_or_default();
        let cwd = meta
            .and_then(|meta| str_field(meta, "cwd"))
            .map(str::to_owned)
            .or_else(|| outline.context_cwd.clone())
            .unwrap_or_default();
        let start = meta
            .and_then(|meta| str_field(meta, "timestamp"))
            .map(str::to_owned)
            .or_else(|| outline.first_timestamp.clone())
            .unwrap_or_default();
        Self {
            session_id,
            cwd,
            start,
        }
    }
}

/// The entries one rollout line becomes.
fn line_entries(
    line: &legacy::RolloutLine<'_>,
    timestamp: &str,
    state: &mut State,
    builder: &mut Builder,
) -> Vec<EntryKind> {
    let record = &line.record;
    match classify(record) {
        Line::Meta(_) => vec![custom_kind(FORMAT, "session_meta", record)],
        Line::Item(payload) => response_item(payload, record, timestamp, state, builder, line.line),
        Line::Compacted(payload) => {
            compacted(payload, record, timestamp, state, builder, line.line)
        }
        Line::TurnContext(payload) => {
            let mut kinds = Vec::new();
            let model = str_field(payload, "model").map(str::to_owned);
            if let Some(name) = &model
                && model != state.model
            {
                kinds.push(model_change(state, name));
                state.model = model;
            }
            kinds.push(custom_kind(FORMAT, "turn_context", record));
            kinds
        }
        Line::Event(payload) => {
            if str_field(payload, "type") == Some("token_count")
                && let Some(tokens) = token_count(payload)
            {
                state.last_tokens = Some(tokens);
            }
            vec![custom_kind(FORMAT, "event_msg", record)]
        }
        Line::State => vec![custom_kind(FORMAT, "state", record)],
        Line::Communication(payload) => vec![items::communication(payload, timestamp)],
        Line::TokenUsage(payload) => {
            if let Some(tokens) = usage_total(payload.get("usage")) {
                state.last_tokens = Some(tokens);
            }
            vec![custom_kind(FORMAT, "token_usage_record", record)]
        }
        Line::Bookkeeping(kind) => vec![custom_kind(FORMAT, kind, record)],
        Line::Unknown(kind) => {
            builder.issue(line.line, IssueKind::UnknownRecord { record_type: kind });
            vec![custom_kind(FORMAT, "unknown", record)]
        }
    }
}

/// Gives the last reply among `kinds` the usage of its call, priced at its model's list prices.
fn record_usage(kinds: &mut [EntryKind], counts: crate::pricing::UsageCounts) {
    let reply = kinds.iter_mut().rev().find_map(|kind| {
        if let EntryKind::Message(message) = kind
            && let AgentMessage::Assistant(reply) = message.as_mut()
        {
            Some(reply)
        } else {
            None
        }
    });
    if let Some(reply) = reply {
        let provider = reply.provider.as_deref().unwrap_or("openai");
        let usage = crate::pricing::priced_usage(counts, provider, reply.model.as_deref());
        reply.usage = Some(usage);
    }
}

/// A compaction keeps nothing verbatim: Codex rebuilds the replacement history from user
/// messages, so its first kept entry is its own id `id` (not on the path before it).
fn keeping_nothing_before(mut kind: EntryKind, id: &str) -> EntryKind {
    if let Some(compaction) = kind.as_compaction_mut() {
        compaction.first_kept_entry_id = id.to_owned();
    }
    kind
}

/// A `compacted` line: one `compaction` entry that keeps nothing before it, on the thread it
/// compacts (the history before it stays on the path). With a summary (local compaction) the summary
/// is its text. Without one and with a `replacement_history` (remote compaction) the summary is
/// encrypted: the entry says so, and the history Codex continued from follows it as messages
/// (encrypted compaction items stay `custom` data, never sent to a model).
fn compacted(
    payload: &JsonObject,
    record: &JsonObject,
    timestamp: &str,
    state: &State,
    builder: &mut Builder,
    line: usize,
) -> Vec<EntryKind> {
    let summary = str_field(payload, "message").unwrap_or_default();
    let history = payload
        .get("replacement_history")
        .and_then(Value::as_array)
        .filter(|history| !history.is_empty());
    let remote = summary.is_empty() && history.is_some();
    // Newer versions record the usage the compaction started from in the record itself.
    let tokens = state
        .last_tokens
        .or_else(|| usage_total(payload.get("latest_token_usage_record")?.get("usage")));
    if tokens.is_none() {
        builder.issue(line, IssueKind::CompactionWithoutTokenCount);
    }
    if summary.is_empty() && !remote {
        builder.issue(line, IssueKind::CompactionWithoutSummary);
    }
    let mut extra = JsonObject::new();
    if let Some(history) = payload.get("replacement_history") {
        extra.insert("replacementHistory".to_owned(), history.clone());
    }
    if remote {
        extra.insert("codexCompacted".to_owned(), Value::Object(record.clone()));
    }
    let mut kinds = vec![EntryKind::Compaction(CompactionEntry {
        summary: if remote {
            REMOTE_COMPACTION_SUMMARY.to_owned()
        } else {
            summary.to_owned()
        },
        first_kept_entry_id: String::new(),
        tokens_before: tokens.unwrap_or(0),
        details: None,
        from_hook: None,
        extra,
    })];
    if let (true, Some(history)) = (remote, history) {
        for item in history.iter().filter_map(Value::as_object) {
            kinds.extend(response_item(item, item, timestamp, state, builder, line));
        }
    }
    kinds
}

/// Whether `message` is the reply that wrote a compaction's `summary`: Codex records its model's
/// answer to the compaction prompt ("Handoff Summary …") as an assistant message right before the
/// `compacted` line, whose summary is a preamble ("Another language model started to solve this
/// problem …") and then that answer. The import keeps the reply where Codex wrote it; a reader of
/// the conversation as history (the simulator's replay, the summary evaluation's span) leaves it
/// out, as it leaves out the compaction.
pub fn wrote_compaction_summary(message: &AgentMessage, summary: &str) -> bool {
    let AgentMessage::Assistant(assistant) = message else {
        return false;
    };
    let text: Vec<&str> = assistant
        .content
        .iter()
        .filter_map(|block| block.as_text())
        .collect();
    let text = text.join("\n");
    let text = text.trim();
    text.len() >= MIN_SUMMARY_REPLY && summary.trim_end().ends_with(text)
}

/// A reply shorter than this that a summary happens to end with is not taken for its writer.
const MIN_SUMMARY_REPLY: usize = 200;

/// A `model_change` to `model` of the session's provider (`openai` when the rollout names none).
fn model_change(state: &State, model: &str) -> EntryKind {
    EntryKind::ModelChange(ModelChangeEntry {
        provider: state
            .provider
            .clone()
            .unwrap_or_else(|| "openai".to_owned()),
        model_id: model.to_owned(),
        extra: JsonObject::new(),
    })
}

/// Context tokens of a `token_count` event: the last request's total, else its input.
fn token_count(payload: &JsonObject) -> Option<u64> {
    usage_total(payload.get("info")?.get("last_token_usage"))
}

/// A request's usage (`{input_tokens, output_tokens, total_tokens, …}`) as context tokens: its
/// total, else its input.
fn usage_total(usage: Option<&Value>) -> Option<u64> {
    let usage = usage?.as_object()?;
    usage
        .get("total_tokens")
        .or_else(|| usage.get("input_tokens"))
        .and_then(value_as_u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn token_counts_prefer_the_last_request_total() {
        let payload = serde_json::json!({"type": "token_count", "info": {"last_token_usage":
            {"input_tokens": 10, "total_tokens": 15}}});
        assert_eq!(token_count(payload.as_object().unwrap()), Some(15));
    }
}
