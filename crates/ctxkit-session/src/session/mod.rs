//! A session: a header, an indexed tree of entries and a movable leaf, persisted to a JSONL file (or
//! kept in memory). The API follows Pi's `SessionManager`; writes are append-only.

mod afresh;
mod appends;
mod batch;
mod branched;
mod copies;
mod entry_copies;
mod leaf;
mod messages;
mod tool_pairs;

pub use tool_pairs::{ContextEditWritten, OrphanedToolResult};

use branched::rechain_without_labels;
use copies::absolute_display;
#[cfg(test)]
mod failed_writes;

use std::path::{Path, PathBuf};

use ctxkit_protocol::{
    AgentMessage, BranchSummaryEntry, EntryKind, LabelEntry, SessionEntry, SessionHeader,
};
use serde_json::Value;

use crate::JsonObject;
use crate::context::{self, ContextMessage, SessionContext};
use crate::diagnostics::{Diagnostic, DiagnosticKind};
use crate::entry::StoredEntry;
use crate::error::{Result, SessionError};
use crate::ids::{new_entry_id, new_session_id, now_iso};
use crate::index::{EntryIndex, SessionIndex, TreeNode};
use crate::last_used::find_last_used_session;
use crate::load::load_file;
use crate::paths::session_file_name;
use crate::storage::{Durability, FileStore, WriteBlocker};

/// Who wrote a summary: ctxkit (or Pi) itself, or an extension/hook (`fromHook: true`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SummarySource {
    Ctxkit,
    Hook,
}

impl SummarySource {
    fn hook_flag(self) -> Option<bool> {
        match self {
            Self::Ctxkit => None,
            Self::Hook => Some(true),
        }
    }
}

/// Which leaf to build a context at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LeafSelector<'a> {
    /// The session's current leaf.
    Current,
    /// Before the first entry: an empty context.
    BeforeFirst,
    /// A given entry; an unknown id falls back to the last entry, as in Pi.
    Entry(&'a str),
}

/// What a new compaction entry records.
#[derive(Debug, Clone, PartialEq)]
pub struct NewCompaction {
    pub summary: String,
    pub first_kept_entry_id: String,
    pub tokens_before: u64,
    pub details: Option<Value>,
    pub source: SummarySource,
}

#[derive(Debug)]
enum Storage {
    Memory,
    File(FileStore),
}

/// An open session.
#[derive(Debug)]
pub struct Session {
    header: SessionHeader,
    index: SessionIndex,
    leaf: Option<EntryIndex>,
    session_dir: Option<PathBuf>,
    storage: Storage,
    /// The format version of a file read migrated (older than v3).
    migrated_from: Option<u64>,
    diagnostics: Vec<Diagnostic>,
    /// The leaf's context, kept between calls and extended on append (`leaf`).
    leaf_context: std::sync::OnceLock<leaf::LeafContext>,
    /// Inside [`Session::append_batch`]: appends are indexed, and written when the batch ends.
    batching: bool,
}

impl Session {
    /// A new session for `cwd` in `session_dir`; its file is written once it holds a user or
    /// assistant message.
    pub fn create(cwd: &str, session_dir: &Path) -> Self {
        Self::create_with_id(cwd, session_dir, new_session_id())
    }

    /// [`Session::create`] under the session id `id` (Pi's `--session-id`); the caller checks that
    /// the id is a plain name and not taken.
    pub fn create_with_id(cwd: &str, session_dir: &Path, id: String) -> Self {
        let header = SessionHeader::new(id, now_iso(), cwd.to_owned(), None);
        let path = session_dir.join(session_file_name(&header.timestamp, &header.id));
        Self {
            header,
            index: SessionIndex::default(),
            leaf: None,
            session_dir: Some(session_dir.to_owned()),
            storage: Storage::File(FileStore::new_file(path)),
            migrated_from: None,
            diagnostics: Vec::new(),
            leaf_context: std::sync::OnceLock::new(),
            batching: false,
        }
    }

    /// A new session for `cwd` whose file will be `path` (Pi's `--session` naming a file that is
    /// not there yet); written once it holds a user or assistant message.
    pub fn create_at(cwd: &str, path: &Path) -> Self {
        let mut session = Self::create(cwd, path.parent().unwrap_or(Path::new(".")));
        session.storage = Storage::File(FileStore::new_file(path.to_owned()));
        session
    }

    /// A session that is never written.
    pub fn in_memory(cwd: &str) -> Self {
        Self::in_memory_with_id(cwd, new_session_id())
    }

    /// [`Session::in_memory`] under the session id `id` (Pi's `--no-session --session-id`).
    pub fn in_memory_with_id(cwd: &str, id: String) -> Self {
        Self {
            header: SessionHeader::new(id, now_iso(), cwd.to_owned(), None),
            index: SessionIndex::default(),
            leaf: None,
            session_dir: None,
            storage: Storage::Memory,
            migrated_from: None,
            diagnostics: Vec::new(),
            leaf_context: std::sync::OnceLock::new(),
            batching: false,
        }
    }

    /// Opens the session file at `path`. The leaf is the last entry. Older formats are migrated in
    /// memory; the file is rewritten (atomically) only when the session is first written to.
    /// A file that is not a session is refused and left untouched.
    pub fn open(path: &Path) -> Result<Self> {
        let loaded = load_file(path)?;
        let mut diagnostics = loaded.diagnostics;
        let index = loaded.index;
        diagnostics.sort_by_key(|diagnostic| diagnostic.line);
        let leaf = crate::index::default_leaf(&index, &diagnostics);
        let written = 1 + index.entries().len();
        let mut store = FileStore::existing(
            path.to_owned(),
            written,
            loaded.migrated_from.is_some(),
            loaded.snapshot,
        );
        store.kept_lines = loaded.kept_lines;
        store.write_blocker = match loaded.newer_version {
            Some(version) => Some(WriteBlocker::NewerVersion(version)),
            None => diagnostics
                .iter()
                .any(|diagnostic| diagnostic.kind == DiagnosticKind::InvalidUtf8)
                .then_some(WriteBlocker::InvalidUtf8),
        };
        Ok(Self {
            header: loaded.header,
            index,
            leaf,
            session_dir: path.parent().map(Path::to_owned),
            storage: Storage::File(store),
            migrated_from: loaded.migrated_from,
            diagnostics,
            leaf_context: std::sync::OnceLock::new(),
            batching: false,
        })
    }

    /// Opens the session of `session_dir` used last ([`crate::find_last_used_session`]: the one
    /// recorded by [`crate::record_last_used_session`] unless a session file was written since,
    /// else the most recently modified), or creates a new one.
    pub fn continue_recent(cwd: &str, session_dir: &Path) -> Result<Self> {
        match find_last_used_session(session_dir) {
            Some(path) => Self::open(&path),
            None => Ok(Self::create(cwd, session_dir)),
        }
    }

    /// Starts a fresh session in the same directory (a new file, nothing written yet).
    pub fn new_session(&mut self, parent_session: Option<String>) -> Option<PathBuf> {
        self.header = SessionHeader::new(
            new_session_id(),
            now_iso(),
            self.header.cwd.clone(),
            parent_session,
        );
        self.index = SessionIndex::default();
        self.leaf = None;
        self.leaf_moved();
        self.diagnostics.clear();
        self.reset_storage()
    }

    fn reset_storage(&mut self) -> Option<PathBuf> {
        self.replace_storage().0
    }

    /// A new store for the header's file; returns its path and the store it replaced.
    fn replace_storage(&mut self) -> (Option<PathBuf>, Storage) {
        let (path, storage) = match (&self.storage, &self.session_dir) {
            (Storage::File(previous), Some(dir)) => {
                let path = dir.join(session_file_name(&self.header.timestamp, &self.header.id));
                let mut store = FileStore::new_file(path.clone());
                store.set_durability(previous.durability());
                (Some(path), Storage::File(store))
            }
            (Storage::File(_) | Storage::Memory, _) => (None, Storage::Memory),
        };
        (path, std::mem::replace(&mut self.storage, storage))
    }

    // ----- navigation ---------------------------------------------------------------------------

    /// Moves the leaf to `id`; the next append starts a new branch there.
    pub fn branch(&mut self, id: &str) -> Result<()> {
        self.leaf = Some(self.require(id)?);
        self.leaf_moved();
        Ok(())
    }

    /// Moves the leaf before the first entry; the next append is a new root.
    pub fn reset_leaf(&mut self) {
        self.leaf = None;
        self.leaf_moved();
    }

    /// Moves the leaf to `id` (`None`: before the first entry) and appends there a summary of the
    /// branch being left; its `fromId` is the leaf being left.
    pub fn branch_with_summary(
        &mut self,
        id: Option<&str>,
        summary: &str,
        details: Option<Value>,
        source: SummarySource,
    ) -> Result<String> {
        let target = id.map(|id| self.require(id)).transpose()?;
        // Pi 0.87: `fromId` is the leaf being left (`root` when there was none).
        let from_id = self.leaf_id().unwrap_or("root").to_owned();
        self.leaf = target;
        self.leaf_moved();
        let mut extra = JsonObject::new();
        // Pi 1.6: a summary a model wrote records its call's usage as the entry's own.
        if source == SummarySource::Ctxkit
            && let Some(usage) = crate::spend::summary_call_usage(details.as_ref())
        {
            extra.insert("usage".to_owned(), usage);
        }
        let entry = BranchSummaryEntry {
            from_id,
            summary: summary.to_owned(),
            details,
            from_hook: source.hook_flag(),
            extra,
        };
        self.append(target, EntryKind::BranchSummary(entry))
    }

    /// Makes this session a new one holding only the root→`leaf_id` path (labels on it re-created;
    /// as in Pi 0.87, the path is re-chained around the label entries it held),
    /// whose header names the current file as parent. Returns the new file's path when persisted.
    pub fn create_branched_session(&mut self, leaf_id: &str) -> Result<Option<PathBuf>> {
        let leaf = self.require(leaf_id)?;
        let path = rechain_without_labels(
            self.index
                .path_to(leaf)
                .into_iter()
                .filter_map(|position| self.index.get(position)),
        )?;
        let mut taken: std::collections::HashSet<String> =
            path.iter().map(|entry| entry.id().to_owned()).collect();
        let mut labels: Vec<(String, String, String)> = self
            .index
            .labels()
            .filter(|(target, _, _)| taken.contains(*target))
            .map(|(target, label, timestamp)| {
                (target.to_owned(), label.to_owned(), timestamp.to_owned())
            })
            .collect();
        // Re-create labels in the order of the entries they mark, so the new file is deterministic.
        let order: std::collections::HashMap<&str, usize> = path
            .iter()
            .enumerate()
            .map(|(position, entry)| (entry.id(), position))
            .collect();
        labels.sort_by_key(|(target, _, _)| order.get(target.as_str()).copied());
        let mut parent_id = path.last().map(|entry| entry.id().to_owned());
        let mut entries = path;
        for (target, label, timestamp) in labels {
            let id = new_entry_id(|candidate| taken.contains(candidate));
            taken.insert(id.clone());
            let entry = SessionEntry {
                id: id.clone(),
                parent_id: parent_id.replace(id),
                timestamp,
                kind: EntryKind::Label(LabelEntry {
                    target_id: target,
                    label: Some(label),
                    extra: JsonObject::new(),
                }),
            };
            entries.push(StoredEntry::from_entry(&entry).map_err(SessionError::Serialize)?);
        }
        let previous = match &self.storage {
            Storage::File(store) => Some(absolute_display(&store.path)),
            Storage::Memory => None,
        };
        let header = SessionHeader::new(
            new_session_id(),
            now_iso(),
            self.header.cwd.clone(),
            previous,
        );
        let mut diagnostics = Vec::new();
        let index = SessionIndex::build(entries, &mut diagnostics);
        let leaf = index.entries().len().checked_sub(1);
        let old_header = std::mem::replace(&mut self.header, header);
        let old_index = std::mem::replace(&mut self.index, index);
        let old_leaf = std::mem::replace(&mut self.leaf, leaf);
        let old_diagnostics = std::mem::replace(&mut self.diagnostics, diagnostics);
        self.leaf_moved();
        let (new_path, old_storage) = self.replace_storage();
        // Like a new session, the new file is written once it holds a user or assistant message
        // (Pi 1.6: a path of user messages only is written at once).
        if self.index.has_conversation()
            && let Err(error) = self.rewrite_all()
        {
            // A fork that could not be written leaves the session as it was: later appends land
            // in the file the caller had, not in a new one nobody was told about.
            self.header = old_header;
            self.index = old_index;
            self.leaf = old_leaf;
            self.diagnostics = old_diagnostics;
            self.storage = old_storage;
            self.leaf_moved();
            return Err(error);
        }
        Ok(new_path)
    }

    fn require(&self, id: &str) -> Result<EntryIndex> {
        self.index
            .position(id)
            .ok_or_else(|| SessionError::EntryNotFound { id: id.to_owned() })
    }

    // ----- reading ------------------------------------------------------------------------------

    /// The header.
    pub fn header(&self) -> &SessionHeader {
        &self.header
    }

    /// The session id.
    pub fn id(&self) -> &str {
        &self.header.id
    }

    /// The working directory recorded in the header.
    pub fn cwd(&self) -> &str {
        &self.header.cwd
    }

    /// The file, for persisted sessions.
    pub fn path(&self) -> Option<&Path> {
        match &self.storage {
            Storage::File(store) => Some(&store.path),
            Storage::Memory => None,
        }
    }

    /// How far each append goes towards the disk before it returns ([`Durability::Flush`] unless
    /// set); in-memory sessions are always [`Durability::Flush`].
    pub fn durability(&self) -> Durability {
        match &self.storage {
            Storage::File(store) => store.durability(),
            Storage::Memory => Durability::Flush,
        }
    }

    /// Sets how far each append goes towards the disk before it returns; kept by new sessions
    /// started from this one. No effect on in-memory sessions.
    pub fn set_durability(&mut self, durability: Durability) {
        match &mut self.storage {
            Storage::File(store) => store.set_durability(durability),
            Storage::Memory => {}
        }
    }

    /// The directory new sessions of this one go to.
    pub fn session_dir(&self) -> Option<&Path> {
        self.session_dir.as_deref()
    }

    /// Locks the session file for writing now and until the session is dropped, as an agent that
    /// keeps a session open does: other processes' writes are refused (`SessionError::Locked`)
    /// instead of making this view stale. Fails when another process holds the lock or changed the
    /// file since it was loaded. Nothing to do in memory or before a new file's first write.
    pub fn hold_lock(&mut self) -> Result<()> {
        match &mut self.storage {
            Storage::File(store) => store.hold(),
            Storage::Memory => Ok(()),
        }
    }

    /// The format version the file had when it was older than v3 (it was read migrated).
    pub fn migrated_from(&self) -> Option<u64> {
        self.migrated_from
    }

    /// Whether the file is older than v3 and not yet rewritten as v3.
    pub fn needs_migration(&self) -> bool {
        matches!(&self.storage, Storage::File(store) if store.needs_rewrite)
    }

    /// Problems found while loading.
    pub fn diagnostics(&self) -> &[Diagnostic] {
        &self.diagnostics
    }

    /// The index over all entries.
    pub fn index(&self) -> &SessionIndex {
        &self.index
    }

    /// All entries in file order.
    pub fn entries(&self) -> &[StoredEntry] {
        self.index.entries()
    }

    /// The entry with `id`.
    pub fn entry(&self, id: &str) -> Option<&StoredEntry> {
        self.index
            .position(id)
            .and_then(|position| self.index.get(position))
    }

    /// The leaf's id; `None` before the first entry.
    pub fn leaf_id(&self) -> Option<&str> {
        self.leaf_entry().map(StoredEntry::id)
    }

    /// The leaf entry.
    pub fn leaf_entry(&self) -> Option<&StoredEntry> {
        self.leaf.and_then(|leaf| self.index.get(leaf))
    }

    /// The direct children of `id`, in file order.
    pub fn children(&self, id: &str) -> Vec<&StoredEntry> {
        match self.index.position(id) {
            Some(position) => self
                .index
                .children(Some(position))
                .into_iter()
                .filter_map(|child| self.index.get(child))
                .collect(),
            None => Vec::new(),
        }
    }

    /// The label of `id`.
    pub fn label(&self, id: &str) -> Option<&str> {
        self.index.label(id)
    }

    /// The display name.
    pub fn session_name(&self) -> Option<String> {
        self.index.session_name()
    }

    /// Entries from the root to `from` (default: the leaf), inclusive.
    pub fn branch_path(&self, from: Option<&str>) -> Vec<&StoredEntry> {
        let start = match from {
            Some(id) => self.index.position(id),
            None => {
                return self
                    .leaf_path()
                    .iter()
                    .filter_map(|&position| self.index.get(position))
                    .collect();
            }
        };
        start
            .map(|start| {
                self.index
                    .path_to(start)
                    .into_iter()
                    .filter_map(|position| self.index.get(position))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// The tree in preorder.
    pub fn tree(&self) -> Vec<TreeNode> {
        self.index.tree()
    }

    /// The context at the current leaf.
    pub fn build_context(&self) -> SessionContext {
        self.leaf_context().into_owned()
    }

    /// The context at a chosen leaf.
    pub fn context_at(&self, leaf: LeafSelector<'_>) -> SessionContext {
        let leaf = match leaf {
            LeafSelector::Current => return self.build_context(),
            LeafSelector::BeforeFirst => None,
            LeafSelector::Entry(id) => self
                .index
                .position(id)
                .or_else(|| self.index.entries().len().checked_sub(1)),
        };
        context::build_context(&self.index, leaf)
    }

    /// The JSON value of a context message.
    pub fn message_value(&self, message: &ContextMessage) -> Result<Value> {
        let entry = self.stored(message.entry)?;
        let edit = message.edit.map(|edit| self.stored(edit)).transpose()?;
        context::context_message_value(entry, message.kind, edit)
            .map_err(|error| self.with_path(error))
    }

    /// The typed form of a context message.
    pub fn message(&self, message: &ContextMessage) -> Result<AgentMessage> {
        let entry = self.stored(message.entry)?;
        let edit = message.edit.map(|edit| self.stored(edit)).transpose()?;
        context::context_message(entry, message.kind, edit).map_err(|error| self.with_path(error))
    }

    fn stored(&self, position: EntryIndex) -> Result<&StoredEntry> {
        self.index
            .get(position)
            .ok_or_else(|| SessionError::EntryNotFound {
                id: format!("#{position}"),
            })
    }

    /// `error`, naming this session's file when it names none (entries held in memory do not know it).
    fn with_path(&self, error: SessionError) -> SessionError {
        if let SessionError::InvalidEntry { path, line, source } = error {
            let path = if path.as_os_str().is_empty() {
                self.path().map(Path::to_owned).unwrap_or_default()
            } else {
                path
            };
            return SessionError::InvalidEntry { path, line, source };
        }
        error
    }
}
