//! The context at the session's leaf, kept between calls so that a turn of an agent costs what it
//! appends, not the session's length: built once by a walk of the leaf's path, extended in place
//! when an entry is appended below the leaf, and dropped (rebuilt on the next call) when the leaf
//! moves elsewhere, when a compaction or a context edit is appended (each changes what earlier
//! entries contribute), or when the index is replaced. It always equals the full rebuild
//! (`context::build_context_on_path` over `SessionIndex::path_to`): the tests below compare the two
//! over random sequences of appends, branches, compactions and edits.

use std::borrow::Cow;
use std::collections::HashSet;

use super::Session;
use crate::context::{SessionContext, build_context_on_path, entry_messages, model_set_by};
use crate::entry::{EntryMeta, StoredEntry};
use crate::index::{EntryIndex, SessionIndex};

/// The leaf's path and context, as of `entries` entries in the index.
#[derive(Debug, Clone)]
pub(crate) struct LeafContext {
    leaf: Option<EntryIndex>,
    /// How many entries the index held when this was last brought up to date: a cache that missed
    /// an append is never used.
    entries: usize,
    /// Root → leaf.
    path: Vec<EntryIndex>,
    context: SessionContext,
    /// The position in `path` of the latest compaction on it.
    compaction: Option<usize>,
    /// Every id a `context_edit` on the path names: appending an entry with one of them would
    /// change what it contributes, so that append rebuilds.
    edit_targets: HashSet<Box<str>>,
}

impl LeafContext {
    /// The full build: a walk of the path from `leaf` to the root.
    pub(crate) fn build(index: &SessionIndex, leaf: Option<EntryIndex>) -> Self {
        let path = leaf.map(|leaf| index.path_to(leaf)).unwrap_or_default();
        let context = build_context_on_path(index, &path);
        let compaction = path.iter().rposition(|&position| {
            index
                .get(position)
                .is_some_and(|entry| matches!(entry.meta, EntryMeta::Compaction { .. }))
        });
        let edit_targets = path
            .iter()
            .filter_map(|&position| {
                let EntryMeta::ContextEdit {
                    target_id: Some(target),
                } = &index.get(position)?.meta
                else {
                    return None;
                };
                Some(target.clone())
            })
            .collect();
        Self {
            leaf: path.last().copied(),
            entries: index.entries().len(),
            path,
            context,
            compaction,
            edit_targets,
        }
    }

    /// Whether this is the context of `leaf` in `index` as it is now.
    fn is_current(&self, index: &SessionIndex, leaf: Option<EntryIndex>) -> bool {
        self.leaf == leaf && self.entries == index.entries().len()
    }

    /// Takes in the entry just pushed at `position` (the new leaf). False when it cannot be taken
    /// in place: the caller drops the cache.
    fn extend(&mut self, index: &SessionIndex, position: EntryIndex) -> bool {
        // The index resolves the parent by id: with duplicate ids in a loaded file it may not be
        // the leaf the append was made at.
        if self.entries + 1 != index.entries().len() || index.parent(position) != self.leaf {
            return false;
        }
        let Some(entry) = index.get(position) else {
            return false;
        };
        if self.edit_targets.contains(entry.id()) || !self.take_settings(entry) {
            return false;
        }
        self.context
            .messages
            .extend(entry_messages(position, entry));
        self.path.push(position);
        self.leaf = Some(position);
        self.entries += 1;
        true
    }

    /// The thinking level and model `entry` sets; false for the entries that change what earlier
    /// ones contribute (a compaction, a context edit).
    fn take_settings(&mut self, entry: &StoredEntry) -> bool {
        match &entry.meta {
            EntryMeta::Compaction { .. } | EntryMeta::ContextEdit { .. } => return false,
            EntryMeta::ThinkingLevelChange { level: Some(level) } => {
                self.context.thinking_level = level.to_string();
            }
            EntryMeta::ModelChange { .. } => self.context.model = model_set_by(entry),
            EntryMeta::Message {
                role: Some(role), ..
            } if &**role == "assistant" => self.context.model = model_set_by(entry),
            EntryMeta::ThinkingLevelChange { level: None }
            | EntryMeta::Message { .. }
            | EntryMeta::BranchSummary { .. }
            | EntryMeta::Custom
            | EntryMeta::CustomMessage
            | EntryMeta::Label { .. }
            | EntryMeta::SessionInfo { .. }
            | EntryMeta::Usage
            | EntryMeta::Unknown { .. } => {}
        }
        true
    }
}

impl Session {
    /// The leaf's context state: the kept one when it is current, else built now (and kept when
    /// none was).
    fn leaf_state(&self) -> Cow<'_, LeafContext> {
        let kept = self
            .leaf_context
            .get_or_init(|| LeafContext::build(&self.index, self.leaf));
        if kept.is_current(&self.index, self.leaf) {
            Cow::Borrowed(kept)
        } else {
            Cow::Owned(LeafContext::build(&self.index, self.leaf))
        }
    }

    /// The context at the current leaf, kept between calls and extended as entries are appended
    /// (what [`Session::build_context`] returns, without copying it).
    pub fn leaf_context(&self) -> Cow<'_, SessionContext> {
        match self.leaf_state() {
            Cow::Borrowed(state) => Cow::Borrowed(&state.context),
            Cow::Owned(state) => Cow::Owned(state.context),
        }
    }

    /// The positions of the entries from the root to the leaf (what [`Session::branch_path`] of
    /// the leaf holds), kept between calls.
    pub fn leaf_path(&self) -> Cow<'_, [EntryIndex]> {
        match self.leaf_state() {
            Cow::Borrowed(state) => Cow::Borrowed(&state.path[..]),
            Cow::Owned(state) => Cow::Owned(state.path),
        }
    }

    /// The latest compaction on the leaf's path and its position in [`Session::leaf_path`].
    pub fn latest_compaction(&self) -> Option<(usize, &StoredEntry)> {
        let state = self.leaf_state();
        let at = state.compaction?;
        let entry = self.index.get(*state.path.get(at)?)?;
        Some((at, entry))
    }

    /// After an entry was pushed at `position` and made the leaf: the kept context takes it in,
    /// or is dropped.
    pub(super) fn leaf_appended(&mut self, position: EntryIndex) {
        let index = &self.index;
        if let Some(state) = self.leaf_context.get_mut()
            && !state.extend(index, position)
        {
            self.leaf_context.take();
        }
    }

    /// After the leaf moved or the index was replaced: the kept context is dropped.
    pub(super) fn leaf_moved(&mut self) {
        self.leaf_context.take();
    }
}

#[cfg(test)]
mod tests;
