//! The names ctxkit's pinned context is stored under: read by the engine that writes it, by undo
//! (what a compaction caused) and by the transform that places it in the model's view.

/// The custom message type carrying pinned text to the model.
pub const PINNED_MESSAGE_TYPE: &str = "ctxkit.pinned";

/// The key of an entry's `data` or `details` naming the compaction the entry was appended because
/// of (pinned text added back once the compaction cut it away). An undo of that compaction leaves
/// such an entry behind: without the compaction it says again what the restored path already
/// shows.
pub const AFTER_COMPACTION_KEY: &str = "afterCompaction";
