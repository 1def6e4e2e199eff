//! The engine's message cache: the branch's context messages read once and shared between views,
//! compactions and usage counts, and let go when a compaction replaces them.

use std::collections::HashMap;
use std::sync::Arc;

use ctxkit_protocol::{AgentMessage, MessageContent};
use ctxkit_session::{ContextMessage, ContextMessageKind, Session, parse_timestamp_ms};
use ctxkit_transform::MeasuredMessage;

use crate::error::Result;
use crate::events::ContextUsage;
use crate::state::State;

/// The context messages of the current branch, shared from the state's cache.
pub(crate) fn shared_transcript(state: &mut State) -> Result<Vec<Arc<MeasuredMessage>>> {
    // The session keeps the leaf's context between calls: only its message list is copied.
    let context = state.session.leaf_context().messages.clone();
    let mut messages = Vec::with_capacity(context.len());
    for message in &context {
        if let Some(shared) = shared_message(state, message)? {
            messages.push(shared);
        }
    }
    Ok(messages)
}

/// The messages of a shared transcript, for what reads only the messages.
pub(crate) fn plain(transcript: &[Arc<MeasuredMessage>]) -> Vec<&AgentMessage> {
    transcript.iter().map(|message| message.message()).collect()
}

/// Lets the cached context messages go: a compaction replaces the context they were read for, and
/// its planning reads the span again, so a branch of a million messages is not held twice (once
/// cached, once as the span). The next view reads only what the compaction kept. The caller must
/// not hold a transcript shared from the cache either.
pub(crate) fn release_messages(state: &mut State) {
    state.messages = HashMap::new();
}

/// One context message from the state's cache, read and cached on first use; `None` when its entry
/// is gone.
pub(crate) fn shared_message(
    state: &mut State,
    message: &ContextMessage,
) -> Result<Option<Arc<MeasuredMessage>>> {
    load_message(state, message, Cache::Keep)
}

/// One context message read without caching it: for counts over a branch that may be long.
pub(crate) fn counted_message(
    state: &mut State,
    message: &ContextMessage,
) -> Result<Option<Arc<MeasuredMessage>>> {
    load_message(state, message, Cache::Skip)
}

/// Whether a message parsed for the context stays in the engine's cache.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Cache {
    /// Kept: it goes into the next request.
    Keep,
    /// Not kept: it is only counted (a count over a long branch must not hold the branch).
    Skip,
}

fn load_message(
    state: &mut State,
    message: &ContextMessage,
    cache: Cache,
) -> Result<Option<Arc<MeasuredMessage>>> {
    let Some(entry) = state.session.index().get(message.entry) else {
        return Ok(None);
    };
    // An edited message depends on its edit as well: not cached.
    if message.edit.is_some() {
        return Ok(Some(Arc::new(state.session.message(message)?.into())));
    }
    if message.kind == ContextMessageKind::CompactionSummary {
        // It carries the compaction's on-demand block, if any, to the request builders.
        let mut summary = state.session.message(message)?;
        crate::on_demand::attach_block(entry, &mut summary);
        return Ok(Some(Arc::new(summary.into())));
    }
    let kind = match message.kind {
        ContextMessageKind::Stored => 0,
        ContextMessageKind::Custom => 1,
        ContextMessageKind::BranchSummary => 2,
        ContextMessageKind::CompactionSummary => 3,
        ContextMessageKind::CompactionSystem => 4,
    };
    let cached = state
        .messages
        .get(entry.id())
        .and_then(|slots| slots[kind].as_ref());
    if let Some(shared) = cached {
        return Ok(Some(Arc::clone(shared)));
    }
    let shared = Arc::new(MeasuredMessage::new(state.session.message(message)?));
    match cache {
        Cache::Keep => {
            state.messages.entry(entry.id().into()).or_default()[kind] = Some(Arc::clone(&shared));
        }
        Cache::Skip => {}
    }
    Ok(Some(shared))
}

/// The context's token estimate (the reference's `estimateContextTokens`), reading only the
/// messages from the last reply with valid usage on: an append costs the messages since the last
/// reply, not the whole branch.
fn context_tokens(state: &mut State) -> Result<u64> {
    // `estimate_context_tokens` over the suffix, one message at a time: a branch of a million
    // messages without usage is counted without holding its messages.
    let mut trailing = 0;
    let mut position = state.session.leaf_context().messages.len();
    while position > 0 {
        position -= 1;
        let message = state.session.leaf_context().messages[position];
        let Some(shared) = load_message(state, &message, Cache::Skip)? else {
            continue;
        };
        if let Some((_, usage)) = ctxkit_tokens::last_valid_usage(&[shared.message()]) {
            return Ok(usage + trailing);
        }
        trailing += ctxkit_tokens::estimate_tokens(&shared);
    }
    Ok(trailing)
}

/// The context messages of the current branch.
pub(crate) fn transcript(session: &Session) -> Result<Vec<AgentMessage>> {
    Ok(session.messages(&session.leaf_context().messages)?)
}

/// Epoch ms of the latest compaction on the current branch.
pub(crate) fn latest_compaction_ms(session: &Session) -> Option<i64> {
    session
        .latest_compaction()
        .and_then(|(_, entry)| parse_timestamp_ms(entry.timestamp()))
}

/// Context usage from the messages cache: entries never change, so a message is parsed once.
pub(crate) fn context_usage(state: &mut State) -> Result<Option<ContextUsage>> {
    let configured_window = state.context_window();
    if configured_window == 0 {
        return Ok(None);
    }
    // The provider's stated limit when below the window, as the threshold plans with it.
    let window = state.limit_window();
    let session = &state.session;
    if let Some((compaction, _)) = session.latest_compaction() {
        let path = session.leaf_path();
        let fresh = path[compaction + 1..]
            .iter()
            .rev()
            .filter_map(|&position| session.index().get(position))
            // Only replies are parsed (a tool output may have to be read back from the file).
            .filter(|entry| entry.role() == Some("assistant"))
            // A reply whose usage is all zeros counted nothing (an imported reply the source
            // recorded no usage for, a copy): Pi 1.6.0 passes over it to an earlier one.
            .find_map(|entry| match entry.parse_message() {
                Some(Ok(AgentMessage::Assistant(reply))) if !reply.is_aborted_or_error() => reply
                    .usage
                    .map(|usage| usage.context_tokens())
                    .filter(|tokens| *tokens > 0),
                Some(_) | None => None,
            });
        if fresh.is_none() {
            return Ok(Some(ContextUsage {
                tokens: None,
                context_window: window,
                configured_window,
                limit_learned: window < configured_window,
                percent: None,
            }));
        }
    }
    let tokens = context_tokens(state)?;
    Ok(Some(ContextUsage {
        tokens: Some(tokens),
        context_window: window,
        configured_window,
        limit_learned: window < configured_window,
        percent: Some(tokens as f64 / window as f64 * 100.0),
    }))
}

/// The text blocks of a content, joined by newlines.
pub(crate) fn content_text(content: &MessageContent) -> String {
    content.joined_text("\n")
}
