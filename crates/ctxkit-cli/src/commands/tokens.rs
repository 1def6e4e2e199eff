//! `tokens`: how many tokens a session's context holds, and where each count came from, kept apart
//! from compaction so each module stays readable.

use std::io::Write;
use std::path::Path;

use anyhow::Result;
use ctxkit_compaction::{ProjectedTokens, UsageStanding};
use ctxkit_session::LeafSelector;
use ctxkit_tokens::{ContextTokenCount, ContextTokenCounter, Estimator};
use serde_json::json;

use super::print_json;
use crate::Outcome;
use crate::render::counted;

/// `ctxkit tokens`: the reference's numbers by default (`--estimator pi`), or ctxkit's estimator or
/// an exact tokenizer for the messages after the last reported usage.
pub fn tokens(
    file: &Path,
    leaf: Option<&str>,
    estimator: Estimator,
    json: bool,
    out: &mut dyn Write,
) -> Result<Outcome> {
    let session = super::open_for_reading(file)?;
    let selector = super::leaf_selector(&session, leaf)?;
    let context = session.context_at(selector);
    // One message at a time: a branch of a million entries is counted without holding them.
    let mut counter = ContextTokenCounter::new(estimator);
    for message in &context.messages {
        counter.add(&session.message(message)?);
    }
    let per_message = counter.per_message();
    let totals = counter.finish();
    // What Pi (0.87 and today's 1.6) weighs against the window: its estimate ignores usage
    // reported before the latest context edit or compaction.
    let leaf_id = match selector {
        LeafSelector::Entry(id) => Some(id),
        LeafSelector::Current | LeafSelector::BeforeFirst => None,
    };
    let projected =
        ctxkit_compaction::count_projected_context_tokens(&session, leaf_id, estimator)?;
    if json {
        print_json(
            out,
            &json!({
                "tokens": totals.tokens,
                "usageTokens": totals.usage_tokens,
                "trailingTokens": totals.trailing.tokens,
                "lastUsageIndex": totals.last_usage_index,
                "perMessage": per_message,
                "projectedTokens": projected.tokens,
                "source": totals.source().to_string(),
                "estimator": estimator.name(),
            }),
        )?;
        return Ok(Outcome::Success);
    }
    let messages = counted(per_message.len(), "message");
    match projected.usage {
        UsageStanding::SetAside => write_set_aside(out, &messages, &projected, &totals)?,
        UsageStanding::NoneReported | UsageStanding::Counted => {
            write_counted(out, &messages, &totals)?;
        }
    }
    Ok(Outcome::Success)
}

/// The last usage reported measured the context before a compaction or a context edit: the
/// count the context has now leads (what Pi 0.87 and later, and ctxkit's checks, weigh), made by
/// the estimator asked for.
fn write_set_aside(
    out: &mut dyn Write,
    messages: &str,
    projected: &ProjectedTokens,
    totals: &ContextTokenCount,
) -> Result<()> {
    writeln!(
        out,
        "{} tokens in {messages} ({}, as the last usage reported predates a compaction or \
         context edit)",
        projected.tokens, projected.source
    )?;
    if let Some(index) = totals.last_usage_index {
        writeln!(
            out,
            "  {} reported by the provider up to message {}, for the context as it was then",
            totals.usage_tokens,
            index + 1,
        )?;
    }
    Ok(())
}

/// The last usage reported (if any) and the messages after it counted by the estimator.
fn write_counted(out: &mut dyn Write, messages: &str, totals: &ContextTokenCount) -> Result<()> {
    writeln!(
        out,
        "{} tokens in {messages} ({})",
        totals.tokens,
        totals.source()
    )?;
    if let Some(index) = totals.last_usage_index {
        writeln!(
            out,
            "  {} reported by the provider up to message {}, {} counted after it ({})",
            totals.usage_tokens,
            index + 1,
            totals.trailing.tokens,
            totals.trailing.source
        )?;
    }
    Ok(())
}
