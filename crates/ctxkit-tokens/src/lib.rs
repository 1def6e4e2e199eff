//! Token accounting for ctxkit, every count saying where it came from: counts reported by providers,
//! the reference's chars/4 estimate (`estimate`), ctxkit's heuristic estimate (`heuristic`), exact
//! cl100k/o200k counts (`encoding`), and the choice between them (`count`).

#![cfg_attr(test, allow(clippy::unwrap_used, clippy::expect_used))]
#![deny(clippy::print_stdout, clippy::print_stderr)]

mod budget;
mod count;
mod encoding;
mod estimate;
mod heuristic;
mod js_length;

pub use budget::{
    compaction_threshold, should_compact, sliding_window_floor_percent, threshold_percent,
};
pub use count::{
    ContextTokenCount, ContextTokenCounter, Estimator, Heuristic, IMAGE_TOKENS,
    MESSAGE_OVERHEAD_TOKENS, REPLY_PRIMING_TOKENS, TOOL_CALL_OVERHEAD_TOKENS, TokenCount,
    TokenSource, UnknownEstimator, context_token_count, count_message_tokens,
    count_messages_tokens,
};
pub use encoding::{Encoding, count_text_tokens};
pub use estimate::{
    ContextTokens, estimate_context_tokens, estimate_tokens, last_valid_usage, utf16_len,
};
pub use heuristic::estimate_text_tokens;
pub use js_length::stringified_len;
