//! The tree index over loaded entries: id lookup, resolved parents (cycles broken), labels, the session
//! name, children, root→leaf paths in O(depth), and the tree in Pi's order.

mod problems;

use std::collections::HashMap;
use std::hash::BuildHasher;

use crate::diagnostics::{Diagnostic, DiagnosticKind};
use crate::entry::{EntryMeta, StoredEntry};
use crate::ids::parse_timestamp_ms;

/// Position of an entry in file order.
pub type EntryIndex = usize;

const NO_PARENT: u32 = u32::MAX;

/// Entry positions by id. The ids stay where the entries keep them (the table holds positions only);
/// hashing is foldhash's, randomly seeded per process: ids are short and many, SipHash is slow here.
#[derive(Default)]
struct IdTable {
    table: hashbrown::HashTable<u32>,
    hasher: foldhash::fast::RandomState,
}

impl IdTable {
    fn with_capacity(capacity: usize) -> Self {
        Self {
            table: hashbrown::HashTable::with_capacity(capacity),
            hasher: foldhash::fast::RandomState::default(),
        }
    }

    fn get(&self, entries: &[StoredEntry], id: &str) -> Option<u32> {
        let hash = self.hasher.hash_one(id);
        self.table
            .find(hash, |&slot| id_at(entries, slot) == Some(id))
            .copied()
    }

    /// Makes room for `additional` more ids.
    fn reserve(&mut self, entries: &[StoredEntry], additional: usize) {
        let hasher = &self.hasher;
        self.table.reserve(additional, |&slot| {
            hasher.hash_one(id_at(entries, slot).unwrap_or_default())
        });
    }

    /// Points `id` at `slot` (an entry of `entries`); true when it pointed at another entry before.
    fn insert(&mut self, entries: &[StoredEntry], id: &str, slot: u32) -> bool {
        let hasher = &self.hasher;
        let hash = hasher.hash_one(id);
        match self.table.entry(
            hash,
            |&other| id_at(entries, other) == Some(id),
            |&other| hasher.hash_one(id_at(entries, other).unwrap_or_default()),
        ) {
            hashbrown::hash_table::Entry::Occupied(mut occupied) => {
                *occupied.get_mut() = slot;
                true
            }
            hashbrown::hash_table::Entry::Vacant(vacant) => {
                vacant.insert(slot);
                false
            }
        }
    }
}

fn id_at(entries: &[StoredEntry], slot: u32) -> Option<&str> {
    entries.get(slot as usize).map(StoredEntry::id)
}

impl std::fmt::Debug for IdTable {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("IdTable")
            .field("ids", &self.table.len())
            .finish()
    }
}

/// Entries in file order with everything navigation needs.
#[derive(Debug, Default)]
pub struct SessionIndex {
    entries: Vec<StoredEntry>,
    by_id: IdTable,
    parents: Vec<u32>,
    labels: HashMap<Box<str>, LabelState>,
    has_assistant: bool,
    /// Whether any entry is a user or assistant message (Pi 1.6 writes a new session from then on).
    has_conversation: bool,
    /// Whether two entries share an id (then `by_id` holds the last of them).
    has_duplicate_ids: bool,
    /// The entries that name another one besides their parent (a compaction's first kept entry, a
    /// label's target), in file order: what the dangling report checks besides unresolved parents.
    naming_others: Vec<u32>,
}

#[derive(Debug, Clone)]
struct LabelState {
    label: Box<str>,
    timestamp: Box<str>,
}

/// A node of [`SessionIndex::tree`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TreeNode {
    pub index: EntryIndex,
    pub depth: usize,
    pub children: usize,
}

impl SessionIndex {
    /// Indexes `entries` (file order), recording duplicate ids, missing parents and parent cycles.
    pub(crate) fn build(entries: Vec<StoredEntry>, diagnostics: &mut Vec<Diagnostic>) -> Self {
        let mut index = Self::with_capacity(entries.len());
        for entry in entries {
            index.add_loaded(entry, diagnostics);
        }
        index.complete(diagnostics);
        index
    }

    /// An empty index with room for `capacity` entries, filled by [`Self::add_loaded`] while a file
    /// is read and finished by [`Self::complete`].
    pub(crate) fn with_capacity(capacity: usize) -> Self {
        Self {
            entries: Vec::with_capacity(capacity),
            by_id: IdTable::with_capacity(capacity),
            parents: Vec::with_capacity(capacity),
            ..Self::default()
        }
    }

    /// Makes room for `additional` more loaded entries.
    pub(crate) fn reserve(&mut self, additional: usize) {
        self.entries.reserve(additional);
        self.parents.reserve(additional);
        self.by_id.reserve(&self.entries, additional);
    }

    /// Adds a loaded entry at the end: its id is registered (a duplicate reported) and its parent
    /// resolved when already indexed; the others are resolved by [`Self::complete`].
    pub(crate) fn add_loaded(&mut self, entry: StoredEntry, diagnostics: &mut Vec<Diagnostic>) {
        let position = self.entries.len();
        self.entries.push(entry);
        self.parents.push(NO_PARENT);
        if self.register(position)
            && let Some(entry) = self.entries.get(position)
        {
            diagnostics.push(Diagnostic {
                line: Some(entry.line()),
                kind: DiagnosticKind::DuplicateId {
                    id: entry.id().to_owned(),
                },
            });
        }
        let parent = self.resolve_parent(position);
        if let Some(slot) = self.parents.get_mut(position) {
            *slot = parent;
        }
    }

    /// Resolves the parents named before they appeared (all of them again when an id was
    /// repeated: the id then means its last entry), breaks cycles and reports missing parents.
    pub(crate) fn complete(&mut self, diagnostics: &mut Vec<Diagnostic>) {
        for position in 0..self.entries.len() {
            let unresolved = self.parents.get(position) == Some(&NO_PARENT);
            if self.has_duplicate_ids || unresolved {
                let parent = self.resolve_parent(position);
                if let Some(slot) = self.parents.get_mut(position) {
                    *slot = parent;
                }
            }
        }
        self.entries.shrink_to_fit();
        self.parents.shrink_to_fit();
        self.break_cycles(diagnostics);
        self.report_dangling(diagnostics);
    }

    fn resolve_parent(&self, position: usize) -> u32 {
        let entry = &self.entries[position];
        match entry.parent_id() {
            Some(parent) if parent != entry.id() => {
                // Most entries follow their parent: the entry just before holds the latest use of
                // its id, so it is what the table would give, found without hashing. Not once an id
                // was repeated: then a parent means the last entry with its id in the whole file.
                if !self.has_duplicate_ids
                    && let Some(previous) = position.checked_sub(1)
                    && self.entries.get(previous).map(StoredEntry::id) == Some(parent)
                {
                    return u32::try_from(previous).unwrap_or(NO_PARENT - 1);
                }
                self.by_id.get(&self.entries, parent).unwrap_or(NO_PARENT)
            }
            Some(_) | None => NO_PARENT,
        }
    }

    /// Adds an entry at the end; its parent must already be indexed (true for every append).
    pub(crate) fn push(&mut self, entry: StoredEntry) -> EntryIndex {
        let position = self.insert(entry);
        self.parents[position] = self.resolve_parent(position);
        position
    }

    /// Drops the entries from `length` on (appends that were never written), indexing the rest again
    /// with the parents they had.
    pub(crate) fn truncate(&mut self, length: usize) {
        if length >= self.entries.len() {
            return;
        }
        let mut entries = std::mem::take(&mut self.entries);
        entries.truncate(length);
        let mut parents = std::mem::take(&mut self.parents);
        parents.truncate(length);
        let mut rebuilt = Self::with_capacity(length);
        for entry in entries {
            rebuilt.insert(entry);
        }
        rebuilt.parents = parents;
        *self = rebuilt;
    }

    fn insert(&mut self, entry: StoredEntry) -> EntryIndex {
        let position = self.entries.len();
        self.entries.push(entry);
        self.parents.push(NO_PARENT);
        self.register(position);
        position
    }

    /// Records the id, label and role of the entry at `position`; true when its id was taken.
    fn register(&mut self, position: EntryIndex) -> bool {
        let Self {
            entries,
            by_id,
            labels,
            has_assistant,
            has_conversation,
            has_duplicate_ids,
            naming_others,
            ..
        } = self;
        let Some(entry) = entries.get(position) else {
            return false;
        };
        let slot = u32::try_from(position).unwrap_or(NO_PARENT - 1);
        let duplicate = by_id.insert(entries, entry.id(), slot);
        *has_duplicate_ids |= duplicate;
        if matches!(
            entry.meta,
            EntryMeta::Compaction {
                first_kept_entry_id: Some(_)
            } | EntryMeta::Label {
                target_id: Some(_),
                ..
            }
        ) {
            naming_others.push(slot);
        }
        if let EntryMeta::Label {
            target_id: Some(target),
            label,
        } = &entry.meta
        {
            match label.as_deref() {
                Some(label) if !label.is_empty() => {
                    labels.insert(
                        target.clone(),
                        LabelState {
                            label: label.into(),
                            timestamp: entry.timestamp().into(),
                        },
                    );
                }
                Some(_) | None => {
                    labels.remove(target);
                }
            }
        }
        *has_assistant |= entry.is_assistant_message();
        *has_conversation |= entry.is_conversation_message();
        duplicate
    }

    /// All entries in file order.
    pub fn entries(&self) -> &[StoredEntry] {
        &self.entries
    }

    /// The entry at `index`.
    pub fn get(&self, index: EntryIndex) -> Option<&StoredEntry> {
        self.entries.get(index)
    }

    /// The position of the entry with `id` (the later one if ids repeat).
    pub fn position(&self, id: &str) -> Option<EntryIndex> {
        self.by_id.get(&self.entries, id).map(|slot| slot as usize)
    }

    /// Where the first entry with `id` is in `path` (entry positions), comparing positions rather
    /// than ids unless ids repeat.
    pub fn position_in(&self, path: &[EntryIndex], id: &str) -> Option<usize> {
        if self.has_duplicate_ids {
            return path.iter().position(|&index| {
                self.entries
                    .get(index)
                    .is_some_and(|entry| entry.id() == id)
            });
        }
        let target = self.position(id)?;
        path.iter().position(|&index| index == target)
    }

    /// Whether an entry with `id` exists.
    pub fn contains(&self, id: &str) -> bool {
        self.by_id.get(&self.entries, id).is_some()
    }

    /// The resolved parent (`None` for roots, orphans and broken cycles).
    pub fn parent(&self, index: EntryIndex) -> Option<EntryIndex> {
        self.parents
            .get(index)
            .filter(|&&parent| parent != NO_PARENT)
            .map(|&parent| parent as usize)
    }

    /// The label of the entry with `id`, if one is set.
    pub fn label(&self, id: &str) -> Option<&str> {
        self.labels.get(id).map(|state| &*state.label)
    }

    /// `(target id, label, label timestamp)` of every label set.
    pub(crate) fn labels(&self) -> impl Iterator<Item = (&str, &str, &str)> {
        self.labels
            .iter()
            .map(|(target, state)| (&**target, &*state.label, &*state.timestamp))
    }

    /// Whether any entry is an assistant message.
    pub fn has_assistant(&self) -> bool {
        self.has_assistant
    }

    /// Whether any entry is a user or an assistant message: the point from which a new session's
    /// file is written (Pi 1.6; Pi 0.87 waited for the first assistant message).
    pub fn has_conversation(&self) -> bool {
        self.has_conversation
    }

    /// The session's display name: the latest `session_info` name, trimmed; empty clears.
    pub fn session_name(&self) -> Option<String> {
        self.entries
            .iter()
            .rev()
            .find_map(|entry| match &entry.meta {
                EntryMeta::SessionInfo { name } => {
                    Some(name.as_deref().map(js_trim).filter(|name| !name.is_empty()))
                }
                EntryMeta::Message { .. }
                | EntryMeta::ThinkingLevelChange { .. }
                | EntryMeta::ModelChange { .. }
                | EntryMeta::Compaction { .. }
                | EntryMeta::BranchSummary { .. }
                | EntryMeta::Custom
                | EntryMeta::CustomMessage
                | EntryMeta::Label { .. }
                | EntryMeta::ContextEdit { .. }
                | EntryMeta::Usage
                | EntryMeta::Unknown { .. } => None,
            })?
            .map(str::to_owned)
    }

    /// Entries from the root to `leaf`, inclusive, in O(depth).
    pub fn path_to(&self, leaf: EntryIndex) -> Vec<EntryIndex> {
        let mut path = Vec::new();
        let mut current = Some(leaf).filter(|&leaf| leaf < self.entries.len());
        while let Some(index) = current {
            path.push(index);
            current = self.parent(index);
        }
        path.reverse();
        path
    }

    /// Direct children of `parent` (`None`: the roots) in file order.
    pub fn children(&self, parent: Option<EntryIndex>) -> Vec<EntryIndex> {
        (0..self.entries.len())
            .filter(|&index| self.parent(index) == parent)
            .collect()
    }

    /// The whole tree in preorder: roots in file order, children by timestamp (stable, unparseable
    /// timestamps compare equal), as Pi's `getTree` orders them.
    pub fn tree(&self) -> Vec<TreeNode> {
        let count = self.entries.len();
        let mut children: Vec<Vec<u32>> = vec![Vec::new(); count];
        let mut roots = Vec::new();
        for index in 0..count {
            match self.parent(index) {
                Some(parent) => children[parent].push(index as u32),
                None => roots.push(index as u32),
            }
        }
        let times: Vec<Option<i64>> = self
            .entries
            .iter()
            .map(|entry| parse_timestamp_ms(entry.timestamp()))
            .collect();
        for list in &mut children {
            list.sort_by(|&a, &b| match (times[a as usize], times[b as usize]) {
                (Some(a), Some(b)) => a.cmp(&b),
                (Some(_) | None, None) | (None, Some(_)) => std::cmp::Ordering::Equal,
            });
        }
        let mut nodes = Vec::with_capacity(count);
        let mut stack: Vec<(u32, usize)> = roots.iter().rev().map(|&root| (root, 0)).collect();
        while let Some((index, depth)) = stack.pop() {
            let list = &children[index as usize];
            nodes.push(TreeNode {
                index: index as usize,
                depth,
                children: list.len(),
            });
            stack.extend(list.iter().rev().map(|&child| (child, depth + 1)));
        }
        nodes
    }
}

/// JavaScript's `String.prototype.trim`: Unicode white space plus the byte-order mark.
pub(crate) fn js_trim(text: &str) -> &str {
    text.trim_matches(|character: char| character.is_whitespace() || character == '\u{feff}')
}

/// The leaf of an opened file: its last entry, unless its id is repeated (a copied line, a bad
/// merge): a copy would otherwise take the leaf and cut the conversation back to wherever the
/// copy's parent is. Then the last entry whose id no other entry has.
pub(crate) fn default_leaf(index: &SessionIndex, diagnostics: &[Diagnostic]) -> Option<EntryIndex> {
    let entries = index.entries();
    let duplicated: std::collections::HashSet<&str> = diagnostics
        .iter()
        .filter_map(|diagnostic| {
            if let DiagnosticKind::DuplicateId { id } = &diagnostic.kind {
                Some(id.as_str())
            } else {
                None
            }
        })
        .collect();
    let last = entries.len().checked_sub(1);
    if duplicated.is_empty() {
        return last;
    }
    // Neither copy of a repeated id: the next append names the leaf by its id, which means the
    // last copy, so a leaf on an earlier one moved the conversation onto the other at the next
    // label or message.
    (0..entries.len())
        .rev()
        .find(|&position| !duplicated.contains(entries[position].id()))
        .or(last)
}
