//! The `truncate` fallback policy: when summarization fails, keep the newest part of the context
//! and record a compaction that says why, so the agent can go on.

use ctxkit_compaction::{CompactionSettings, NoPlanReason, Preparation, prepare_compaction};
use ctxkit_session::{NewCompaction, SummarySource};
use serde_json::json;

use crate::error::{EngineError, Result};
use crate::state::State;

/// The `truncate` fallback: keep about `truncateKeepPercent` of the context (never starting at a
/// tool result) and record a compaction that says summarization failed and why. An earlier
/// summary is carried over verbatim.
pub(crate) fn truncate_fallback(
    state: &State,
    plan: &Preparation,
    error: &str,
) -> Result<NewCompaction> {
    let percent = state.settings.compaction.truncate_keep_percent.min(100);
    let keep = (plan.tokens_before.saturating_mul(percent) / 100).max(1);
    let settings = CompactionSettings {
        keep_recent_tokens: keep,
        ..state.planning()
    };
    let truncated = match prepare_compaction(&state.session, None, settings)? {
        Ok(truncated) => truncated,
        Err(
            NoPlanReason::AlreadyCompacted
            | NoPlanReason::NothingToCompact
            | NoPlanReason::NothingToSummarize,
        ) => {
            return Err(EngineError::Summarization(error.to_owned()));
        }
    };
    let dropped = truncated.history_len() + truncated.turn_prefix_len();
    let mut summary = format!(
        "Compaction failed ({error}), so no summary was written: the {dropped} oldest messages \
         were dropped and the newest part of the conversation (about {percent}% of \
         {tokens} tokens) is kept verbatim. Ask the user about anything from before this point \
         that is not in the kept messages.",
        tokens = plan.tokens_before,
    );
    if let Some(previous) = &truncated.previous_summary {
        summary.push_str("\n\nThe summary of an earlier compaction, kept as it was:\n\n");
        summary.push_str(previous);
    }
    let lists = truncated.file_operations.lists();
    summary.push_str(&lists.blocks());
    let mut details = lists.details();
    if let Some(object) = details.as_object_mut() {
        object.insert("fallback".to_owned(), json!("truncate"));
        object.insert("error".to_owned(), json!(error));
    }
    Ok(NewCompaction {
        summary,
        first_kept_entry_id: truncated.first_kept_entry_id,
        tokens_before: truncated.tokens_before,
        details: Some(details),
        source: SummarySource::Ctxkit,
    })
}
