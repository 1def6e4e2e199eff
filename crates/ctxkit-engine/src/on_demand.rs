//! On-demand compaction in the engine (`compaction.provider: "on-demand"`): the span before the
//! planner's cut — the earlier summary (or its on-demand block), then the summarized messages, in
//! the provider's form — goes to the conversation's model with the system prompt and tools of the
//! last model request, so the provider reads it from its prompt cache. When that request fails the
//! offline summarizer writes the summary; when it cannot be made (another provider, no recorded
//! request) the configured summarizer does, and the compaction's `details.onDemand` says why.
//! Later views carry the block on the compaction summary (`attach_block`), for the request
//! builders to send back in its place.

use ctxkit_compaction::{
    CachePrefix, CompactOptions, CompactionError, CompactionResult, Preparation, Prompts,
};
use ctxkit_protocol::{
    AgentMessage, ON_DEMAND_COMPACTION_FIELD, ON_DEMAND_MODE, PROVIDER_COMPACTION_DETAILS,
};
use ctxkit_session::StoredEntry;
use ctxkit_summarizer::{ConversationPrefix, Summarizer};
use ctxkit_summarizer_offline::OfflineSummarizer;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use crate::state::State;
use ctxkit_settings::SummaryProvider;

/// Whether the next compaction is asked of the provider.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum OnDemand {
    /// `compaction.provider` is `summarizer`.
    Off,
    /// On, but no request can be made; why.
    Unavailable(String),
    /// On: the span to send.
    Span(ConversationPrefix),
}

/// What the next compaction of `plan` sends on demand.
pub(crate) fn plan_on_demand(state: &mut State, plan: &Preparation) -> OnDemand {
    if state.settings.compaction.provider != SummaryProvider::OnDemand {
        return OnDemand::Off;
    }
    let Some(recorded) = state
        .last_request
        .as_ref()
        .map(|request| request.prefix().clone())
    else {
        return OnDemand::Unavailable(
            "no model request of this session was sent by this process".to_owned(),
        );
    };
    match span_messages(state, &plan.first_kept_entry_id) {
        Ok(Some(messages)) => OnDemand::Span(ConversationPrefix {
            request_messages: messages.len(),
            messages,
            ..recorded
        }),
        Ok(None) => OnDemand::Unavailable("the first kept entry is not in the context".to_owned()),
        Err(error) => OnDemand::Unavailable(format!("the context could not be read: {error}")),
    }
}

/// The context before `first_kept` in the provider's form; `None` when it is not in the context.
fn span_messages(
    state: &mut State,
    first_kept: &str,
) -> crate::error::Result<Option<Vec<AgentMessage>>> {
    let context = state.session.build_context();
    let mut span = Vec::new();
    for message in &context.messages {
        let at_cut = state
            .session
            .index()
            .get(message.entry)
            .is_some_and(|entry| entry.id() == first_kept);
        if at_cut {
            return Ok(Some(span));
        }
        let Some(shared) = crate::messages::shared_message(state, message)? else {
            continue;
        };
        if let AgentMessage::Assistant(reply) = shared.message()
            && reply.is_aborted_or_error()
        {
            continue;
        }
        span.extend(crate::view::provider_message(shared.message().clone()));
    }
    Ok(None)
}

/// Summarizes `plan`: on demand when the span can be sent, the offline summarizer when that
/// request fails, the configured summarizer otherwise.
pub(crate) async fn summarize(
    summarizer: &dyn Summarizer,
    prompts: &Prompts,
    plan: &Preparation,
    options: &CompactOptions,
    on_demand: OnDemand,
    cancel: &CancellationToken,
) -> Result<CompactionResult, CompactionError> {
    let reason = match on_demand {
        OnDemand::Off => None,
        OnDemand::Unavailable(reason) => Some(reason),
        OnDemand::Span(span) if summarizer.can_compact_on_demand(&span) => {
            return match ctxkit_compaction::compact_on_demand(plan, summarizer, span, cancel).await
            {
                Ok(result) => {
                    tracing::info!(first_kept = %result.first_kept_entry_id, "compacted on demand");
                    Ok(result)
                }
                Err(CompactionError::Cancelled) => Err(CompactionError::Cancelled),
                Err(error) => offline_fallback(plan, prompts, options, &error, cancel).await,
            };
        }
        OnDemand::Span(span) => Some(format!(
            "summaries are written by {}, which cannot compact {}/{} on demand",
            summarizer.name(),
            span.provider,
            span.model
        )),
    };
    let mut result = ctxkit_compaction::compact(plan, summarizer, prompts, options, cancel).await?;
    if let Some(reason) = reason {
        tracing::info!(%reason, "on-demand compaction not used");
        note(&mut result, json!({"used": false, "reason": reason}));
    }
    Ok(result)
}

/// The offline summary of `plan`, after the on-demand request failed with `error`.
async fn offline_fallback(
    plan: &Preparation,
    prompts: &Prompts,
    options: &CompactOptions,
    error: &CompactionError,
    cancel: &CancellationToken,
) -> Result<CompactionResult, CompactionError> {
    let message = error.to_string();
    tracing::warn!(error = %message, "on-demand compaction failed; the offline summarizer writes the summary");
    let options = CompactOptions {
        cache_prefix: CachePrefix::Off,
        ..options.clone()
    };
    let offline = OfflineSummarizer::default();
    let mut result = ctxkit_compaction::compact(plan, &offline, prompts, &options, cancel).await?;
    note(&mut result, json!({"used": false, "error": message}));
    Ok(result)
}

/// What to tell the user when the on-demand request of a compaction with these `details` failed
/// and the offline summarizer wrote its summary instead.
pub(crate) fn failure_note(details: Option<&Value>) -> Option<String> {
    let error = details?.get("onDemand")?.get("error")?.as_str()?;
    Some(format!(
        "On-demand compaction failed ({error}); the offline summarizer wrote the summary."
    ))
}

fn note(result: &mut CompactionResult, on_demand: Value) {
    if let Some(details) = result.details.as_object_mut() {
        details.insert("onDemand".to_owned(), on_demand);
    }
}

/// Puts the on-demand block of the compaction `entry` (if it has one) on its summary `message`,
/// as `{provider, api, model, block}` under [`ON_DEMAND_COMPACTION_FIELD`].
pub(crate) fn attach_block(entry: &StoredEntry, message: &mut AgentMessage) {
    let AgentMessage::CompactionSummary(summary) = message else {
        return;
    };
    let Ok(raw) = entry.raw() else {
        return;
    };
    let Ok(fields) = ctxkit_protocol::from_str_repaired::<Value>(&raw) else {
        return;
    };
    let Some(recorded) = fields
        .pointer(&format!("/details/{PROVIDER_COMPACTION_DETAILS}"))
        .filter(|recorded| recorded.get("mode").and_then(Value::as_str) == Some(ON_DEMAND_MODE))
    else {
        return;
    };
    let carried = json!({
        "provider": recorded.get("provider").cloned().unwrap_or(Value::Null),
        "api": recorded.get("api").cloned().unwrap_or(Value::Null),
        "model": recorded.get("model").cloned().unwrap_or(Value::Null),
        "block": recorded.get("block").cloned().unwrap_or(Value::Null),
    });
    summary
        .extra
        .insert(ON_DEMAND_COMPACTION_FIELD.to_owned(), carried);
}
