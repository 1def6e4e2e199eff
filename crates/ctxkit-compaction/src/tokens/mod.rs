//! Token accounting: counts reported by providers, the reference's chars/4 estimate, ctxkit's
//! heuristic estimate, and exact cl100k/o200k counts. Every count says where it came from. The
//! chars/4 estimate lives in `ctxkit-tokens` (so crates that need only it skip the tokenizers).

mod count;
mod encoding;
mod heuristic;

pub use count::{
    ContextTokenCount, Estimator, Heuristic, IMAGE_TOKENS, MESSAGE_OVERHEAD_TOKENS,
    REPLY_PRIMING_TOKENS, TOOL_CALL_OVERHEAD_TOKENS, TokenCount, TokenSource, UnknownEstimator,
    context_token_count, count_message_tokens, count_messages_tokens,
};
pub use encoding::{Encoding, count_text_tokens};
pub use heuristic::estimate_text_tokens;
