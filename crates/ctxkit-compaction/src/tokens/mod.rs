//! Token accounting: counts reported by providers, the reference's chars/4 estimate, and (to come)
//! better estimators and exact tokenizers. Every count says where it came from.

mod estimate;

pub use estimate::{
    ContextTokens, estimate_context_tokens, estimate_tokens, should_compact, utf16_len,
};
