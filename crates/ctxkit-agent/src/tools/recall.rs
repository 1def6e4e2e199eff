//! `recall`: the full text of a tool result the model's view shows shortened. The engine prunes old
//! tool results to their first and last lines plus a marker naming `ctxkit://tool-result/<id>`; the
//! stored session keeps the whole text, so nothing pruned is lost to the model.

use serde::Deserialize;

use super::limit::Keep;
use super::{ToolContext, ToolOutcome, bounded_outcome};

/// The scheme and path a marker writes before the tool call id.
const REFERENCE_PREFIX: &str = "ctxkit://tool-result/";

/// The arguments of `recall`.
#[derive(Debug, Deserialize)]
pub struct RecallArguments {
    /// `ctxkit://tool-result/<id>` as the marker shows it, or the bare id.
    reference: String,
}

/// `recall {reference}`.
pub fn recall(
    arguments: RecallArguments,
    context: &ToolContext,
    call_id: &str,
) -> Result<ToolOutcome, String> {
    let reference = arguments.reference.trim();
    let id = reference
        .strip_prefix(REFERENCE_PREFIX)
        .unwrap_or(reference)
        .trim_end_matches(']');
    let Some(engine) = &context.engine else {
        return Err("recall needs a session; none is open".to_owned());
    };
    let handle = tokio::runtime::Handle::try_current()
        .map_err(|_| "recall must run inside the agent's runtime".to_owned())?;
    let text = handle
        .block_on(engine.fetch_pruned(id))
        .map_err(|error| format!("Cannot read the session: {error}"))?
        .ok_or_else(|| format!("No tool result `{id}` in this session"))?;
    Ok(bounded_outcome(&text, Keep::Head, call_id, context, false))
}
