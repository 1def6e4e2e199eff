//! Appends that go together: a command that writes several entries (an edit of a reply and of its
//! tool results, an undo's marker and the copies after it) writes them with one write, or none of
//! them, so a failure (a full disk) never leaves the file half changed.

use super::Session;
use crate::error::Result;

impl Session {
    /// Runs `appends`, which append entries to this session, as one batch: the entries they append
    /// are indexed as they go (each may name the one before), and written together with one write
    /// when `appends` returns `Ok`. When `appends` or the write fails, none of them is written and
    /// the session is as it was before (its entries and its leaf); the error is returned. A batch
    /// inside a batch is part of the outer one.
    pub fn append_batch<T>(&mut self, appends: impl FnOnce(&mut Self) -> Result<T>) -> Result<T> {
        if self.batching {
            return appends(self);
        }
        let entries_before = self.index.entries().len();
        let leaf_before = self.leaf;
        self.batching = true;
        let outcome = appends(self);
        self.batching = false;
        let outcome = outcome.and_then(|value| self.persist_batch(&mut []).map(|()| value));
        if outcome.is_err() {
            self.index.truncate(entries_before);
            self.leaf = leaf_before;
            self.leaf_moved();
        }
        outcome
    }
}

#[cfg(test)]
mod tests;
