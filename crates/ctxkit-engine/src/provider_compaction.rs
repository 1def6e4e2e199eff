//! A compaction the provider made (Anthropic's `compact_20260112`), recorded in the session so the
//! file stays the source of truth: right after the reply that carried the compaction block, a
//! `compaction` entry with the provider's summary text, `firstKeptEntryId` at that reply (the
//! provider dropped everything before its block; the reply itself comes after it) and the raw block
//! in `details.providerCompaction`. The context is then what the provider sees: the summary, that
//! reply (whose block the request builder sends back first), and what follows. An opaque block
//! (OpenAI's encrypted item) gets no entry: the reply keeps it and the whole history stays in the
//! context, readable by every other model.

use ctxkit_protocol::{AssistantMessage, PROVIDER_COMPACTION_DETAILS};
use ctxkit_session::{NewCompaction, SummarySource};
use serde_json::{Value, json};

use crate::error::Result;
use crate::messages::transcript;
use crate::state::State;

/// Appends the compaction entry for `reply` (just written as `reply_id`) when it carries a
/// provider compaction with a readable summary; returns the entry's id.
pub(crate) fn record(
    state: &mut State,
    reply_id: &str,
    reply: &AssistantMessage,
) -> Result<Option<String>> {
    let (Some(block), Some(summary)) = (
        reply.provider_compaction(),
        reply.provider_compaction_summary(),
    ) else {
        return Ok(None);
    };
    let iteration = compaction_iteration(reply);
    let tokens_before = match iteration
        .and_then(|usage| usage.get("input_tokens"))
        .and_then(Value::as_u64)
    {
        Some(tokens) => tokens,
        None => transcript(&state.session)?
            .iter()
            .map(ctxkit_tokens::estimate_tokens)
            .sum(),
    };
    // `summarizer` and `usage` are what `/compactions` and `compaction.list` show.
    let summarizer = format!(
        "{}/{} (provider-side)",
        reply.provider.as_deref().unwrap_or("provider"),
        reply.model.as_deref().unwrap_or("model")
    );
    let details = json!({
        "readFiles": [],
        "modifiedFiles": [],
        "summarizer": summarizer,
        "usage": iteration.cloned().unwrap_or(Value::Null),
        PROVIDER_COMPACTION_DETAILS: {
            "provider": reply.provider,
            "api": reply.api,
            "model": reply.model,
            "block": block,
        },
    });
    let compaction = NewCompaction {
        summary: ctxkit_compaction::kept_summary(summary),
        first_kept_entry_id: reply_id.to_owned(),
        tokens_before,
        details: Some(details),
        source: SummarySource::Ctxkit,
    };
    Ok(Some(state.session.append_compaction(compaction)?))
}

/// The usage of the compaction's own call, from Anthropic's `usage.iterations`.
fn compaction_iteration(reply: &AssistantMessage) -> Option<&Value> {
    reply
        .usage
        .as_ref()?
        .extra
        .get("iterations")?
        .as_array()?
        .iter()
        .find(|iteration| iteration.get("type").and_then(Value::as_str) == Some("compaction"))
}
