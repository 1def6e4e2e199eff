//! Cache-prefix summaries (`compaction.cachePrefix`): the agent hands the engine each model request
//! it sends ([`Engine::record_model_request`]), since the engine owns neither the system prompt nor
//! the tools; a compaction then continues that request, with what the session gained since it (the
//! reply, tool results) appended. A request the branch has moved away from, that a compaction has
//! replaced, or that overflowed (the provider counts more than ctxkit's estimate, which the fit
//! check would go by) is not continued: the summary is a fresh prompt and the compaction says why.

use ctxkit_compaction::CachePrefix;
use ctxkit_summarizer::ConversationPrefix;

use crate::engine::Engine;
use crate::error::Result;
use crate::state::State;

/// The last model request of this engine's session, and where the session stood when it was sent.
#[derive(Debug, Clone)]
pub(crate) struct RecordedRequest {
    prefix: ConversationPrefix,
    /// The leaf when the request was sent.
    leaf: Option<String>,
    /// The context messages on the branch then.
    context_messages: usize,
    /// The request overflowed: the provider refused it as too long (or counted it over the
    /// window), so continuing it, which only adds to it, would overflow again.
    overflowed: bool,
}

impl Engine {
    /// Records the model request about to be sent (its messages as sent, system prompt, tools,
    /// reasoning), so that a compaction can continue it when `compaction.cachePrefix` is on (with
    /// the setting off it is dropped), and so that overflow recovery learns how much more than
    /// ctxkit's estimate the provider counts (always). Call it before anything more is appended to the session,
    /// e.g. when the reply has arrived and before it is appended.
    pub async fn record_model_request(&self, prefix: ConversationPrefix) {
        self.record(std::borrow::Cow::Owned(prefix)).await;
    }

    /// Like [`Engine::record_model_request`], copying the request only when a compaction may
    /// continue it: for a caller that keeps the messages (the simulator measures them after).
    pub async fn record_model_request_copied(&self, prefix: &ConversationPrefix) {
        self.record(std::borrow::Cow::Borrowed(prefix)).await;
    }

    async fn record(&self, prefix: std::borrow::Cow<'_, ConversationPrefix>) {
        let mut state = self.lock().await;
        // Overflow recovery compares what the provider counts with this estimate, whatever the
        // cache-prefix setting.
        let estimate = crate::recovery::RequestEstimate::of(&prefix);
        state.last_request_estimate = Some(estimate);
        state.request_overhead = estimate.overhead;
        // The next request is projected from this one's count and its view (`projection`).
        crate::projection::note_request(&mut state);
        // On-demand compaction sends the span with this request's system prompt and tools.
        let on_demand =
            state.settings.compaction.provider == ctxkit_settings::SummaryProvider::OnDemand;
        if !state.settings.compaction.cache_prefix && !on_demand {
            state.last_request = None;
            return;
        }
        let leaf = state.session.leaf_id().map(str::to_owned);
        let context_messages = state.session.leaf_context().messages.len();
        let prefix = prefix.into_owned();
        state.last_request = Some(RecordedRequest {
            prefix: ConversationPrefix {
                request_messages: prefix.messages.len(),
                ..prefix
            },
            leaf,
            context_messages,
            overflowed: false,
        });
    }
}

impl RecordedRequest {
    /// The request as recorded (its messages, then nothing more).
    pub(crate) fn prefix(&self) -> &ConversationPrefix {
        &self.prefix
    }

    /// The request overflowed; a summary goes out as a fresh prompt. ctxkit's estimate of it may
    /// be under the window, but the provider's count was not.
    pub(crate) fn overflowed(&mut self) {
        self.overflowed = true;
    }
}

/// How the next compaction's summary requests are sent.
pub(crate) fn cache_prefix(state: &State) -> CachePrefix {
    conversation(state).unwrap_or_else(|error| {
        CachePrefix::Unavailable(format!(
            "the messages after the last model request could not be read: {error}"
        ))
    })
}

fn conversation(state: &State) -> Result<CachePrefix> {
    if !state.settings.compaction.cache_prefix {
        return Ok(CachePrefix::Off);
    }
    let Some(recorded) = &state.last_request else {
        return Ok(CachePrefix::Unavailable(
            "no model request of this session was sent by this process".to_owned(),
        ));
    };
    if recorded.overflowed {
        return Ok(CachePrefix::Unavailable(
            "the last model request overflowed the context window: continuing it would too"
                .to_owned(),
        ));
    }
    let path = state.session.branch_path(None);
    let after = match &recorded.leaf {
        Some(leaf) => match path.iter().position(|entry| entry.id() == leaf) {
            Some(position) => &path[position + 1..],
            None => {
                return Ok(CachePrefix::Unavailable(
                    "the session is on another branch than the last model request".to_owned(),
                ));
            }
        },
        None => &path[..],
    };
    if after
        .iter()
        .any(|entry| matches!(entry.type_name(), "compaction" | "branch_summary"))
    {
        return Ok(CachePrefix::Unavailable(
            "the context was compacted or summarized after the last model request".to_owned(),
        ));
    }
    let context = state.session.build_context();
    let mut prefix = recorded.prefix.clone();
    for message in context.messages.iter().skip(recorded.context_messages) {
        prefix.messages.push(state.session.message(message)?);
    }
    Ok(CachePrefix::Conversation {
        prefix,
        // The window requests must fit: the provider's real limit when it stated a lower one.
        context_window: state.limit_window(),
    })
}
