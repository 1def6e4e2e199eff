//! The names ctxkit's pinned context is stored under: read by the engine that writes it, by undo
//! (what a compaction caused), by the copies an undo or a forget appends (a pin keeps its id) and by
//! the transform that places it in the model's view.

/// The custom entry type recording pins and unpins (invisible to the model).
pub const PIN_ENTRY_TYPE: &str = "ctxkit.pin";

/// The key of a pin entry's `data` naming the pin: on an unpin, the pin it removes; on a pin
/// appended again as a copy (an undone compaction's or a forget's later entries), the id the pin
/// was first recorded under, which stays its id, so the id a client was given and the one the
/// model's `<pinned id>` shows keep naming it. A pin written once has none: its entry's id is its
/// id.
pub const PIN_ID_KEY: &str = "pinId";

/// The custom message type carrying pinned text to the model.
pub const PINNED_MESSAGE_TYPE: &str = "ctxkit.pinned";

/// The key of an entry's `data` or `details` naming the compaction the entry was appended because
/// of (pinned text added back once the compaction cut it away). An undo of that compaction leaves
/// such an entry behind: without the compaction it says again what the restored path already
/// shows.
pub const AFTER_COMPACTION_KEY: &str = "afterCompaction";
