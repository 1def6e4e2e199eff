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

    /// A reply overflowed the window and compaction cannot make room: no compaction leaves a
    /// context that fits (`after_compaction`), or there is nothing left to compact and the turn
    /// alone does not fit.
    #[error("{}", unrecoverable_text(self))]
    OverflowUnrecoverable {
        /// ctxkit's estimate of the current turn (from the last user message on).
        turn_tokens: u64,
        /// The smallest context a compaction could leave (kept messages, room for its summary,
        /// system prompt and tools, in the provider's count); `None` when nothing is left to
        /// compact.
        after_compaction: Option<u64>,
        /// The window in force: the provider's stated limit when it is below the model's.
        context_window: u64,
        /// The model's configured window (`contextWindow`).
        configured_window: u64,
        /// What the provider counted of the last refused request, when its error said.
        provider_counted: Option<u64>,
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

    /// A text to pin holds nothing but blanks: it would put an empty `<pinned>` message in every
    /// later request.
    #[error("the text to pin is empty; pin the text to keep in view")]
    EmptyPin,

    /// A prompt holds no image and no text but blanks. Providers refuse an empty text block
    /// (Anthropic answers 400), so it is refused before anything is stored or sent.
    #[error("the prompt is empty; write what the model should do")]
    EmptyPrompt,

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
            CompactionError::Summarizer { message, .. } => Self::Summarization(message),
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

/// The window a message names: the model's, or the provider's stated limit with the configured
/// window beside it (`the provider's 5000-token limit (16000 configured)`).
pub(crate) fn window_phrase(context_window: u64, configured_window: u64) -> String {
    if context_window < configured_window {
        format!("the provider's {context_window}-token limit ({configured_window} configured)")
    } else {
        format!("the model's {context_window}-token context window")
    }
}

/// Why an overflow cannot be recovered. A turn under half the window that still does not fit says
/// more about the provider's limit than about the turn (the message blamed a turn of 6 tokens);
/// once the provider stated its limit, the message names it.
fn unrecoverable_text(error: &EngineError) -> String {
    let EngineError::OverflowUnrecoverable {
        turn_tokens,
        after_compaction,
        context_window,
        configured_window,
        provider_counted,
    } = *error
    else {
        return String::new();
    };
    let window = window_phrase(context_window, configured_window);
    let stated = context_window < configured_window;
    let turn_is_large = turn_tokens.saturating_mul(2) > context_window;
    match (after_compaction, turn_is_large) {
        (Some(after), true) => format!(
            "Context overflow: the current turn alone (about {turn_tokens} tokens) does not fit {window}: the smallest compaction would still leave about {after} tokens; send a shorter message, or switch to a model with a larger window"
        ),
        (Some(after), false) => format!(
            "Context overflow: even the smallest compaction would leave about {after} tokens (the kept messages, the summary, the system prompt and tools), too many for {window} with room for the reply; switch to a model with a larger window"
        ),
        (None, false) if !stated => format!(
            "Context overflow: the provider refused the request although the current turn is about {turn_tokens} tokens of {window}, and there is nothing older left to compact; its real limit is smaller: set the model's `contextWindow` to it, or switch models"
        ),
        // The provider's own count, when it gave one: ctxkit's estimate of the turn may be far
        // below the limit ("about 3004 tokens does not fit the 12000-token limit" read as false).
        (None, _) => match provider_counted {
            Some(counted) => format!(
                "Context overflow: the provider counted {counted} tokens for the request, over {window}, and there is nothing older left to compact (ctxkit estimates the current turn at about {turn_tokens} tokens; the rest is what the request carries besides the messages, or the provider counts more); send a shorter message, or switch to a model with a larger window"
            ),
            None => format!(
                "Context overflow: the current turn alone (about {turn_tokens} tokens) does not fit {window} and there is nothing older left to compact; send a shorter message, or switch to a model with a larger window"
            ),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unrecoverable(turn_tokens: u64, context_window: u64) -> EngineError {
        EngineError::OverflowUnrecoverable {
            turn_tokens,
            after_compaction: None,
            context_window,
            configured_window: context_window,
            provider_counted: None,
        }
    }

    #[test]
    fn an_unrecoverable_overflow_blames_the_turn_only_when_it_is_large() {
        let large = unrecoverable(150_000, 200_000);
        assert!(
            large
                .to_string()
                .contains("the current turn alone (about 150000 tokens)")
        );
        let text = unrecoverable(6, 8_000).to_string();
        assert!(text.contains("its real limit is smaller"), "{text}");
        assert!(!text.contains("send a shorter message"), "{text}");
    }

    /// Round 97: the provider had stated 5,000 and the message named the configured 16,000,
    /// asking the user to set `contextWindow` to a limit it did not give.
    #[test]
    fn an_unrecoverable_overflow_names_the_limit_the_provider_stated() {
        let text = EngineError::OverflowUnrecoverable {
            turn_tokens: 4_038,
            after_compaction: None,
            context_window: 5_000,
            configured_window: 16_000,
            provider_counted: None,
        }
        .to_string();
        assert!(
            text.contains("the provider's 5000-token limit (16000 configured)"),
            "{text}"
        );
        assert!(!text.contains("16000-token"), "{text}");
        assert!(
            !text.contains("set the model's `contextWindow` to it"),
            "{text}"
        );
        let text = EngineError::OverflowUnrecoverable {
            turn_tokens: 1_000,
            after_compaction: Some(5_200),
            context_window: 5_000,
            configured_window: 16_000,
            provider_counted: None,
        }
        .to_string();
        assert!(text.contains("would leave about 5200 tokens"), "{text}");
        assert!(!text.contains("nothing older left"), "{text}");
    }

    /// QA (smaller finding): the provider counted 14000 against its stated 12000 and the message
    /// said "the current turn alone (about 3004 tokens) does not fit the provider's 12000-token
    /// limit", which reads as 3004 > 12000.
    #[test]
    fn an_unrecoverable_overflow_names_the_provider_s_count() {
        let text = EngineError::OverflowUnrecoverable {
            turn_tokens: 3_004,
            after_compaction: None,
            context_window: 12_000,
            configured_window: 16_000,
            provider_counted: Some(14_000),
        }
        .to_string();
        assert!(
            text.contains("the provider counted 14000 tokens for the request, over the provider's 12000-token limit"),
            "{text}"
        );
        assert!(text.contains("about 3004 tokens"), "{text}");
        assert!(!text.contains("turn alone"), "{text}");
    }
}
