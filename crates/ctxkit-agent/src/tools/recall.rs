//! `recall`: what the model's view shows shortened, read back from the session. The engine prunes old
//! tool results to their first and last lines plus a marker naming `ctxkit://tool-result/<id>`, and
//! compaction replaces old messages by a summary that names `ctxkit://summarized`; the recommended
//! strategy also cuts old tool calls' long arguments to a marker naming `ctxkit://tool-call/<id>`.
//! The stored session keeps all of it, so nothing pruned or summarized is lost to the model.

use ctxkit_transform::{TOOL_CALL_REFERENCE_PREFIX, TOOL_RESULT_REFERENCE_PREFIX};
use serde::Deserialize;

use super::limit::Keep;
use super::{ToolContext, ToolOutcome, bounded_outcome};

/// The arguments of `recall`.
#[derive(Debug, Deserialize)]
pub struct RecallArguments {
    /// `ctxkit://tool-result/<id>` as the marker shows it, or the bare id;
    /// `ctxkit://tool-call/<id>` for a call's arguments; or `ctxkit://summarized` for the
    /// messages behind the summaries.
    reference: String,
    /// With `ctxkit://summarized`: words to find; only the messages (and lines) holding them.
    #[serde(default)]
    query: Option<String>,
}

/// `recall {reference}`.
pub fn recall(
    arguments: RecallArguments,
    context: &ToolContext,
    call_id: &str,
) -> Result<ToolOutcome, String> {
    let reference = arguments.reference.trim();
    if reference.starts_with(ctxkit_engine::SUMMARIZED_REFERENCE) {
        return recall_summarized(arguments.query.as_deref(), context, call_id);
    }
    let Some(engine) = &context.engine else {
        return Err("recall needs a session; none is open".to_owned());
    };
    let handle = tokio::runtime::Handle::try_current()
        .map_err(|_| "recall must run inside the agent's runtime".to_owned())?;
    let read_error = |error| format!("Cannot read the session: {error}");
    let text = match reference.strip_prefix(TOOL_CALL_REFERENCE_PREFIX) {
        Some(id) => {
            let id = id.trim_end_matches(']');
            handle
                .block_on(engine.fetch_tool_call(id))
                .map_err(read_error)?
                .ok_or_else(|| format!("No tool call `{id}` in this session"))?
        }
        None => {
            let id = reference
                .strip_prefix(TOOL_RESULT_REFERENCE_PREFIX)
                .unwrap_or(reference)
                .trim_end_matches(']');
            handle
                .block_on(engine.fetch_pruned(id))
                .map_err(read_error)?
                .ok_or_else(|| format!("No tool result `{id}` in this session"))?
        }
    };
    Ok(bounded_outcome(&text, Keep::Head, call_id, context, false))
}

/// `recall {reference: "ctxkit://summarized", query?}`: the originals behind the summaries.
fn recall_summarized(
    query: Option<&str>,
    context: &ToolContext,
    call_id: &str,
) -> Result<ToolOutcome, String> {
    let Some(engine) = &context.engine else {
        return Err("recall needs a session; none is open".to_owned());
    };
    let handle = tokio::runtime::Handle::try_current()
        .map_err(|_| "recall must run inside the agent's runtime".to_owned())?;
    let text = handle
        .block_on(engine.fetch_summarized(query))
        .map_err(|error| format!("Cannot read the session: {error}"))?
        .ok_or_else(|| "Nothing on this branch was summarized".to_owned())?;
    if text.is_empty() {
        let words = query.unwrap_or_default();
        return Err(format!(
            "No summarized message holds any of `{words}`; try other words, or no query for all of them"
        ));
    }
    Ok(bounded_outcome(&text, Keep::Head, call_id, context, false))
}
