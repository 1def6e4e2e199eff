//! Appending entries and keeping the file in step with the session: deferred first write (until the
//! first user or assistant message), pending
//! records, atomic whole-file rewrites.

use ctxkit_protocol::{
    AgentMessage, CompactionEntry, ContentBlock, ContextEditEntry, CustomEntry, CustomMessageEntry,
    EditReplacement, EntryKind, LabelEntry, MessageContent, ModelChangeEntry, SessionEntry,
    SessionInfoEntry, ThinkingLevelChangeEntry, Usage, UsageCost, UsageEntry,
};
use serde_json::Value;

use super::{NewCompaction, Session, Storage, SummarySource};
use crate::JsonObject;
use crate::entry::StoredEntry;
use crate::error::{Result, SessionError};
use crate::ids::{new_entry_id, now_iso};
use crate::index::EntryIndex;

/// `message` as Pi 1.6.0 can open it: an assistant reply with its complete usage (a client of
/// `serve` or an embedder may append one without a `cost`, or without a `usage`).
fn readable_by_pi(mut message: AgentMessage) -> AgentMessage {
    if let AgentMessage::Assistant(reply) = &mut message {
        reply.complete_usage();
    }
    message
}

impl Session {
    pub(super) fn append(&mut self, parent: Option<EntryIndex>, kind: EntryKind) -> Result<String> {
        self.append_at(parent, kind, now_iso())
    }

    fn append_at(
        &mut self,
        parent: Option<EntryIndex>,
        kind: EntryKind,
        timestamp: String,
    ) -> Result<String> {
        let index = &self.index;
        let id = new_entry_id(|candidate| index.contains(candidate));
        let parent_id = parent
            .and_then(|parent| index.get(parent))
            .map(|entry| entry.id().to_owned());
        let entry = SessionEntry {
            id: id.clone(),
            parent_id,
            timestamp,
            kind,
        };
        let mut stored = StoredEntry::from_entry(&entry).map_err(SessionError::Serialize)?;
        // Write first: the in-memory session never holds an entry the file lacks.
        self.persist(&mut stored)?;
        let position = self.index.push(stored);
        self.leaf = Some(position);
        self.leaf_appended(position);
        Ok(id)
    }

    /// Appends `messages` as a chain below the leaf, written with one write (and, under
    /// [`crate::Durability::SyncEach`] or `SyncEvery`, at most one sync): a group commit for agents that
    /// write many entries at once. Either all are acknowledged or none (an error leaves the session as
    /// it was). Returns their ids in order.
    pub fn append_messages(&mut self, messages: Vec<AgentMessage>) -> Result<Vec<String>> {
        let mut parent_id = self
            .leaf
            .and_then(|leaf| self.index.get(leaf))
            .map(|entry| entry.id().to_owned());
        let mut batch: Vec<StoredEntry> = Vec::with_capacity(messages.len());
        let mut ids = Vec::with_capacity(messages.len());
        for message in messages {
            let index = &self.index;
            let id = new_entry_id(|candidate| {
                index.contains(candidate) || ids.iter().any(|taken: &String| taken == candidate)
            });
            let entry = SessionEntry {
                id: id.clone(),
                parent_id: parent_id.replace(id.clone()),
                timestamp: now_iso(),
                kind: EntryKind::Message(Box::new(readable_by_pi(message))),
            };
            batch.push(StoredEntry::from_entry(&entry).map_err(SessionError::Serialize)?);
            ids.push(id);
        }
        self.append_chain(batch)?;
        Ok(ids)
    }

    /// Writes `batch`, a chain below the leaf, with one write, then indexes it and moves the leaf to
    /// its last entry; nothing is indexed when the write fails.
    pub(super) fn append_chain(&mut self, mut batch: Vec<StoredEntry>) -> Result<()> {
        self.persist_batch(&mut batch)?;
        for stored in batch {
            let position = self.index.push(stored);
            self.leaf = Some(position);
            self.leaf_appended(position);
        }
        Ok(())
    }

    fn persist(&mut self, new_entry: &mut StoredEntry) -> Result<()> {
        self.persist_batch(std::slice::from_mut(new_entry))
    }

    pub(super) fn persist_batch(&mut self, new_entries: &mut [StoredEntry]) -> Result<()> {
        // Like Pi 1.6, a new session is written from its first user or assistant message (setup
        // entries alone stay in memory); a file already on disk is simply appended to; and once a
        // write has failed, nothing more is acknowledged without being written.
        let (failed_before, on_disk) = match &self.storage {
            Storage::File(store) => {
                // A file that can never be written refuses now, not at a later first write.
                store.check_writable()?;
                (store.has_failed_write(), store.written > 0)
            }
            Storage::Memory => (false, false),
        };
        // A batch's entries are written together when it ends (`append_batch`).
        if self.batching {
            return Ok(());
        }
        if !(self.index.has_conversation()
            || new_entries.iter().any(StoredEntry::is_conversation_message)
            || failed_before
            || on_disk)
        {
            return Ok(());
        }
        self.write_pending(new_entries)
    }

    /// Brings the file up to date with the session (plus `new_entries`): rewrites it whole when it is
    /// in an older format, else appends the records not yet on disk, in one write. Large message
    /// lines of `new_entries` are then left in the file (memory holds each appended entry's index,
    /// not its text: issue 42, a `serve` client appending 60 MB messages).
    fn write_pending(&mut self, new_entries: &mut [StoredEntry]) -> Result<()> {
        let Storage::File(store) = &mut self.storage else {
            return Ok(());
        };
        let header_line = serde_json::to_string(&self.header).map_err(SessionError::Serialize)?;
        let entries = self.index.entries();
        // The header is record 0; only the records not written yet are read (lines of a loaded file
        // may be on disk).
        let skip = if store.needs_rewrite {
            0
        } else {
            store.written.saturating_sub(1)
        };
        let texts = entries
            .get(skip.min(entries.len())..)
            .unwrap_or_default()
            .iter()
            .chain(new_entries.iter())
            .skip(skip.saturating_sub(entries.len()))
            .map(StoredEntry::raw)
            .collect::<Result<Vec<_>>>()?;
        let header = (store.needs_rewrite || store.written == 0).then_some(header_line.as_str());
        let records: Vec<&str> = header
            .into_iter()
            .chain(texts.iter().map(|text| &**text))
            .collect();
        if store.needs_rewrite {
            return rewrite_keeping_lines(store, &records);
        }
        if records.is_empty() {
            return Ok(());
        }
        let start = store.append(&records)?;
        // Where each entry's record starts; the new entries are the last ones written.
        let header_records = records.len() - texts.len();
        let starts: Vec<u64> = records
            .iter()
            .scan(start, |next, record| {
                let here = *next;
                *next += record.len() as u64 + 1;
                Some(here)
            })
            .collect();
        drop(records);
        drop(texts);
        let Some(reader) = store.reader() else {
            return Ok(());
        };
        let entry_starts = starts.get(header_records..).unwrap_or_default();
        for (entry, offset) in new_entries.iter_mut().rev().zip(entry_starts.iter().rev()) {
            entry.leave_on_disk(&reader, *offset);
        }
        Ok(())
    }

    /// Replaces the file with the header and every entry, atomically.
    pub(super) fn rewrite_all(&mut self) -> Result<()> {
        let Storage::File(store) = &mut self.storage else {
            return Ok(());
        };
        let header_line = serde_json::to_string(&self.header).map_err(SessionError::Serialize)?;
        let texts = self
            .index
            .entries()
            .iter()
            .map(StoredEntry::raw)
            .collect::<Result<Vec<_>>>()?;
        let records: Vec<&str> = std::iter::once(header_line.as_str())
            .chain(texts.iter().map(|text| &**text))
            .collect();
        rewrite_keeping_lines(store, &records)
    }

    /// Appends a message as a child of the leaf and moves the leaf to it. Returns the entry id.
    /// An assistant message is written with a complete usage
    /// ([`AssistantMessage::complete_usage`](ctxkit_protocol::AssistantMessage::complete_usage)),
    /// as [`Session::append_messages`] writes it.
    pub fn append_message(&mut self, message: AgentMessage) -> Result<String> {
        self.append(
            self.leaf,
            EntryKind::Message(Box::new(readable_by_pi(message))),
        )
    }

    /// Records a change of reasoning level.
    pub fn append_thinking_level_change(&mut self, thinking_level: &str) -> Result<String> {
        let entry = ThinkingLevelChangeEntry {
            thinking_level: thinking_level.to_owned(),
            extra: JsonObject::new(),
        };
        self.append(self.leaf, EntryKind::ThinkingLevelChange(entry))
    }

    /// Records a change of model.
    pub fn append_model_change(&mut self, provider: &str, model_id: &str) -> Result<String> {
        let entry = ModelChangeEntry {
            provider: provider.to_owned(),
            model_id: model_id.to_owned(),
            extra: JsonObject::new(),
        };
        self.append(self.leaf, EntryKind::ModelChange(entry))
    }

    /// Appends a compaction entry. Like Pi 0.87 it records the prompt state the context holds (its
    /// system messages replayed into one, stamped with the compaction's time, as `systemMessage`),
    /// which leads the compacted context.
    pub fn append_compaction(&mut self, compaction: NewCompaction) -> Result<String> {
        let timestamp = self.stamp_after_leaf(now_iso());
        let mut extra = JsonObject::new();
        if let Some(mut system) = self.current_system_message()? {
            // Pi stamps the replay with the compaction's own time.
            if let Some(ms) = crate::ids::parse_timestamp_ms(&timestamp) {
                system["timestamp"] = Value::from(ms);
            }
            extra.insert("systemMessage".to_owned(), system);
        }
        // Pi 1.6: a summary a model wrote records its call's usage as the entry's own.
        if compaction.source == SummarySource::Ctxkit
            && let Some(usage) = crate::spend::summary_call_usage(compaction.details.as_ref())
        {
            extra.insert("usage".to_owned(), usage);
        }
        let entry = CompactionEntry {
            summary: compaction.summary,
            first_kept_entry_id: compaction.first_kept_entry_id,
            tokens_before: compaction.tokens_before,
            details: compaction.details,
            from_hook: compaction.source.hook_flag(),
            extra,
        };
        self.append_at(self.leaf, EntryKind::Compaction(entry), timestamp)
    }

    /// `now`, or one millisecond after the leaf (its entry's time or its message's, the later) when
    /// the leaf is stamped in the same millisecond or up to a second later: a reply's usage counts
    /// as measured before a compaction only when the reply is stamped strictly earlier (Pi's rule),
    /// so a compaction written in its reply's millisecond would leave that usage looking current. A
    /// leaf stamped further ahead (another machine's clock) does not move the compaction into the
    /// future.
    fn stamp_after_leaf(&self, now: String) -> String {
        const MAX_AHEAD_MS: i64 = 1_000;
        let Some(leaf) = self.leaf_entry() else {
            return now;
        };
        let message_ms = leaf
            .parse_message()
            .and_then(|message| message.ok())
            .and_then(|message| message.timestamp());
        let leaf_ms = crate::ids::parse_timestamp_ms(leaf.timestamp()).max(message_ms);
        match (crate::ids::parse_timestamp_ms(&now), leaf_ms) {
            (Some(now_ms), Some(leaf_ms)) if (now_ms..now_ms + MAX_AHEAD_MS).contains(&leaf_ms) => {
                crate::ids::checked_iso_from_ms(leaf_ms + 1).unwrap_or(now)
            }
            _ => now,
        }
    }

    /// The replayed system message of the current context, if it holds any.
    fn current_system_message(&self) -> Result<Option<Value>> {
        let context = self.build_context();
        let mut systems = Vec::new();
        for message in &context.messages {
            let is_system = match message.kind {
                crate::ContextMessageKind::CompactionSystem => true,
                crate::ContextMessageKind::Stored => self
                    .index
                    .get(message.entry)
                    .is_some_and(|entry| entry.role() == Some("system")),
                crate::ContextMessageKind::Custom
                | crate::ContextMessageKind::BranchSummary
                | crate::ContextMessageKind::CompactionSummary => false,
            };
            if is_system {
                systems.push(self.message(message)?);
            }
        }
        let Some(replay) = crate::current_system_message(&systems) else {
            return Ok(None);
        };
        serde_json::to_value(replay)
            .map(Some)
            .map_err(SessionError::Serialize)
    }

    /// Appends a context edit (Pi 0.87) of `target_id`, a user, assistant or tool-result message or
    /// an extension message on the current branch: later contexts on this branch show `replacement`
    /// instead of its content, or leave it out when `replacement` is `None`. Nothing is rewritten.
    pub fn append_context_edit(
        &mut self,
        target_id: &str,
        replacement: Option<MessageContent>,
    ) -> Result<String> {
        let target = self.require(target_id)?;
        let on_branch = self
            .leaf
            .is_some_and(|_| self.leaf_path().contains(&target));
        let role = self
            .index
            .get(target)
            .and_then(|entry| match entry.type_name() {
                "custom_message" => Some("custom"),
                "message" => entry
                    .role()
                    .filter(|role| matches!(*role, "user" | "assistant" | "toolResult")),
                _ => None,
            });
        let (true, Some(role)) = (on_branch, role) else {
            return Err(SessionError::NotEditable {
                id: target_id.to_owned(),
            });
        };
        // Replies and tool results hold blocks: a string becomes one text block, as Pi writes it.
        let replacement = replacement.map(|content| EditReplacement {
            content: match content {
                MessageContent::Text(text) if matches!(role, "assistant" | "toolResult") => {
                    MessageContent::Blocks(vec![ContentBlock::text(text)])
                }
                content @ (MessageContent::Text(_) | MessageContent::Blocks(_)) => content,
            },
            extra: JsonObject::new(),
        });
        let entry = ContextEditEntry {
            target_id: target_id.to_owned(),
            replacement,
            extra: JsonObject::new(),
        };
        self.append(self.leaf, EntryKind::ContextEdit(entry))
    }

    /// Records model usage outside the conversation (Pi 0.87's `usage` entry: summaries, side
    /// requests, cache warming); it counts in totals and is never part of a context. A usage without
    /// a cost gets a zero one.
    pub fn append_usage(
        &mut self,
        kind: &str,
        provider: &str,
        model: &str,
        usage: Usage,
        note: Option<&str>,
    ) -> Result<String> {
        // Pi's statistics read `usage.cost.total` unguarded.
        let mut usage = usage;
        usage.cost.get_or_insert_with(UsageCost::default);
        let entry = UsageEntry {
            kind: kind.to_owned(),
            provider: provider.to_owned(),
            model: model.to_owned(),
            usage,
            note: note.map(str::to_owned),
            extra: JsonObject::new(),
        };
        self.append(self.leaf, EntryKind::Usage(entry))
    }

    /// Appends extension state (never part of the context).
    pub fn append_custom_entry(
        &mut self,
        custom_type: &str,
        data: Option<Value>,
    ) -> Result<String> {
        let entry = CustomEntry {
            custom_type: custom_type.to_owned(),
            data,
            extra: JsonObject::new(),
        };
        self.append(self.leaf, EntryKind::Custom(entry))
    }

    /// Appends an extension message that takes part in the context.
    pub fn append_custom_message_entry(
        &mut self,
        custom_type: &str,
        content: MessageContent,
        display: bool,
        details: Option<Value>,
    ) -> Result<String> {
        let entry = CustomMessageEntry {
            custom_type: custom_type.to_owned(),
            content,
            display,
            details,
            extra: JsonObject::new(),
        };
        self.append(self.leaf, EntryKind::CustomMessage(entry))
    }

    /// Sets the session's display name (trimmed).
    pub fn append_session_info(&mut self, name: &str) -> Result<String> {
        let entry = SessionInfoEntry {
            name: Some(crate::index::js_trim(name).to_owned()),
            extra: JsonObject::new(),
        };
        self.append(self.leaf, EntryKind::SessionInfo(entry))
    }

    /// Sets the label of `target_id`, or clears it with `None` or an empty label.
    pub fn append_label_change(&mut self, target_id: &str, label: Option<&str>) -> Result<String> {
        if !self.index.contains(target_id) {
            return Err(SessionError::EntryNotFound {
                id: target_id.to_owned(),
            });
        }
        let entry = LabelEntry {
            target_id: target_id.to_owned(),
            label: label.map(str::to_owned),
            extra: JsonObject::new(),
        };
        self.append(self.leaf, EntryKind::Label(entry))
    }

    /// Writes entries still held back by the deferred-write rule (no user or assistant message yet). Used by
    /// one-shot edits such as `ctxkit label`, which must not be lost.
    pub fn flush_pending(&mut self) -> Result<()> {
        self.write_pending(&mut [])
    }

    /// Rewrites a file loaded from an older format in the current one (atomically). Returns whether
    /// anything was rewritten. A file of a newer format is refused
    /// ([`SessionError::NewerVersion`]) as every write refuses
    /// it: it is not "already v3", and no rewrite by this version may touch it.
    pub fn migrate_file(&mut self) -> Result<bool> {
        if let Storage::File(store) = &self.storage {
            store.check_writable()?;
        }
        if !self.needs_migration() {
            return Ok(false);
        }
        self.rewrite_all()?;
        Ok(true)
    }
}

/// Rewrites the file with `records` (header first), keeping the lines of the old file that are not
/// entries where they were: a migration never drops a byte it could not read. The store counts
/// records only, as for a file that was loaded.
fn rewrite_keeping_lines(store: &mut crate::storage::FileStore, records: &[&str]) -> Result<()> {
    let kept = std::mem::take(&mut store.kept_lines);
    let mut lines = Vec::with_capacity(records.len() + kept.len());
    let mut kept_iter = kept.iter().peekable();
    for (position, record) in records.iter().enumerate() {
        while let Some(line) = kept_iter.next_if(|line| line.records_before <= position) {
            lines.push(line.text.as_str());
        }
        lines.push(record);
    }
    lines.extend(kept_iter.map(|line| line.text.as_str()));
    let result = store.rewrite(&lines);
    match result {
        Ok(()) => store.written = records.len(),
        Err(_) => store.kept_lines = kept,
    }
    result
}
