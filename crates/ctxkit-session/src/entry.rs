//! A loaded entry: its original line, kept for lossless rewriting (in memory, or in the file for large
//! lines), and the few fields the index needs. Message content is parsed only when asked for.

use std::borrow::Cow;
use std::cell::RefCell;
use std::collections::HashSet;
use std::sync::{Arc, OnceLock};

use ctxkit_protocol::{AgentMessage, SessionEntry, from_str_repaired, parse_agent_message};

use crate::body::{APPENDED_DISK_LINE_BYTES, BodyFile, DiskLine, EntryText, digest};
use crate::error::{Result as SessionResult, SessionError};
use crate::head::message_span;
use crate::line::LineText;
pub(crate) use crate::line_head::{HeadError, LineHead};

/// Where an entry's line is.
#[derive(Debug, Clone)]
pub(crate) enum Body {
    Memory(LineText),
    Disk(DiskLine),
    /// On disk, indexed from the first fields of the line only (see `head::read_head_prefix`): the
    /// whole line is checked to be the entry they announced when it is read back.
    DiskPrefix(DiskLine),
}

/// One entry of a session, as stored. Kept small: a large session holds millions of them.
#[derive(Debug, Clone)]
pub struct StoredEntry {
    raw: Body,
    line: usize,
    /// The id, the parent's id (when there is one) and the timestamp, one after the other, in one
    /// allocation.
    names: Box<str>,
    /// Where the id ends in `names`.
    id_end: u32,
    /// Where the parent's id ends in `names`; `u32::MAX` when there is no parent.
    parent_end: u32,
    pub(crate) meta: EntryMeta,
    /// Where the `message` is inside the line: found on first use, so loading scans each line once
    /// (kept when it fits in 32 bits, as it does for any line JavaScript can parse).
    message_span: OnceLock<Option<(u32, u32)>>,
}

/// A role, provider or model name: shared by every entry that names it (see [`intern`]).
pub(crate) type Name = Arc<str>;

/// What the index knows of an entry, by type.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum EntryMeta {
    Message {
        role: Option<Name>,
        provider: Option<Name>,
        model: Option<Name>,
        /// An assistant message indexed from its first fields: its provider and model (after its
        /// content) are read from the line when asked for (`StoredEntry::assistant_model`).
        model_unread: bool,
        /// A tool result whose line may hold `usage` (Pi 1.6: the cost of the tool's own model
        /// calls): spend reads only those back, not every tool result.
        may_hold_usage: bool,
    },
    ThinkingLevelChange {
        level: Option<Box<str>>,
    },
    ModelChange {
        provider: Option<Box<str>>,
        model_id: Option<Box<str>>,
    },
    Compaction {
        first_kept_entry_id: Option<Box<str>>,
    },
    BranchSummary {
        has_summary: bool,
    },
    Custom,
    CustomMessage,
    Label {
        target_id: Option<Box<str>>,
        label: Option<Box<str>>,
    },
    SessionInfo {
        name: Option<Box<str>>,
    },
    /// A `context_edit` (Pi 0.87): replaces or omits `targetId`'s message in later contexts.
    ContextEdit {
        target_id: Option<Box<str>>,
    },
    /// A `usage` entry (Pi 0.87): model usage outside the conversation, never in a context.
    Usage,
    Unknown {
        type_name: Box<str>,
    },
}

/// How many distinct names one thread shares before it stops adding new ones (a file naming millions
/// of models then costs one allocation per entry, as before, never an unbounded table).
const MAX_INTERNED_NAMES: usize = 4096;

thread_local! {
    static NAMES: RefCell<HashSet<Arc<str>, foldhash::fast::RandomState>> =
        RefCell::new(HashSet::default());
}

/// `value` as a shared name: the few roles, providers and models of a session are allocated once per
/// thread instead of once per entry.
pub(crate) fn intern(value: Option<Cow<'_, str>>) -> Option<Name> {
    let value = value?;
    Some(NAMES.with(|names| {
        let mut names = names.borrow_mut();
        if let Some(shared) = names.get(&*value) {
            return Arc::clone(shared);
        }
        let shared: Arc<str> = Arc::from(&*value);
        if names.len() < MAX_INTERNED_NAMES {
            names.insert(Arc::clone(&shared));
        }
        shared
    }))
}

#[cfg(test)]
thread_local! {
    /// How many entries this thread parsed whole ([`StoredEntry::parse`]): tests count the lines a
    /// command reads.
    static PARSES: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// How many entries this thread has parsed whole so far.
#[cfg(test)]
pub(crate) fn parses_on_this_thread() -> usize {
    PARSES.with(std::cell::Cell::get)
}

/// A head's id, parent id and timestamp in one allocation, where the id and the parent id end, and
/// its meta: what an entry keeps of its line's head.
struct Packed {
    names: Box<str>,
    id_end: u32,
    parent_end: u32,
    meta: EntryMeta,
}

impl StoredEntry {
    /// Indexes one line; refused when it is not a JSON object with a string `type` and `id`.
    pub(crate) fn from_line(raw: LineText, line: usize) -> Result<Self, HeadError> {
        // The head borrows from the line, so it is packed before the line moves into the entry.
        let packed = Self::pack(LineHead::read(raw.as_str())?)?;
        Ok(Self::assemble(packed, Body::Memory(raw), line))
    }

    /// An entry whose head was read already (a line left on disk).
    pub(crate) fn from_head(head: LineHead<'_>, raw: Body, line: usize) -> Result<Self, HeadError> {
        Ok(Self::assemble(Self::pack(head)?, raw, line))
    }

    fn assemble(packed: Packed, raw: Body, line: usize) -> Self {
        let Packed {
            names,
            id_end,
            parent_end,
            meta,
        } = packed;
        Self {
            names,
            id_end,
            parent_end,
            meta,
            raw,
            line,
            message_span: OnceLock::new(),
        }
    }

    fn pack(head: LineHead<'_>) -> Result<Packed, HeadError> {
        let id = head.id.ok_or(HeadError::NoId)?;
        let timestamp = head.timestamp.unwrap_or_default();
        let parent = head.parent_id.as_deref();
        let total = id.len() + parent.map_or(0, str::len) + timestamp.len();
        // One less than `u32::MAX` at most, which marks a missing parent.
        let (Ok(id_end), Ok(_)) = (u32::try_from(id.len()), u32::try_from(total + 1)) else {
            return Err(HeadError::Json(
                "the id, parent id and timestamp are longer than 4 GiB".to_owned(),
            ));
        };
        let mut names = String::with_capacity(total);
        names.push_str(&id);
        let parent_end = match parent {
            Some(parent) => {
                names.push_str(parent);
                // Fits: `total` does.
                u32::try_from(names.len()).unwrap_or(u32::MAX - 1)
            }
            None => NO_PARENT,
        };
        names.push_str(&timestamp);
        Ok(Packed {
            names: names.into_boxed_str(),
            id_end,
            parent_end,
            meta: head.meta,
        })
    }

    /// Builds the stored form of an entry ctxkit creates.
    pub(crate) fn from_entry(entry: &SessionEntry) -> Result<Self, serde_json::Error> {
        let raw = serde_json::to_string(entry)?;
        Self::from_line(raw.into(), 0).map_err(|error| serde::de::Error::custom(error.message()))
    }

    /// The entry's id.
    pub fn id(&self) -> &str {
        self.names.get(..self.id_end as usize).unwrap_or_default()
    }

    /// The parent's id; `None` for a root.
    pub fn parent_id(&self) -> Option<&str> {
        (self.parent_end != NO_PARENT)
            .then(|| {
                self.names
                    .get(self.id_end as usize..self.parent_end as usize)
            })
            .flatten()
    }

    /// The ISO timestamp as written.
    pub fn timestamp(&self) -> &str {
        let start = if self.parent_end == NO_PARENT {
            self.id_end
        } else {
            self.parent_end
        };
        self.names.get(start as usize..).unwrap_or_default()
    }

    /// The original JSON line, without its newline. A large line of a loaded file is read back from
    /// the file here; [`SessionError::LineChanged`] when the file no longer holds it as indexed.
    pub fn raw(&self) -> SessionResult<EntryText<'_>> {
        match &self.raw {
            Body::Memory(text) => Ok(EntryText::borrowed(text.as_str())),
            Body::Disk(disk) => disk
                .source
                .read(disk, self.line, None)
                .map(EntryText::shared),
            Body::DiskPrefix(disk) => disk
                .source
                .read(disk, self.line, Some(&|text| self.check_whole_line(text)))
                .map(EntryText::shared),
        }
    }

    /// The provider and model an assistant message names (`None` for other entries), read from the
    /// line when they were not indexed; an error when the line cannot be read back.
    pub(crate) fn assistant_model(&self) -> SessionResult<Option<(Option<Name>, Option<Name>)>> {
        match &self.meta {
            EntryMeta::Message {
                role: Some(role),
                model_unread: true,
                ..
            } if &**role == "assistant" => {
                let raw = self.raw()?;
                match LineHead::read(&raw) {
                    Ok(LineHead {
                        meta:
                            EntryMeta::Message {
                                provider, model, ..
                            },
                        ..
                    }) => Ok(Some((provider, model))),
                    Ok(_) | Err(_) => Ok(Some((None, None))),
                }
            }
            EntryMeta::Message {
                role: Some(role),
                provider,
                model,
                ..
            } if &**role == "assistant" => Ok(Some((provider.clone(), model.clone()))),
            EntryMeta::Message { .. }
            | EntryMeta::ThinkingLevelChange { .. }
            | EntryMeta::ModelChange { .. }
            | EntryMeta::Compaction { .. }
            | EntryMeta::BranchSummary { .. }
            | EntryMeta::Custom
            | EntryMeta::CustomMessage
            | EntryMeta::Label { .. }
            | EntryMeta::SessionInfo { .. }
            | EntryMeta::ContextEdit { .. }
            | EntryMeta::Usage
            | EntryMeta::Unknown { .. } => Ok(None),
        }
    }

    /// Checks a line indexed from its first fields: the whole line must be JSON and announce the
    /// same entry (a later repeated field, which `JSON.parse` would take, must not change it).
    fn check_whole_line(&self, text: &str) -> SessionResult<()> {
        let invalid = |message: String| self.invalid(serde::de::Error::custom(message));
        let head = match LineHead::read(text) {
            Ok(head) => head,
            Err(HeadError::Json(message)) => return Err(invalid(message)),
            Err(error @ (HeadError::NotAnObject | HeadError::NoType | HeadError::NoId)) => {
                return Err(invalid(error.message()));
            }
        };
        let same_meta = match (&head.meta, &self.meta) {
            // The provider and model were not indexed: the role is all there is to compare.
            (
                EntryMeta::Message { role, .. },
                EntryMeta::Message {
                    role: indexed_role,
                    model_unread: true,
                    ..
                },
            ) => role == indexed_role,
            (whole, indexed) => whole == indexed,
        };
        let same = head.id.as_deref() == Some(self.id())
            && head.parent_id.as_deref() == self.parent_id()
            && head.timestamp.as_deref().unwrap_or_default() == self.timestamp()
            && same_meta;
        if same {
            Ok(())
        } else {
            Err(invalid(
                "the whole line announces another entry than its first fields".to_owned(),
            ))
        }
    }

    /// Leaves the line of a `message` entry just written at `offset` of `source` on disk, when it is
    /// long enough (see [`APPENDED_DISK_LINE_BYTES`]): it is read back, checked, when asked for.
    pub(crate) fn leave_on_disk(&mut self, source: &Arc<BodyFile>, offset: u64) {
        let Body::Memory(text) = &self.raw else {
            return;
        };
        if text.as_str().len() < APPENDED_DISK_LINE_BYTES
            || !matches!(self.meta, EntryMeta::Message { .. })
        {
            return;
        }
        self.raw = Body::Disk(DiskLine {
            source: Arc::clone(source),
            offset,
            length: text.as_str().len(),
            digest: digest(text.as_str().as_bytes()),
        });
    }

    /// The line when it is held in memory (always, for entries other than `message`).
    pub(crate) fn memory_raw(&self) -> Option<&str> {
        match &self.raw {
            Body::Memory(text) => Some(text.as_str()),
            Body::Disk(_) | Body::DiskPrefix(_) => None,
        }
    }

    /// Sets the 1-based line number (known only once the chunk the line was read in is placed).
    pub(crate) fn set_line(&mut self, line: usize) {
        self.line = line;
    }

    /// Whether the line is held in memory (not read back from the file on use).
    #[cfg(test)]
    pub(crate) fn is_in_memory(&self) -> bool {
        match &self.raw {
            Body::Memory(_) => true,
            Body::Disk(_) | Body::DiskPrefix(_) => false,
        }
    }

    /// The 1-based line number in the file it was loaded from; 0 for entries appended since.
    pub fn line(&self) -> usize {
        self.line
    }

    /// The `type` tag.
    pub fn type_name(&self) -> &str {
        match &self.meta {
            EntryMeta::Message { .. } => "message",
            EntryMeta::ThinkingLevelChange { .. } => "thinking_level_change",
            EntryMeta::ModelChange { .. } => "model_change",
            EntryMeta::Compaction { .. } => "compaction",
            EntryMeta::BranchSummary { .. } => "branch_summary",
            EntryMeta::Custom => "custom",
            EntryMeta::CustomMessage => "custom_message",
            EntryMeta::Label { .. } => "label",
            EntryMeta::SessionInfo { .. } => "session_info",
            EntryMeta::ContextEdit { .. } => "context_edit",
            EntryMeta::Usage => "usage",
            EntryMeta::Unknown { type_name } => type_name,
        }
    }

    /// The message role of a `message` entry.
    pub fn role(&self) -> Option<&str> {
        match &self.meta {
            EntryMeta::Message { role, .. } => role.as_deref(),
            EntryMeta::ThinkingLevelChange { .. }
            | EntryMeta::ModelChange { .. }
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

    /// The `targetId` of a `label` or `context_edit` entry.
    pub fn target_id(&self) -> Option<&str> {
        match &self.meta {
            EntryMeta::Label { target_id, .. } | EntryMeta::ContextEdit { target_id } => {
                target_id.as_deref()
            }
            EntryMeta::Message { .. }
            | EntryMeta::ThinkingLevelChange { .. }
            | EntryMeta::ModelChange { .. }
            | EntryMeta::Compaction { .. }
            | EntryMeta::BranchSummary { .. }
            | EntryMeta::Custom
            | EntryMeta::CustomMessage
            | EntryMeta::SessionInfo { .. }
            | EntryMeta::Usage
            | EntryMeta::Unknown { .. } => None,
        }
    }

    /// The raw JSON of the `message` of a `message` entry (`Ok(None)` for other entries and messages
    /// without one); an error when the line cannot be read back (see [`Self::raw`]).
    pub fn message_json(&self) -> SessionResult<Option<EntryText<'_>>> {
        if self.type_name() != "message" {
            return Ok(None);
        }
        let raw = self.raw()?;
        let span = match self.message_span.get() {
            Some(span) => span.map(|(start, end)| (start as usize, end as usize)),
            None => {
                let span = message_span(&raw);
                let compact =
                    span.map(|(start, end)| u32::try_from(start).ok().zip(u32::try_from(end).ok()));
                match compact {
                    None => {
                        let _ = self.message_span.set(None);
                    }
                    Some(Some(compact)) => {
                        let _ = self.message_span.set(Some(compact));
                    }
                    // Too far into the line to keep: found again on each use.
                    Some(None) => {}
                }
                span
            }
        };
        let Some((start, end)) = span else {
            return Ok(None);
        };
        Ok(raw.slice(start..end))
    }

    /// The typed entry, parsed from the raw line.
    pub fn parse(&self) -> SessionResult<SessionEntry> {
        #[cfg(test)]
        PARSES.with(|parses| parses.set(parses.get() + 1));
        from_str_repaired(&self.raw()?).map_err(|source| self.invalid(source))
    }

    /// The typed message of a `message` entry, parsed from the raw line.
    pub fn parse_message(&self) -> Option<SessionResult<AgentMessage>> {
        match self.message_json() {
            Ok(json) => json.map(|json| parse_agent_message(&json).map_err(|e| self.invalid(e))),
            Err(error) => Some(Err(error)),
        }
    }

    /// The error for a line that does not parse as the entry its head announced.
    pub(crate) fn invalid(&self, source: serde_json::Error) -> SessionError {
        SessionError::InvalidEntry {
            path: match &self.raw {
                Body::Memory(_) => std::path::PathBuf::new(),
                Body::Disk(disk) | Body::DiskPrefix(disk) => disk.source.path().to_owned(),
            },
            line: self.line,
            source,
        }
    }

    /// The same entry, no longer tied to a line of the file it came from.
    pub(crate) fn detached(&self) -> Self {
        Self {
            line: 0,
            ..self.clone()
        }
    }

    /// Whether this is a tool result whose line may record `usage` (Pi 1.6), known from the index.
    pub(crate) fn may_hold_tool_usage(&self) -> bool {
        matches!(
            self.meta,
            EntryMeta::Message {
                may_hold_usage: true,
                ..
            }
        )
    }

    pub(crate) fn is_assistant_message(&self) -> bool {
        self.role() == Some("assistant")
    }

    /// A user or assistant message: what makes a new session worth a file.
    pub(crate) fn is_conversation_message(&self) -> bool {
        matches!(self.role(), Some("assistant" | "user"))
    }
}

/// `parent_end` of an entry without a parent.
const NO_PARENT: u32 = u32::MAX;

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 42: a large appended message is left in the file (read back when asked for), a small
    /// one stays in memory (what a large file's loading leaves on disk: `chunked.rs`).
    #[test]
    fn large_lines_are_left_in_the_file_and_small_ones_kept_in_memory() {
        let home = tempfile::tempdir().unwrap();
        let mut session = crate::Session::create("/p", home.path());
        let user = |text: &str| {
            serde_json::from_value::<ctxkit_protocol::AgentMessage>(
                serde_json::json!({"role": "user", "content": text, "timestamp": 1}),
            )
            .unwrap()
        };
        session.append_message(user("small")).unwrap();
        session.append_message(user(&"é".repeat(200_000))).unwrap();
        session
            .append_messages(vec![user("batch"), user(&"x".repeat(40_000))])
            .unwrap();
        let appended: Vec<(bool, usize)> = session
            .entries()
            .iter()
            .map(|entry| (entry.is_in_memory(), entry.raw().unwrap().len()))
            .collect();
        assert_eq!(appended.len(), 4, "{appended:?}");
        for (in_memory, length) in &appended {
            assert_eq!(*in_memory, *length < 16 * 1024, "{appended:?}");
        }
    }

    #[test]
    fn message_span_points_at_the_message() {
        let line = r#"{"type":"message","id":"a","parentId":null,"timestamp":"t","message":{"role":"user","content":"é"}}"#;
        let entry = StoredEntry::from_line(line.into(), 1).unwrap();
        assert_eq!(
            entry.message_json().unwrap().unwrap(),
            r#"{"role":"user","content":"é"}"#
        );
        assert_eq!(entry.role(), Some("user"));
        assert!(matches!(
            entry.parse_message(),
            Some(Ok(AgentMessage::User(_)))
        ));
    }

    #[test]
    fn ids_parents_and_timestamps_read_back_from_one_allocation() {
        for (parent, parent_json) in [(None, "null"), (Some(""), r#""""#), (Some("p7"), r#""p7""#)]
        {
            for timestamp in ["", "2026-11-26T13:00:00.000Z"] {
                let line = format!(
                    r#"{{"type":"label","id":"é1","parentId":{parent_json},"timestamp":"{timestamp}"}}"#
                );
                let entry = StoredEntry::from_line(line.as_str().into(), 1).unwrap();
                assert_eq!(entry.id(), "é1");
                assert_eq!(entry.parent_id(), parent);
                assert_eq!(entry.timestamp(), timestamp);
            }
        }
        let line = r#"{"type":"label","id":"","timestamp":3}"#;
        let entry = StoredEntry::from_line(line.into(), 1).unwrap();
        assert_eq!(
            (entry.id(), entry.parent_id(), entry.timestamp()),
            ("", None, "")
        );
    }

    #[test]
    fn an_entry_stays_small() {
        // A 10 GB session holds about 3.5 million entries: every byte here is 3.5 MB there.
        assert!(
            std::mem::size_of::<StoredEntry>() <= 144,
            "{}",
            std::mem::size_of::<StoredEntry>()
        );
    }

    #[test]
    fn names_are_shared_between_entries() {
        let line = |id: &str| {
            format!(
                r#"{{"type":"message","id":"{id}","message":{{"role":"assistant","provider":"p","model":"m"}}}}"#
            )
        };
        let first = StoredEntry::from_line(line("a").as_str().into(), 1).unwrap();
        let second = StoredEntry::from_line(line("b").as_str().into(), 2).unwrap();
        let (
            EntryMeta::Message {
                role: Some(one),
                model: Some(model_one),
                ..
            },
            EntryMeta::Message {
                role: Some(two),
                model: Some(model_two),
                ..
            },
        ) = (&first.meta, &second.meta)
        else {
            panic!("not messages");
        };
        assert!(Arc::ptr_eq(one, two));
        assert!(Arc::ptr_eq(model_one, model_two));
        assert_eq!(&**one, "assistant");
    }

    #[test]
    fn lines_without_ids_or_objects_are_refused() {
        assert_eq!(
            StoredEntry::from_line("42".into(), 1).unwrap_err(),
            HeadError::NotAnObject
        );
        assert_eq!(
            StoredEntry::from_line(r#"{"type":"x"}"#.into(), 1).unwrap_err(),
            HeadError::NoId
        );
        assert!(matches!(
            StoredEntry::from_line("{".into(), 1).unwrap_err(),
            HeadError::Json(_)
        ));
    }

    /// QA (2026-12-06, an embedder): an entry parsed from memory named no file, and its error
    /// read "`` line 6: …".
    #[test]
    fn an_entry_from_memory_is_named_by_its_line_alone() {
        let line = r#"{"type":"label","id":"a","parentId":null,"timestamp":"t","targetId":null}"#;
        let entry = StoredEntry::from_line(line.into(), 6).unwrap();
        let error = entry.parse().unwrap_err().to_string();
        assert!(error.starts_with("line 6: "), "{error}");
    }

    /// A line's JSON error is placed by its column: the parser's "line 1" read as another line
    /// beside the file's line number.
    #[test]
    fn a_json_error_names_the_column_not_the_parsers_line() {
        let HeadError::Json(message) =
            StoredEntry::from_line(r#"{"id": "\u12"}"#.into(), 6).unwrap_err()
        else {
            panic!("not a JSON error");
        };
        assert_eq!(message, "invalid escape at column 14");
    }
}
