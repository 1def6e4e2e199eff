//! Engine errors. Messages are shown to users and sent over the stdio protocol as they are.

use ctxkit_compaction::CompactionError;
use ctxkit_session::SessionError;

/// Why an engine operation failed. Nothing is written to the session when one is returned, except
/// where a variant says otherwise.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    /// Reading or writing the session failed.
    #[error(transparent)]
    Session(#[from] SessionError),

    /// Planning a compaction failed (an unreadable entry, for example).
    #[error("{0}")]
    Compaction(CompactionError),

    /// The branch already ends in a compaction.
    #[error("Already compacted")]
    AlreadyCompacted,

    /// The branch holds nothing a compaction could replace.
    #[error("Nothing to compact (session too small)")]
    NothingToCompact,

    /// A reply overflowed the window and compaction cannot make room: everything before the current
    /// turn is compacted already, and the turn alone does not fit.
    #[error("{}", unrecoverable_text(*turn_tokens, *context_window))]
    OverflowUnrecoverable {
        turn_tokens: u64,
        context_window: u64,
    },

    /// A compaction or branch summary was cancelled by the caller or a hook.
    #[error("Compaction cancelled")]
    Cancelled,

    /// The summarizer failed after its retries.
    #[error("Summarization failed: {0}")]
    Summarization(String),

    /// No entry has this id.
    #[error("Entry {0} not found")]
    EntryNotFound(String),

    /// Forking needs a user message (position `before`) or any entry (position `at`).
    #[error("Invalid entry ID for forking")]
    InvalidForkEntry,

    /// Cloning needs a current entry.
    #[error("Cannot clone session: no current entry selected")]
    NothingToClone,

    /// A pin id that names no active pin.
    #[error("no active pin `{0}`")]
    PinNotFound(String),

    /// A pinned text would exceed the pinned-context token cap.
    #[error(
        "pinned context would take {tokens} tokens, over the cap of {cap} (setting `pinned.maxTokens`)"
    )]
    PinCapExceeded { tokens: u64, cap: u64 },

    /// A span to forget is not on the current branch.
    #[error("entry {0} is not on the current branch")]
    NotOnBranch(String),

    /// A span to forget lies before a compaction, which keeps entries by id.
    #[error(
        "cannot forget entries before compaction {0}: it keeps entries by id; forget a span after it, or undo it first"
    )]
    ForgetBeforeCompaction(String),
}

impl From<CompactionError> for EngineError {
    fn from(error: CompactionError) -> Self {
        match error {
            CompactionError::Session(source) => Self::Session(source),
            CompactionError::Cancelled => Self::Cancelled,
            CompactionError::Summarizer { message } => Self::Summarization(message),
            CompactionError::EntryNotFound { id } => Self::EntryNotFound(id),
            error @ CompactionError::InvalidEntry { .. } => Self::Compaction(error),
        }
    }
}

impl EngineError {
    /// Whether this error means "cancelled" (by the caller or a hook).
    pub fn is_cancelled(&self) -> bool {
        matches!(self, Self::Cancelled)
    }
}

/// Engine results.
pub type Result<T, E = EngineError> = std::result::Result<T, E>;

/// Why an overflow cannot be recovered. A turn under half the window that still does not fit says
/// more about the provider's limit than about the turn (the message blamed a turn of 6 tokens).
fn unrecoverable_text(turn_tokens: u64, context_window: u64) -> String {
    if turn_tokens.saturating_mul(2) <= context_window {
        format!(
            "Context overflow: the provider refused the request although the current turn is about {turn_tokens} tokens of the model's {context_window}-token context window, and there is nothing older left to compact; its real limit is smaller: set the model's `contextWindow` to it, or switch models"
        )
    } else {
        format!(
            "Context overflow: the current turn alone (about {turn_tokens} tokens) does not fit the model's context window ({context_window} tokens) and there is nothing older left to compact; send a shorter message, or switch to a model with a larger window"
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unrecoverable_overflow_blames_the_turn_only_when_it_is_large() {
        let large = EngineError::OverflowUnrecoverable {
            turn_tokens: 150_000,
            context_window: 200_000,
        };
        assert!(
            large
                .to_string()
                .contains("the current turn alone (about 150000 tokens)")
        );
        let small = EngineError::OverflowUnrecoverable {
            turn_tokens: 6,
            context_window: 8_000,
        };
        let text = small.to_string();
        assert!(text.contains("its real limit is smaller"), "{text}");
        assert!(!text.contains("send a shorter message"), "{text}");
    }
}
