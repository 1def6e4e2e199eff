//! `recall`: what the model's view shows shortened, read back from the session. The engine prunes old
//! tool results to their first and last lines plus a marker naming `ctxkit://tool-result/<id>`, and
//! compaction replaces old messages by a summary that names `ctxkit://summarized`; the recommended
//! strategy also cuts old tool calls' long arguments to a marker naming `ctxkit://tool-call/<id>`.
//! The stored session keeps all of it, so nothing pruned or summarized is lost to the model.

use ctxkit_engine::Recalled;
use serde::Deserialize;

use super::{ToolContext, ToolOutcome, limit, outcome_within};

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

/// `recall {reference, query?}`: the engine's answer (`Engine::recall`, which the server's `recall`
/// method gives too), bounded as every tool's output is, but for the line that does not fit,
/// which is cut rather than left out: recall has no offset to read on from.
pub fn recall(
    arguments: RecallArguments,
    context: &ToolContext,
    call_id: &str,
) -> Result<ToolOutcome, String> {
    let Some(engine) = &context.engine else {
        return Err("recall needs a session; none is open".to_owned());
    };
    let handle = tokio::runtime::Handle::try_current()
        .map_err(|_| "recall must run inside the agent's runtime".to_owned())?;
    match handle.block_on(engine.recall(&arguments.reference, arguments.query.as_deref())) {
        Recalled::Found(text) => {
            let bound =
                |text: &str| limit::bound_head_cutting_lines(text, context.max_output_bytes);
            Ok(outcome_within(&text, bound, call_id, context, false))
        }
        Recalled::Missing(message) => Err(message),
    }
}
