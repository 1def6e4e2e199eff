//! The context figure a status line shows: the reference's usage (the last reply's count plus
//! estimates of what followed it) while a reply reports one, else ctxkit's own estimate. The
//! reference shows the context as unknown right after a compaction, and a session whose replies
//! all failed counts only its typed prompts; ctxkit estimates the messages the next request sends
//! (error and aborted replies are not sent), which the caller completes with the system prompt
//! and tools it sends.

use crate::engine::{Engine, State};
use crate::error::Result;

/// How full the context is, as a status line shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ContextStatus {
    /// The reference's context tokens, or, when `estimated`, ctxkit's estimate of the messages the
    /// next request sends (without the system prompt and tools).
    pub tokens: u64,
    /// The window of the model in use.
    pub context_window: u64,
    /// No reply since the latest compaction (or ever) reports usage: `tokens` is an estimate.
    pub estimated: bool,
}

impl Engine {
    /// The context figure for a status line; `None` without a model or window (as
    /// [`Engine::context_usage`]).
    pub async fn context_status(&self) -> Result<Option<ContextStatus>> {
        context_status(&mut *self.lock().await)
    }
}

fn context_status(state: &mut State) -> Result<Option<ContextStatus>> {
    let Some(usage) = crate::messages::context_usage(state)? else {
        return Ok(None);
    };
    let counted = match usage.tokens {
        Some(tokens) if has_counted_reply(state)? => Some(tokens),
        Some(_) | None => None,
    };
    let (tokens, estimated) = match counted {
        Some(tokens) => (tokens, false),
        None => (sent_tokens(state)?, true),
    };
    Ok(Some(ContextStatus {
        tokens,
        context_window: usage.context_window,
        estimated,
    }))
}

/// Whether a reply on the branch's context reports usage (the reference's anchor), read from the
/// newest message back, stopping at the first one.
fn has_counted_reply(state: &mut State) -> Result<bool> {
    let mut position = state.session.leaf_context().messages.len();
    while position > 0 {
        position -= 1;
        let message = state.session.leaf_context().messages[position];
        let Some(shared) = crate::messages::counted_message(state, &message)? else {
            continue;
        };
        if ctxkit_tokens::last_valid_usage(std::slice::from_ref(&shared)).is_some() {
            return Ok(true);
        }
    }
    Ok(false)
}

/// The estimate of the context messages the next request sends: all but error and aborted replies.
fn sent_tokens(state: &mut State) -> Result<u64> {
    let count = state.session.leaf_context().messages.len();
    let mut tokens = 0;
    for position in 0..count {
        let message = state.session.leaf_context().messages[position];
        let Some(shared) = crate::messages::counted_message(state, &message)? else {
            continue;
        };
        let sent = shared
            .as_assistant()
            .is_none_or(|reply| !reply.is_aborted_or_error());
        if sent {
            tokens += ctxkit_tokens::estimate_tokens(&shared);
        }
    }
    Ok(tokens)
}
