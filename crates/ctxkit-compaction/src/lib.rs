//! Compaction for ctxkit: token accounting, cut points, preparation, conversation serialization,
//! summaries (through a model-agnostic `Summarizer`), branch summaries. Planning is pure; only the
//! runner talks to a model.

#![cfg_attr(test, allow(clippy::unwrap_used, clippy::expect_used))]
#![deny(clippy::print_stdout, clippy::print_stderr)]

mod tokens;

pub use tokens::{
    ContextTokens, estimate_context_tokens, estimate_tokens, should_compact, utf16_len,
};
