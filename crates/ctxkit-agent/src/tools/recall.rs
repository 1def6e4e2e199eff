//! `recall`: what the model's view shows shortened, read back from the session. The engine prunes old
//! tool results to their first and last lines plus a marker naming `ctxkit://tool-result/<id>`, and
//! compaction replaces old messages by a summary that names `ctxkit://summarized`; the recommended
//! strategy also cuts old tool calls' long arguments to a marker naming `ctxkit://tool-call/<id>`.
//! The stored session keeps all of it, so nothing pruned or summarized is lost to the model.

use ctxkit_engine::Recalled;
use serde::Deserialize;

use serde_json::json;

use super::recalled::bound_recalled;
use super::saved_output::save_full_output;
use super::{ToolContext, ToolOutcome, limit};

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
/// method gives too), bounded as every tool's output is, note included ([`bound_recalled`]), but
/// for the line that does not fit, which is cut rather than left out: recall has no offset to read
/// on from. A cut answer's full text is saved as any tool's, but for a result the tool had cut
/// when it was stored: its own note names the full output, and a copy of the cut text is not one.
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
        Recalled::Found(text) => Ok(bounded_answer(&text, context, call_id)),
        Recalled::Missing(message) => Err(message),
    }
}

/// `text` redacted and within the tool output's bound, note included.
fn bounded_answer(text: &str, context: &ToolContext, call_id: &str) -> ToolOutcome {
    // Secrets never reach the model, nor the saved full output.
    let text = context.workspace.redact(text);
    let mut saved: Option<Result<std::path::PathBuf, String>> = None;
    let bounded = bound_recalled(&text, context.max_output_bytes, |cut| {
        let saved = saved.get_or_insert_with(|| {
            save_full_output(&context.output_dir, call_id, &text).map_err(|error| error.to_string())
        });
        match saved {
            Ok(path) => format!("\n\n{}", limit::cut_notice(cut, path)),
            Err(error) => format!(
                "\n\n{} to {} of {} lines; the full output could not be saved: {error}]",
                limit::CUT_NOTICE_START,
                cut.shown_lines,
                cut.total_lines
            ),
        }
    });
    let details = match (&bounded.cut, saved) {
        (None, _) => None,
        (Some(_), Some(Ok(path))) => Some(json!({
            "truncated": true,
            "fullOutputPath": path.display().to_string(),
        })),
        (Some(_), Some(Err(_)) | None) => Some(json!({"truncated": true})),
    };
    ToolOutcome {
        details,
        ..ToolOutcome::ok(bounded.text)
    }
}
